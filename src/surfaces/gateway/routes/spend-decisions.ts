// POST /v1/spend/decisions/{decision_id}/complete: the guarded tool reports back on a /verify reservation —
// consumed (the cents count against the intent for good) or released (they are freed). docs/capabilities.md.
import type { FastifyInstance } from 'fastify';
import type { SpendOutcome } from '../../../db/spend-decision-repository.ts';
import { principalOf } from '../../../plugins/access.ts';
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
  properties: { outcome: { type: 'string', enum: ['consumed', 'released'] } },
} as const;

export async function spendDecisionRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { decision_id: string }; Body: { outcome: SpendOutcome } }>(
    '/v1/spend/decisions/:decision_id/complete',
    { config: { access: { roles: spendRoles, scope: spendScope } }, schema: { params: decisionParams, body: completeBody } },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => completeSpendDecision(tx, tenantId, request.params.decision_id, request.body.outcome));
    },
  );
}
