// POST /harbor/intents/{id}/review/resolve: an operator resolves an intent the release gate held
// (docs/release-gate.md#resolving-a-hold) as a release, a refund or a split, with the signed receipt of the resolution.
import { authenticatedBodyErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import { IntentIdParams } from '../../../contracts/intents.ts';
import { ResolveAnswer, ResolveBody } from '../../../contracts/review.ts';
import { resolveHold } from '../../../services/review-service.ts';
import { engineMutation, type EngineRouteDefinition } from '../engine-mutation.ts';
import { presentIntent } from '../present-intent.ts';

/** The `resolve` command's route (src/surfaces/harbor/engine-routes.ts registers it as the lifecycle table says). */
export const resolveRoute: EngineRouteDefinition = (app, route) =>
  route({
    schema: {
      summary: 'Resolve a held intent: release, refund or split, with a signed resolution receipt',
      params: IntentIdParams,
      body: ResolveBody,
      headers: IdempotencyHeaders,
      response: { 200: ResolveAnswer, ...authenticatedBodyErrors(404, 409, 422) },
    },
    handler: async (request, reply) =>
      engineMutation<ResolveAnswer>(app, request, reply, async (tx, principal) => {
        const done = await resolveHold(tx, principal, request.params.intent_id, request.body, app.engineEffects);
        return {
          status: 200,
          body: {
            ...presentIntent(done.settlement.intent),
            settlement: {
              action: done.settlement.action,
              reason: done.settlement.reason,
              transaction_id: done.settlement.transactionId,
              released_cents: done.settlement.releasedCents,
              refunded_cents: done.settlement.refundedCents,
            },
            resolution: {
              resolution: done.resolution,
              released_cents: done.releasedCents,
              refunded_cents: done.refundedCents,
              resolved_by: done.resolvedBy,
              resolved_at: done.resolvedAt,
              receipt: done.receipt.wire,
            },
          },
        };
      }),
  });
