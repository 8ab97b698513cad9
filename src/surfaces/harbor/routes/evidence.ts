// POST /harbor/intents/{id}/evidence: payee-signed evidence, evaluated against the intent's release rule.
import type { FastifyInstance } from 'fastify';
import { didLengthMax, evidenceArtifactsMax } from '../../../limits.ts';
import { recordEvidence, type EvidenceBody } from '../../../engine/evidence.ts';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { engineMutation } from '../engine-mutation.ts';
import { intentIdParams } from './intents.ts';

const evidenceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['payload', 'payee_did', 'payee_pubkey', 'payee_signature', 'submitted_at'],
  properties: {
    // Any JSON here; a payload that is not an object is an evidence-shape problem (422), not a malformed body.
    payload: {},
    artifacts: { type: 'array', maxItems: evidenceArtifactsMax, items: { type: 'string', pattern: '^[0-9a-f]{64}$' }, default: [] },
    payee_did: { type: 'string', minLength: 1, maxLength: didLengthMax },
    payee_pubkey: { type: 'string', maxLength: 128 },
    payee_signature: { type: 'string', maxLength: 128 },
    submitted_at: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

export async function evidenceRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { intent_id: string }; Body: EvidenceBody }>(
    '/intents/:intent_id/evidence',
    { config: { access: { roles: lifecycle.evidence.roles, scope: 'mcp.evidence:write' } }, schema: { params: intentIdParams, body: evidenceBody } },
    (request, reply) =>
      engineMutation(app, request, reply, 'evidence', async (tx, principal) => {
        const recorded = await recordEvidence(tx, principal.tenantId, request.params.intent_id, request.body);
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
  );
}
