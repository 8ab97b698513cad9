// The engine as the public client's other code paths call it, over HTTP on a real Postgres: the operator intent
// reads (getIntent, the MCP discovery tools), POST /harbor/verify, the MPP credential after the Bearer key in
// Authorization, MPP echoes without `expires`, and policy-bound intents showing their rule in declared order.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageSizeMax } from '../../../src/limits.ts';
import { parseWwwAuthenticate, sandboxMppAuthorization, sandboxMppTokens } from '../../../src/rails/mpp/wire.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, type CreateOptions } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const logs = new LogCapture();
const principal = party('did:principal:alice');
const searchVendor = party('did:payee:search-vendor');
const mapVendor = party('did:payee:map-vendor');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { logs });
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
const header = (response: LightMyRequestResponse, name: string) => response.headers[name] as string;

async function createIntent(options: Partial<CreateOptions> = {}): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee: searchVendor, ...options });
  const response = await post('/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

/** Funds an x402 intent and answers its capability token. */
async function fundWithX402(intentId: string): Promise<string> {
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  const paid = await post(`/harbor/intents/${intentId}/fund`, {}, {
    'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers.success }),
  });
  expect(paid.statusCode, paid.body).toBe(200);
  return paid.json().capability_token as string;
}

const errorOf = (response: LightMyRequestResponse) => ({ status: response.statusCode, code: response.json().error?.code });

describe('operator intent reads', () => {
  const intents: Record<string, string> = {};

  beforeAll(async () => {
    intents.search = await createIntent();
    intents.map = await createIntent({ payee: mapVendor });
    intents.funded = await createIntent();
    await fundWithX402(intents.funded);
  });

  it('answers exactly what /harbor/intents answers, one intent and the list', async () => {
    for (const intentId of Object.values(intents)) {
      const operator = await get(`/harbor/operator/v1/intents/${intentId}`);
      expect(operator.statusCode, operator.body).toBe(200);
      expect(operator.body).toBe((await get(`/harbor/intents/${intentId}`)).body);
      expect(operator.json()).toMatchObject({ intent_id: intentId, tenant_id: acme.tenantId, state: expect.any(String), allowed_tools: expect.any(Array) });
    }
    expect((await get(`/harbor/operator/v1/intents/${intents.search!.toUpperCase()}`)).json().intent_id).toBe(intents.search);

    const list = await get('/harbor/operator/v1/intents');
    expect(list.statusCode, list.body).toBe(200);
    const engineList = (await get('/harbor/intents')).json();
    expect(list.json()).toEqual({ object: 'list', items: engineList.data, has_more: false, next_cursor: null });
    expect(list.json().items.map((item: { intent_id: string }) => item.intent_id)).toEqual([intents.funded, intents.map, intents.search]);
  });

  it('filters by status (the intent state) and by operator_did (the payee)', async () => {
    const ids = async (query: string) =>
      (await get(`/harbor/operator/v1/intents?${query}`)).json().items.map((item: { intent_id: string }) => item.intent_id);
    expect(await ids('status=funded')).toEqual([intents.funded]);
    expect(await ids('status=open')).toEqual([intents.map, intents.search]);
    expect(await ids(`operator_did=${encodeURIComponent(mapVendor.did)}`)).toEqual([intents.map]);
    expect(await ids(`operator_did=${encodeURIComponent(searchVendor.did)}&status=open`)).toEqual([intents.search]);
    expect(await ids('operator_did=did%3Apayee%3Anobody')).toEqual([]);
  });

  it('pages with next_cursor, and refuses a cursor that names no intent of this tenant', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { intent_id: string }[]; next_cursor: string | null; has_more: boolean } = (await get(`/harbor/operator/v1/intents?limit=1${cursor ? `&cursor=${cursor}` : ''}`)).json();
      seen.push(...page.items.map((item: { intent_id: string }) => item.intent_id));
      cursor = page.next_cursor;
      expect(page.has_more).toBe(cursor !== null);
    } while (cursor !== null);
    expect(seen).toEqual([intents.funded, intents.map, intents.search]);

    const unknown = await get('/harbor/operator/v1/intents?cursor=00000000-0000-4000-8000-000000000001');
    expect(errorOf(unknown)).toEqual({ status: 400, code: 'intent.cursor_unknown' });
    // Another tenant's intent is no cursor either, and the answer tells nothing about it.
    const foreign = await get(`/harbor/operator/v1/intents?cursor=${intents.search}`, globex.adminKey);
    expect(errorOf(foreign)).toEqual({ status: 400, code: 'intent.cursor_unknown' });
    expect(errorOf(await get(`/harbor/intents?cursor=${intents.search}`, globex.adminKey))).toEqual({ status: 400, code: 'intent.cursor_unknown' });
    // The last intent as cursor is the end of the list, not an unknown cursor.
    expect((await get(`/harbor/operator/v1/intents?cursor=${intents.search}`)).json()).toMatchObject({ items: [], next_cursor: null });
  });

  it.each([
    ['limit=0', '/limit'],
    [`limit=${pageSizeMax + 1}`, '/limit'],
    ['limit=ten', '/limit'],
    ['status=completed', '/status'],
    ['cursor=intent-1', '/cursor'],
    ['operator_did=', '/operator_did'],
    ['state=open', '/state'],
  ])('refuses %s with 400 request.invalid naming the field', async (query, path) => {
    const response = await get(`/harbor/operator/v1/intents?${query}`);
    expect(errorOf(response)).toEqual({ status: 400, code: 'request.invalid' });
    expect(response.json().error.details.fields).toContainEqual(expect.objectContaining({ location: 'querystring', path }));
  });

  it('gives another tenant 404 and none of the intents, and lets every role read', async () => {
    const foreign = await get(`/harbor/operator/v1/intents/${intents.search}`, globex.adminKey);
    expect(errorOf(foreign)).toEqual({ status: 404, code: 'intent.not_found' });
    expect((await get('/harbor/operator/v1/intents', globex.adminKey)).json().items).toEqual([]);
    for (const role of ['operator', 'agent', 'auditor'] as const) {
      const key = await acme.key(role);
      expect((await get(`/harbor/operator/v1/intents/${intents.search}`, key)).statusCode, role).toBe(200);
      expect((await get('/harbor/operator/v1/intents', key)).statusCode, role).toBe(200);
    }
    expect(errorOf(await get('/harbor/operator/v1/intents/00000000-0000-4000-8000-000000000009'))).toEqual({ status: 404, code: 'intent.not_found' });
    expect(errorOf(await get('/harbor/operator/v1/intents/not-a-uuid'))).toEqual({ status: 400, code: 'request.invalid' });
  });
});

