// Single sign-on on real Postgres against a real OpenID Connect provider (oidc-provider on loopback): the full
// authorization-code flow to our session JWT, just-in-time provisioning, and every rejection the callback owes
// (state, nonce, audience, signature, code, email domain, unverified email), plus the admin configuration routes.
import type { FastifyInstance } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { randomNonce, randomState } from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startTestIdentityProvider, type TestIdentityProvider } from '../../helpers/oidc-provider.ts';

let database: TestDatabase;
let app: FastifyInstance;
let system: Database;
let jwksUrl: URL;
let idp: TestIdentityProvider;
let acme: TestTenant;
let beta: TestTenant;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { logs });
  jwksUrl = new URL('/.well-known/jwks.json', await app.listen({ host: '127.0.0.1', port: 0 }));
  system = new Database({ ...database.connection, max: 2 });
  idp = await startTestIdentityProvider({ emailInIdToken: true });
  acme = await createTestTenant(database.connection, 'sandbox', 'acme');
  beta = await createTestTenant(database.connection, 'live', 'beta');
  const configured = await putConfig(acme.adminKey, acmeConfig());
  expect(configured.statusCode).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await idp?.close();
  await system?.close();
  await database?.drop();
});

const acmeConfig = (overrides: Record<string, unknown> = {}) => ({
  issuer: idp.issuer,
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  redirect_uri: idp.redirectUri,
  allowed_email_domains: ['acme.test', 'eu.acme.test'],
  default_role: 'operator',
  ...overrides,
});

const putConfig = (key: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'PUT', url: '/v1/admin/sso/config', headers: bearer(key), payload });
const getConfig = (key: string) => app.inject({ url: '/v1/admin/sso/config', headers: bearer(key) });
const start = (tenantId: string) => app.inject({ method: 'POST', url: '/v1/auth/sso/start', payload: { tenant_id: tenantId } });
const callback = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/auth/sso/callback', payload });

function expectError(response: { statusCode: number; json(): any }, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  expect(response.json().error.code).toBe(code);
}

let accountCounter = 0;
/** A new person at the provider; answers their account id (the ID token's `sub`) and email. */
function newAccount(domain = 'acme.test', claims: { email_verified?: boolean; email?: string } = {}) {
  const accountId = `person-${++accountCounter}`;
  const email = `person.${accountCounter}@${domain}`;
  idp.addAccount(accountId, { email, email_verified: true, ...claims });
  return { accountId, email };
}

/** sso/start for the tenant, then the person signs in at the provider; answers what the callback needs. */
async function authorizeAt(tenantId: string, accountId: string): Promise<{ state: string; code: string; iss: string }> {
  const started = await start(tenantId);
  expect(started.statusCode).toBe(200);
  const { authorization_url: authorizationUrl, state } = started.json();
  const redirect = await idp.authorize(authorizationUrl, accountId);
  expect(redirect.get('state')).toBe(state);
  return { state, code: redirect.get('code')!, iss: redirect.get('iss')! };
}

async function signIn(tenantId: string, accountId: string) {
  return callback(await authorizeAt(tenantId, accountId));
}

