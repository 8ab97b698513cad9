// Idempotency of the engine POSTs, the HTTP side (docs/engine.md, "Idempotency"): the `idempotency-key` header read
// and checked, and the fingerprint that makes two requests "the same". The store, its lock and the command
// pipeline around it are the engine's (src/engine/pipeline.ts).
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors/service-error.ts';
import { idempotencyKeyLengthMax, idempotencyKeyLengthMin } from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import type { CallOutside, EngineAnswer, ResponseHeaders } from '../engine/answer.ts';
import { runCommand, type CommandScope, type IdempotencyRecord, type IdempotentOperation, type IdempotentResult } from '../engine/pipeline.ts';

export { idempotencyLockId } from '../engine/pipeline.ts';
export type { CallOutside, EngineAnswer, IdempotentOperation, IdempotentResult, ResponseHeaders };

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

/** The request's idempotency key with its fingerprint, or undefined when it carries none. */
export function idempotencyRecordOf(request: FastifyRequest): IdempotencyRecord | undefined {
  const key = idempotencyKeyOf(request);
  return key === undefined ? undefined : { key, fingerprint: fingerprintOf(request) };
}

/**
 * Runs `work` in a tenant transaction, at most once per (tenant, operation, idempotency key) for final answers, or,
 * when `work` hands on a call to make outside (a rail), in two phases around it (src/engine/pipeline.ts). `guard`
 * runs first, on every request, replays included.
 */
export function runIdempotent(
  database: Database,
  request: FastifyRequest,
  scope: Omit<CommandScope, 'record'>,
  work: (tx: Queryable) => Promise<EngineAnswer | CallOutside>,
): Promise<IdempotentResult> {
  return runCommand(database, { ...scope, record: idempotencyRecordOf(request) }, work);
}
