// GET /harbor/intents/{id}/budget: what an intent's capability can still spend, read without reserving anything
// (docs/capabilities.md "Remaining budget"). The MCP tool svc_get_budget_remaining calls the spend preflight instead,
// which answers the same amounts with the client's fields.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { IntentBudget, IntentIdParams } from '../../../contracts/intents.ts';
import { principalOf } from '../../../plugins/access.ts';
import { readIntentBudget } from '../../../services/capability-service.ts';
import { intentReaders } from './intents.ts';

export async function budgetRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/intents/:intent_id/budget',
    {
      config: { access: intentReaders },
      schema: { summary: 'What an intent\'s capability can still spend', params: IntentIdParams, response: { 200: IntentBudget, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const intentId = request.params.intent_id.toLowerCase();
      const budget = await app.database.tenant(tenantId, (tx) => readIntentBudget(tx, tenantId, intentId));
      // The tenant is echoed, as on every intent read, so a client can check the answer is about what it asked.
      return { object: 'intent_budget', tenant_id: tenantId, ...budget } as const;
    },
  );
}
