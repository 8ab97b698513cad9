// An idempotency key is bound to the body of its first execution, whatever that execution answered
// (docs/engine.md#idempotency): after a 402 challenge, a 202 pending answer or an error, the same request runs again
// (the funding handshake re-sends it with a credential, a poll re-sends it as it is), and another body under the key
// is 409 `idempotency.key_reused`. The fingerprint is the method, path and body bytes: a rail credential travels in a
// header, so the handshake's requests all share their fingerprint.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
const principal = party('did:principal:binding');
const payee = party('did:payee:binding');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json', ...headers }, payload });

const codeOf = (answer: { statusCode: number; json(): { error?: { code?: string } } }) => [answer.statusCode, answer.statusCode >= 400 ? answer.json().error?.code : undefined];

async function openIntent(): Promise<string> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
  const created = await post('/harbor/intents', JSON.stringify(body));
  expect(created.statusCode, created.body).toBe(201);
  return body.intent_id as string;
}

describe('a key bound by a 402', () => {
  it('takes the handshake\'s credentialed request, and refuses another body from the challenge on', async () => {
    const intentId = await openIntent();
    const path = `/harbor/intents/${intentId}/fund`;
    const key = { 'idempotency-key': `fund-402-${intentId}` };
    const challenge = await post(path, '{}', key);
    expect(challenge.statusCode).toBe(402);
    // Another body under the key is another request, even though nothing final was stored.
    expect(codeOf(await post(path, '{"note":"another body"}', key))).toEqual([409, 'idempotency.key_reused']);
    // The same bytes with other whitespace are another body too: the fingerprint is exact.
    expect(codeOf(await post(path, '{ }', key))).toEqual([409, 'idempotency.key_reused']);
    const credential = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
    const funded = await post(path, '{}', { ...key, 'payment-signature': credential });
    expect(funded.statusCode, funded.body).toBe(200);
    const replay = await post(path, '{}', { ...key, 'payment-signature': credential });
    expect([replay.statusCode, replay.headers['idempotent-replayed'], replay.body]).toEqual([200, 'true', funded.body]);
    expect(codeOf(await post(path, '{"note":"another body"}', key))).toEqual([409, 'idempotency.key_reused']);
  });
});

describe('a key bound by a 202', () => {
  it('takes the poll, and refuses another body while pending', async () => {
    const intentId = await openIntent();
    const path = `/harbor/intents/${intentId}/fund`;
    const challenge = await post(path, '{}');
    const key = { 'idempotency-key': `fund-202-${intentId}` };
    const credential = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.pending });
    const pending = await post(path, '{}', { ...key, 'payment-signature': credential });
    expect(pending.statusCode, pending.body).toBe(202);
    expect(codeOf(await post(path, '{"note":"another body"}', { ...key, 'payment-signature': credential }))).toEqual([409, 'idempotency.key_reused']);
    const polled = await post(path, '{}', { ...key, 'payment-signature': credential });
    expect(polled.statusCode, polled.body).toBe(200);
    expect(polled.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('a key bound by an error', () => {
  it('runs the same request again, and refuses it on another path', async () => {
    const missing = '0b1e7c1c-5d2a-4c8e-9a51-2f0a4f1b9c11';
    const key = { 'idempotency-key': `fund-404-${missing}` };
    expect(codeOf(await post(`/harbor/intents/${missing}/fund`, '{}', key))).toEqual([404, 'intent.not_found']);
    // Errors are not stored: the same request runs again (and is not marked replayed).
    const again = await post(`/harbor/intents/${missing}/fund`, '{}', key);
    expect([...codeOf(again), again.headers['idempotent-replayed']]).toEqual([404, 'intent.not_found', undefined]);
    // The path is part of the fingerprint: the key cannot be reused for another intent.
    const intentId = await openIntent();
    expect(codeOf(await post(`/harbor/intents/${intentId}/fund`, '{}', key))).toEqual([409, 'idempotency.key_reused']);
    // Keys are per tenant and operation: the same key on create is another key.
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    expect((await post('/harbor/intents', JSON.stringify(body), key)).statusCode).toBe(201);
  });

  it('binds nothing when the recognition proof is refused: the request was not the agent\'s', async () => {
    const intentId = await openIntent();
    const path = `/harbor/intents/${intentId}/fund`;
    const key = { 'idempotency-key': `fund-proof-${intentId}` };
    const refused = await post(path, '{"note":"unproven"}', { ...key, 'x-svc-agent-recognition-proof': 'not-a-proof' });
    expect(refused.statusCode).toBe(401);
    expect((await post(path, '{}', key)).statusCode).toBe(402);
  });
});