describe('POST /harbor/verify', () => {
  it('is POST /verify: the same answer, access, rate-limit budget and idempotency', async () => {
    const intentId = await createIntent({ allowedTools: ['search.web'] });
    const token = await fundWithX402(intentId);
    const body = { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 10 };

    const gateway = await post('/verify', body);
    const engine = await post('/harbor/verify', body);
    expect(engine.statusCode, engine.body).toBe(200);
    expect(engine.json()).toMatchObject({ allow: true, tenant: acme.tenantId, intent_id: intentId, audit_id: expect.any(String), decision_id: expect.any(String) });
    const { audit_id: _a, decision_id: _d, remaining_cents: _r, ...engineRest } = engine.json();
    const { audit_id: _ga, decision_id: _gd, remaining_cents: _gr, ...gatewayRest } = gateway.json();
    expect(engineRest).toEqual(gatewayRest);
    expect(engine.json().remaining_cents).toBe(gateway.json().remaining_cents - 10);
    expect(header(engine, 'cache-control')).toBe('no-store');
    // One budget per credential across both paths.
    expect(Number(header(engine, 'x-ratelimit-remaining'))).toBe(Number(header(gateway, 'x-ratelimit-remaining')) - 1);

    // The client sends its key in the header and in the body.
    const keyed = { ...body, idempotency_key: 'verify-once' };
    const first = await post('/harbor/verify', keyed, { 'idempotency-key': 'verify-once' });
    const replay = await post('/harbor/verify', keyed, { 'idempotency-key': 'verify-once' });
    expect(first.json().allow).toBe(true);
    expect(replay.body).toBe(first.body);
    expect(header(replay, 'idempotent-replayed')).toBe('true');
    const reused = await post('/harbor/verify', { ...body, requested_spend_cents: 11 }, { 'idempotency-key': 'verify-once' });
    expect(errorOf(reused)).toEqual({ status: 409, code: 'idempotency.key_reused' });
    // One key space for both paths; the stored request's fingerprint includes its path (docs/capabilities.md).
    const otherPath = await post('/verify', keyed, { 'idempotency-key': 'verify-once' });
    expect(errorOf(otherPath)).toEqual({ status: 409, code: 'idempotency.key_reused' });

    const auditor = await app.inject({ method: 'POST', url: '/harbor/verify', headers: bearer(await acme.key('auditor')), payload: body });
    expect(errorOf(auditor)).toEqual({ status: 403, code: 'auth.role_insufficient' });
    const unscoped = await app.inject({ method: 'POST', url: '/harbor/verify', headers: bearer(await acme.key('agent', ['mcp.discovery:read'])), payload: body });
    expect(errorOf(unscoped)).toEqual({ status: 403, code: 'auth.scope_insufficient' });
    const scoped = await app.inject({ method: 'POST', url: '/harbor/verify', headers: bearer(await acme.key('agent', ['mcp.spend:write'])), payload: body });
    expect(scoped.json().allow).toBe(true);
    expect(errorOf(await app.inject({ method: 'POST', url: '/harbor/verify', payload: body }))).toEqual({ status: 401, code: 'auth.credential_missing' });
  });
});

