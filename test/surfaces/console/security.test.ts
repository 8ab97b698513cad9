// The console's security properties, over HTTP against the real app (no browser needed): the cookies' flags, CSRF
// refusal, another tenant's ids in console URLs answering the 404 page, no secret or token in pages or logs, an
// expired session sent back to sign-in, and device-code guessing through the console rate-limited.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt } from '../../../src/credentials/gateway-jwt.ts';
import type { Role } from '../../../src/credentials/roles.ts';
import { Database } from '../../../src/infra/database.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { ConsoleHttpClient } from './http-client.ts';

let database: TestDatabase;
let system: Database;
let app: FastifyInstance;
const logs = new LogCapture();
let a: TestTenant;
let b: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  system = new Database({ ...database.connection, max: 2 });
  // With a secrets key, so that webhook endpoints (whose secrets are sealed) can be made.
  app = await buildTestApp(database.connection, { logs, appOptions: { secretsKey: Buffer.alloc(32, 3).toString('base64') } });
  a = await createTestTenant(database.connection);
  b = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

/** A browser of this file's app. */
class Browser extends ConsoleHttpClient {
  constructor(host?: string, remoteAddress?: string) {
    super(app, system, host, remoteAddress);
  }
}

let people = 0;
async function person(tenant: TestTenant, role: Role): Promise<string> {
  const email = `security.${process.pid}.${++people}@example.com`;
  await createUser(system, { tenantId: tenant.tenantId, email, role });
  return email;
}

const sessionLine = (browser: Browser) => browser.setCookieLines.find((line) => line.startsWith('svc_console_session=') && !/Max-Age=0\b/.test(line))!;

describe('cookies', () => {
  it('keeps the session in an HttpOnly, SameSite=Strict cookie scoped to /console, Secure except on loopback', async () => {
    const local = new Browser('127.0.0.1:3000');
    await local.signIn(await person(a, 'admin'));
    const localLine = sessionLine(local);
    expect(localLine).toMatch(/; Path=\/console; Max-Age=900; HttpOnly; SameSite=Strict$/);
    expect(localLine).not.toContain('Secure');

    const remote = new Browser('console.acme.example', '198.51.100.7');
    await remote.signIn(await person(a, 'admin'));
    expect(sessionLine(remote)).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    for (const line of remote.setCookieLines) expect(line).toMatch(/HttpOnly; SameSite=Strict; Secure$/);
  });

  it('signs out by clearing the session cookie, and sends an expired or forged session back to sign-in', async () => {
    const browser = new Browser();
    const token = await browser.signIn(await person(a, 'operator'));
    expect((await browser.request('GET', '/console')).statusCode).toBe(200);
    const out = await browser.request('POST', '/console/sign-out', { csrf_token: browser.csrfToken });
    expect(out.statusCode).toBe(303);
    expect(browser.cookies.has('svc_console_session')).toBe(false);
    expect((await browser.request('GET', '/console')).headers.location).toBe('/console/sign-in');

    // The JWT still works as a bearer until it expires (there is no revocation list), but not without the cookie.
    expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(token) })).statusCode).toBe(200);

    const expired = await signGatewayJwt(app.gatewayKeys, { roles: ['operator'] }, {
      audience: jwtAudiences.session, subject: 'usr_' + '0'.repeat(32), tenantId: a.tenantId, expiresInSeconds: 60, now: new Date(Date.now() - 3_600_000),
    });
    for (const stale of [expired, 'not-a-jwt']) {
      const visitor = new Browser();
      visitor.cookies.set('svc_console_session', stale);
      const response = await visitor.request('GET', '/console/intents');
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/console/sign-in?reason=expired&next=%2Fconsole%2Fintents');
      expect(visitor.cookies.has('svc_console_session')).toBe(false);
    }
  });
});

