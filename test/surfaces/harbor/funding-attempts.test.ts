// GET /harbor/funding-attempts over HTTP on a real Postgres: a declined MPP payment and a successful x402 one listed
// most recently changed first, the status filter, paging, a declined x402 payment, the readers, and no credential in
// the answer.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../../src/rails/mpp/wire.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:search-vendor');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const get = (url: string, key = acme.adminKey) => app.inject({ url, headers: bearer(key) });
const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...headers }, payload });
const errorOf = (response: LightMyRequestResponse) => ({ status: response.statusCode, code: response.json().error?.code });

async function openIntent(settlementRail: string): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, settlementRail });
  expect((await post('/harbor/intents', body)).statusCode).toBe(201);
  return body.intent_id as string;
}

describe('GET /harbor/funding-attempts', () => {
  let declinedIntent: string;
  let fundedIntent: string;
  let credential: string;

  it('lists a declined MPP payment and a successful x402 one, most recently changed first', async () => {
    declinedIntent = await openIntent('processor_mpp');
    const challenge = await post(`/harbor/intents/${declinedIntent}/fund`, {});
    credential = sandboxMppAuthorization(challenge.headers['www-authenticate'] as string, sandboxMppTokens.decline);
    expect((await post(`/harbor/intents/${declinedIntent}/fund`, {}, { 'x-svc-payment-authorization': credential })).statusCode).toBe(402);

    fundedIntent = await openIntent('x402_usdc_base');
    const x402Challenge = await post(`/harbor/intents/${fundedIntent}/fund`, {});
    const paid = await post(`/harbor/intents/${fundedIntent}/fund`, {}, {
      'payment-signature': sandboxX402PaymentSignature(x402Challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
    });
    expect(paid.statusCode, paid.body).toBe(200);

    const response = await get('/harbor/funding-attempts');
    expect(response.statusCode, response.body).toBe(200);
    const list = response.json();
    expect(list).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(list.data[0]).toMatchObject({ object: 'funding_attempt', tenant_id: acme.tenantId, intent_id: fundedIntent, settlement_rail: 'x402_usdc_base', status: 'succeeded' });
    expect(list.data[0].updated_at >= list.data.at(-1).updated_at).toBe(true);
    const declined = list.data.filter((attempt: { status: string }) => attempt.status === 'declined');
    expect(declined).toEqual([expect.objectContaining({ intent_id: declinedIntent, settlement_rail: 'processor_mpp', polls: 0 })]);
    // The credential is judged and dropped: only its digest is kept, and this read answers neither.
    expect(response.body).not.toContain(credential.slice('Payment '.length, 'Payment '.length + 40));
    expect(Object.keys(list.data[0]).sort()).toEqual(['attempt_id', 'created_at', 'intent_id', 'object', 'polls', 'settlement_rail', 'status', 'tenant_id', 'updated_at']);
  });

  it('filters by status and pages with limit and cursor', async () => {
    const declined = (await get('/harbor/funding-attempts?status=declined')).json();
    expect(declined.data.map((attempt: { intent_id: string }) => attempt.intent_id)).toEqual([declinedIntent]);

    const all = (await get('/harbor/funding-attempts')).json().data as Array<{ attempt_id: string }>;
    expect(all.length).toBeGreaterThanOrEqual(3);
    const first = (await get('/harbor/funding-attempts?limit=1')).json();
    expect(first).toMatchObject({ has_more: true, next_cursor: all[0]!.attempt_id });
    const second = (await get(`/harbor/funding-attempts?limit=1&cursor=${first.next_cursor}`)).json();
    expect(second.data[0].attempt_id).toBe(all[1]!.attempt_id);
    expect((await get('/harbor/funding-attempts?cursor=00000000-0000-4000-8000-000000000001')).json().data).toEqual([]);
    for (const query of ['status=refunded', 'limit=0', 'cursor=abc', 'colour=blue']) {
      expect(errorOf(await get(`/harbor/funding-attempts?${query}`)), query).toEqual({ status: 400, code: 'request.invalid' });
    }
  });

  it('lists a declined x402 payment beside the fresh challenge its 402 answer carried', async () => {
    const intentId = await openIntent('x402_usdc_base');
    const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
    const declined = await post(`/harbor/intents/${intentId}/fund`, {}, {
      'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.decline }),
    });
    expect(declined.statusCode, declined.body).toBe(402);
    const ofIntent = ((await get('/harbor/funding-attempts')).json().data as Array<{ intent_id: string; status: string }>).filter((attempt) => attempt.intent_id === intentId);
    expect(ofIntent.map((attempt) => attempt.status).sort()).toEqual(['challenged', 'declined']);
  });

  it('is read by every role and by restricted keys with mcp.discovery:read; another tenant sees none of them', async () => {
    for (const role of ['operator', 'agent', 'auditor'] as const) expect((await get('/harbor/funding-attempts', await acme.key(role))).statusCode, role).toBe(200);
    expect(errorOf(await get('/harbor/funding-attempts', await acme.key('agent', ['mcp.spend:write'])))).toEqual({ status: 403, code: 'auth.scope_insufficient' });
    const foreign = await get('/harbor/funding-attempts', globex.adminKey);
    expect(foreign.json().data).toEqual([]);
    expect(foreign.body).not.toContain(declinedIntent);
  });
});
