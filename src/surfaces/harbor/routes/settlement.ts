// POST /harbor/intents/{id}/settlement/confirm: carries out the settlement the stored evaluation implies
// (docs/engine.md#settlement--post-harborintentsidsettlementconfirm: it does not choose between release and refund; the
// rule both parties signed does).
import { refuseAttachedNonBodyError } from '../../body-checked-in-handler.ts';
import { authenticatedBodyErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import { ConfirmBody, IntentIdParams, SettlementAnswer } from '../../../contracts/intents.ts';
import { compileBodyValidator } from '../../../infra/validation.ts';
import { confirmSettlement, isHold } from '../../../engine/settle.ts';
import { engineMutation, type EngineRouteDefinition } from '../engine-mutation.ts';
import { presentIntent, reviewHoldFacts } from '../present-intent.ts';

/** Exported for the MCP confirm tool, whose input schema is this body schema. */
export const confirmBody = ConfirmBody;

const assertConfirmBody: (value: unknown) => asserts value is ConfirmBody = compileBodyValidator<ConfirmBody>(ConfirmBody);

/** The `confirm` command's route (src/surfaces/harbor/engine-routes.ts registers it as the lifecycle table says). */
export const confirmRoute: EngineRouteDefinition = (app, route) =>
  route(
    {
      // The body is optional (clients send `{}` or nothing), so it is checked in the handler, against the schema
      // documented here; the route's own validation is attached rather than raised, as a missing body is fine.
      attachValidation: true,
      schema: {
        summary: 'Confirm the settlement the release rule implies',
        params: IntentIdParams,
        body: ConfirmBody,
        headers: IdempotencyHeaders,
        response: { 200: SettlementAnswer, ...authenticatedBodyErrors(404, 409, 422) },
      },
      handler: async (request, reply) => {
        refuseAttachedNonBodyError(request);
        const body = request.body ?? {};
        assertConfirmBody(body);
        return engineMutation<SettlementAnswer>(app, request, reply, async (tx, principal) => {
          const outcome = await confirmSettlement(tx, principal.tenantId, request.params.intent_id, app.engineEffects, body.expected_action);
          if (isHold(outcome)) {
            // The release gate held the release: the intent waits in `held` for an operator (docs/release-gate.md).
            return { status: 200, body: { ...presentIntent(outcome.intent), review_hold: reviewHoldFacts(outcome) } };
          }
          return {
            status: 200,
            body: {
              ...presentIntent(outcome.intent),
              settlement: {
                action: outcome.action,
                reason: outcome.reason,
                transaction_id: outcome.transactionId,
                released_cents: outcome.releasedCents,
                refunded_cents: outcome.refundedCents,
              },
            },
          };
        });
      },
    },
  );