describe('the full flow', () => {
  it('starts with PKCE S256, state and nonce, and trades the code for a session JWT that verifies against our JWKS', async () => {
    const started = await start('acme');
    expect(started.statusCode).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    const { authorization_url: authorizationUrl, state } = started.json();
    const url = new URL(authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${idp.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: idp.clientId, response_type: 'code', scope: 'openid email', redirect_uri: idp.redirectUri, state, code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The verifier never leaves the server.
    const stored = await system.system(async (tx) => (await tx.query('SELECT * FROM sso_states WHERE state = $1', [state])).rows[0]!);
    expect(authorizationUrl).not.toContain(stored.pkce_code_verifier);
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBe(10 * 60_000);

    const { accountId, email } = newAccount();
    const redirect = await idp.authorize(authorizationUrl, accountId);
    const answered = await callback({ state, code: redirect.get('code'), iss: redirect.get('iss') });
    expect(answered.statusCode).toBe(200);
    expect(answered.headers['cache-control']).toBe('no-store');
    const body = answered.json();
    expect(body).toEqual({
      access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, tenant_id: 'acme', user_id: expect.stringMatching(/^usr_[0-9a-f]{32}$/), roles: ['operator'],
    });
    const { payload } = await jwtVerify(body.access_token, createRemoteJWKSet(jwksUrl), { algorithms: ['EdDSA'], audience: 'svc-session', issuer: 'svc-gateway' });
    expect(payload).toMatchObject({ sub: body.user_id, tid: 'acme', roles: ['operator'] });

    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(body.access_token) });
    expect(principal.statusCode).toBe(200);
    expect(principal.json()).toMatchObject({ tenant_id: 'acme', roles: ['operator'], key_kind: 'session', subject: body.user_id });
    // Provisioned just in time: the user by email, the membership with the default role.
    const user = await system.system(async (tx) => (await tx.query('SELECT user_id FROM users WHERE email = $1', [email])).rows[0]!);
    expect(user.user_id).toBe(body.user_id);
    // Neither the code nor the token is logged.
    expect(logs.text).not.toContain(redirect.get('code'));
    expect(logs.text).not.toContain(body.access_token.split('.')[2]);
    expect(logs.text).not.toContain(idp.clientSecret);
  });

  it('works without the iss parameter forwarded, and for a person who already has an identity by email', async () => {
    const { accountId, email } = newAccount('eu.acme.test');
    const existing = await createUser(system, { tenantId: 'beta', email, role: 'auditor' });
    const { state, code } = await authorizeAt('acme', accountId);
    const answered = await callback({ state, code });
    expect(answered.statusCode).toBe(200);
    expect(answered.json()).toMatchObject({ user_id: existing.userId, tenant_id: 'acme', roles: ['operator'] });
  });

  it('keeps the role of an existing membership: a returning user who was promoted stays promoted', async () => {
    const { accountId } = newAccount();
    const first = (await signIn('acme', accountId)).json();
    expect(first.roles).toEqual(['operator']);
    await system.system((tx) => tx.query("UPDATE tenant_memberships SET role = 'admin' WHERE tenant_id = 'acme' AND user_id = $1", [first.user_id]));
    const second = await signIn('acme', accountId);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ user_id: first.user_id, roles: ['admin'] });
    expect((await getConfig(second.json().access_token)).statusCode).toBe(200);
  });

  it('reads the email from userinfo when the provider keeps it out of the ID token', async () => {
    const strictIdp = await startTestIdentityProvider({ emailInIdToken: false });
    try {
      const tenant = await createTestTenant(database.connection, 'sandbox');
      const configured = await putConfig(tenant.adminKey, {
        issuer: strictIdp.issuer, client_id: strictIdp.clientId, client_secret: strictIdp.clientSecret, redirect_uri: strictIdp.redirectUri,
        allowed_email_domains: ['acme.test'],
      });
      expect(configured.json().default_role).toBe('auditor');
      strictIdp.addAccount('strict-person', { email: 'strict@acme.test', email_verified: true });
      const started = (await start(tenant.tenantId)).json();
      const redirect = await strictIdp.authorize(started.authorization_url, 'strict-person');
      const answered = await callback({ state: started.state, code: redirect.get('code') });
      expect(answered.statusCode).toBe(200);
      expect(answered.json()).toMatchObject({ tenant_id: tenant.tenantId, roles: ['auditor'] });
      strictIdp.addAccount('strict-unverified', { email: 'unverified@acme.test', email_verified: false });
      const again = (await start(tenant.tenantId)).json();
      const unverified = await strictIdp.authorize(again.authorization_url, 'strict-unverified');
      expectError(await callback({ state: again.state, code: unverified.get('code') }), 401, 'sso.email_unverified');
    } finally {
      await strictIdp.close();
    }
  });
});

