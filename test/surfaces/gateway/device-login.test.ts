// Device login (RFC 8628) on real Postgres: the device's code and token routes, approval by a person signed in with
// a one-time code, and every refusal: pending, slow_down, expired, denied, single use, another tenant, brute force of
// user codes, API keys at the approval routes, the RFC's error shape and form bodies, SVC_PUBLIC_URL, and pruning.
import type { FastifyInstance } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app as serviceApp } from '../../../src/app.ts';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { engineEffects } from '../../../src/engine/effects.ts';
import { Database } from '../../../src/infra/database.ts';
import { ephemeralKeyring } from '../../../src/infra/gateway-keys.ts';
import { createLogger } from '../../../src/infra/logging.ts';
import { createFastify } from '../../../src/server-options.ts';
import { runMaintenance } from '../../../src/services/maintenance.ts';
import { normalizeUserCode, userCodeAlphabet } from '../../../src/services/device-login-service.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const grantType = 'urn:ietf:params:oauth:grant-type:device_code';

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let system: Database;
let acme: TestTenant;
let globex: TestTenant;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { logs });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  system = new Database({ ...database.connection, max: 2 });
  acme = await createTestTenant(database.connection, 'sandbox', 'acme');
  globex = await createTestTenant(database.connection, 'live', 'globex');
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

let personCounter = 0;
/** Addresses are per test, so one test's lookups never spend another's per-address budget. */
let addressCounter = 0;
const freshAddress = () => `198.51.100.${++addressCounter}`;

interface Person {
  readonly userId: string;
  readonly token: string;
}

/** A member of `tenantId`, signed in the way a person does: login/start, the code from the outbox, verify. */
async function signedIn(tenantId: string, role: 'admin' | 'operator' | 'auditor' = 'operator'): Promise<Person> {
  const email = `person.${++personCounter}@example.com`;
  const user = await createUser(system, { tenantId, email, role });
  // Each person signs in from an address of their own, so sign-ins never spend the public routes' budget of the others.
  const remoteAddress = `203.0.113.${personCounter}`;
  const started = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email }, remoteAddress });
  const message = await takeOutboxCode(system, email);
  const verified = await app.inject({
    method: 'POST',
    url: '/v1/public/auth/challenges/verify',
    payload: { challenge_id: started.json().challenge_id, code: message!.code },
    remoteAddress,
  });
  expect(verified.statusCode).toBe(200);
  return { userId: user.userId, token: verified.json().access_token };
}

const startDevice = (payload: object = { client_name: 'svc CLI on build-7' }, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'POST', url: '/v1/public/auth/device/code', payload, remoteAddress });

const poll = (deviceCode: string) =>
  app.inject({ method: 'POST', url: '/v1/public/auth/device/token', payload: { grant_type: grantType, device_code: deviceCode } });

const lookUp = (person: Person, userCode: string, remoteAddress: string) =>
  app.inject({ method: 'GET', url: `/v1/auth/device/${encodeURIComponent(userCode)}`, headers: bearer(person.token), remoteAddress });

const decide = (person: Person, userCode: string, decision: 'approve' | 'deny', remoteAddress: string) =>
  app.inject({ method: 'POST', url: '/v1/auth/device/approve', headers: bearer(person.token), payload: { user_code: userCode, decision }, remoteAddress });

/** The device waited its interval: the previous poll moves into the past (the database clock judges polls). */
async function waitedInterval(deviceCode: string): Promise<void> {
  const id = /^dvc_([0-9a-f]{32})_/.exec(deviceCode)![1];
  await system.system((tx) => tx.query(`UPDATE device_authorizations SET last_polled_at = last_polled_at - interval '1 hour' WHERE device_authorization_id = $1`, [id]));
}

function expectOauthError(response: { statusCode: number; headers: Record<string, unknown>; json(): any }, error: string, code: string) {
  expect(response.statusCode).toBe(400);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.json()).toMatchObject({ error, code, request_id: expect.any(String) });
  expect(response.json().error_description).toMatch(/\S/);
}