describe('MPP credential in the Authorization header', () => {
  const fund = (intentId: string, headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: `/harbor/intents/${intentId}/fund`, headers, payload: '' });
  const withPayment = (credential: string, key = acme.adminKey) => ({ authorization: `Bearer ${key}, ${credential}` });

  async function challengeOf(intentId: string): Promise<string> {
    const challenge = await fund(intentId, bearer(acme.adminKey));
    expect(challenge.statusCode, challenge.body).toBe(402);
    return header(challenge, 'www-authenticate');
  }

  it('funds with `Bearer <key>, Payment <credential>`, the direct engine client\'s form', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const credential = sandboxMppAuthorization(await challengeOf(intentId), sandboxMppTokens.success);
    const funded = await fund(intentId, withPayment(credential));
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toMatchObject({ tenant: acme.tenantId, intent_id: intentId, state: 'funded', funded: true, capability_token: expect.any(String) });
    expect(header(funded, 'payment-receipt')).toEqual(expect.any(String));
  });

  it('judges it as it judges x-svc-payment-authorization: a decline, a pending poll, a malformed credential', async () => {
    const declined = await createIntent({ settlementRail: 'processor_mpp' });
    const declineAnswer = await fund(declined, withPayment(sandboxMppAuthorization(await challengeOf(declined), sandboxMppTokens.decline)));
    expect(declineAnswer.statusCode).toBe(402);
    expect(declineAnswer.json()).toMatchObject({ state: 'open', funding: { status: 'payment_failed' } });

    const pending = await createIntent({ settlementRail: 'processor_mpp' });
    const pendingCredential = sandboxMppAuthorization(await challengeOf(pending), sandboxMppTokens.pending);
    expect((await fund(pending, withPayment(pendingCredential))).statusCode).toBe(202);
    // The poll may come in either header: it is the same credential.
    const polled = await fund(pending, { ...bearer(acme.adminKey), 'x-svc-payment-authorization': pendingCredential });
    expect(polled.statusCode, polled.body).toBe(200);

    const malformed = await createIntent({ settlementRail: 'processor_mpp' });
    await challengeOf(malformed);
    const refused = await fund(malformed, withPayment(`Payment ${Buffer.from('{nope').toString('base64url')}`));
    expect(refused.statusCode).toBe(402);
    expect(header(refused, 'content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ type: 'https://paymentauth.org/problems/malformed-credential', funding: { status: 'credential_rejected' } });
  });

  it('accepts the same credential in both headers and refuses two different ones, moving nothing', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const challenge = await challengeOf(intentId);
    const success = sandboxMppAuthorization(challenge, sandboxMppTokens.success);
    const decline = sandboxMppAuthorization(challenge, sandboxMppTokens.decline);
    const conflict = await fund(intentId, { ...withPayment(success), 'x-svc-payment-authorization': decline });
    expect(errorOf(conflict)).toEqual({ status: 400, code: 'funding.credential_conflict' });
    expect((await get(`/harbor/intents/${intentId}`)).json().state).toBe('open');
    const same = await fund(intentId, { ...withPayment(success), 'x-svc-payment-authorization': success.slice('Payment '.length) });
    expect(same.statusCode, same.body).toBe(200);
  });

  it('still authenticates by the Bearer part alone', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const credential = sandboxMppAuthorization(await challengeOf(intentId), sandboxMppTokens.success);
    const forged = `${acme.adminKey.slice(0, -64)}${'f'.repeat(64)}`;
    expect(errorOf(await fund(intentId, withPayment(credential, forged)))).toEqual({ status: 401, code: 'auth.credential_invalid' });
    expect(errorOf(await fund(intentId, { authorization: credential }))).toEqual({ status: 401, code: 'auth.credential_invalid' });
    expect(errorOf(await fund(intentId, { authorization: `${credential}, ${credential}` }))).toEqual({ status: 401, code: 'auth.credential_invalid' });
    expect(errorOf(await fund(intentId, { authorization: `Bearer ${acme.adminKey}, Basic dXNlcjpwYXNz` }))).toEqual({ status: 401, code: 'auth.credential_invalid' });
    // Another tenant's key with this tenant's credential: the intent is not its own.
    const foreign = await fund(intentId, withPayment(credential, globex.adminKey));
    expect(errorOf(foreign)).toEqual({ status: 404, code: 'intent.not_found' });
    // The Payment part authenticates nothing, on any route; the key beside it decides.
    expect((await app.inject({ url: '/v1/auth/principal', headers: withPayment(credential) })).json().tenant_id).toBe(acme.tenantId);
    expect((await get(`/harbor/intents/${intentId}`)).json().state).toBe('open');
  });

  it('never writes the credential or the key to the logs', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const credential = sandboxMppAuthorization(await challengeOf(intentId), sandboxMppTokens.success);
    const before = logs.lines.length;
    await fund(intentId, { ...withPayment(credential), 'x-svc-payment-authorization': sandboxMppAuthorization(await challengeOf(intentId), sandboxMppTokens.decline) });
    await fund(intentId, withPayment(`Payment ${Buffer.from('{nope').toString('base64url')}`));
    expect((await fund(intentId, withPayment(credential))).statusCode).toBe(200);
    const written = logs.lines.slice(before).join('');
    expect(written).toContain(intentId);
    const base64Credential = credential.slice('Payment '.length);
    for (const secret of [base64Credential, base64Credential.slice(0, 40), acme.adminKey, acme.adminKey.slice(-64)]) {
      expect(written).not.toContain(secret);
    }
  });
});