describe('start', () => {
  it('answers the same 404 for an unknown tenant and a tenant without SSO', async () => {
    const unknown = await start('no-such-tenant');
    const unconfigured = await start('beta');
    expectError(unknown, 404, 'sso.not_configured');
    expectError(unconfigured, 404, 'sso.not_configured');
    expect(unknown.json().error).toEqual(unconfigured.json().error);
    expectError(await start('Not A Tenant'), 400, 'request.invalid');
  });

  it('answers 502 when the identity provider cannot be reached, and stores no state', async () => {
    const tenant = await createTestTenant(database.connection, 'sandbox');
    expect((await putConfig(tenant.adminKey, acmeConfig({ issuer: 'http://127.0.0.1:1' }))).statusCode).toBe(200);
    expectError(await start(tenant.tenantId), 502, 'sso.provider_unavailable');
    const states = await system.system(async (tx) => (await tx.query('SELECT 1 FROM sso_states WHERE tenant_id = $1', [tenant.tenantId])).rows);
    expect(states).toEqual([]);
  });
});

describe('the callback refuses', () => {
  it('an unknown state, and a state used once already', async () => {
    expectError(await callback({ state: randomState(), code: 'whatever' }), 401, 'sso.state_invalid');
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    expect((await callback(parameters)).statusCode).toBe(200);
    expectError(await callback(parameters), 401, 'sso.state_invalid');
  });

  it('an expired state', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    await system.system((tx) =>
      tx.query("UPDATE sso_states SET created_at = now() - interval '11 minutes', expires_at = now() - interval '1 minute' WHERE state = $1", [parameters.state]));
    expectError(await callback(parameters), 401, 'sso.state_invalid');
  });

  it('a code the provider does not know, and a state used with a failed exchange', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    expectError(await callback({ ...parameters, code: 'not-a-code-the-provider-issued' }), 401, 'sso.exchange_failed');
    // The state was spent by the failed attempt: the real code cannot follow it.
    expectError(await callback(parameters), 401, 'sso.state_invalid');
  });

  it('an ID token whose nonce is not the one stored for the state', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    await system.system((tx) => tx.query('UPDATE sso_states SET nonce = $2 WHERE state = $1', [parameters.state, randomNonce()]));
    logs.lines.length = 0;
    expectError(await callback(parameters), 401, 'sso.exchange_failed');
    // The server log says which check failed; the answer does not.
    expect(logs.text).toContain('unexpected ID Token \\"nonce\\" claim value');
  });

  it('an ID token for another audience, though signed by the provider', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    idp.rewriteIdToken = { payload: (payload) => ({ ...payload, aud: 'some-other-client' }) };
    logs.lines.length = 0;
    try {
      expectError(await callback(parameters), 401, 'sso.exchange_failed');
    } finally {
      idp.rewriteIdToken = undefined;
    }
    expect(logs.text).toContain('unexpected JWT \\"aud\\" (audience) claim value');
  });

  it('an ID token signed with a key the provider does not publish', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    idp.rewriteIdToken = { payload: (payload) => payload, foreignKey: true };
    logs.lines.length = 0;
    try {
      expectError(await callback(parameters), 401, 'sso.exchange_failed');
    } finally {
      idp.rewriteIdToken = undefined;
    }
    expect(logs.text).toContain('JWT signature verification failed');
  });

  it('an iss parameter that is not the issuer (mix-up)', async () => {
    const { accountId } = newAccount();
    const parameters = await authorizeAt('acme', accountId);
    expectError(await callback({ ...parameters, iss: 'https://attacker.example' }), 401, 'sso.exchange_failed');
  });

  it('an email whose domain is not allowed, and creates nothing for it', async () => {
    const { accountId, email } = newAccount('acme.test.evil.example');
    expectError(await signIn('acme', accountId), 403, 'sso.email_domain_not_allowed');
    // A subdomain is not its parent: only the listed names are allowed.
    expectError(await signIn('acme', newAccount('sub.acme.test').accountId), 403, 'sso.email_domain_not_allowed');
    const users = await system.system(async (tx) => (await tx.query('SELECT 1 FROM users WHERE email = $1', [email])).rows);
    expect(users).toEqual([]);
  });

  it('an email the provider does not call verified, or no email at all', async () => {
    expectError(await signIn('acme', newAccount('acme.test', { email_verified: false }).accountId), 401, 'sso.email_unverified');
    const withoutEmail = `person-${++accountCounter}`;
    idp.addAccount(withoutEmail, {});
    expectError(await signIn('acme', withoutEmail), 401, 'sso.email_unverified');
  });
});