async function started(): Promise<{ deviceCode: string; userCode: string }> {
  const response = await startDevice();
  expect(response.statusCode).toBe(200);
  return { deviceCode: response.json().device_code, userCode: response.json().user_code };
}

describe('the full flow over HTTP', () => {
  it('gives codes, answers pending, lets a signed-in person approve, and hands the session token to the device once', async () => {
    const address = freshAddress();
    const codeAnswer = await fetch(`${baseUrl}/v1/public/auth/device/code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'svc CLI on build-7' }),
    });
    expect(codeAnswer.status).toBe(200);
    expect(codeAnswer.headers.get('cache-control')).toBe('no-store');
    const codes = (await codeAnswer.json()) as any;
    expect(codes.device_code).toMatch(/^dvc_[0-9a-f]{32}_[0-9a-f]{64}$/);
    expect(codes.user_code).toMatch(new RegExp(`^[${userCodeAlphabet}]{4}-[${userCodeAlphabet}]{4}$`));
    expect(codes.verification_uri).toBe(`${baseUrl}/console/device`);
    expect(codes.verification_uri_complete).toBe(`${baseUrl}/console/device?user_code=${codes.user_code}`);
    expect(codes).toMatchObject({ expires_in: 600, interval: 5 });

    const token = (body: object) =>
      fetch(`${baseUrl}/v1/public/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const pending = await token({ grant_type: grantType, device_code: codes.device_code });
    expect(pending.status).toBe(400);
    expect(await pending.json()).toMatchObject({ error: 'authorization_pending', code: 'device_login.authorization_pending' });

    // The person types the code as they read it: lowercase, without the dash.
    const ann = await signedIn('acme', 'admin');
    const typed = codes.user_code.replace('-', '').toLowerCase();
    const shown = await lookUp(ann, typed, address);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(shown.json()).toMatchObject({ object: 'device_login', user_code: codes.user_code, client_name: 'svc CLI on build-7', status: 'pending', decided_at: null });
    expect(Date.parse(shown.json().expires_at) - Date.parse(shown.json().created_at)).toBe(600_000);

    const approved = await decide(ann, codes.user_code, 'approve', address);
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'approved', decided_at: expect.any(String) });

    await waitedInterval(codes.device_code);
    const granted = await token({ grant_type: grantType, device_code: codes.device_code });
    expect(granted.status).toBe(200);
    expect(granted.headers.get('cache-control')).toBe('no-store');
    const grant = (await granted.json()) as any;
    expect(grant).toMatchObject({ token_type: 'Bearer', credential_type: 'session', expires_in: 900, tenant_id: 'acme', user_id: ann.userId, roles: ['admin'] });
    // The same session token as a sign-in's: verifiable with the published keys, and a credential for the person.
    const { payload } = await jwtVerify(grant.access_token, createRemoteJWKSet(new URL('/.well-known/jwks.json', baseUrl)), { issuer: 'svc-gateway', audience: 'svc-session' });
    expect(payload).toMatchObject({ sub: ann.userId, tid: 'acme', roles: ['admin'] });
    const principal = await fetch(`${baseUrl}/v1/auth/principal`, { headers: bearer(grant.access_token) });
    expect(await principal.json()).toMatchObject({ tenant_id: 'acme', key_kind: 'session', subject: ann.userId });

    // Single use: the device code answers with a token once.
    await waitedInterval(codes.device_code);
    const again = await token({ grant_type: grantType, device_code: codes.device_code });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant', code: 'device_login.device_code_invalid' });
    // No token, device code or user code in the log.
    expect(logs.text).not.toContain(grant.access_token);
    expect(logs.text).not.toContain(codes.device_code);
    expect(logs.text).not.toContain(codes.device_code.slice(37));
  });

  it('issues the token with the role the approver has when the device collects it, and nothing once they are gone', async () => {
    const address = freshAddress();
    const bob = await signedIn('acme', 'operator');
    const first = await started();
    expect((await decide(bob, first.userCode, 'approve', address)).statusCode).toBe(200);
    const second = await started();
    expect((await decide(bob, second.userCode, 'approve', address)).statusCode).toBe(200);
    await system.system((tx) => tx.query(`UPDATE tenant_memberships SET role = 'auditor' WHERE user_id = $1`, [bob.userId]));
    const grant = await poll(first.deviceCode);
    expect(grant.json()).toMatchObject({ roles: ['auditor'] });
    await system.system((tx) => tx.query('DELETE FROM tenant_memberships WHERE user_id = $1', [bob.userId]));
    expectOauthError(await poll(second.deviceCode), 'access_denied', 'device_login.access_denied');
  });
});

