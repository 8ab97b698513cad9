// POST /protocol/v2/recognition/verify: checks an agent recognition proof against an expected purpose, verifier
// and request, and against the tenant's key registry. Always 200 with `valid` when the request itself is well
// formed, so a caller can tell "this proof is bad" (valid: false, code) from "my call is bad" (4xx). In a sandbox
// tenant an unregistered key is accepted as the engine accepts it, and registered only when the nonce is consumed.
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../../errors/service-error.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { verifyRecognition } from '../../../services/recognition-service.ts';
import {
  decodeRecognitionProofHeader,
  parseRecognitionProof,
  recognitionVerifierIdDefault,
} from '../../../signing/recognition.ts';
import { formatRfc3339SecondsUtc } from '../../../signing/rfc3339.ts';

interface VerifyBody {
  /** The proof object, or the header value that carries it. */
  proof: Record<string, unknown> | string;
  expected_purpose: string;
  expected_verifier?: { tenant_id?: string; verifier_id?: string };
  expected_request: { method: string; path: string; body_digest_sha256_hex: string };
  /** Record the nonce as used: a verifier that acts on the proof must consume it, so it works once. */
  consume_nonce?: boolean;
  idempotency_key?: string;
}

/** Errors that judge the proof rather than the call: answered as `valid: false` with the code. An unknown
 * schema_version is the artifact-wide code, as on every route that verifies a signed artifact. */
const isProofVerdict = (error: ServiceError): boolean =>
  error.code.startsWith('recognition.') || error.code === 'artifact.schema_version_unsupported';

const scopeToken = { type: 'string', pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' } as const;

export async function recognitionRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: VerifyBody }>(
    '/protocol/v2/recognition/verify',
    {
      config: { access: { roles: anyRole, scope: 'mcp.a2a:read' } },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['proof', 'expected_purpose', 'expected_request'],
          properties: {
            proof: { anyOf: [{ type: 'object' }, { type: 'string' }] },
            expected_purpose: scopeToken,
            expected_verifier: {
              type: 'object',
              additionalProperties: false,
              properties: { tenant_id: { type: 'string', minLength: 1 }, verifier_id: scopeToken },
            },
            expected_request: {
              type: 'object',
              additionalProperties: false,
              required: ['method', 'path', 'body_digest_sha256_hex'],
              properties: {
                method: { type: 'string', pattern: '^[A-Za-z]{1,16}$' },
                path: { type: 'string', pattern: '^/', maxLength: 2048 },
                body_digest_sha256_hex: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
              },
            },
            consume_nonce: { type: 'boolean' },
            idempotency_key: { type: 'string', minLength: 1, maxLength: 256 },
          },
        },
      },
    },
    async (request) => {
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
      } catch (error) {
        if (error instanceof ServiceError && isProofVerdict(error)) {
          return { valid: false, code: error.code, message: error.message };
        }
        throw error;
      }
    },
  );
}
