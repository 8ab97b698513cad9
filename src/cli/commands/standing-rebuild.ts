// `svc standing rebuild`: recomputes a tenant's standing aggregates from its intents, replacing what the settling
// transactions accumulated (docs/standing.md#how-the-numbers-are-kept). The two must agree; a rebuild repairs a damaged row.
import { rebuildStanding } from '../../services/standing-service.ts';
import { print, requiredOption, withDatabase, type CliCommand } from '../command.ts';

export const standingRebuild: CliCommand = {
  name: 'standing rebuild',
  summary: "Recomputes the tenant's standing aggregates (operator receipts, portfolio snapshot) from its intents.",
  synopsis: '--tenant-id ID [--json]',
  details: [
    '--tenant-id ID          the tenant whose standing to recompute',
    '--json                  print the result as one JSON line',
    '',
    'Runs in one snapshot and retries when a settlement commits meanwhile; safe while the service runs.',
  ],
  options: { 'tenant-id': { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(standingRebuild, options, 'tenant-id');
    const result = await withDatabase(config, (database) => rebuildStanding(database, tenantId));
    print(
      json,
      { tenant_id: tenantId, operators: result.operators, day_rows: result.dayRows },
      `standing of ${tenantId} rebuilt: ${result.operators} operator(s), ${result.dayRows} day row(s)`,
    );
  },
};
