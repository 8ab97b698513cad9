// POST /v1/spend/decisions/{decision_id}/complete: the guarded tool reports back on a /verify reservation —
// consumed (the cents count against the intent for good) or released (they are freed), with the call's action
// receipt (docs/capabilities.md, docs/protocol.md#agent-receipts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { SpendDecision, SpendDecisionCompleteBody, SpendDecisionParams } from '../../../contracts/spend-decisions.ts';
import { principalOf } from '../../../plugins/access.ts';
import { completeSpendDecision } from '../../../services/capability-service.ts';
import { spendRoles, spendScope } from './verify.ts';

export async function spendDecisionRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/spend/decisions/:decision_id/complete',
    {
      config: { access: { roles: spendRoles, scope: spendScope } },
      schema: {
        summary: 'Report a /verify reservation consumed or released',
        params: SpendDecisionParams,
        body: SpendDecisionCompleteBody,
        response: { 200: SpendDecision, ...authenticatedBodyErrors(404, 409) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { outcome, tool_call_id: toolCallId, tool_name: toolName } = request.body;
      return app.database.tenant(tenantId, (tx) =>
        completeSpendDecision(tx, app.gatewayKeys, tenantId, request.params.decision_id, outcome, { toolCallId, toolName }));
    },
  );
}
