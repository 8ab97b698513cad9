// Recognition proofs: a valid proof is accepted; each way a proof can fail its request has its own code;
// the header decodes padded, unpadded and standard base64 and refuses garbage.
import * as noble from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { asServiceError } from '../../src/errors/pure-error-mapping.ts';
import { SigningError } from '../../src/signing/errors.ts';
import {
  createRecognitionProof,
  decodeRecognitionProofHeader,
  ed25519SignerFromSeed,
  parseRecognitionProofHeader,
  verifyRecognitionProof,
  type CreateRecognitionProofParams,
  type RecognitionExpectations,
  type RecognitionProof,
} from '../../src/signing/index.ts';
import { recognitionClockSkewMs } from '../../src/limits.ts';

noble.hashes.sha512 = sha512;
const agentSigner = ed25519SignerFromSeed(new Uint8Array(32).fill(0x21));
const strangerSigner = ed25519SignerFromSeed(new Uint8Array(32).fill(0x22));
const nowMs = Date.UTC(2026, 10, 22, 15, 4, 5);
const intentId = '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401';
const fundPath = `/harbor/intents/${intentId}/fund`;
const fundBody = new TextEncoder().encode('{}');

const baseParams: CreateRecognitionProofParams = {
  signer: agentSigner,
  keyId: 'agent-key-1',
  purpose: 'harbor.intent.fund',
  tenantId: 'tenant-a',
  method: 'post',
  path: fundPath,
  body: {},
  nowMs,
  nonce: '2b7e4f0a-9a7c-4d7e-8d2b-1f6a0c9e5b11',
};

const expectations: RecognitionExpectations = {
  purpose: 'harbor.intent.fund',
  method: 'POST',
  path: fundPath,
  bodyBytes: fundBody,
  tenantId: 'tenant-a',
  nowMs,
  publicKey: agentSigner.publicKey.bytes,
};

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SigningError);
    return (error as SigningError).code;
  }
  return 'accepted';
}

const proofWith = (overrides: Partial<CreateRecognitionProofParams> = {}): RecognitionProof =>
  createRecognitionProof({ ...baseParams, ...overrides }).proof;

describe('a valid proof', () => {
  it('is accepted, from the object and from its header', () => {
    const { proof, headerValue } = createRecognitionProof(baseParams);
    expect(headerValue).not.toContain('=');
    const verified = verifyRecognitionProof(parseRecognitionProofHeader(headerValue), expectations);
    expect(verified).toMatchObject({ keyId: 'agent-key-1', nonce: baseParams.nonce, purpose: 'harbor.intent.fund' });
    expect(verified.expiresAtMs - verified.issuedAtMs).toBe(4 * 60_000);
    expect(verified.issuedAtMs).toBe(nowMs - 60_000);
    expect(verifyRecognitionProof(proof, { ...expectations, verifierId: 'svc-gateway' }).messageDigestHex).toBe(proof.message_digest_sha256_hex);
  });

  it('binds SHA-256 of the body bytes, "{}" as the client sends for fund', () => {
    expect(proofWith().request_envelope.body_digest_sha256_hex).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(proofWith({ body: fundBody }).request_envelope.body_digest_sha256_hex).toBe(proofWith().request_envelope.body_digest_sha256_hex);
    expect(proofWith({ body: '{}' }).request_envelope.body_digest_sha256_hex).toBe(proofWith().request_envelope.body_digest_sha256_hex);
  });

  it('verifies with an independent verifier (client field order, JSON.stringify, @noble)', () => {
    const proof = proofWith();
    const hashed = {
      schema_version: proof.schema_version, kind: proof.kind, key_id: proof.key_id, signature_algorithm: proof.signature_algorithm,
      issued_at: proof.issued_at, expires_at: proof.expires_at, nonce: proof.nonce, purpose: proof.purpose,
      verifier_context: { tenant_id: proof.verifier_context.tenant_id, verifier_id: proof.verifier_context.verifier_id },
      request_envelope: { method: proof.request_envelope.method, path: proof.request_envelope.path, body_digest_sha256_hex: proof.request_envelope.body_digest_sha256_hex },
    };
    const digest = nobleSha256(new TextEncoder().encode(JSON.stringify(hashed)));
    expect(Buffer.from(digest).toString('hex')).toBe(proof.message_digest_sha256_hex);
    expect(noble.verify(Buffer.from(proof.ed25519_signature_hex, 'hex'), digest, agentSigner.publicKey.bytes)).toBe(true);
    expect(proof.verifier_context.verifier_id).toBe('svc-gateway');
    expect(proof.request_envelope.method).toBe('POST');
  });

  it('accepts the edges of its window', () => {
    const tenMinutes = { issuedAtMs: nowMs - 60_000, expiresAtMs: nowMs - 60_000 + 10 * 60_000 };
    expect(codeOf(() => verifyRecognitionProof(proofWith(tenMinutes), expectations))).toBe('accepted');
    const fromTheSkewLimit = { issuedAtMs: nowMs + recognitionClockSkewMs, expiresAtMs: nowMs + recognitionClockSkewMs + 60_000 };
    expect(codeOf(() => verifyRecognitionProof(proofWith(fromTheSkewLimit), expectations))).toBe('accepted');
    const lastSecond = { issuedAtMs: nowMs - 60_000, expiresAtMs: nowMs + 1000 };
    expect(codeOf(() => verifyRecognitionProof(proofWith(lastSecond), expectations))).toBe('accepted');
  });
});