describe('polling', () => {
  it('answers slow_down to a device that polls sooner than its interval, and the interval grows by 5 s each time', async () => {
    const { deviceCode } = await started();
    expectOauthError(await poll(deviceCode), 'authorization_pending', 'device_login.authorization_pending');
    const slow = await poll(deviceCode);
    expectOauthError(slow, 'slow_down', 'device_login.slow_down');
    expect(slow.json().interval).toBe(10);
    expect((await poll(deviceCode)).json()).toMatchObject({ error: 'slow_down', interval: 15 });
    // Waiting the interval out brings back authorization_pending; the grown interval stays.
    await waitedInterval(deviceCode);
    expectOauthError(await poll(deviceCode), 'authorization_pending', 'device_login.authorization_pending');
    expect((await poll(deviceCode)).json()).toMatchObject({ error: 'slow_down', interval: 20 });
  });

  it('answers expired_token once the code is past its life, and the person no longer finds it', async () => {
    const { deviceCode, userCode } = await started();
    const id = /^dvc_([0-9a-f]{32})_/.exec(deviceCode)![1];
    await system.system((tx) =>
      tx.query(`UPDATE device_authorizations SET created_at = created_at - interval '11 minutes', expires_at = expires_at - interval '11 minutes' WHERE device_authorization_id = $1`, [id]),
    );
    expectOauthError(await poll(deviceCode), 'expired_token', 'device_login.expired_token');
    const carol = await signedIn('acme');
    const address = freshAddress();
    expect((await lookUp(carol, userCode, address)).json().error.code).toBe('device_login.not_found');
    expect((await decide(carol, userCode, 'approve', address)).json().error.code).toBe('device_login.not_found');
  });

  it('answers access_denied after a denial, which cannot be turned into an approval', async () => {
    const { deviceCode, userCode } = await started();
    const dave = await signedIn('acme');
    const address = freshAddress();
    expect((await decide(dave, userCode, 'deny', address)).json()).toMatchObject({ status: 'denied' });
    expectOauthError(await poll(deviceCode), 'access_denied', 'device_login.access_denied');
    const again = await decide(dave, userCode, 'approve', address);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('device_login.already_decided');
    await waitedInterval(deviceCode);
    expectOauthError(await poll(deviceCode), 'access_denied', 'device_login.access_denied');
  });

  it('refuses malformed token requests in the RFC shape, and takes form bodies as OAuth clients send them', async () => {
    const { deviceCode } = await started();
    const send = (payload: object) => app.inject({ method: 'POST', url: '/v1/public/auth/device/token', payload });
    expectOauthError(await send({ device_code: deviceCode }), 'invalid_request', 'device_login.request_invalid');
    expectOauthError(await send({ grant_type: grantType }), 'invalid_request', 'device_login.request_invalid');
    expectOauthError(await send({ grant_type: 'authorization_code', device_code: deviceCode }), 'unsupported_grant_type', 'device_login.grant_type_unsupported');
    expectOauthError(await send({ grant_type: grantType, device_code: 'dvc_nothing' }), 'invalid_grant', 'device_login.device_code_invalid');
    // The right id with a wrong secret is the same refusal: the stored SHA-256 does not match.
    expectOauthError(await send({ grant_type: grantType, device_code: `${deviceCode.slice(0, 37)}${'0'.repeat(64)}` }), 'invalid_grant', 'device_login.device_code_invalid');
    const form = await app.inject({
      method: 'POST',
      url: '/v1/public/auth/device/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: grantType, device_code: deviceCode, client_id: 'svc-cli' }).toString(),
    });
    expectOauthError(form, 'authorization_pending', 'device_login.authorization_pending');
    const repeated = await app.inject({
      method: 'POST',
      url: '/v1/public/auth/device/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=${encodeURIComponent(grantType)}&device_code=a&device_code=b`,
    });
    expectOauthError(repeated, 'invalid_request', 'device_login.request_invalid');
    // Form bodies are for the device routes only.
    const elsewhere = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a%40b.example' });
    expect(elsewhere.json().error.code).toBe('request.unsupported_media_type');
  });

  it('takes no body, or a client_name of printable characters up to its length', async () => {
    expect((await startDevice({ client_name: 'bad\nname' })).json().error.code).toBe('request.invalid');
    expect((await startDevice({ client_name: 'x'.repeat(65) })).json().error.code).toBe('request.invalid');
    expect((await startDevice({})).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/v1/public/auth/device/code' })).statusCode).toBe(200);
  });
});

describe('approval', () => {
  it('keeps a decided request to the deciding tenant: another tenant\'s person gets 404', async () => {
    const { deviceCode, userCode } = await started();
    const erin = await signedIn('acme', 'admin');
    const frank = await signedIn('globex', 'admin');
    const address = freshAddress();
    // Undecided, the request belongs to no tenant: whoever has the code may see it (as RFC 8628 intends).
    expect((await lookUp(frank, userCode, address)).json()).toMatchObject({ status: 'pending' });
    expect((await decide(erin, userCode, 'approve', address)).statusCode).toBe(200);
    for (const response of [await lookUp(frank, userCode, address), await decide(frank, userCode, 'deny', address)]) {
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('device_login.not_found');
      expect(response.body).not.toContain('acme');
    }
    expect((await lookUp(erin, userCode, address)).json()).toMatchObject({ status: 'approved' });
    expect((await poll(deviceCode)).json()).toMatchObject({ tenant_id: 'acme', user_id: erin.userId });
    // Row-level security says the same underneath: globex's transaction sees no row acme decided.
    const seen = await system.tenant('globex', async (tx) => (await tx.query('SELECT count(*)::int AS n FROM device_authorizations WHERE tenant_id IS NOT NULL')).rows[0]!.n);
    expect(seen).toBe(0);
  });

  it('refuses API keys at the approval routes: only a signed-in person can approve', async () => {
    const { userCode } = await started();
    for (const key of [acme.adminKey, await acme.key('operator')]) {
      const read = await app.inject({ method: 'GET', url: `/v1/auth/device/${userCode}`, headers: bearer(key) });
      const approve = await app.inject({ method: 'POST', url: '/v1/auth/device/approve', headers: bearer(key), payload: { user_code: userCode, decision: 'approve' } });
      for (const response of [read, approve]) {
        expect(response.statusCode).toBe(403);
        expect(response.json().error.code).toBe('device_login.session_required');
      }
    }
    expect((await app.inject({ method: 'GET', url: `/v1/auth/device/${userCode}` })).statusCode).toBe(401);
    expect(globex.tenantId).toBe('globex');
  });

  it('lets a sandbox admin grant the device an API key of a chosen role instead of a session, minted at collection', async () => {
    const admin = await signedIn('acme', 'admin');
    const address = freshAddress();
    const { deviceCode, userCode } = await started();
    const approved = await app.inject({
      method: 'POST',
      url: '/v1/auth/device/approve',
      headers: bearer(admin.token),
      payload: { user_code: userCode, decision: 'approve', grant: 'api_key', key_role: 'agent' },
      remoteAddress: address,
    });
    expect(approved.json()).toMatchObject({ status: 'approved', grant: 'api_key', key_role: 'agent' });
    const collected = await poll(deviceCode);
    expect(collected.statusCode).toBe(200);
    const answer = collected.json();
    expect(answer).toMatchObject({ token_type: 'Bearer', credential_type: 'api_key', tenant_id: 'acme', roles: ['agent'], key_id: expect.stringMatching(/^key_[0-9a-f]{32}$/) });
    expect(answer.expires_in).toBeUndefined();
    const principal = await app.inject({ method: 'GET', url: '/v1/auth/principal', headers: bearer(answer.access_token) });
    expect(principal.json()).toMatchObject({ tenant_id: 'acme', roles: ['agent'], key_kind: 'standard' });
    // An ordinary key of the tenant: listed with the device's name, revocable like any other.
    const listed = await app.inject({ method: 'GET', url: `/v1/admin/api-keys/${answer.key_id}`, headers: bearer(acme.adminKey) });
    expect(listed.json()).toMatchObject({ name: 'device login: svc CLI on build-7', role: 'agent' });
    // The key's secret is nowhere in the database row, and the device code is spent.
    const row = await system.system(async (tx) => (await tx.query('SELECT row_to_json(d)::text AS text FROM device_authorizations d WHERE key_id = $1', [answer.key_id])).rows[0]!.text);
    expect(row).not.toContain(answer.access_token.slice(-64));
    await waitedInterval(deviceCode);
    expectOauthError(await poll(deviceCode), 'invalid_grant', 'device_login.device_code_invalid');
  });

  it('refuses an API key grant outside sandbox, by a non-admin, or without its role', async () => {
    const address = freshAddress();
    const liveAdmin = await signedIn('globex', 'admin');
    const operator = await signedIn('acme', 'operator');
    const admin = await signedIn('acme', 'admin');
    const { userCode } = await started();
    const ask = (person: Person, payload: object) =>
      app.inject({ method: 'POST', url: '/v1/auth/device/approve', headers: bearer(person.token), payload: { user_code: userCode, ...payload }, remoteAddress: address });
    const cases: Array<[Person, object, number, string]> = [
      [liveAdmin, { decision: 'approve', grant: 'api_key', key_role: 'agent' }, 403, 'device_login.api_key_sandbox_only'],
      [operator, { decision: 'approve', grant: 'api_key', key_role: 'agent' }, 403, 'auth.role_insufficient'],
      [admin, { decision: 'approve', grant: 'api_key' }, 400, 'device_login.grant_invalid'],
      [admin, { decision: 'approve', key_role: 'agent' }, 400, 'device_login.grant_invalid'],
      [admin, { decision: 'deny', grant: 'api_key', key_role: 'agent' }, 400, 'device_login.grant_invalid'],
      [admin, { decision: 'approve', grant: 'api_key', key_role: 'owner' }, 400, 'request.invalid'],
    ];
    for (const [person, payload, status, code] of cases) {
      const response = await ask(person, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json().error.code).toBe(code);
    }
    // None of the refusals decided anything.
    expect((await lookUp(admin, userCode, address)).json()).toMatchObject({ status: 'pending', grant: 'session', key_role: null });
  });

  it('grants no key when the approving admin is no longer one when the device collects it', async () => {
    const admin = await signedIn('acme', 'admin');
    const { deviceCode, userCode } = await started();
    const approved = await app.inject({
      method: 'POST',
      url: '/v1/auth/device/approve',
      headers: bearer(admin.token),
      payload: { user_code: userCode, decision: 'approve', grant: 'api_key', key_role: 'operator' },
      remoteAddress: freshAddress(),
    });
    expect(approved.statusCode).toBe(200);
    await system.system((tx) => tx.query(`UPDATE tenant_memberships SET role = 'operator' WHERE user_id = $1`, [admin.userId]));
    expectOauthError(await poll(deviceCode), 'access_denied', 'device_login.access_denied');
  });

  it('refuses brute force of user codes: a person, and an address, get a bounded number of lookups', async () => {
    const { userCode } = await started();
    const guesser = await signedIn('acme');
    const address = freshAddress();
    const wrong = (index: number) => `${userCodeAlphabet[index % 19]}${userCodeAlphabet[(index * 7) % 19]}BB-BBBB`;
    for (let index = 0; index < 10; index += 1) {
      expect((await lookUp(guesser, wrong(index), address)).json().error.code).toBe('device_login.not_found');
    }
    // The 11th lookup in the window is refused before any lookup is made, even with the right code, read or decide.
    for (const response of [await lookUp(guesser, userCode, address), await decide(guesser, userCode, 'approve', address)]) {
      expect(response.statusCode).toBe(429);
      expect(response.json().error).toMatchObject({ code: 'rate_limit.exceeded', details: { policy: 'device-user-code' } });
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Another person from another address is unaffected.
    const honest = await signedIn('acme');
    expect((await lookUp(honest, userCode, freshAddress())).json()).toMatchObject({ status: 'pending' });

    // Many accounts from one address share that address's budget (60 a minute).
    const crowdAddress = freshAddress();
    let refused: { statusCode: number; json(): any } | undefined;
    for (let person = 0; person < 7 && !refused; person += 1) {
      const member = await signedIn('acme');
      for (let index = 0; index < 10 && !refused; index += 1) {
        const response = await lookUp(member, wrong(index), crowdAddress);
        if (response.statusCode === 429) refused = response;
      }
    }
    expect(refused?.json().error.details.policy).toBe('device-user-code-ip');
  });

  it('accepts user codes in any case, with or without the dash, and nothing outside the alphabet', () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode(' BCDF GHJK ')).toBe('BCDFGHJK');
    expect(normalizeUserCode('BCDFGHJ0')).toBeUndefined();
    expect(normalizeUserCode('BCDFGHJI')).toBeUndefined();
    expect(normalizeUserCode('BCDFGHJ')).toBeUndefined();
  });
});

