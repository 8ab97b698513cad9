// Device login started as the public client's `login` starts it (POST /v1/public/auth/device/start with its body:
// client id and name, the environment and the role of the key it wants), on real Postgres: the person approves in
// their tenant, the device collects exactly the key it asked for, and the client's own checks of the token answer
// hold; refusals for another environment, another grant, a non-admin; the RFC 8628 flow beside it unchanged.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const grantType = 'urn:ietf:params:oauth:grant-type:device_code';

let database: TestDatabase;
let app: FastifyInstance;
let system: Database;
let sandbox: TestTenant;
let live: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  system = new Database({ ...database.connection, max: 2 });
  sandbox = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

let personCounter = 0;
let addressCounter = 0;

/** A member of `tenantId` signed in with a one-time code, from an address of their own. */
async function signedIn(tenantId: string, role: 'admin' | 'operator' = 'admin'): Promise<string> {
  const email = `starter.${++personCounter}@example.com`;
  await createUser(system, { tenantId, email, role });
  const remoteAddress = `203.0.113.${personCounter}`;
  const started = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email }, remoteAddress });
  const message = await takeOutboxCode(system, email);
  const verified = await app.inject({ method: 'POST', url: '/v1/public/auth/challenges/verify', payload: { challenge_id: started.json().challenge_id, code: message!.code }, remoteAddress });
  return verified.json().access_token;
}

/** The client's start body, in our names. */
const clientStart = (environment: string, role = 'operator') =>
  app.inject({
    method: 'POST',
    url: '/v1/public/auth/device/start',
    payload: { client_id: 'svc-kit-cli', client_name: 'Svc CLI', requested_environment: environment, service_account_role: role },
    remoteAddress: `198.51.100.${++addressCounter}`,
  });
const poll = (deviceCode: string) =>
  app.inject({ method: 'POST', url: '/v1/public/auth/device/token', payload: { grant_type: grantType, device_code: deviceCode, client_id: 'svc-kit-cli' } });
const decide = (session: string, body: object) =>
  app.inject({ method: 'POST', url: '/v1/auth/device/approve', headers: bearer(session), payload: body, remoteAddress: `192.0.2.${++addressCounter}` });

/** The client's checks of a start answer and of a token answer (learned from its source, written here). */
function clientStartAnswer(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  for (const field of ['device_code', 'user_code', 'verification_uri']) expect(typeof body[field] === 'string' && body[field].length > 0, field).toBe(true);
  expect(body.expires_in).toBeGreaterThan(0);
  expect(body.interval).toBeGreaterThan(0);
  return body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string };
}
function clientTokenAnswer(response: LightMyRequestResponse, environment: string) {
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  for (const field of ['access_token', 'tenant_id', 'tenant_uuid']) expect(typeof body[field] === 'string' && body[field].length > 0, field).toBe(true);
  expect(body.environment).toBe(environment);
  expect(body.service_account_role).toBe('operator');
  expect(body.access_token.startsWith(`svc_sk_${environment}_`)).toBe(true);
  return body as { access_token: string; tenant_id: string; tenant_uuid: string; key_id: string };
}

