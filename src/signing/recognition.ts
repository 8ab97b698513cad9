// Agent recognition proofs, the pure part (docs/signing.md): decode the header, check the proof against what the
// request is, and build proofs for clients and tests. Key lookup, first-use registration and nonces are the
// caller's (src/services/recognition-service.ts).
import { randomUUID } from 'node:crypto';
import {
  recognitionClockSkewMs,
  recognitionNonceLengthMax,
  recognitionProofHeaderBytesMax,
  recognitionProofWindowMsMax,
} from '../limits.ts';
import { artifactSignatureAlgorithm } from './artifact-kinds.ts';
import { canonicalArtifactBytes, signArtifact } from './artifacts.ts';
import { sha256, sha256Hex } from './digests.ts';
import { Ed25519PublicKey, ed25519PublicKey, verifyEd25519, type Ed25519Signer } from './ed25519.ts';
import { base64UrlOrStandardToBytes, bytesToHex } from './encoding.ts';
import { SigningError, type SigningErrorCode, type SigningErrorDetails } from './errors.ts';
import { formatRfc3339SecondsUtc, parseRfc3339SecondsUtc } from './rfc3339.ts';

export const recognitionProofHeaderName = 'x-svc-agent-recognition-proof';
export const recognitionProofKind = 'svc.agent_recognition_proof_v1';
export const recognitionProofSchemaVersion = 1;
export const recognitionVerifierIdDefault = 'svc-gateway';
export const recognitionPurposes = {
  intentCreate: 'harbor.intent.create',
  intentFund: 'harbor.intent.fund',
  evidenceSubmit: 'harbor.intent.evidence.submit',
  settlementConfirm: 'harbor.intent.settlement.confirm',
} as const;

export interface RecognitionProof {
  readonly schema_version: 1;
  readonly kind: typeof recognitionProofKind;
  readonly key_id: string;
  readonly signature_algorithm: typeof artifactSignatureAlgorithm;
  readonly issued_at: string;
  readonly expires_at: string;
  readonly nonce: string;
  readonly purpose: string;
  readonly verifier_context: { readonly tenant_id: string; readonly verifier_id: string };
  readonly request_envelope: { readonly method: string; readonly path: string; readonly body_digest_sha256_hex: string };
  readonly message_digest_sha256_hex: string;
  readonly signing_public_key_ed25519_hex: string;
  readonly ed25519_signature_hex: string;
}

export interface RecognitionExpectations {
  readonly purpose: string;
  readonly method: string;
  /** The request path as the client bound it, e.g. `/harbor/intents/{id}/fund`, without a query. */
  readonly path: string;
  /** The raw request body; the proof binds SHA-256 of exactly these bytes. A verifier that holds only the digest
   * (the recognition verify route) gives `bodyDigestHex` instead. */
  readonly bodyBytes?: Uint8Array;
  readonly bodyDigestHex?: string;
  readonly tenantId: string;
  readonly verifierId?: string;
  readonly nowMs: number;
  /** The key registered for `proof.key_id`, looked up by the caller (unknown/revoked keys are the caller's codes). */
  readonly publicKey: Uint8Array | Ed25519PublicKey;
}

export interface VerifiedRecognitionProof {
  readonly keyId: string;
  readonly nonce: string;
  readonly purpose: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
  readonly messageDigestHex: string;
}

const scopeTokenPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const hex64Pattern = /^[0-9a-f]{64}$/;
const hex128Pattern = /^[0-9a-f]{128}$/;

function fail(code: SigningErrorCode, details?: SigningErrorDetails): never {
  throw new SigningError(code, details);
}

/** Header text → the JSON value it carries. Absent → `recognition.required`; anything unreadable → `recognition.malformed`. */
export function decodeRecognitionProofHeader(headerValue: string | undefined): unknown {
  if (headerValue === undefined || headerValue.trim() === '') fail('recognition.required');
  const text = headerValue.trim();
  if (text.length > recognitionProofHeaderBytesMax) {
    fail('recognition.malformed', { reason: `header longer than ${recognitionProofHeaderBytesMax} bytes` });
  }
  let bytes: Uint8Array;
  try {
    bytes = base64UrlOrStandardToBytes(text, recognitionProofHeaderName);
  } catch {
    fail('recognition.malformed', { reason: 'header is not base64url' });
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
  } catch {
    fail('recognition.malformed', { reason: 'header does not carry UTF-8 JSON' });
  }
}

/**
 * Versions first, then the shape (`recognition.malformed`). An unknown schema_version is
 * `artifact.schema_version_unsupported`, as for every signed artifact; kind and algorithm are
 * `recognition.unsupported`.
 */
