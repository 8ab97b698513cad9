// Recognition proofs through POST /protocol/v2/recognition/verify on a real Postgres: the registry lookup, every
// rejection with its own code, single-use nonces (a retry under the same idempotency key excepted), and sandbox
// first use: an unregistered key is accepted, and registered only by a call that consumes the nonce.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519SignerFromSeed } from '../../../src/signing/ed25519.ts';
import { createRecognitionProof } from '../../../src/signing/recognition.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
let live: TestTenant;
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
  live = await createTestTenant(database.connection, 'live');
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

async function listAgentKeys(tenant: TestTenant, keyId: string) {
  const response = await app.inject({ url: `/v1/registry/keys?kind=agent&subject=${encodeURIComponent(keyId)}`, headers: bearer(tenant.adminKey) });
  expect(response.statusCode).toBe(200);
  return response.json().data as { id: string; public_key_ed25519_hex: string; registered_by: string; revoked_at: string | null }[];
}

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

  it('rejects garbage with recognition.malformed, an unknown schema_version with artifact.schema_version_unsupported', async () => {
    expect(await verify({ proof: 'not base64 at all!', ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.malformed' });
    const { proof } = proofFor();
    for (const schemaVersion of [2, 0, '1', null]) {
      expect(await verify({ proof: { ...proof, schema_version: schemaVersion }, ...expectedFund })).toMatchObject({ valid: false, code: 'artifact.schema_version_unsupported' });
    }
    const { schema_version: _omitted, ...withoutVersion } = proof;
    expect(await verify({ proof: withoutVersion, ...expectedFund })).toMatchObject({ valid: false, code: 'artifact.schema_version_unsupported' });
    // As the header value too, and from an unregistered key (judged before any key is looked at or stored).
    const stranger = proofFor({ signer: otherSigner, keyId: 'agent-versioned' }).proof;
    const header = Buffer.from(JSON.stringify({ ...stranger, schema_version: 2 })).toString('base64url');
    expect(await verify({ proof: header, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: false, code: 'artifact.schema_version_unsupported' });
    expect(await listAgentKeys(acme, 'agent-versioned')).toEqual([]);
    expect(await verify({ proof: { ...proof, kind: 'svc.agent_recognition_proof_v2' }, ...expectedFund })).toMatchObject({ valid: false, code: 'recognition.unsupported' });
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

  it('is scoped to the credential\'s tenant: our proofs are bound to us, and a live tenant does not know our agent keys', async () => {
    const { proof } = proofFor();
    // Another sandbox tenant would register the key on first use, but the proof names our tenant.
    expect(await verify({ proof, ...expectedFund, consume_nonce: true }, globex.adminKey)).toMatchObject({ valid: false, code: 'recognition.tenant_mismatch' });
    expect(await listAgentKeys(globex, 'agent-1')).toEqual([]);
    const forLive = proofFor({ tenantId: live.tenantId }).proof;
    expect(await verify({ proof: forLive, ...expectedFund }, live.adminKey)).toMatchObject({ valid: false, code: 'recognition.key_unknown' });
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

describe('first use in a sandbox tenant', () => {
  it('accepts an unregistered key without storing it when the nonce is not consumed', async () => {
    const signer = ed25519SignerFromSeed(randomBytes(32));
    const { proof } = proofFor({ signer, keyId: 'agent-first-look' });
    expect(await verify({ proof, ...expectedFund })).toMatchObject({ valid: true, key_id: 'agent-first-look', key_registration: 'unregistered', nonce_consumed: false });
    expect(await listAgentKeys(acme, 'agent-first-look')).toEqual([]);
  });

  it('registers the key when the nonce is consumed; later proofs meet it as a registered key', async () => {
    const signer = ed25519SignerFromSeed(randomBytes(32));
    expect(await verify({ proof: proofFor({ signer, keyId: 'agent-first' }).proof, ...expectedFund, consume_nonce: true }))
      .toMatchObject({ valid: true, key_registration: 'first_use', nonce_consumed: true });
    const [key] = await listAgentKeys(acme, 'agent-first');
    expect(key).toMatchObject({ public_key_ed25519_hex: signer.publicKey.hex, registered_by: 'first_use', revoked_at: null });
    expect(await verify({ proof: proofFor({ signer, keyId: 'agent-first' }).proof, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: true, key_registration: 'registered' });
    // Now the key id is taken: another key presenting it is refused.
    expect(await verify({ proof: proofFor({ signer: otherSigner, keyId: 'agent-first' }).proof, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: false, code: 'recognition.key_mismatch' });
    expect(await listAgentKeys(acme, 'agent-first')).toHaveLength(1);
  });

  it('registers nothing for a proof that does not verify, whichever check fails', async () => {
    const signer = ed25519SignerFromSeed(randomBytes(32));
    const good = proofFor({ signer, keyId: 'agent-never' }).proof;
    const flipped = good.ed25519_signature_hex.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const cases: [object, string][] = [
      [{ ...good, ed25519_signature_hex: flipped }, 'recognition.signature_invalid'],
      // Signed by one key while carrying another: the carried key is not registered.
      [{ ...proofFor({ signer: otherSigner, keyId: 'agent-never' }).proof, signing_public_key_ed25519_hex: signer.publicKey.hex }, 'recognition.signature_invalid'],
      // A small-order point (the identity) would accept signatures that prove nothing.
      [{ ...good, signing_public_key_ed25519_hex: `01${'00'.repeat(31)}` }, 'recognition.signature_invalid'],
      [proofFor({ signer, keyId: 'agent-never', purpose: 'harbor.intent.create' }).proof, 'recognition.purpose_mismatch'],
      [proofFor({ signer, keyId: 'agent-never', body: '{"x":1}' }).proof, 'recognition.body_mismatch'],
      [proofFor({ signer, keyId: 'agent-never', issuedAtMs: Date.now() - 20 * 60_000, expiresAtMs: Date.now() - 15 * 60_000 }).proof, 'recognition.expired'],
    ];
    for (const [proof, code] of cases) {
      expect(await verify({ proof, ...expectedFund, consume_nonce: true }), code).toMatchObject({ valid: false, code });
    }
    expect(await listAgentKeys(acme, 'agent-never')).toEqual([]);
  });

  it('never re-registers a revoked key id, with its old key or a new one', async () => {
    const signer = ed25519SignerFromSeed(randomBytes(32));
    expect(await verify({ proof: proofFor({ signer, keyId: 'agent-gone' }).proof, ...expectedFund, consume_nonce: true })).toMatchObject({ key_registration: 'first_use' });
    const [key] = await listAgentKeys(acme, 'agent-gone');
    const revoked = await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${key!.id}`, headers: bearer(acme.adminKey) });
    expect(revoked.json()).toMatchObject({ registered_by: 'first_use', revoked_at: expect.any(String) });
    for (const anySigner of [signer, ed25519SignerFromSeed(randomBytes(32))]) {
      const { proof } = proofFor({ signer: anySigner, keyId: 'agent-gone' });
      expect(await verify({ proof, ...expectedFund, consume_nonce: true })).toMatchObject({ valid: false, code: 'recognition.key_revoked' });
    }
    expect(await listAgentKeys(acme, 'agent-gone')).toHaveLength(1);
  });

  it('a live tenant keeps requiring registration: an unregistered key is unknown and nothing is stored', async () => {
    const signer = ed25519SignerFromSeed(randomBytes(32));
    const { proof } = proofFor({ signer, keyId: 'agent-live', tenantId: live.tenantId });
    expect(await verify({ proof, ...expectedFund, consume_nonce: true }, live.adminKey)).toMatchObject({ valid: false, code: 'recognition.key_unknown' });
    expect(await listAgentKeys(live, 'agent-live')).toEqual([]);
  });
});