describe('MPP echo without expires', () => {
  it('funds when the echo drops the optional expires of a challenge issued for this intent', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const challenge = await app.inject({ method: 'POST', url: `/harbor/intents/${intentId}/fund`, headers: bearer(acme.adminKey), payload: {} });
    // What the public client's challenge parser keeps: id, realm, method, intent, request.
    const { id, realm, method, intent, request } = parseWwwAuthenticate(header(challenge, 'www-authenticate'))[0]!.params;
    const echo = (params: Record<string, string | undefined>) =>
      `Payment ${Buffer.from(JSON.stringify({ challenge: params, payload: { token: sandboxMppTokens.success } })).toString('base64url')}`;

    const changed = await post(`/harbor/intents/${intentId}/fund`, {}, { 'x-svc-payment-authorization': echo({ id, realm, method, intent, request: `${request}x` }) });
    expect(changed.statusCode).toBe(402);
    expect(changed.json()).toMatchObject({ type: 'https://paymentauth.org/problems/invalid-challenge' });
    expect(changed.json().detail).toMatch(/request/);

    // The refused credential above spent nothing: a fresh challenge was issued, and the first one is still live.
    const funded = await post(`/harbor/intents/${intentId}/fund`, {}, { 'x-svc-payment-authorization': echo({ id, realm, method, intent, request }) });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toMatchObject({ funded: true, capability_token: expect.any(String) });
  });
});

describe('policy-bound intents', () => {
  it('show the materialized rule in the order the policy version shows it', async () => {
    const version = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1' })).json();
    await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: version.version_seq });
    const intentId = await createIntent({
      policy: { templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate },
    });
    for (const url of [`/harbor/intents/${intentId}`, `/harbor/operator/v1/intents/${intentId}`]) {
      const shown = (await get(url)).json();
      expect(JSON.stringify(shown.predicate_dsl)).toBe(JSON.stringify(version.materialized_predicate));
      expect(Object.keys(shown.predicate_dsl)).toEqual(['version', 'root']);
    }
  });
});