export function parseRecognitionProof(value: unknown): RecognitionProof {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('recognition.malformed', { reason: 'proof is not a JSON object' });
  const proof = value as Record<string, unknown>;
  if (proof.schema_version !== recognitionProofSchemaVersion) {
    fail('artifact.schema_version_unsupported', { field: 'schema_version', value: schemaVersionShown(proof.schema_version) });
  }
  if (proof.kind !== recognitionProofKind) fail('recognition.unsupported', { field: 'kind' });
  if (proof.signature_algorithm !== artifactSignatureAlgorithm) fail('recognition.unsupported', { field: 'signature_algorithm' });
  assertRecognitionShape(proof);
  return proof;
}

/** The rest of a proof's shape, every field checked (versions, kind and algorithm are checked before): the first that
 * fails is named in `recognition.malformed`. */
function assertRecognitionShape(proof: Record<string, unknown>): asserts proof is Record<string, unknown> & RecognitionProof {
  const shapeError = recognitionShapeError(proof);
  if (shapeError) fail('recognition.malformed', { field: shapeError });
}

export function parseRecognitionProofHeader(headerValue: string | undefined): RecognitionProof {
  return parseRecognitionProof(decodeRecognitionProofHeader(headerValue));
}

/** The unknown schema_version echoed in the error, when it is a short scalar (never a caller's whole object). */
function schemaVersionShown(value: unknown): number | string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.length <= 16) return value;
  return null;
}

/** The first field that does not have its shape, or undefined. Field sets are exact: nothing unsigned rides along. */
function recognitionShapeError(proof: Record<string, unknown>): string | undefined {
  const context = proof.verifier_context as Record<string, unknown> | undefined;
  const envelope = proof.request_envelope as Record<string, unknown> | undefined;
  const checks: [string, boolean][] = [
    ['key_id', matches(scopeTokenPattern, proof.key_id)],
    ['issued_at', typeof proof.issued_at === 'string'],
    ['expires_at', typeof proof.expires_at === 'string'],
    ['nonce', typeof proof.nonce === 'string' && proof.nonce.length > 0 && proof.nonce.length <= recognitionNonceLengthMax],
    ['purpose', matches(scopeTokenPattern, proof.purpose)],
    ['verifier_context', isExactObject(context, ['tenant_id', 'verifier_id'])],
    ['verifier_context.tenant_id', typeof context?.tenant_id === 'string' && context.tenant_id !== ''],
    ['verifier_context.verifier_id', matches(scopeTokenPattern, context?.verifier_id)],
    ['request_envelope', isExactObject(envelope, ['method', 'path', 'body_digest_sha256_hex'])],
    ['request_envelope.method', matches(/^[A-Z]+$/, envelope?.method)],
    ['request_envelope.path', typeof envelope?.path === 'string' && envelope.path.startsWith('/')],
    ['request_envelope.body_digest_sha256_hex', matches(hex64Pattern, envelope?.body_digest_sha256_hex)],
    ['message_digest_sha256_hex', matches(hex64Pattern, proof.message_digest_sha256_hex)],
    ['signing_public_key_ed25519_hex', matches(hex64Pattern, proof.signing_public_key_ed25519_hex)],
    ['ed25519_signature_hex', matches(hex128Pattern, proof.ed25519_signature_hex)],
    ['proof', isExactObject(proof, [...proofFieldNames])],
  ];
  return checks.find(([, passed]) => !passed)?.[0];
}

const proofFieldNames = [
  'schema_version', 'kind', 'key_id', 'signature_algorithm', 'issued_at', 'expires_at', 'nonce', 'purpose',
  'verifier_context', 'request_envelope', 'message_digest_sha256_hex', 'signing_public_key_ed25519_hex', 'ed25519_signature_hex',
] as const;

function matches(pattern: RegExp, value: unknown): boolean {
  return typeof value === 'string' && pattern.test(value);
}

