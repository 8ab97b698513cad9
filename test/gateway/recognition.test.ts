// Recognition proofs through POST /protocol/v2/recognition/verify on a real Postgres: the registry lookup, every
// rejection with its own code, and single-use nonces (a retry under the same idempotency key excepted).
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof } from '../../src/signing/recognition.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const agentSigner = ed25519SignerFromSeed(randomBytes(32));
const otherSigner = ed25519SignerFromSeed(randomBytes(32));
const fundPath = '/harbor/intents/7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401/fund';
const fundBody = '{}';
const fundDigest = createHash('sha256').update(fundBody).digest('hex');

async function registerAgent(tenant: TestTenant, keyId: string, publicKeyHex: string): Promise<string> {
  const response = await app.inject({
    method: 'POST', url: '/v1/registry/keys', headers: bearer(tenant.adminKey),
    payload: { kind: 'agent', subject: keyId, public_key_ed25519_hex: publicKeyHex },
  });
  expect(response.statusCode).toBe(201);
  return response.json().id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
  await registerAgent(acme, 'agent-1', agentSigner.publicKey.hex);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function proofFor(overrides: Partial<Parameters<typeof createRecognitionProof>[0]> = {}) {
  return createRecognitionProof({
    signer: agentSigner, keyId: 'agent-1', purpose: 'harbor.intent.fund', tenantId: acme.tenantId,
    method: 'POST', path: fundPath, body: fundBody, ...overrides,
  });
}

const expectedFund = { expected_purpose: 'harbor.intent.fund', expected_request: { method: 'POST', path: fundPath, body_digest_sha256_hex: fundDigest } };

async function verify(body: object, key = acme.adminKey) {
  const response = await app.inject({ method: 'POST', url: '/protocol/v2/recognition/verify', headers: bearer(key), payload: body });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('recognition verify', () => {
  it('accepts a valid proof, as an object or as the header value', async () => {
    const { proof, headerValue } = proofFor();
    const asObject = await verify({ proof, ...expectedFund });
    expect(asObject).toMatchObject({ valid: true, key_id: 'agent-1', purpose: 'harbor.intent.fund', nonce: proof.nonce, nonce_consumed: false });
    expect(await verify({ proof: headerValue, ...expectedFund })).toMatchObject({ valid: true });
    const padded = Buffer.from(JSON.stringify(proof)).toString('base64');
    expect(await verify({ proof: padded, ...expectedFund })).toMatchObject({ valid: true });
  });

  const now = Date.now();
  it.each([
    ['purpose', { purpose: 'harbor.intent.create' }, {}, 'recognition.purpose_mismatch'],
    ['path', { path: '/harbor/intents/other/fund' }, {}, 'recognition.path_mismatch'],
    ['method', { method: 'PUT' }, {}, 'recognition.method_mismatch'],
    ['body', { body: '{"amount":1}' }, {}, 'recognition.body_mismatch'],
    ['tenant', { tenantId: 'someone-else' }, {}, 'recognition.tenant_mismatch'],
    ['verifier', {}, { expected_verifier: { verifier_id: 'another-verifier' } }, 'recognition.verifier_mismatch'],
    ['expired', { issuedAtMs: now - 20 * 60_000, expiresAtMs: now - 15 * 60_000 }, {}, 'recognition.expired'],
    ['issued in the future', { issuedAtMs: now + 5 * 60_000, expiresAtMs: now + 8 * 60_000 }, {}, 'recognition.not_yet_valid'],
    ['window over 10 minutes', { issuedAtMs: now - 60_000, expiresAtMs: now + 10 * 60_000 }, {}, 'recognition.window_too_long'],
    ['unknown key', { keyId: 'agent-unknown' }, {}, 'recognition.key_unknown'],
    ['key not the registered one', { signer: otherSigner }, {}, 'recognition.key_mismatch'],
  ])('rejects a wrong %s', async (_name, proofOverrides, bodyOverrides, code) => {
    const { proof } = proofFor(proofOverrides as never);
    expect(await verify({ proof, ...expectedFund, ...bodyOverrides })).toMatchObject({ valid: false, code });
  });

  it('rejects a tampered signature and a tampered field', async () => {
    const { proof } = proofFor();
    const flipped = proof.ed25519_signature_hex.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(await verify({ proof: { ...proof, ed25519_signature_hex: flipped }, ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.signature_invalid' });
    expect(await verify({ proof: { ...proof, nonce: 'another-nonce' }, ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.signature_invalid' });
  });

  it('rejects garbage with recognition.malformed and an unknown schema_version with recognition.unsupported', async () => {
    expect(await verify({ proof: 'not base64 at all!', ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.malformed' });
    const { proof } = proofFor();
    expect(await verify({ proof: { ...proof, schema_version: 2 }, ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.unsupported' });
  });

  it('rejects a proof whose key was revoked', async () => {
    const revokedSigner = ed25519SignerFromSeed(randomBytes(32));
    const id = await registerAgent(acme, 'agent-revoked', revokedSigner.publicKey.hex);
    await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${id}`, headers: bearer(acme.adminKey) });
    const { proof } = proofFor({ signer: revokedSigner, keyId: 'agent-revoked' });
    expect(await verify({ proof, ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.key_revoked' });
  });

  it('uses a nonce once; a retry under the same idempotency key may present it again', async () => {
    const { proof } = proofFor();
    expect(await verify({ proof, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: true, nonce_consumed: true });
    expect(await verify({ proof, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: false, code: 'recognition.nonce_replayed' });
    // Checking without consuming never burns or trips a nonce.
    expect(await verify({ proof, ...expectedFund })).toMatchObject({ valid: true });

    const retried = proofFor().proof;
    const once = { proof: retried, ...expectedFund, consume_nonce: true, idempotency_key: 'fund-1' };
    expect(await verify(once)).toMatchObject({ valid: true });
    expect(await verify(once)).toMatchObject({ valid: true });
    expect(await verify({ ...once, idempotency_key: 'fund-2' })).toMatchObject({ valid: false, code: 'recognition.nonce_replayed' });
  });

  it('is scoped to the credential\'s tenant: another tenant does not know our agent keys', async () => {
    const { proof } = proofFor();
    expect(await verify({ proof, ...expectedFund }, globex.adminKey)).toMatchObject({ valid: false, code: 'recognition.key_unknown' });
    const hint = await app.inject({
      method: 'POST', url: '/protocol/v2/recognition/verify', headers: bearer(globex.adminKey),
      payload: { proof, ...expectedFund, expected_verifier: { tenant_id: acme.tenantId } },
    });
    expect(hint.statusCode).toBe(401);
    expect(hint.json().error.code).toBe('request.tenant_hint_mismatch');
  });

  it('answers 400 for a request that is itself malformed', async () => {
    const response = await app.inject({ method: 'POST', url: '/protocol/v2/recognition/verify', headers: bearer(acme.adminKey), payload: { proof: {} } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('request.invalid');
  });
});
