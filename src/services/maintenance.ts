// Periodic maintenance, safe with any number of replicas (one runs it at a time, under an advisory lock):
// refunds funded intents past their deadline (the lifecycle's `expire` command, src/engine/expire.ts), and forgets idempotency records, recognition nonces and rate-limit
// counters that have outlived their use.
import { deleteExpiredNonces } from '../db/recognition-nonce-repository.ts';
import type { EngineEffects } from '../engine/effects.ts';
import { idempotencyRecordRetentionMs } from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import { expireIntents } from '../engine/expire.ts';

/** Any fixed number: replicas agree on it, and it differs from the migration lock. */
const maintenanceLockKey = '7213402118';

/** Rows that have outlived their use, each table with the statement that forgets them (as the system role). */
const pruneTasks = {
  // A key reused after the retention starts a new request.
  idempotency_records: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'idempotency_records', 'created_at', new Date(now.getTime() - idempotencyRecordRetentionMs)),
  recognition_nonces: (tx: Queryable, now: Date) => deleteExpiredNonces(tx, now),
  // A replica's late request for an old window would only recreate a row that the next pass deletes.
  rate_limit_counters: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'rate_limit_counters', 'window_end_ms', now.getTime()),
  // A sign-in code or an SSO state past its expiry can never be used again; a day's grace keeps them for support.
  login_challenges: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'login_challenges', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
  sso_states: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'sso_states', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
  // A device login past its expiry can no longer be approved or redeemed; the same day's grace.
  device_authorizations: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'device_authorizations', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
} as const;

export type PrunedTable = keyof typeof pruneTasks;

export interface MaintenanceReport {
  /** False when another replica held the lock and this pass did nothing. */
  readonly ran: boolean;
  readonly refunded: number;
  /** Rows deleted per table. */
  readonly deleted: Readonly<Record<PrunedTable, number>>;
}

const expiredRowGraceMs = 24 * 60 * 60_000;

/** Deletes the rows of `table` whose `column` is before the cutoff; table and column are this file's constants. */
async function deleteRowsBefore(tx: Queryable, table: string, column: 'created_at' | 'expires_at' | 'window_end_ms', before: Date | number): Promise<number> {
  const { rowCount } = await tx.query(`DELETE FROM ${table} WHERE ${column} < $1`, [before]);
  return rowCount ?? 0;
}

const nothingDeleted = Object.fromEntries(Object.keys(pruneTasks).map((table) => [table, 0])) as Record<PrunedTable, number>;

export async function runMaintenance(database: Database, effects: EngineEffects, now = new Date()): Promise<MaintenanceReport> {
  const client = await database.pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [maintenanceLockKey]);
    if (!rows[0]!.locked) return { ran: false, refunded: 0, deleted: nothingDeleted };
    try {
      const refunded = await expireIntents(database, effects, now);
      const deleted = await database.system(async (tx) => {
        const counts = { ...nothingDeleted };
        for (const [table, prune] of Object.entries(pruneTasks) as Array<[PrunedTable, (tx: Queryable, now: Date) => Promise<number>]>) {
          counts[table] = await prune(tx, now);
        }
        return counts;
      });
      return { ran: true, refunded, deleted };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [maintenanceLockKey]);
    }
  } finally {
    client.release();
  }
}