function isExactObject(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const present = Object.keys(value);
  return present.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/**
 * Checks a proof against the request, in this order: versions and shape, time window, tenant, verifier, purpose,
 * method, path, body digest, embedded key = registered key, digest and signature. Each failure has its own code.
 */
export function verifyRecognitionProof(value: unknown, expectations: RecognitionExpectations): VerifiedRecognitionProof {
  const proof = parseRecognitionProof(value);
  const { issuedAtMs, expiresAtMs } = recognitionWindow(proof, expectations.nowMs);
  const envelope = proof.request_envelope;
  if (proof.verifier_context.tenant_id !== expectations.tenantId) fail('recognition.tenant_mismatch');
  if (proof.verifier_context.verifier_id !== (expectations.verifierId ?? recognitionVerifierIdDefault)) fail('recognition.verifier_mismatch');
  if (proof.purpose !== expectations.purpose) fail('recognition.purpose_mismatch');
  if (envelope.method !== expectations.method.toUpperCase()) fail('recognition.method_mismatch');
  if (envelope.path !== expectations.path) fail('recognition.path_mismatch');
  if (envelope.body_digest_sha256_hex !== expectedBodyDigestHex(expectations)) fail('recognition.body_mismatch');
  const registeredKey = expectations.publicKey instanceof Ed25519PublicKey ? expectations.publicKey : ed25519PublicKey(expectations.publicKey);
  if (proof.signing_public_key_ed25519_hex !== registeredKey.hex) fail('recognition.key_mismatch');

  const digest = sha256(recognitionCanonicalBytes(proof));
  if (bytesToHex(digest) !== proof.message_digest_sha256_hex) fail('recognition.signature_invalid', { reason: 'digest does not match the proof' });
  if (!verifyEd25519(registeredKey, digest, Buffer.from(proof.ed25519_signature_hex, 'hex'))) fail('recognition.signature_invalid');
  return {
    keyId: proof.key_id,
    nonce: proof.nonce,
    purpose: proof.purpose,
    issuedAtMs,
    expiresAtMs,
    messageDigestHex: proof.message_digest_sha256_hex,
  };
}

function expectedBodyDigestHex(expectations: RecognitionExpectations): string {
  if (expectations.bodyBytes !== undefined) return sha256Hex(expectations.bodyBytes);
  if (expectations.bodyDigestHex !== undefined) return expectations.bodyDigestHex.toLowerCase();
  throw new Error('verifyRecognitionProof needs bodyBytes or bodyDigestHex');
}

/** Window ≤ 10 minutes, issued no later than now + skew, and not yet expired (expires_at is exclusive, no skew). */
function recognitionWindow(proof: RecognitionProof, nowMs: number): { issuedAtMs: number; expiresAtMs: number } {
  const issuedAtMs = timeOrMalformed(proof.issued_at, 'issued_at');
  const expiresAtMs = timeOrMalformed(proof.expires_at, 'expires_at');
  if (expiresAtMs <= issuedAtMs) fail('recognition.malformed', { field: 'expires_at', reason: 'must be after issued_at' });
  if (expiresAtMs - issuedAtMs > recognitionProofWindowMsMax) fail('recognition.window_too_long');
  if (issuedAtMs > nowMs + recognitionClockSkewMs) fail('recognition.not_yet_valid');
  if (nowMs >= expiresAtMs) fail('recognition.expired');
  return { issuedAtMs, expiresAtMs };
}

function timeOrMalformed(text: string, field: string): number {
  try {
    return parseRfc3339SecondsUtc(text, field);
  } catch {
    fail('recognition.malformed', { field, reason: 'must be RFC 3339 UTC in whole seconds' });
  }
}

/** The hashed bytes: every field but the three material ones (signature_algorithm is hashed). */
function recognitionCanonicalBytes(proof: RecognitionProof): Uint8Array {
  const { message_digest_sha256_hex: _digest, signing_public_key_ed25519_hex: _key, ed25519_signature_hex: _signature, ...body } = proof;
  return canonicalArtifactBytes(body);
}

export interface CreateRecognitionProofParams {
  readonly signer: Ed25519Signer;
  readonly keyId: string;
  readonly purpose: string;
  readonly tenantId: string;
  readonly verifierId?: string;
  readonly method: string;
  readonly path: string;
  /** Raw bytes or text as sent; any other value is serialized with JSON.stringify, as the TypeScript client does. */
  readonly body: Uint8Array | string | unknown;
  readonly nowMs?: number;
  /** Defaults as the client's: issued 60 s before now, expiring 4 minutes after issue. */
  readonly issuedAtMs?: number;
  readonly expiresAtMs?: number;
  readonly nonce?: string;
}

/** Builds and signs a proof and its header value (unpadded base64url of the proof JSON, as the client sends). */
export function createRecognitionProof(params: CreateRecognitionProofParams): { proof: RecognitionProof; headerValue: string } {
  const issuedAtMs = params.issuedAtMs ?? (params.nowMs ?? Date.now()) - 60_000;
  const expiresAtMs = params.expiresAtMs ?? issuedAtMs + 4 * 60_000;
  const bodyBytes =
    params.body instanceof Uint8Array ? params.body
    : typeof params.body === 'string' ? Buffer.from(params.body, 'utf8')
    : Buffer.from(JSON.stringify(params.body), 'utf8');
  const proof = signArtifact(
    recognitionProofKind,
    {
      key_id: params.keyId,
      issued_at: formatRfc3339SecondsUtc(issuedAtMs),
      expires_at: formatRfc3339SecondsUtc(expiresAtMs),
      nonce: params.nonce ?? randomUUID(),
      purpose: params.purpose,
      verifier_context: { tenant_id: params.tenantId, verifier_id: params.verifierId ?? recognitionVerifierIdDefault },
      request_envelope: { method: params.method.toUpperCase(), path: params.path, body_digest_sha256_hex: sha256Hex(bodyBytes) },
    },
    params.signer,
  ) as unknown as RecognitionProof;
  return { proof, headerValue: Buffer.from(JSON.stringify(proof), 'utf8').toString('base64url') };
}
