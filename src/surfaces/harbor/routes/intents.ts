// POST /harbor/intents (create from a principal-signed envelope), GET /harbor/intents/{id}, GET /harbor/intents.
import type { FastifyInstance } from 'fastify';
import { findIntent, intentStates, listIntents, type IntentState } from '../../../db/intent-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../platform/access.ts';
import { createIntent } from '../../../services/intent-creation.ts';
import { recognitionPurposes } from '../../../signing/recognition.ts';
import { engineMutation } from '../engine-mutation.ts';
import { presentIntent } from '../present-intent.ts';

export const intentIdParams = {
  type: 'object',
  required: ['intent_id'],
  properties: { intent_id: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } },
} as const;

/** Roles that may move money through the engine (DESIGN.md §2); confirm is kept from agents. */
export const intentWriters = ['admin', 'operator', 'agent'] as const;

export async function intentRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/intents',
    // The body is checked inside, after the signing-version gate, so that a v4 envelope is "deprecated".
    { config: { access: { roles: intentWriters } }, schema: { body: { type: 'object' } } },
    (request, reply) =>
      engineMutation(app, request, reply, { operation: 'intent.create', purpose: recognitionPurposes.intentCreate }, async (tx, principal) => {
        const intent = await createIntent(tx, principal, request.body);
        return { status: 201, body: presentIntent(intent) };
      }),
  );

  app.get<{ Params: { intent_id: string } }>(
    '/intents/:intent_id',
    { config: { access: { roles: anyRole } }, schema: { params: intentIdParams } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const intent = await app.database.tenant(tenantId, (tx) => findIntent(tx, tenantId, request.params.intent_id.toLowerCase()));
      if (!intent) throw new ServiceError('intent.not_found');
      return presentIntent(intent);
    },
  );

  app.get<{ Querystring: { limit: number; state?: IntentState; cursor?: string } }>(
    '/intents',
    {
      config: { access: { roles: anyRole } },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
            state: { type: 'string', enum: intentStates },
            cursor: intentIdParams.properties.intent_id,
          },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, state, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listIntents(tx, tenantId, { limit, state, startingAfter: cursor?.toLowerCase() }));
      return {
        object: 'list',
        data: page.intents.map(presentIntent),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.intents.at(-1)?.intentId ?? null) : null,
      };
    },
  );
}
