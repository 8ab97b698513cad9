// GET /harbor/operator/v1/intents[/{id}]: the intent reads under the paths the public client's getIntent and its MCP
// discovery tools call (docs/engine.md "Operator reads"). Same intents, presenter and access as /harbor/intents.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { Intent, IntentIdParams, OperatorIntentList, OperatorIntentListQuery } from '../../../contracts/intents.ts';
import { principalOf } from '../../../plugins/access.ts';
import { intentReaders, readIntent, readIntentPage } from './intents.ts';

export async function operatorIntentRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/operator/v1/intents/:intent_id',
    {
      config: { access: intentReaders },
      schema: { summary: 'Read an intent (operator path)', params: IntentIdParams, response: { 200: Intent, ...authenticatedErrors(404) } },
    },
    (request) => readIntent(app, principalOf(request).tenantId, request.params.intent_id),
  );

  routes.get(
    '/operator/v1/intents',
    {
      config: { access: intentReaders },
      schema: {
        summary: 'List intents (operator path), newest first',
        querystring: OperatorIntentListQuery,
        response: { 200: OperatorIntentList, ...authenticatedErrors() },
      },
    },
    async (request) => {
      const { limit, status, operator_did: operatorDid, cursor } = request.query;
      const page = await readIntentPage(app, principalOf(request).tenantId, { limit, state: status, payeeDid: operatorDid, cursor });
      return { object: 'list', items: page.items, has_more: page.hasMore, next_cursor: page.nextCursor } as const;
    },
  );
}