describe('each failure has its own code', () => {
  const proof = proofWith();
  const cases: [string, () => unknown, string][] = [
    ['wrong purpose', () => verifyRecognitionProof(proof, { ...expectations, purpose: 'harbor.intent.create' }), 'recognition.purpose_mismatch'],
    ['wrong path', () => verifyRecognitionProof(proof, { ...expectations, path: `/harbor/intents/${intentId}/evidence` }), 'recognition.path_mismatch'],
    ['wrong method', () => verifyRecognitionProof(proof, { ...expectations, method: 'PUT' }), 'recognition.method_mismatch'],
    ['wrong body', () => verifyRecognitionProof(proof, { ...expectations, bodyBytes: new TextEncoder().encode('{ }') }), 'recognition.body_mismatch'],
    ['wrong tenant', () => verifyRecognitionProof(proof, { ...expectations, tenantId: 'tenant-b' }), 'recognition.tenant_mismatch'],
    ['wrong verifier', () => verifyRecognitionProof(proof, { ...expectations, verifierId: 'svc-engine' }), 'recognition.verifier_mismatch'],
    ['expired', () => verifyRecognitionProof(proof, { ...expectations, nowMs: nowMs + 3 * 60_000 }), 'recognition.expired'],
    ['expired at the instant of expires_at', () => verifyRecognitionProof(proof, { ...expectations, nowMs: nowMs - 60_000 + 4 * 60_000 }), 'recognition.expired'],
    ['issued in the future', () => verifyRecognitionProof(proofWith({ issuedAtMs: nowMs + recognitionClockSkewMs + 1000 }), expectations), 'recognition.not_yet_valid'],
    ['window over 10 minutes', () => verifyRecognitionProof(proofWith({ expiresAtMs: nowMs - 60_000 + 10 * 60_000 + 1000 }), expectations), 'recognition.window_too_long'],
    ['embedded key is not the registered key', () => verifyRecognitionProof(proof, { ...expectations, publicKey: strangerSigner.publicKey }), 'recognition.key_mismatch'],
    ['signed by another key than it embeds', () => verifyRecognitionProof({ ...proofWith({ signer: strangerSigner }), signing_public_key_ed25519_hex: agentSigner.publicKey.hex }, expectations), 'recognition.signature_invalid'],
    ['tampered signature', () => verifyRecognitionProof({ ...proof, ed25519_signature_hex: flipHex(proof.ed25519_signature_hex, 10) }, expectations), 'recognition.signature_invalid'],
    ['tampered digest', () => verifyRecognitionProof({ ...proof, message_digest_sha256_hex: flipHex(proof.message_digest_sha256_hex, 0) }, expectations), 'recognition.signature_invalid'],
    ['tampered nonce', () => verifyRecognitionProof({ ...proof, nonce: `${proof.nonce}x` }, expectations), 'recognition.signature_invalid'],
    ['tampered key_id', () => verifyRecognitionProof({ ...proof, key_id: 'agent-key-2' }, expectations), 'recognition.signature_invalid'],
    ['expires before it is issued', () => verifyRecognitionProof({ ...proof, expires_at: proof.issued_at }, expectations), 'recognition.malformed'],
    ['unsupported schema_version', () => verifyRecognitionProof({ ...proof, schema_version: 2 }, expectations), 'artifact.schema_version_unsupported'],
    ['schema_version as a string', () => verifyRecognitionProof({ ...proof, schema_version: '1' }, expectations), 'artifact.schema_version_unsupported'],
    ['unsupported kind', () => verifyRecognitionProof({ ...proof, kind: 'svc.agent_recognition_proof_v2' }, expectations), 'recognition.unsupported'],
  ];

  it.each(cases)('%s', (_name, action, code) => {
    expect(codeOf(action)).toBe(code);
  });

  it('every recognition code is a 401 as the API answers it; an unknown schema_version is the artifact-wide 400', () => {
    for (const [, action, code] of cases) {
      let thrown: unknown;
      try {
        action();
      } catch (error) {
        thrown = error;
      }
      const mapped = asServiceError(thrown);
      expect(mapped).toBeInstanceOf(ServiceError);
      expect((mapped as ServiceError).statusCode).toBe(code.startsWith('recognition.') ? 401 : 400);
    }
  });
});

