// Runs the tree-head pass every treeHeadIntervalMs in every replica; the advisory lock inside lets one of them sign
// at a time. One signed head per tenant with new leaves per pass: signing is batched, never per receipt.
import { PeriodicPass, type BackgroundService } from '../infra/background.ts';
import type { Database } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { treeHeadIntervalMs } from '../limits.ts';
import { publishTreeHeads } from './transparency-log.ts';

export interface TreeHeadTimerContext {
  readonly database: Database;
  readonly gatewayKeys: GatewayKeyring;
  readonly log: { debug(object: object, message: string): void; error(object: object, message: string): void };
}

/** The timer the app starts beside maintenance (src/app.ts). */
export function treeHeadTimer(context: TreeHeadTimerContext): BackgroundService {
  return new PeriodicPass({
    intervalMs: treeHeadIntervalMs,
    pass: async () => {
      const report = await publishTreeHeads(context.database, context.gatewayKeys);
      if (report.heads > 0) context.log.debug({ heads: report.heads }, 'signed transparency-log tree heads');
    },
    onError: (error) => context.log.error({ err: error }, 'tree-head pass failed'),
  });
}
