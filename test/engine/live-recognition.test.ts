// Live tenants: engine mutations need an agent recognition proof bound to the exact request, and the principal
// key must be registered. A replay under the same idempotency key needs the proof too, and may reuse its nonce.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let live: TestTenant;
const agent = ed25519SignerFromSeed(randomBytes(32));
const principal = party('did:principal:live-alice');
const payee = party('did:payee:live-tools');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  live = await createTestTenant(database.connection, 'live');
  for (const [kind, subject, hex] of [
    ['agent', 'agent-live-1', agent.publicKey.hex],
    ['principal', principal.did, principal.signer.publicKey.hex],
  ] as const) {
    const response = await app.inject({
      method: 'POST', url: '/v1/registry/keys', headers: bearer(live.adminKey), payload: { kind, subject, public_key_ed25519_hex: hex },
    });
    expect(response.statusCode).toBe(201);
  }
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function proofHeader(body: string, purpose: string = recognitionPurposes.intentCreate, path = '/harbor/intents') {
  return createRecognitionProof({ signer: agent, keyId: 'agent-live-1', purpose, tenantId: live.tenantId, method: 'POST', path, body }).headerValue;
}

const create = (body: string, headers: Record<string, string>) =>
  app.inject({ method: 'POST', url: '/harbor/intents', headers: { ...bearer(live.adminKey), 'content-type': 'application/json', ...headers }, payload: body });

describe('live engine mutations', () => {
  it('create with a proof and a registered principal key; replays need a proof but may reuse its nonce', async () => {
    const body = JSON.stringify(signedCreateBody({ tenantId: live.tenantId, principal, payee }));
    const proof = proofHeader(body);
    const key = { 'idempotency-key': 'live-create-1' };
    const first = await create(body, { ...key, 'x-svc-agent-recognition-proof': proof });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().principal_key_registered).toBe(true);

    const sameProof = await create(body, { ...key, 'x-svc-agent-recognition-proof': proof });
    expect(sameProof.statusCode).toBe(201);
    expect(sameProof.headers['idempotent-replayed']).toBe('true');

    const noProof = await create(body, key);
    expect(noProof.statusCode).toBe(401);
    expect(noProof.json().error.code).toBe('recognition.required');
    expect(noProof.body).not.toContain('capability_token');

    const wrongPurpose = await create(body, { ...key, 'x-svc-agent-recognition-proof': proofHeader(body, recognitionPurposes.intentFund) });
    expect(wrongPurpose.json().error.code).toBe('recognition.purpose_mismatch');
  });

  it('refuses a missing proof, a proof for other bytes, and a reused nonce under another key', async () => {
    const body = JSON.stringify(signedCreateBody({ tenantId: live.tenantId, principal, payee }));
    expect((await create(body, {})).json().error.code).toBe('recognition.required');
    const otherBytes = await create(body, { 'x-svc-agent-recognition-proof': proofHeader(`${body} `) });
    expect(otherBytes.json().error.code).toBe('recognition.body_mismatch');

    const proof = proofHeader(body);
    expect((await create(body, { 'x-svc-agent-recognition-proof': proof, 'idempotency-key': 'a' })).statusCode).toBe(201);
    const reused = await create(body, { 'x-svc-agent-recognition-proof': proof, 'idempotency-key': 'b' });
    expect(reused.statusCode).toBe(401);
    expect(reused.json().error.code).toBe('recognition.nonce_replayed');
  });

  it('refuses an intent whose principal key is not registered', async () => {
    const stranger = party('did:principal:unregistered');
    const body = JSON.stringify(signedCreateBody({ tenantId: live.tenantId, principal: stranger, payee }));
    const response = await create(body, { 'x-svc-agent-recognition-proof': proofHeader(body) });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('intent.principal_key_unregistered');
    // The insert that found the key unregistered was rolled back.
    const stored = await app.inject({ method: 'GET', url: `/harbor/intents/${JSON.parse(body).intent_id as string}`, headers: bearer(live.adminKey) });
    expect(stored.statusCode).toBe(404);
  });

  it('answers 422 to funding in live: no rail endpoint is configured, and nothing is faked', async () => {
    const body = JSON.stringify(signedCreateBody({ tenantId: live.tenantId, principal, payee }));
    const intentId = JSON.parse(body).intent_id as string;
    expect((await create(body, { 'x-svc-agent-recognition-proof': proofHeader(body) })).statusCode).toBe(201);
    const path = `/harbor/intents/${intentId}/fund`;
    const fund = await app.inject({
      method: 'POST', url: path, headers: { ...bearer(live.adminKey), 'content-type': 'application/json', 'x-svc-agent-recognition-proof': proofHeader('{}', recognitionPurposes.intentFund, path) }, payload: '{}',
    });
    expect(fund.statusCode).toBe(422);
    expect(fund.json().error.code).toBe('funding.rail_not_configured');
  });
});
