// Idempotency of the engine POSTs (docs/engine.md, "Idempotency"), in Postgres, correct across processes.
//
// One tenant transaction per request. A transaction-scoped advisory lock on (tenant, operation, key) admits one
// request at a time: a duplicate that arrives while the first runs gets 409 `idempotency.request_in_progress`.
// Once an answer is stored it is served to every replay without regard to the lock, so concurrent replays of a
// finished request never turn each other away.
// The stored answer is written in the same transaction as the work, so a crash leaves neither the work nor the
// record, and the retry runs afresh. Only final answers are stored: a 402 challenge or a 202 pending answer is
// not, so the same request re-sent with a rail credential (or as a poll) runs again, as the spec's handshake needs.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors/service-error.ts';
import { idempotencyKeyLengthMax, idempotencyKeyLengthMin } from '../limits.ts';
import type { Database, Queryable, Statement } from '../infra/database.ts';

import type { EngineAnswer, ResponseHeaders } from '../engine/answer.ts';

export type { EngineAnswer, ResponseHeaders };

export interface IdempotentResult extends EngineAnswer {
  readonly replayed: boolean;
}

/** The engine operations the spec makes idempotent; each key is scoped to one of them. */
export type IdempotentOperation = 'intent.create' | 'intent.fund' | 'intent.evidence' | 'intent.settlement_confirm' | 'capability.verify' | 'sandbox.bootstrap' | 'sandbox.evidence';

/** Final answers: successes except 202 (pending, to be polled). 402 and errors are never stored. */
const isFinal = (status: number): boolean => status >= 200 && status < 300 && status !== 202;

export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  // A repeated header is ambiguous: refuse it rather than pick one.
  if (Array.isArray(header) || header.length < idempotencyKeyLengthMin || header.length > idempotencyKeyLengthMax) {
    throw new ServiceError('idempotency.key_invalid');
  }
  return header;
}

/** What makes two requests "the same": method, path and the exact body bytes. */
function fingerprintOf(request: FastifyRequest): Buffer {
  return createHash('sha256')
    .update(`${request.method}\n${request.url.split('?')[0]}\n`)
    .update(request.rawBody ?? Buffer.alloc(0))
    .digest();
}

/** A signed 64-bit lock id from the key's scope; a collision only makes one request wait its turn (409). */
export function idempotencyLockId(tenantId: string, operation: string, key: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${operation}\u0000${key}`).digest().readBigInt64BE(0).toString();
}

/**
 * Runs `work` in a tenant transaction, at most once per (tenant, operation, idempotency key) for final answers.
 * Without a key, it simply runs `work` in a tenant transaction. `guard` runs first, on every request, replays
 * included: a check that authenticates the request (a recognition proof) must not be skipped by replaying.
 */
export async function runIdempotent(
  database: Database,
  request: FastifyRequest,
  scope: { tenantId: string; operation: IdempotentOperation; guard?: (tx: Queryable) => Promise<void> },
  work: (tx: Queryable) => Promise<EngineAnswer>,
): Promise<IdempotentResult> {
  const key = idempotencyKeyOf(request);
  const guard = scope.guard ?? (async () => {});
  if (key === undefined) {
    return {
      ...(await database.tenant(scope.tenantId, async (tx) => {
        await guard(tx);
        return work(tx);
      })),
      replayed: false,
    };
  }
  const fingerprint = fingerprintOf(request);
  return database.tenant(scope.tenantId, async (tx) => {
    // The lock and the look-up share a round trip but not a snapshot: each statement of a batch reads what was
    // committed when it starts, so a first request that commits and unlocks in between is seen by the look-up.
    const [locked, stored] = await tx.batch([
      tryAdvisoryLockStatement(idempotencyLockId(scope.tenantId, scope.operation, key)),
      findRecordStatement(scope.tenantId, scope.operation, key),
    ]);
    if (stored) {
      // A stored answer is final and never changes, so it is served whoever holds the lock: concurrent replays
      // each hold it for their own short transaction, and none of them is a first request still running.
      await guard(tx);
      if (!stored.fingerprint.equals(fingerprint)) throw new ServiceError('idempotency.key_reused');
      return { status: stored.status, headers: stored.headers, body: JSON.parse(stored.body) as unknown, replayed: true };
    }
    // No answer yet and the lock held elsewhere: the first request is still running (its answer is not committed).
    if (!locked) throw new ServiceError('idempotency.request_in_progress');
    await guard(tx);
    const answer = await work(tx);
    if (isFinal(answer.status)) {
      tx.beforeCommit({
        text: `INSERT INTO idempotency_records (tenant_id, operation, idempotency_key, fingerprint, response_status, response_headers, response_body)
               VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        values: [scope.tenantId, scope.operation, key, fingerprint, answer.status, JSON.stringify(answer.headers ?? {}), JSON.stringify(answer.body)],
      });
    }
    return { ...answer, replayed: false };
  });
}

function tryAdvisoryLockStatement(lockId: string): Statement<boolean> {
  return { text: 'SELECT pg_try_advisory_xact_lock($1) AS locked', values: [lockId], read: ({ rows }) => rows[0].locked === true };
}

interface StoredAnswer {
  readonly fingerprint: Buffer;
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly body: string;
}

function findRecordStatement(tenantId: string, operation: string, key: string): Statement<StoredAnswer | undefined> {
  return {
    text: `SELECT fingerprint, response_status, response_headers, response_body FROM idempotency_records
           WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3`,
    values: [tenantId, operation, key],
    read: ({ rows }) => {
      const row = rows[0] as { fingerprint: Buffer; response_status: number; response_headers: ResponseHeaders; response_body: string } | undefined;
      return row && { fingerprint: row.fingerprint, status: row.response_status, headers: row.response_headers, body: row.response_body };
    },
  };
}
