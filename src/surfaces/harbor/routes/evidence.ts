// POST /harbor/intents/{id}/evidence: payee-signed evidence, evaluated against the intent's release rule; the
// attestations and agent run the client sends in headers are stored with it for the intent's agent receipts.
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { EvidenceAnswer, EvidenceBody, EvidenceHeaders, IntentIdParams } from '../../../contracts/intents.ts';
import { parseAgentRunId, parseAttestationsHeader } from '../../../engine/decide/attestations.ts';
import { recordEvidence } from '../../../engine/evidence.ts';
import { engineMutation, type EngineRouteDefinition } from '../engine-mutation.ts';

/** The `evidence` command's route (src/surfaces/harbor/engine-routes.ts registers it as the lifecycle table says). */
export const evidenceRoute: EngineRouteDefinition = (app, route) =>
  route(
    {
      schema: {
        summary: 'Submit payee-signed evidence',
        params: IntentIdParams,
        body: EvidenceBody,
        headers: EvidenceHeaders,
        response: { 200: EvidenceAnswer, ...authenticatedBodyErrors(404, 409, 422) },
      },
      handler: (request, reply) =>
        engineMutation<EvidenceAnswer>(app, request, reply, async (tx, principal) => {
          // Judged before anything is written, so a bad header leaves the evidence unrecorded and can be sent again.
          const provenance = {
            externalAttestations: parseAttestationsHeader(request.headers['x-svc-agent-receipt-attestations']),
            agentRunId: parseAgentRunId(request.headers['x-svc-agent-run-id']),
          };
          // The schema's default has filled in `artifacts`.
          const recorded = await recordEvidence(tx, principal.tenantId, request.params.intent_id, { ...request.body, artifacts: request.body.artifacts ?? [] }, provenance);
          return {
            status: 200,
            body: {
              tenant: principal.tenantId,
              tenant_id: principal.tenantId,
              intent_id: recorded.intent.intentId,
              state: recorded.intent.state,
              intent_state: recorded.intent.state,
              predicate_passed: recorded.evaluation.passed,
              predicate_evaluation: recorded.evaluation,
              payload_digest: recorded.payloadDigestHex,
              artifacts_digest: recorded.artifactsDigestHex,
            },
          };
        }),
    },
  );