describe('POST /v1/public/auth/device/start', () => {
  it('asks for a sandbox operator key, which the approving admin\'s tenant grants exactly', async () => {
    const started = clientStartAnswer(await clientStart('sandbox'));
    expect(started.verification_uri_complete).toContain(encodeURIComponent(started.user_code));
    const admin = await signedIn(sandbox.tenantId);

    // The approver sees what the device asks for, before deciding.
    const seen = await app.inject({ url: `/v1/auth/device/${started.user_code}`, headers: bearer(admin), remoteAddress: `192.0.2.${++addressCounter}` });
    expect(seen.json()).toMatchObject({ status: 'pending', client_name: 'Svc CLI', grant: 'api_key', key_role: 'operator', requested_environment: 'sandbox', requested_key_role: 'operator' });
    const pending = await poll(started.device_code);
    expect(pending.json()).toMatchObject({ error: 'authorization_pending' });

    // The console's approve button sends the decision alone: the grant is the one asked for.
    const approved = await decide(admin, { user_code: started.user_code, decision: 'approve' });
    expect(approved.json()).toMatchObject({ status: 'approved', grant: 'api_key', key_role: 'operator' });
    // The device keeps its interval (RFC 8628): the next poll comes after it.
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    const token = clientTokenAnswer(await poll(started.device_code), 'sandbox');
    expect(token).toMatchObject({ tenant_id: sandbox.tenantId });
    const principal = (await app.inject({ url: '/v1/auth/principal', headers: bearer(token.access_token) })).json();
    expect(principal).toMatchObject({ tenant_id: sandbox.tenantId, tenant_uuid: token.tenant_uuid, environment: 'sandbox', service_account_role: 'operator', key_kind: 'standard' });
    // The key is an ordinary key of the tenant, named after the device.
    const key = (await app.inject({ url: `/v1/admin/api-keys/${token.key_id}`, headers: bearer(sandbox.adminKey) })).json();
    expect(key).toMatchObject({ role: 'operator', name: 'device login: Svc CLI', revoked_at: null });
  }, 20_000);

  it('grants a live key when an admin of a live tenant approves a device that asked for one', async () => {
    const started = clientStartAnswer(await clientStart('live'));
    const admin = await signedIn(live.tenantId);
    expect((await decide(admin, { user_code: started.user_code, decision: 'approve' })).statusCode).toBe(200);
    const token = clientTokenAnswer(await poll(started.device_code), 'live');
    expect(token.tenant_id).toBe(live.tenantId);
  });

  it('refuses another environment, another grant, and a non-admin; a denial gives nothing', async () => {
    const started = clientStartAnswer(await clientStart('live'));
    const sandboxAdmin = await signedIn(sandbox.tenantId);
    const mismatch = await decide(sandboxAdmin, { user_code: started.user_code, decision: 'approve' });
    expect(mismatch.statusCode).toBe(409);
    expect(mismatch.json().error).toMatchObject({ code: 'device_login.environment_mismatch', details: { requested_environment: 'live', tenant_environment: 'sandbox' } });

    const other = clientStartAnswer(await clientStart('sandbox'));
    for (const body of [{ grant: 'session' }, { grant: 'api_key', key_role: 'admin' }]) {
      const refused = await decide(sandboxAdmin, { user_code: other.user_code, decision: 'approve', ...body });
      expect(refused.json().error.code, JSON.stringify(body)).toBe('device_login.grant_invalid');
    }
    const operator = await signedIn(sandbox.tenantId, 'operator');
    expect((await decide(operator, { user_code: other.user_code, decision: 'approve' })).json().error.code).toBe('auth.role_insufficient');
    // Still undecided after every refusal; a denial by anyone who sees it ends it.
    expect((await decide(operator, { user_code: other.user_code, decision: 'deny' })).json()).toMatchObject({ status: 'denied' });
    expect((await poll(other.device_code)).json()).toMatchObject({ error: 'access_denied' });
  });

  it('refuses a body the client does not send, and leaves the RFC 8628 start as it was', async () => {
    for (const payload of [{}, { requested_environment: 'production' }, { requested_environment: 'sandbox', service_account_role: 'owner' }, { requested_environment: 'sandbox', tenant_id: 'x' }]) {
      const response = await app.inject({ method: 'POST', url: '/v1/public/auth/device/start', payload, remoteAddress: `198.51.100.${++addressCounter}` });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
    }
    // The role defaults to operator, as the client always asks.
    const defaulted = clientStartAnswer(await app.inject({ method: 'POST', url: '/v1/public/auth/device/start', payload: { requested_environment: 'sandbox' }, remoteAddress: `198.51.100.${++addressCounter}` }));
    const admin = await signedIn(sandbox.tenantId);
    expect((await decide(admin, { user_code: defaulted.user_code, decision: 'approve' })).json()).toMatchObject({ key_role: 'operator' });

    const rfc = await app.inject({ method: 'POST', url: '/v1/public/auth/device/code', payload: { client_name: 'plain device' }, remoteAddress: `198.51.100.${++addressCounter}` });
    const code = clientStartAnswer(rfc);
    const view = await app.inject({ url: `/v1/auth/device/${code.user_code}`, headers: bearer(admin), remoteAddress: `192.0.2.${++addressCounter}` });
    expect(view.json()).toMatchObject({ grant: 'session', key_role: null, requested_environment: null, requested_key_role: null });
  });
});