describe('the configuration routes', () => {
  it('never show the client secret', async () => {
    const read = await getConfig(acme.adminKey);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      object: 'sso_config',
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      redirect_uri: idp.redirectUri,
      allowed_email_domains: ['acme.test', 'eu.acme.test'],
      default_role: 'operator',
      updated_at: expect.any(String),
    });
    expect(read.body).not.toContain(idp.clientSecret);
  });

  it('are for admins only', async () => {
    const operatorKey = await acme.key('operator');
    expectError(await putConfig(operatorKey, acmeConfig()), 403, 'auth.role_insufficient');
    expectError(await getConfig(operatorKey), 403, 'auth.role_insufficient');
    expectError(await getConfig('not-a-credential'), 401, 'auth.credential_invalid');
  });

  it('keep each tenant to its own configuration', async () => {
    expectError(await getConfig(beta.adminKey), 404, 'sso.not_configured');
    const betaConfig = await putConfig(beta.adminKey, acmeConfig({ client_id: 'beta-client', allowed_email_domains: ['beta.test'], default_role: 'agent' }));
    expect(betaConfig.statusCode).toBe(200);
    expect((await getConfig(beta.adminKey)).json()).toMatchObject({ client_id: 'beta-client', allowed_email_domains: ['beta.test'], default_role: 'agent' });
    expect((await getConfig(acme.adminKey)).json()).toMatchObject({ client_id: idp.clientId, allowed_email_domains: ['acme.test', 'eu.acme.test'] });
  });

  it('validate the issuer, the redirect URI, the domains and the default role', async () => {
    const invalid: Array<[Record<string, unknown>, number, string]> = [
      [{ issuer: 'http://idp.example.com' }, 400, 'sso.config_invalid'],
      [{ issuer: 'https://idp.example.com/?tenant=1' }, 400, 'sso.config_invalid'],
      [{ issuer: 'not a url' }, 400, 'sso.config_invalid'],
      [{ redirect_uri: 'https://console.example/cb#fragment' }, 400, 'sso.config_invalid'],
      [{ redirect_uri: 'https://console.example/cb?x=1' }, 400, 'sso.config_invalid'],
      [{ redirect_uri: '/relative' }, 400, 'sso.config_invalid'],
      [{ client_id: '' }, 400, 'request.invalid'],
      [{ client_secret: '' }, 400, 'request.invalid'],
      [{ allowed_email_domains: [] }, 400, 'request.invalid'],
      [{ allowed_email_domains: ['Acme.test'] }, 400, 'request.invalid'],
      [{ allowed_email_domains: ['localhost'] }, 400, 'request.invalid'],
      [{ allowed_email_domains: ['@acme.test'] }, 400, 'request.invalid'],
      [{ allowed_email_domains: Array.from({ length: 51 }, (_, index) => `d${index}.example`) }, 400, 'request.invalid'],
      [{ default_role: 'admin' }, 400, 'request.invalid'],
    ];
    for (const [override, status, code] of invalid) {
      const response = await putConfig(beta.adminKey, acmeConfig(override));
      expect({ override, status: response.statusCode, code: response.json().error?.code }).toEqual({ override, status, code });
    }
    const loopback = await putConfig(beta.adminKey, acmeConfig({ issuer: 'http://localhost:9/', redirect_uri: 'http://127.0.0.1:3000/sso/callback' }));
    expect(loopback.statusCode).toBe(200);
  });
});
