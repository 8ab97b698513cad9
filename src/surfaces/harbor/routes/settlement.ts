// POST /harbor/intents/{id}/settlement/confirm: carries out the settlement the stored evaluation implies
// (docs/engine.md#settlement--post-harborintentsidsettlementconfirm: it does not choose between release and refund; the
// rule both parties signed does).
import type { FastifyInstance } from 'fastify';
import { compileBodyValidator } from '../../../infra/validation.ts';
import { confirmSettlement, type SettlementAction } from '../../../engine/settle.ts';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { engineMutation } from '../engine-mutation.ts';
import { presentIntent } from '../present-intent.ts';
import { intentIdParams } from './intents.ts';

interface ConfirmBody {
  /** A guard: when given, confirm refuses (409) if the rule implies the other action. */
  expected_action?: SettlementAction;
}

/** Exported for the MCP confirm tool, whose input schema is this body schema. */
export const confirmBody = {
  type: 'object',
  additionalProperties: false,
  properties: { expected_action: { type: 'string', enum: ['release', 'refund'] } },
} as const;

const assertConfirmBody: (value: unknown) => asserts value is ConfirmBody = compileBodyValidator<ConfirmBody>(confirmBody);

export async function settlementRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { intent_id: string } }>(
    '/intents/:intent_id/settlement/confirm',
    // The body is optional (clients send `{}` or nothing), so it is checked in the handler.
    { config: { access: { roles: lifecycle.confirm.roles, scope: 'mcp.settlement:write' } }, schema: { params: intentIdParams } },
    async (request, reply) => {
      const body = request.body ?? {};
      assertConfirmBody(body);
      return engineMutation(app, request, reply, 'confirm', async (tx, principal) => {
        const settlement = await confirmSettlement(tx, principal.tenantId, request.params.intent_id, app.engineEffects, body.expected_action);
        return {
          status: 200,
          body: {
            ...presentIntent(settlement.intent),
            settlement: {
              action: settlement.action,
              reason: settlement.reason,
              transaction_id: settlement.transactionId,
            },
          },
        };
      });
    },
  );
}
