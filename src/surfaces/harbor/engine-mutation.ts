// What the four engine mutations share: the recognition proof (required in live, checked when present in
// sandbox), idempotency with replay, and sending the answer with its status and headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../credentials/principal.ts';
import { principalOf } from '../../plugins/access.ts';
import type { Queryable } from '../../infra/database.ts';
import { runIdempotent, type EngineAnswer, type IdempotentOperation } from '../../plugins/idempotency.ts';
import { verifyRequestRecognition } from '../../services/recognition-service.ts';
import { recognitionProofHeaderName } from '../../signing/recognition.ts';

export interface MutationSpec {
  readonly operation: IdempotentOperation;
  /** The recognition-proof purpose of this mutation (docs/signing.md#recognition-proofs). */
  readonly purpose: string;
}

export async function engineMutation(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: MutationSpec,
  work: (tx: Queryable, principal: Principal) => Promise<EngineAnswer>,
): Promise<unknown> {
  const principal = principalOf(request);
  const checkRecognition = async (tx: Queryable): Promise<void> => {
    const proofHeader = request.headers[recognitionProofHeaderName];
    if (principal.environment !== 'live' && proofHeader === undefined) return;
    await verifyRequestRecognition(tx, Array.isArray(proofHeader) ? proofHeader.join(',') : proofHeader, {
      tenantId: principal.tenantId,
      purpose: spec.purpose,
      method: request.method,
      path: request.url.split('?')[0]!,
      bodyBytes: request.rawBody ?? new Uint8Array(0),
      nowMs: Date.now(),
      idempotencyKey: typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined,
    });
  };
  const result = await runIdempotent(
    app.database,
    request,
    // The proof is checked on replays too: a stored answer (a capability token, say) is only for the agent.
    { tenantId: principal.tenantId, operation: spec.operation, guard: checkRecognition },
    (tx) => work(tx, principal),
  );
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return result.body;
}