function flipHex(hex: string, index: number): string {
  return hex.slice(0, index) + (hex[index] === '0' ? '1' : '0') + hex.slice(index + 1);
}

describe('the header', () => {
  const { proof, headerValue } = createRecognitionProof(baseParams);
  const json = Buffer.from(JSON.stringify(proof), 'utf8');

  it('decodes unpadded and padded base64url, and standard base64', () => {
    expect(decodeRecognitionProofHeader(headerValue)).toEqual(proof);
    const padded = json.toString('base64url').padEnd(Math.ceil(headerValue.length / 4) * 4, '=');
    expect(decodeRecognitionProofHeader(padded)).toEqual(proof);
    expect(decodeRecognitionProofHeader(json.toString('base64'))).toEqual(proof);
  });

  it('says required when absent', () => {
    expect(codeOf(() => decodeRecognitionProofHeader(undefined))).toBe('recognition.required');
    expect(codeOf(() => decodeRecognitionProofHeader(''))).toBe('recognition.required');
    expect(codeOf(() => decodeRecognitionProofHeader('   '))).toBe('recognition.required');
  });

  it.each([
    ['garbage', '%%%not-base64%%%'],
    ['mixed alphabets', `${headerValue.slice(0, 8)}+_${headerValue.slice(10)}`],
    ['not JSON', Buffer.from('hello').toString('base64url')],
    ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString('base64url')],
    ['too long', 'A'.repeat(8 * 1024 + 4)],
  ])('refuses %s', (_name, value) => {
    expect(codeOf(() => decodeRecognitionProofHeader(value))).toBe('recognition.malformed');
  });

  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  it.each([
    ['an array', []],
    ['an uppercase key_id', { ...proof, key_id: 'Agent-Key' }],
    ['a nonce over 256 characters', { ...proof, nonce: 'n'.repeat(257) }],
    ['an empty nonce', { ...proof, nonce: '' }],
    ['an extra field', { ...proof, extra: 1 }],
    ['a missing request envelope', { ...proof, request_envelope: undefined }],
    ['an extra envelope field', { ...proof, request_envelope: { ...proof.request_envelope, query: '' } }],
    ['a lowercase method', { ...proof, request_envelope: { ...proof.request_envelope, method: 'post' } }],
    ['a relative path', { ...proof, request_envelope: { ...proof.request_envelope, path: 'harbor/intents' } }],
    ['issued_at with milliseconds', { ...proof, issued_at: '2026-11-22T15:03:05.000Z' }],
    ['expires_at with an offset', { ...proof, expires_at: '2026-11-22T16:07:05+01:00' }],
    ['an uppercase signature', { ...proof, ed25519_signature_hex: proof.ed25519_signature_hex.toUpperCase() }],
  ])('refuses a proof with %s', (_name, value) => {
    expect(codeOf(() => verifyRecognitionProof(parseRecognitionProofHeader(encode(value)), expectations))).toBe('recognition.malformed');
  });
});
