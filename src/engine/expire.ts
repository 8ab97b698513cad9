// The lifecycle's `expire` command (src/engine/lifecycle.ts), run by the maintenance sweeper: funded intents past
// their deadline are refunded, each in its own tenant transaction, with the terminal effects of any settlement.
import { maintenanceIntentsPerPassMax } from '../limits.ts';
import type { Database } from '../infra/database.ts';
import type { EngineEffects } from './effects.ts';
import { engineObserverOf, refusalStatusOf, watchTransaction } from './observer.ts';
import { fromStates } from './lifecycle.ts';
import { lockForCommand } from './pipeline.ts';
import { settleIntent } from './settle.ts';

// The states the table lets `expire` start from, as literals: as the partial index intents_expiring has its state
// (`funded`), so that the index serves the query (an index a parameter cannot use; Postgres reads a one-member IN as
// `=`). The lock below checks each intent's state against the table again.
const expirableStatesSql = fromStates('expire').map((state) => `'${state}'`).join(', ');

/** Each intent is settled in its own tenant transaction; one that moved meanwhile (evidence arrived, a confirm
 * won the race) is skipped, not an error. */
export async function expireIntents(database: Database, effects: EngineEffects, now: Date): Promise<number> {
  const expired = await database.system(async (tx) =>
    (await tx.query<{ tenant_id: string; intent_id: string }>(
      `SELECT tenant_id, intent_id FROM intents WHERE state IN (${expirableStatesSql}) AND deadline <= $1 ORDER BY deadline LIMIT $2`,
      [now, maintenanceIntentsPerPassMax],
    )).rows,
  );
  let refunded = 0;
  for (const { tenant_id: tenantId, intent_id: intentId } of expired) {
    try {
      await database.tenant(tenantId, async (tx) => {
        watchTransaction(tx, database);
        return settleIntent(tx, await lockForCommand(tx, tenantId, intentId, 'expire'), effects, { command: 'expire', nowMs: now.getTime() });
      });
      refunded += 1;
      engineObserverOf(database)?.commandAnswered('expire', 200, false);
    } catch (error) {
      const status = refusalStatusOf(error);
      if (status === undefined) throw error;
      engineObserverOf(database)?.commandAnswered('expire', status, false);
    }
  }
  return refunded;
}
