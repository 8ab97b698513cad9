// What the engine's command routes share: the shape of a command's route module, and the mutation every handler runs
// (the recognition proof, required in live, checked when present in sandbox, none for a command the table gives no
// purpose; idempotency with replay; the answer sent with its status and headers), for the command the route was
// registered for (src/surfaces/harbor/engine-routes.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteShorthandOptionsWithHandler,
} from 'fastify';
import type { Principal } from '../../credentials/principal.ts';
import { principalOf } from '../../plugins/access.ts';
import type { Queryable } from '../../infra/database.ts';
import { lifecycle, type RoutedCommandName } from '../../engine/lifecycle.ts';
import { runIdempotent, type CallOutside, type EngineAnswer } from '../../plugins/idempotency.ts';
import { verifyRequestRecognition } from '../../services/recognition-service.ts';
import { recognitionProofHeaderName } from '../../signing/recognition.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The lifecycle command an engine route runs (src/engine/lifecycle.ts), set where the route is registered. */
    lifecycleCommand?: RoutedCommandName;
  }
}

type TypedRouteOptions<Schema extends FastifySchema> = RouteShorthandOptionsWithHandler<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGenericInterface, ContextConfigDefault, Schema, TypeBoxTypeProvider
>;

/** What a command's route module gives: its contract and handler, and the few route options a command needs. */
export type EngineRouteOptions<Schema extends FastifySchema> = Pick<TypedRouteOptions<Schema>, 'handler' | 'attachValidation' | 'preValidation'> & {
  readonly schema: Schema;
  /** The body may be left out (src/plugins/json-body.ts). */
  readonly bodyOptional?: true;
};

/** Registers the route of one command, at the table's method and URL and with its access. */
export type EngineRoute = <const Schema extends FastifySchema>(options: EngineRouteOptions<Schema>) => void;

/** A command's route module: it registers the command's route through `route`. */
export type EngineRouteDefinition = (app: FastifyInstance, route: EngineRoute) => void;

/** `Body` is the route's success answer: the one `work` builds, or the stored answer of an earlier request with the
 * same key to the same route (the response validator checks both against the route's contract in tests). */
export async function engineMutation<Body = unknown>(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  /** The command's answer, or (funding) a call to make outside any transaction and the phase that follows it. */
  work: (tx: Queryable, principal: Principal) => Promise<EngineAnswer | CallOutside>,
): Promise<Body> {
  const command = request.routeOptions.config.lifecycleCommand;
  if (command === undefined) throw new Error(`engineMutation called on ${request.routeOptions.url}, which is not an engine route`);
  const principal = principalOf(request);
  // The table's idempotency operation and recognition purpose for the command.
  const { idempotencyOperation: operation, recognitionPurpose: purpose } = lifecycle[command];
  const checkRecognition = async (tx: Queryable, requiredPurpose: string): Promise<void> => {
    const proofHeader = request.headers[recognitionProofHeaderName];
    if (principal.environment !== 'live' && proofHeader === undefined) return;
    await verifyRequestRecognition(tx, Array.isArray(proofHeader) ? proofHeader.join(',') : proofHeader, {
      tenantId: principal.tenantId,
      purpose: requiredPurpose,
      method: request.method,
      path: request.url.split('?')[0]!,
      bodyBytes: request.rawBody ?? new Uint8Array(0),
      nowMs: Date.now(),
      idempotencyKey: typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined,
    });
  };
  // Every command on one intent may commit in a group with others of its tenant (src/engine/group-commit.ts); the
  // sandbox bootstrap, which writes the tenant's own sandbox set-up, runs alone.
  const intentId = (request.params as { intent_id?: unknown } | undefined)?.intent_id;
  const group = command === 'sandboxBootstrap' ? undefined : { intentId: typeof intentId === 'string' ? intentId : undefined };
  const result = await runIdempotent(
    app.database,
    request,
    // The proof is checked on replays too: a stored answer (a capability token, say) is only for the agent.
    { tenantId: principal.tenantId, operation, group, ...(purpose === null ? {} : { guard: (tx: Queryable) => checkRecognition(tx, purpose) }) },
    (tx) => work(tx, principal),
  );
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return result.body as Body;
}
