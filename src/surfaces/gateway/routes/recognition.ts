// POST /protocol/v2/recognition/verify: checks an agent recognition proof against an expected purpose, verifier
// and request, and against the tenant's key registry. Always 200 with `valid` when the request itself is well
// formed, so a caller can tell "this proof is bad" (valid: false, code) from "my call is bad" (4xx). In a sandbox
// tenant an unregistered key is accepted as the engine accepts it, and registered only when the nonce is consumed.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { RecognitionVerdict, RecognitionVerifyBody } from '../../../contracts/recognition.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { asServiceError } from '../../../errors/pure-error-mapping.ts';
import { verifyRecognition } from '../../../services/recognition-service.ts';
import {
  decodeRecognitionProofHeader,
  parseRecognitionProof,
  recognitionVerifierIdDefault,
} from '../../../signing/recognition.ts';
import { formatRfc3339SecondsUtc } from '../../../signing/rfc3339.ts';

/** Errors that judge the proof rather than the call: answered as `valid: false` with the code. An unknown
 * schema_version is the artifact-wide code, as on every route that verifies a signed artifact. */
const isProofVerdict = (error: ServiceError): boolean =>
  error.code.startsWith('recognition.') || error.code === 'artifact.schema_version_unsupported';

export async function recognitionRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/protocol/v2/recognition/verify',
    {
      config: { access: { roles: anyRole, scope: 'mcp.a2a:read' } },
      schema: {
        summary: 'Verify an agent recognition proof',
        body: RecognitionVerifyBody,
        response: { 200: RecognitionVerdict, ...authenticatedBodyErrors() },
      },
    },
    async (request): Promise<RecognitionVerdict> => {
      const { tenantId, environment } = principalOf(request);
      const body = request.body;
      // A tenant in the body is a hint: it must be the credential's own (spec, Authentication).
      if (body.expected_verifier?.tenant_id !== undefined && body.expected_verifier.tenant_id !== tenantId) {
        throw new ServiceError('request.tenant_hint_mismatch');
      }
      try {
        const proof = parseRecognitionProof(typeof body.proof === 'string' ? decodeRecognitionProofHeader(body.proof) : body.proof);
        const verified = await app.database.tenant(tenantId, (tx) =>
          verifyRecognition(
            tx,
            proof,
            {
              purpose: body.expected_purpose,
              method: body.expected_request.method,
              path: body.expected_request.path,
              bodyDigestHex: body.expected_request.body_digest_sha256_hex,
              tenantId,
              verifierId: body.expected_verifier?.verifier_id ?? recognitionVerifierIdDefault,
              nowMs: Date.now(),
              idempotencyKey: body.idempotency_key,
              environment,
            },
            { consumeNonce: body.consume_nonce === true },
          ),
        );
        return {
          valid: true,
          key_id: verified.keyId,
          purpose: verified.purpose,
          nonce: verified.nonce,
          issued_at: formatRfc3339SecondsUtc(verified.issuedAtMs),
          expires_at: formatRfc3339SecondsUtc(verified.expiresAtMs),
          message_digest_sha256_hex: verified.messageDigestHex,
          nonce_consumed: body.consume_nonce === true,
          key_registration: verified.keyRegistration,
        };
      } catch (thrown) {
        // The proof's own refusals come from the signing core as SigningErrors, the registry's as ServiceErrors.
        const error = asServiceError(thrown);
        if (error instanceof ServiceError && isProofVerdict(error)) {
          return { valid: false, code: error.code, message: error.message };
        }
        throw thrown;
      }
    },
  );
}
