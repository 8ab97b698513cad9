// What the console takes from a request, over HTTP against the real app: form fields are text, given urlencoded or
// as a JSON object of strings; a JSON body with a number, a boolean, an object or a nested list where a field
// should be, or a query parameter given twice, is refused with 400 on the console's error page before any page code
// runs (signed in or not), never a 500.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { consoleSession, csrfCookie, type ConsoleSession } from '../../helpers/console-session.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
let session: ConsoleSession;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection);
  session = await consoleSession(app, database.connection, tenant.tenantId, 'admin');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function postJson(url: string, body: unknown, as: ConsoleSession): Promise<LightMyRequestResponse> {
  const payload = body !== null && typeof body === 'object' && !Array.isArray(body) ? { ...body, csrf_token: as.csrfToken } : body;
  return app.inject({ method: 'POST', url, headers: { cookie: as.cookie, 'content-type': 'application/json', 'x-csrf-token': as.csrfToken }, payload: JSON.stringify(payload) });
}

function expectRefusal(response: LightMyRequestResponse, field: string | undefined, label: string): void {
  expect(response.statusCode, `${label}: ${response.body.slice(0, 300)}`).toBe(400);
  expect(response.headers['content-type'], label).toContain('text/html');
  expect(response.body, label).toMatch(/^<!doctype html>/i);
  expect(response.body, label).toContain('data-code="request.invalid"');
  if (field !== undefined) expect(response.body, label).toContain(`&quot;${field}&quot;`);
}

const nonText: readonly unknown[] = [5, true, null, { nested: 'text' }, [1], [['a']], ['a', { b: 1 }]];

describe('console form bodies that are not text', () => {
  it('are refused on the sign-in, code and SSO forms without a session', async () => {
    const visitor = csrfCookie();
    const forms: [string, string, Record<string, unknown>][] = [
      ['/console/sign-in', 'email', {}],
      ['/console/sign-in/verify', 'code', { challenge_id: `lch_${'0'.repeat(32)}`, email: 'someone@example.com' }],
      ['/console/sso', 'tenant_id', {}],
    ];
    for (const [url, field, rest] of forms) {
      for (const value of nonText) expectRefusal(await postJson(url, { ...rest, [field]: value }, visitor), field, `${url} ${field}=${JSON.stringify(value)}`);
    }
  });

  it('are refused on the signed-in forms, and nothing is created', async () => {
    const forms: [string, string, Record<string, unknown>][] = [
      ['/console/api-keys', 'name', { role: 'agent' }],
      ['/console/api-keys', 'scopes', { role: 'agent', key_kind: 'restricted' }],
      ['/console/registered-keys', 'subject', { kind: 'agent', public_key_ed25519_hex: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a' }],
      ['/console/registered-keys', 'public_key_ed25519_hex', { kind: 'agent', subject: 'agent-x' }],
      ['/console/policies/completion_v1/try', 'parameter.required_status', { do: 'preview' }],
      ['/console/settlement', 'rails', {}],
      ['/console/intents/sandbox', 'requested_spend_cents', { operation: 'search.web' }],
      ['/console/device', 'user_code', { decision: 'approve' }],
      ['/console/webhooks', 'url', { enabled_events: '*' }],
      ['/console/webhooks', 'enabled_events', { url: 'https://example.com/hooks' }],
      ['/console/review/00000000-0000-4000-8000-000000000001/resolve', 'released_cents', { resolution: 'split' }],
    ];
    for (const [url, field, rest] of forms) {
      for (const value of nonText) expectRefusal(await postJson(url, { ...rest, [field]: value }, session), field, `${url} ${field}=${JSON.stringify(value)}`);
    }
    const keys = await app.inject({ url: '/v1/admin/api-keys', headers: { authorization: `Bearer ${tenant.adminKey}` } });
    expect(keys.json().data).toHaveLength(1);
  });

  it('refuses a JSON body that is not an object, and names a hostile field name only in part', async () => {
    for (const body of [[], ['email'], 'email', 5, null]) expectRefusal(await postJson('/console/sign-in', body, csrfCookie()), undefined, JSON.stringify(body));
    const longName = 'n'.repeat(50_000);
    const response = await postJson('/console/api-keys', { role: 'agent', [longName]: 1 }, session);
    expectRefusal(response, undefined, 'a long field name');
    expect(response.body.length).toBeLessThan(20_000);
  });

  it('holds a JSON form to the form size limit, as an urlencoded one', async () => {
    const response = await postJson('/console/sign-in', { email: `${'a'.repeat(70_000)}@example.com` }, csrfCookie());
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('data-code="request.body_too_large"');
  });

  it('still takes the same forms as JSON objects of text, and urlencoded', async () => {
    const visitor = csrfCookie();
    const started = await postJson('/console/sign-in', { email: 'someone@example.com' }, visitor);
    expect(started.statusCode, started.body.slice(0, 300)).toBe(200);
    expect(started.body).toContain('name="challenge_id"');
    const created = await postJson('/console/api-keys', { role: 'agent', name: 'json form', key_kind: 'restricted', scopes: ['mcp.spend:write'] }, session);
    expect(created.statusCode, created.body.slice(0, 300)).toBe(200);
    const form = new URLSearchParams({ role: 'agent', name: 'urlencoded form', csrf_token: session.csrfToken });
    const urlencoded = await app.inject({ method: 'POST', url: '/console/api-keys', headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    expect(urlencoded.statusCode, urlencoded.body.slice(0, 300)).toBe(200);
  });
});

describe('console queries', () => {
  it('refuses a query parameter given twice on the pages that read it', async () => {
    for (const url of ['/console/intents?operator_did=a&operator_did=b', '/console/standing?operator_did=a&operator_did=b', '/console/device?user_code=A&user_code=B', '/console/sign-in?next=/console&next=/console/intents', '/console/review?state=all&state=closed']) {
      const response = await app.inject({ url, headers: { cookie: session.cookie } });
      expectRefusal(response, url.split('?')[1]!.split('=')[0]!, url);
    }
  });
});
