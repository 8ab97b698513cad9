// What the four engine mutations share: the recognition proof (required in live, checked when present in
// sandbox), idempotency with replay, and sending the answer with its status and headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../credentials/principal.ts';
import { principalOf } from '../../plugins/access.ts';
import type { Queryable } from '../../infra/database.ts';
import { lifecycle } from '../../engine/lifecycle.ts';
import { runIdempotent, type CallOutside, type EngineAnswer } from '../../plugins/idempotency.ts';
import { verifyRequestRecognition } from '../../services/recognition-service.ts';
import { recognitionProofHeaderName } from '../../signing/recognition.ts';

/** `Body` is the route's success answer: the one `work` builds, or the stored answer of an earlier request with the
 * same key to the same route (the response validator checks both against the route's contract in tests). */
export async function engineMutation<Body = unknown>(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  /** The lifecycle command (src/engine/lifecycle.ts): its idempotency operation and recognition purpose. */
  command: 'create' | 'fund' | 'evidence' | 'confirm',
  /** The command's answer, or (funding) a call to make outside any transaction and the phase that follows it. */
  work: (tx: Queryable, principal: Principal) => Promise<EngineAnswer | CallOutside>,
): Promise<Body> {
  const principal = principalOf(request);
  const { idempotencyOperation: operation, recognitionPurpose: purpose } = lifecycle[command];
  const checkRecognition = async (tx: Queryable): Promise<void> => {
    const proofHeader = request.headers[recognitionProofHeaderName];
    if (principal.environment !== 'live' && proofHeader === undefined) return;
    await verifyRequestRecognition(tx, Array.isArray(proofHeader) ? proofHeader.join(',') : proofHeader, {
      tenantId: principal.tenantId,
      purpose,
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
    { tenantId: principal.tenantId, operation, guard: checkRecognition },
    (tx) => work(tx, principal),
  );
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return result.body as Body;
}
