// POST /harbor/intents/{id}/settlement/confirm: carries out the settlement the stored evaluation implies
// (docs/engine.md#settlement--post-harborintentsidsettlementconfirm: it does not choose between release and refund; the
// rule both parties signed does).
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../../errors/service-error.ts';
import { compileBodyValidator } from '../../../infra/validation.ts';
import { confirmSettlement, type SettlementAction } from '../../../services/settlement-service.ts';
import { recognitionPurposes } from '../../../signing/recognition.ts';
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
    { config: { access: { roles: ['admin', 'operator'], scope: 'mcp.settlement:write' } }, schema: { params: intentIdParams } },
    async (request, reply) => {
      const body = request.body ?? {};
      assertConfirmBody(body);
      return engineMutation(app, request, reply, { operation: 'intent.settlement_confirm', purpose: recognitionPurposes.settlementConfirm }, async (tx, principal) => {
        const settlement = await confirmSettlement(tx, principal.tenantId, request.params.intent_id, app.engineEffects);
        if (body.expected_action !== undefined && body.expected_action !== settlement.action) {
          // Thrown inside the transaction, so nothing of the settlement above commits.
          throw new ServiceError('intent.invalid_state', {
            message: `The release rule implies ${settlement.action}, not ${body.expected_action}.`,
            details: { implied_action: settlement.action },
          });
        }
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
