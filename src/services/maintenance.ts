// Periodic maintenance, safe with any number of replicas (one runs it at a time, under an advisory lock):
// refunds funded intents past their deadline, and forgets idempotency records, recognition nonces and rate-limit
// counters that have outlived their use.
import { deleteExpiredNonces } from '../db/recognition-nonce-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { idempotencyRecordRetentionMs, maintenanceIntentsPerPassMax } from '../limits.ts';
import type { Database } from '../platform/database.ts';
import { deleteExpiredIdempotencyRecords } from '../platform/idempotency.ts';
import { deleteExpiredRateLimitCounters } from '../platform/rate-limit.ts';
import { lockIntentIn } from './evidence-service.ts';
import { settleIntent } from './settlement-service.ts';

/** Any fixed number: replicas agree on it, and it differs from the migration lock. */
const maintenanceLockKey = '7213402118';

export interface MaintenanceReport {
  /** False when another replica held the lock and this pass did nothing. */
  readonly ran: boolean;
  readonly refunded: number;
  readonly idempotencyRecordsDeleted: number;
  readonly noncesDeleted: number;
  readonly rateLimitCountersDeleted: number;
}

export async function runMaintenance(database: Database, now = new Date()): Promise<MaintenanceReport> {
  const client = await database.pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [maintenanceLockKey]);
    if (!rows[0]!.locked) return { ran: false, refunded: 0, idempotencyRecordsDeleted: 0, noncesDeleted: 0, rateLimitCountersDeleted: 0 };
    try {
      const refunded = await refundExpiredIntents(database, now);
      const { idempotencyRecordsDeleted, noncesDeleted, rateLimitCountersDeleted } = await database.system(async (tx) => ({
        idempotencyRecordsDeleted: await deleteExpiredIdempotencyRecords(tx, new Date(now.getTime() - idempotencyRecordRetentionMs)),
        noncesDeleted: await deleteExpiredNonces(tx, now),
        rateLimitCountersDeleted: await deleteExpiredRateLimitCounters(tx, now.getTime()),
      }));
      return { ran: true, refunded, idempotencyRecordsDeleted, noncesDeleted, rateLimitCountersDeleted };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [maintenanceLockKey]);
    }
  } finally {
    client.release();
  }
}

/** Each intent is settled in its own tenant transaction; one that moved meanwhile (evidence arrived, a confirm
 * won the race) is skipped, not an error. */
async function refundExpiredIntents(database: Database, now: Date): Promise<number> {
  const expired = await database.system(async (tx) =>
    (await tx.query<{ tenant_id: string; intent_id: string }>(
      `SELECT tenant_id, intent_id FROM intents WHERE state = 'funded' AND deadline <= $1 ORDER BY deadline LIMIT $2`,
      [now, maintenanceIntentsPerPassMax],
    )).rows,
  );
  let refunded = 0;
  for (const { tenant_id: tenantId, intent_id: intentId } of expired) {
    try {
      await database.tenant(tenantId, async (tx) => settleIntent(tx, await lockIntentIn(tx, tenantId, intentId, ['funded']), now.getTime()));
      refunded += 1;
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
    }
  }
  return refunded;
}
