// GET /harbor/operator/v1/intents[/{id}]: the intent reads under the paths the public client's getIntent and its MCP
// discovery tools call (docs/engine.md "Operator reads"). Same intents, presenter and access as /harbor/intents.
import type { FastifyInstance } from 'fastify';
import { intentStates, type IntentState } from '../../../db/intent-repository.ts';
import { didLengthMax } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { intentIdParams, intentListQuery, intentReaders, readIntent, readIntentPage } from './intents.ts';

interface OperatorListQuery {
  limit: number;
  status?: IntentState;
  operator_did?: string;
  cursor?: string;
}

export async function operatorIntentRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { intent_id: string } }>(
    '/operator/v1/intents/:intent_id',
    { config: { access: intentReaders }, schema: { params: intentIdParams } },
    (request) => readIntent(app, principalOf(request).tenantId, request.params.intent_id),
  );

  app.get<{ Querystring: OperatorListQuery }>(
    '/operator/v1/intents',
    {
      config: { access: intentReaders },
      schema: {
        querystring: intentListQuery({
          // The client's name for the intent's state.
          status: { type: 'string', enum: intentStates },
          // The operator is the party that does the work and is paid on release: the intent's payee.
          operator_did: { type: 'string', minLength: 1, maxLength: didLengthMax },
        }),
      },
    },
    async (request) => {
      const { limit, status, operator_did: operatorDid, cursor } = request.query;
      const page = await readIntentPage(app, principalOf(request).tenantId, { limit, state: status, payeeDid: operatorDid, cursor });
      return { object: 'list', items: page.items, has_more: page.hasMore, next_cursor: page.nextCursor };
    },
  );
}
