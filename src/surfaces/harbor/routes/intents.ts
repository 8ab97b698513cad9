// POST /harbor/intents (create from a principal-signed envelope), GET /harbor/intents/{id}, GET /harbor/intents, and
// the reads the operator routes share (routes/operator-intents.ts).
import type { FastifyInstance } from 'fastify';
import { findIntent, intentStates, listIntents, type IntentState } from '../../../db/intent-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { createIntent } from '../../../engine/create.ts';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { engineMutation } from '../engine-mutation.ts';
import { presentIntent } from '../present-intent.ts';

export const intentIdParams = {
  type: 'object',
  required: ['intent_id'],
  properties: { intent_id: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } },
} as const;


/** Every role reads intents; a restricted key needs the discovery scope (the client's `discovery:read` tools). */
export const intentReaders = { roles: anyRole, scope: 'mcp.discovery:read' } as const;

export async function intentRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/intents',
    // The body is checked inside, after the signing-version gate, so that a v4 envelope is "deprecated".
    { config: { access: { roles: lifecycle.create.roles, scope: 'mcp.spend:write' } }, schema: { body: { type: 'object' } } },
    (request, reply) =>
      engineMutation(app, request, reply, 'create', async (tx, principal) => {
        const intent = await createIntent(tx, principal, request.body);
        return { status: 201, body: presentIntent(intent) };
      }),
  );

  app.get<{ Params: { intent_id: string } }>(
    '/intents/:intent_id',
    { config: { access: intentReaders }, schema: { params: intentIdParams } },
    (request) => readIntent(app, principalOf(request).tenantId, request.params.intent_id),
  );

  app.get<{ Querystring: { limit: number; state?: IntentState; cursor?: string } }>(
    '/intents',
    {
      config: { access: intentReaders },
      schema: { querystring: intentListQuery({ state: { type: 'string', enum: intentStates } }) },
    },
    async (request) => {
      const { limit, state, cursor } = request.query;
      const page = await readIntentPage(app, principalOf(request).tenantId, { limit, state, cursor });
      return { object: 'list', data: page.items, has_more: page.hasMore, next_cursor: page.nextCursor };
    },
  );
}

/** The query of an intent list: a page size, a cursor, and the filters a route names. Anything else is refused. */
export function intentListQuery(filters: Record<string, object>) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
      cursor: intentIdParams.properties.intent_id,
      ...filters,
    },
  } as const;
}

/** One intent of the tenant as the API shows it; an intent of another tenant is no different from none (404). */
export async function readIntent(app: FastifyInstance, tenantId: string, intentId: string) {
  const intent = await app.database.tenant(tenantId, (tx) => findIntent(tx, tenantId, intentId.toLowerCase()));
  if (!intent) throw new ServiceError('intent.not_found');
  return presentIntent(intent);
}

/**
 * A page of the tenant's intents, newest first. The cursor is the last intent id of the previous page; one that
 * names no intent of this tenant (mistyped, or another tenant's) is refused, rather than read as the end of the
 * list, which a caller would take for "no more intents".
 */
export async function readIntentPage(
  app: FastifyInstance,
  tenantId: string,
  query: { limit: number; state?: IntentState | undefined; payeeDid?: string | undefined; cursor?: string | undefined },
) {
  const startingAfter = query.cursor?.toLowerCase();
  const page = await app.database.tenant(tenantId, async (tx) => {
    const found = await listIntents(tx, tenantId, { limit: query.limit, state: query.state, payeeDid: query.payeeDid, startingAfter });
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