describe('configuration and maintenance', () => {
  it('names SVC_PUBLIC_URL in verification_uri when it is configured', async () => {
    expect(loadConfig({ SVC_PUBLIC_URL: 'https://svc.example.com/' }).publicBaseUrl).toBe('https://svc.example.com');
    expect(loadConfig({}).publicBaseUrl).toBeUndefined();
    for (const bad of ['ftp://svc.example.com', 'https://user:pw@svc.example.com', 'https://svc.example.com/?q=1', 'not a url']) {
      expect(() => loadConfig({ SVC_PUBLIC_URL: bad })).toThrow(ConfigError);
    }
    const instance = createFastify(createLogger('silent'));
    await instance.register(serviceApp, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true, publicBaseUrl: 'https://svc.example.com/base' });
    try {
      const response = await instance.inject({ method: 'POST', url: '/v1/public/auth/device/code', payload: {} });
      expect(response.json().verification_uri).toBe('https://svc.example.com/base/console/device');
    } finally {
      await instance.close();
    }
  });

  it('prunes device logins a day after they expired', async () => {
    const { deviceCode } = await started();
    const id = /^dvc_([0-9a-f]{32})_/.exec(deviceCode)![1];
    await system.system((tx) =>
      tx.query(`UPDATE device_authorizations SET created_at = now() - interval '3 days', expires_at = now() - interval '2 days' WHERE device_authorization_id = $1`, [id]),
    );
    const report = await runMaintenance(system, engineEffects(ephemeralKeyring()));
    expect(report.deleted.device_authorizations).toBeGreaterThanOrEqual(1);
    const left = await system.system(async (tx) => (await tx.query('SELECT count(*)::int AS n FROM device_authorizations WHERE device_authorization_id = $1', [id])).rows[0]!.n);
    expect(left).toBe(0);
  });
});
