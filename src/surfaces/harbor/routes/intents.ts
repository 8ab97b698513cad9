// POST /harbor/intents (create from a principal-signed envelope), GET /harbor/intents/{id}, GET /harbor/intents, and
// the reads the operator routes share (routes/operator-intents.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { refuseAttachedNonBodyError } from '../../body-checked-in-handler.ts';
import { authenticatedBodyErrors, authenticatedErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import { CreateIntentBody, Intent, IntentIdParams, IntentList, IntentListQuery, type IntentState } from '../../../contracts/intents.ts';
import { findIntent, findIntentStatement, listIntents } from '../../../db/intent-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { createIntent } from '../../../engine/create.ts';
import { engineMutation, type EngineRouteDefinition } from '../engine-mutation.ts';
import { presentIntent, presentRailActivity } from '../present-intent.ts';
import { findSucceededAttemptStatement } from '../../../db/funding-attempt-repository.ts';
import { findIntentInstructionsStatement } from '../../../db/rail-instruction-repository.ts';

/** Until every route imports `IntentIdParams` from src/contracts/intents.ts. */
export { IntentIdParams as intentIdParams } from '../../../contracts/intents.ts';

/** Every role reads intents; a restricted key needs the discovery scope (the client's `discovery:read` tools). */
export const intentReaders = { roles: anyRole, scope: 'mcp.discovery:read' } as const;

/** The `create` command's route, POST /harbor/intents (src/surfaces/harbor/engine-routes.ts registers it as the
 * lifecycle table says). */
export const createIntentRoute: EngineRouteDefinition = (app, route) =>
  route(
    {
      // The engine checks the body itself, after the signing-version gate, so that a v4 envelope is "deprecated"
      // rather than a schema refusal: the route's own validation is attached, not raised (createIntent re-checks).
      attachValidation: true,
      schema: {
        summary: 'Create an intent from a principal-signed envelope',
        body: CreateIntentBody,
        headers: IdempotencyHeaders,
        response: { 200: Intent, 201: Intent, ...authenticatedBodyErrors(404, 409, 422) },
      },
      handler: (request, reply) => {
        refuseAttachedNonBodyError(request);
        return engineMutation<Intent>(app, request, reply, async (tx, principal) => {
          const intent = await createIntent(tx, principal, request.body);
          return { status: 201, body: presentIntent(intent) };
        });
      },
    },
  );

export async function intentRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/intents/:intent_id',
    {
      config: { access: intentReaders },
      schema: { summary: 'Read an intent', params: IntentIdParams, response: { 200: Intent, ...authenticatedErrors(404) } },
    },
    (request) => readIntent(app, principalOf(request).tenantId, request.params.intent_id),
  );

  routes.get(
    '/intents',
    {
      config: { access: intentReaders },
      schema: { summary: 'List intents, newest first', querystring: IntentListQuery, response: { 200: IntentList, ...authenticatedErrors() } },
    },
    async (request) => {
      const { limit, state, cursor } = request.query;
      const page = await readIntentPage(app, principalOf(request).tenantId, { limit, state, cursor });
      return { object: 'list', data: page.items, has_more: page.hasMore, next_cursor: page.nextCursor } as const;
    },
  );
}

/** One intent of the tenant as the API shows it; an intent of another tenant is no different from none (404). */
export async function readIntent(app: FastifyInstance, tenantId: string, intentId: string): Promise<Intent> {
  const id = intentId.toLowerCase();
  // One round trip: statements sent on one connection one after another would queue behind each other anyway.
  const [intent, funding, instructions] = await app.database.tenant(tenantId, (tx) =>
    tx.batch([findIntentStatement(tenantId, id), findSucceededAttemptStatement(tenantId, id), findIntentInstructionsStatement(tenantId, id)]));
  if (!intent) throw new ServiceError('intent.not_found');
  return { ...presentIntent(intent), ...presentRailActivity(funding, instructions) };
}

/**
 * A page of the tenant's intents, newest first. The cursor is the last intent id of the previous page; one that
 * names no intent of this tenant (mistyped, or another tenant's) is refused, rather than read as the end of the
 * list, which a caller would take for "no more intents".
 */
export async function readIntentPage(
  app: FastifyInstance,
  tenantId: string,
  query: { limit?: number | undefined; state?: IntentState | undefined; payeeDid?: string | undefined; cursor?: string | undefined },
) {
  // The query schema's default has filled it in for a route; other callers (the console) may leave it out.
  const limit = query.limit ?? pageSizeDefault;
  const startingAfter = query.cursor?.toLowerCase();
  const page = await app.database.tenant(tenantId, async (tx) => {
    const found = await listIntents(tx, tenantId, { limit, state: query.state, payeeDid: query.payeeDid, startingAfter });
    // Only an empty page can come from an unknown cursor; the look-up costs a round trip on that page alone.
    const cursorKnown = found.intents.length > 0 || startingAfter === undefined || (await findIntent(tx, tenantId, startingAfter)) !== undefined;
    return { ...found, cursorKnown };
  });
  if (!page.cursorKnown) throw new ServiceError('intent.cursor_unknown', { details: { cursor: startingAfter } });
  return {
    items: page.intents.map(presentIntent),
    hasMore: page.hasMore,
    nextCursor: page.hasMore ? (page.intents.at(-1)?.intentId ?? null) : null,
  };
}
