// POST /v1/spend/decisions/{decision_id}/complete: the guarded tool reports back on a /verify reservation —
// consumed (the cents count against the intent for good) or released (they are freed), with the call's action
// receipt (docs/capabilities.md, docs/protocol.md#agent-receipts).
import type { FastifyInstance } from 'fastify';
import type { SpendOutcome } from '../../../db/spend-decision-repository.ts';
import { principalOf } from '../../../plugins/access.ts';
import { toolCallIdLengthMax } from '../../../limits.ts';
import { completeSpendDecision } from '../../../services/capability-service.ts';
import { spendRoles, spendScope } from './verify.ts';

const decisionParams = {
  type: 'object',
  required: ['decision_id'],
  properties: { decision_id: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } },
} as const;

const completeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['outcome'],
  properties: {
    outcome: { type: 'string', enum: ['consumed', 'released'] },
    // For the call's action receipt: the tool's own call id (default: the decision id) and name (default: the operation).
    tool_call_id: { type: 'string', minLength: 1, maxLength: toolCallIdLengthMax },
    tool_name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' },
  },
} as const;

export async function spendDecisionRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { decision_id: string }; Body: { outcome: SpendOutcome; tool_call_id?: string; tool_name?: string } }>(
    '/v1/spend/decisions/:decision_id/complete',
    { config: { access: { roles: spendRoles, scope: spendScope } }, schema: { params: decisionParams, body: completeBody } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { outcome, tool_call_id: toolCallId, tool_name: toolName } = request.body;
      return app.database.tenant(tenantId, (tx) =>
        completeSpendDecision(tx, app.gatewayKeys, tenantId, request.params.decision_id, outcome, { toolCallId, toolName }));
    },
  );
}
