// Contract of POST /protocol/v2/recognition/verify: an agent recognition proof checked against an expected purpose,
// verifier and request. A well-formed call always answers 200 with `valid`; a bad proof is `valid: false` and a code.
import Type, { type Static } from 'typebox';
import { idempotencyKeyLengthMax, idempotencyKeyLengthMin, recognitionProofHeaderBytesMax, requestUrlLengthMax, tenantIdLengthMax } from '../limits.ts';
import { OpenObject, Timestamp } from './common.ts';

/** A purpose or verifier id: a lowercase token as proofs bind it. */
const ScopeToken = Type.String({ pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' });
const Sha256Hex = Type.String({ pattern: '^[0-9a-fA-F]{64}$' });

export const RecognitionVerifyBody = Type.Object(
  {
    /** The proof object, or the header value (base64url of its JSON) that carries it. */
    proof: Type.Union([OpenObject('The proof object.'), Type.String({ maxLength: recognitionProofHeaderBytesMax })]),
    expected_purpose: ScopeToken,
    expected_verifier: Type.Optional(
      Type.Object(
        { tenant_id: Type.Optional(Type.String({ minLength: 1, maxLength: tenantIdLengthMax })), verifier_id: Type.Optional(ScopeToken) },
        { additionalProperties: false },
      ),
    ),
    expected_request: Type.Object(
      {
        method: Type.String({ pattern: '^[A-Za-z]{1,16}$' }),
        path: Type.String({ pattern: '^/', maxLength: requestUrlLengthMax }),
        body_digest_sha256_hex: Sha256Hex,
      },
      { additionalProperties: false },
    ),
    /** Record the nonce as used: a verifier that acts on the proof must consume it, so that it works once. */
    consume_nonce: Type.Optional(Type.Boolean()),
    idempotency_key: Type.Optional(Type.String({ minLength: idempotencyKeyLengthMin, maxLength: idempotencyKeyLengthMax })),
  },
  { additionalProperties: false },
);
export type RecognitionVerifyBody = Static<typeof RecognitionVerifyBody>;

/** How the proof's key stood: registered before this call, registered by it (sandbox first use), or unregistered
 * (sandbox, checked without consuming the nonce). */
export const KeyRegistration = Type.Union([Type.Literal('registered'), Type.Literal('first_use'), Type.Literal('unregistered')]);
export type KeyRegistration = Static<typeof KeyRegistration>;

export const RecognitionVerdict = Type.Union([
  Type.Object(
    {
      valid: Type.Literal(true),
      key_id: Type.String(),
      purpose: Type.String(),
      nonce: Type.String(),
      issued_at: Timestamp,
      expires_at: Timestamp,
      message_digest_sha256_hex: Type.String(),
      nonce_consumed: Type.Boolean(),
      key_registration: KeyRegistration,
    },
    { additionalProperties: false },
  ),
  Type.Object({ valid: Type.Literal(false), code: Type.String(), message: Type.String() }, { additionalProperties: false }),
]);
export type RecognitionVerdict = Static<typeof RecognitionVerdict>;