describe('return after sign-in', () => {
  it('returns to the console page that asked for sign-in, and never to another site', async () => {
    const browser = new Browser();
    const asked = await browser.request('GET', '/console/device?user_code=ABCD-EFGH');
    expect(asked.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fdevice%3Fuser_code%3DABCD-EFGH');
    for (const next of ['https://evil.example/', '//evil.example/console', '/console//evil.example', '/consolex', '/console\\evil']) {
      const page = await browser.request('GET', `/console/sign-in?next=${encodeURIComponent(next)}`);
      expect(page.body, next).not.toContain('name="next"');
    }
    const kept = await browser.request('GET', `/console/sign-in?next=${encodeURIComponent('/console/device?user_code=ABCD-EFGH')}`);
    expect(kept.body).toContain('name="next" value="/console/device?user_code=ABCD-EFGH"');
  });
});

describe('CSRF', () => {
  it('refuses every state-changing post without the token of its own browser, and changes nothing', async () => {
    const browser = new Browser();
    await browser.signIn(await person(a, 'admin'));
    const keysBefore = (await app.inject({ url: '/v1/admin/api-keys', headers: bearer(a.adminKey) })).json().data.length;
    const other = new Browser();
    await other.request('GET', '/console/sign-in');

    const forged: [string, Record<string, string>][] = [
      ['/console/api-keys', { role: 'admin' }],
      ['/console/api-keys', { role: 'admin', csrf_token: 'x'.repeat(43) }],
      ['/console/api-keys', { role: 'admin', csrf_token: other.csrfToken }],
      ['/console/settlement', { rails: 'x402_usdc_base', x402_address: `0x${'ab'.repeat(20)}` }],
      ['/console/sign-out', {}],
      ['/console/sign-in', { email: 'someone@example.com' }],
      ['/console/device', { user_code: 'ABCD-EFGH', decision: 'approve' }],
      ['/console/webhooks', { url: 'https://example.com/hooks', enabled_events: '*' }],
      [`/console/review/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/resolve`, { resolution: 'refund' }],
    ];
    for (const [url, form] of forged) {
      const response = await browser.request('POST', url, form);
      expect(response.statusCode, url).toBe(403);
      expect(response.body, url).toContain('console.csrf_invalid');
    }
    expect((await app.inject({ url: '/v1/admin/api-keys', headers: bearer(a.adminKey) })).json().data.length).toBe(keysBefore);
    expect((await app.inject({ url: '/v1/admin/settlement/config', headers: bearer(a.adminKey) })).statusCode).toBe(404);
    expect((await app.inject({ url: '/v1/webhook-endpoints', headers: bearer(a.adminKey) })).json().data).toEqual([]);
    expect(browser.cookies.has('svc_console_session')).toBe(true);

    // The same post with the token, in the field or the header, goes through.
    expect((await browser.request('POST', '/console/api-keys', { role: 'agent', csrf_token: browser.csrfToken })).statusCode).toBe(200);
    expect((await browser.request('POST', '/console/api-keys', { role: 'agent' }, { 'x-csrf-token': browser.csrfToken })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/admin/api-keys', headers: bearer(a.adminKey) })).json().data.length).toBe(keysBefore + 2);
  });
});

describe('tenant isolation', () => {
  it("answers the 404 page for another tenant's ids in console URLs, and leaves them untouched", async () => {
    const intentOfA = (await app.inject({ method: 'POST', url: '/v1/sandbox/guardrails/bootstrap', headers: bearer(a.adminKey), payload: { operation: 'search.web', requested_spend_cents: 100 } })).json().intent_id as string;
    const keyOfA = (await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(a.adminKey), payload: { role: 'agent' } })).json().key_id as string;
    const exportOfA = (await app.inject({ method: 'POST', url: '/v1/compliance/audit-exports', headers: bearer(a.adminKey), payload: {} })).json().job_id as string;
    const registeredOfA = (await app.inject({ method: 'POST', url: '/v1/registry/keys', headers: bearer(a.adminKey), payload: { kind: 'agent', subject: 'agent-a', public_key_ed25519_hex: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a' } })).json().id as string;
    const endpointOfA = (await app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: bearer(a.adminKey), payload: { url: 'https://hooks.example.com/a', enabled_events: ['*'] } })).json().id as string;
    const eventOfA = (await app.inject({ url: '/v1/events?limit=1', headers: bearer(a.adminKey) })).json().data[0].id as string;

    const browser = new Browser();
    await browser.signIn(await person(b, 'admin'));
    const csrf_token = browser.csrfToken;
    const attempts: [LightMyRequestResponse, string][] = [
      [await browser.request('GET', `/console/intents/${intentOfA}`), 'intent'],
      [await browser.request('POST', `/console/intents/${intentOfA}/sandbox-evidence`, { csrf_token, status: 'completed', cost_cents: '1' }), 'evidence'],
      [await browser.request('POST', `/console/api-keys/${keyOfA}/revoke`, { csrf_token }), 'api key'],
      [await browser.request('GET', `/console/exports/${exportOfA}/download`), 'export download'],
      [await browser.request('POST', `/console/exports/${exportOfA}/delete`, { csrf_token }), 'export delete'],
      [await browser.request('POST', `/console/registered-keys/${registeredOfA}/revoke`, { csrf_token }), 'registered key'],
      [await browser.request('GET', `/console/webhooks/${endpointOfA}`), 'webhook endpoint'],
      [await browser.request('POST', `/console/webhooks/${endpointOfA}/enabled`, { csrf_token, enabled: 'false' }), 'webhook disable'],
      [await browser.request('POST', `/console/webhooks/${endpointOfA}/rotate-secret`, { csrf_token }), 'webhook rotate'],
      [await browser.request('POST', `/console/webhooks/${endpointOfA}/delete`, { csrf_token }), 'webhook delete'],
      [await browser.request('POST', `/console/webhooks/${endpointOfA}/events/${eventOfA}/redeliver`, { csrf_token }), 'webhook redeliver'],
      [await browser.request('POST', `/console/review/${intentOfA}/resolve`, { csrf_token, resolution: 'refund' }), 'resolve'],
      [await browser.request('GET', '/console/no-such-page'), 'unknown page'],
    ];
    for (const [response, label] of attempts) {
      expect(response.statusCode, label).toBe(404);
      expect(response.headers['content-type'], label).toContain('text/html');
      expect(response.body, label).toContain('Not found');
      for (const id of [intentOfA, keyOfA, exportOfA, registeredOfA, endpointOfA, eventOfA]) if (label !== 'intent' && label !== 'evidence') expect(response.body).not.toContain(id);
    }
    expect((await app.inject({ url: `/v1/webhook-endpoints/${endpointOfA}`, headers: bearer(a.adminKey) })).json()).toMatchObject({ enabled: true, previous_secret_expires_at: null });
    expect((await app.inject({ url: `/harbor/intents/${intentOfA}`, headers: bearer(a.adminKey) })).json().state).toBe('funded');
    expect((await app.inject({ url: `/v1/admin/api-keys/${keyOfA}`, headers: bearer(a.adminKey) })).json().revoked_at).toBeNull();
    expect((await app.inject({ url: `/v1/compliance/audit-exports/${exportOfA}`, headers: bearer(a.adminKey) })).json().status).toBe('ready');

    // A's own admin downloads the bundle through the console: the download token stays on the server.
    const own = new Browser();
    await own.signIn(await person(a, 'admin'));
    const download = await own.request('GET', `/console/exports/${exportOfA}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/zip');
    expect(download.rawPayload.subarray(0, 2).toString()).toBe('PK');
  });
});

describe('secrets', () => {
  it('never puts the session JWT in a page, shows a new key once, and writes neither to the logs', async () => {
    const browser = new Browser();
    const token = await browser.signIn(await person(a, 'admin'));
    const created = await browser.request('POST', '/console/api-keys', { role: 'agent', name: 'logged?', csrf_token: browser.csrfToken });
    const secret = /value="(svc_sk_[a-z]+_[0-9a-f]{32}_[0-9a-f]{64})"/.exec(created.body)![1]!;
    expect(created.headers['cache-control']).toBe('no-store');
    const pages = [created];
    for (const path of ['/console', '/console/intents', '/console/api-keys', '/console/settlement', '/console/exports', '/console/usage', '/console/policies', '/console/device', '/console/registered-keys']) {
      const response = await browser.request('GET', path);
      expect(response.statusCode, path).toBe(200);
      expect(response.headers['cache-control'], path).toBe('no-store');
      expect(response.headers['content-security-policy'], path).toContain("script-src 'self'");
      expect(response.body, path).not.toContain(secret);
      pages.push(response);
    }
    for (const response of pages) {
      expect(response.body).not.toContain(token);
      expect(response.body).not.toContain(token.split('.')[2]!);
    }
    const logged = logs.text;
    expect(logged.length).toBeGreaterThan(0);
    for (const value of [token, token.split('.')[2]!, secret, secret.slice(-64), browser.csrfToken]) expect(logged).not.toContain(value);
  });

  it('shows a webhook endpoint\'s signing secret once, at creation and at rotation, and never writes it to the logs', async () => {
    const browser = new Browser();
    await browser.signIn(await person(a, 'admin'));
    const created = await browser.request('POST', '/console/webhooks', { csrf_token: browser.csrfToken, url: 'https://hooks.example.com/once', enabled_events: ['intent.released', 'intent.refunded'] });
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const secret = /value="(whsec_[^"]+)"/.exec(created.body)?.[1];
    expect(secret).toMatch(/^whsec_/);
    const endpointId = /href="\/console\/webhooks\/(we_[0-9a-f]{32})"/.exec(created.body)![1]!;
    const rotated = await browser.request('POST', `/console/webhooks/${endpointId}/rotate-secret`, { csrf_token: browser.csrfToken });
    const second = /value="(whsec_[^"]+)"/.exec(rotated.body)?.[1];
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(secret);
    for (const path of ['/console/webhooks', `/console/webhooks/${endpointId}`]) {
      const page = await browser.request('GET', path);
      expect(page.statusCode, path).toBe(200);
      for (const shown of [secret!, second!]) expect(page.body, path).not.toContain(shown.slice(6));
    }
    for (const shown of [secret!, second!]) expect(logs.text).not.toContain(shown.slice(6));
  });
});

describe('settlement configuration', () => {
  it('shows each of the five rule errors beside the field the API names', async () => {
    const browser = new Browser();
    await browser.signIn(await person(a, 'admin'));
    const address = `0x${'ab'.repeat(20)}`;
    const cases: [Record<string, string | string[]>, string, string][] = [
      [{}, 'rails', 'settlement_config.invalid_rail_combination'],
      [{ rails: 'processor_mpp' }, 'processor_destination', 'settlement_config.processor_destination_required'],
      [{ rails: 'x402_usdc_base', x402_address: '0x12' }, 'x402_address', 'settlement_config.x402_address_invalid'],
      [{ rails: 'processor_mpp', processor_destination: 'acct_1', mpp_profile_id: 'profile_live' }, 'mpp_profile_id', 'settlement_config.mpp_profile_invalid'],
      [{ rails: 'x402_usdc_base', x402_address: address, mpp_session_enabled: 'true' }, 'settlement_network_recipient', 'settlement_config.settlement_recipient_required'],
    ];
    for (const [form, field, code] of cases) {
      const response = await browser.request('POST', '/console/settlement', { ...form, csrf_token: browser.csrfToken });
      expect(response.statusCode, code).toBe(400);
      expect(response.body, code).toContain(`data-code="${code}"`);
      expect(response.body, code).toContain(`data-testid="field-error-${field}"`);
      // What was typed stays in the form.
      for (const value of Object.values(form).flat()) if (value !== 'true') expect(response.body, code).toContain(`value="${value}"`);
    }
  });
});

describe('device codes', () => {
  it('rate-limits guessing user codes through the console, and says so in words', async () => {
    const browser = new Browser('127.0.0.1', '192.0.2.77');
    await browser.signIn(await person(a, 'operator'));
    const codes: string[] = [];
    for (let attempt = 0; attempt < 12; attempt++) {
      const response = await browser.request('GET', `/console/device?user_code=BCDF-GHJ${'KLMNPQRSTV'[attempt % 10]}`);
      codes.push(/data-code="([a-z_.]+)"/.exec(response.body)?.[1] ?? String(response.statusCode));
    }
    expect(codes.slice(0, 10).every((code) => code === 'device_login.not_found')).toBe(true);
    expect(codes.at(-1)).toBe('rate_limit.exceeded');
  });
});

describe('rate limits', () => {
  it('counts a signed-in person per user, so more than 120 pages a minute load, while anonymous pages stay per address', async () => {
    const browser = new Browser('127.0.0.1', '192.0.2.88');
    await browser.signIn(await person(a, 'operator'));
    const pageCount = 130;
    for (let index = 0; index < pageCount; index++) {
      const response = await browser.request('GET', index % 2 === 0 ? '/console/intents' : '/console');
      expect(response.statusCode, `page ${index + 1}`).toBe(200);
      // The per-credential policy (600 a minute by default), spent by the person, not by the address.
      expect(response.headers['ratelimit-policy'], `page ${index + 1}`).toBe('"credential";q=600;w=60');
    }

    // A made-up session buys no budget of its own: it is counted per address like no session.
    const forger = new Browser('127.0.0.1', '192.0.2.89');
    forger.cookies.set('svc_console_session', 'not-a-jwt');
    const forged = await forger.request('GET', '/console/intents');
    expect(forged.statusCode).toBe(303);
    expect(forged.headers['ratelimit-policy']).toBe('"ip";q=120;w=60');

    // From the person's own address, the sign-in page still has its whole per-address budget, and hammering it is
    // refused once that is spent (within two windows at most, should the clock minute turn meanwhile).
    const anonymous = new Browser('127.0.0.1', '192.0.2.88');
    let refused: LightMyRequestResponse | undefined;
    let admitted = 0;
    for (let attempt = 0; attempt < 241 && !refused; attempt++) {
      const response = await anonymous.request('GET', '/console/sign-in');
      expect(response.headers['ratelimit-policy']).toBe('"ip";q=120;w=60');
      if (response.statusCode === 429) refused = response;
      else admitted++;
    }
    expect(refused, 'a 429 for the hammering address').toBeDefined();
    expect(admitted).toBeGreaterThanOrEqual(110);
    expect(refused!.headers['retry-after']).toMatch(/^\d+$/);
    // In words, as a page.
    expect(refused!.headers['content-type']).toMatch(/^text\/html/);
    expect(refused!.body).toContain('data-code="rate_limit.exceeded"');
  }, 60_000);
});
