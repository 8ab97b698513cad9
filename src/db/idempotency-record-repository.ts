// Idempotency records (migrations/0004_engine.sql, 0024_idempotency_bindings.sql): per (tenant, operation, key), the
// fingerprint of the request the key was first executed with, and, once there is one, its final answer.
import type { Queryable, Statement } from '../infra/database.ts';

export type StoredHeaders = Record<string, string | string[]>;

/** A final answer as stored, to be replayed. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: StoredHeaders;
  /** The body's JSON text. */
  readonly body: string;
}

export interface IdempotencyRecordRow {
  /** What the key is bound to: the fingerprint of its first executed request. */
  readonly fingerprint: Buffer;
  /** Absent while the key has no final answer (its executions answered errors, 402 or 202 so far). */
  readonly answer: StoredAnswer | undefined;
}

export interface IdempotencyScope {
  readonly tenantId: string;
  readonly operation: string;
  readonly key: string;
}

export function findIdempotencyRecordStatement({ tenantId, operation, key }: IdempotencyScope): Statement<IdempotencyRecordRow | undefined> {
  return {
    text: `SELECT fingerprint, response_status, response_headers, response_body FROM idempotency_records
           WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3`,
    values: [tenantId, operation, key],
    read: ({ rows }) => {
      const row = rows[0] as { fingerprint: Buffer; response_status: number | null; response_headers: StoredHeaders | null; response_body: string | null } | undefined;
      if (!row) return undefined;
      const answer = row.response_status === null ? undefined : { status: row.response_status, headers: row.response_headers!, body: row.response_body! };
      return { fingerprint: row.fingerprint, answer };
    },
  };
}

/** Queues the key's binding to `fingerprint`, to travel with COMMIT. Written under the key's advisory lock by the
 * key's first execution, which found no record: nothing else can have bound it meanwhile. */
export function queueIdempotencyBinding(tx: Queryable, { tenantId, operation, key }: IdempotencyScope, fingerprint: Buffer): void {
  tx.beforeCommit({
    text: `INSERT INTO idempotency_records (tenant_id, operation, idempotency_key, fingerprint) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, operation, idempotency_key) DO NOTHING`,
    values: [tenantId, operation, key, fingerprint],
  });
}

/** Queues the key's final answer, to travel with COMMIT: onto its binding, or as a new record when the key was not
 * bound yet. At most once: a record that already holds an answer, or is bound to another fingerprint, fails the
 * message (expect_one_row: cardinality_violation), and nothing commits. */
export function queueFinalAnswer(tx: Queryable, { tenantId, operation, key }: IdempotencyScope, fingerprint: Buffer, answer: StoredAnswer): void {
  tx.beforeCommit({
    text: `WITH stored AS (
             INSERT INTO idempotency_records (tenant_id, operation, idempotency_key, fingerprint, response_status, response_headers, response_body)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (tenant_id, operation, idempotency_key) DO UPDATE
               SET response_status = EXCLUDED.response_status, response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body
               WHERE idempotency_records.response_status IS NULL AND idempotency_records.fingerprint = EXCLUDED.fingerprint
             RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM stored), 'idempotent answer')`,
    values: [tenantId, operation, key, fingerprint, answer.status, JSON.stringify(answer.headers), answer.body],
  });
}

/** Queues the final answer of a key already bound (whatever its fingerprint), to travel with COMMIT: for work
 * finished on the key's behalf by someone other than its request (the sweeper resolving a fund request's claim). A
 * key with no binding, or with an answer already, is left as it is. */
export function queueAnswerOfBoundKey(tx: Queryable, { tenantId, operation, key }: IdempotencyScope, answer: StoredAnswer): void {
  tx.beforeCommit({
    text: `UPDATE idempotency_records SET response_status = $4, response_headers = $5, response_body = $6
           WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 AND response_status IS NULL`,
    values: [tenantId, operation, key, answer.status, JSON.stringify(answer.headers), answer.body],
  });
}
