// The HTTP contract of the foundation over real HTTP handling (app.inject) on a real Postgres: credentials,
// roles, the error envelope for every class of bad input, request ids, and the principal route.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestBodyBytesMax } from '../../src/limits.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox', 'acme');
  globex = await createTestTenant(database.connection, 'live', 'globex');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function expectEnvelope(response: { json(): any; headers: Record<string, unknown> }, code: string) {
  const body = response.json();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.request_id).toMatch(/^\S+$/);
  expect(response.headers['x-request-id']).toBe(body.request_id);
  return body;
}

describe('principal', () => {
  it('answers the credential\'s tenant and role', async () => {
    const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(acme.adminKey) });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      tenant_id: 'acme', environment: 'sandbox', service_account_role: 'admin', roles: ['admin'], key_kind: 'standard', mcp_scopes: [],
    });
    expect(body.tenant_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.subject).toMatch(/^key_[0-9a-f]{32}$/);
  });

  it('answers every role', async () => {
    for (const role of ['operator', 'agent', 'auditor'] as const) {
      const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(await acme.key(role)) });
      expect(response.json().service_account_role).toBe(role);
    }
  });
});

describe('credentials', () => {
  it.each([
    ['no header', {}, 'auth.credential_missing'],
    ['garbage bearer', { authorization: 'Bearer garbage' }, 'auth.credential_invalid'],
    ['not a bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'auth.credential_invalid'],
    ['well-formed but unknown key', bearer(`svc_sk_sandbox_${'a'.repeat(32)}_${'b'.repeat(64)}`), 'auth.credential_invalid'],
  ])('%s → 401', async (_name, headers, code) => {
    const response = await app.inject({ url: '/v1/auth/principal', headers });
    expect(response.statusCode).toBe(401);
    expectEnvelope(response, code);
  });

  it('a known key id with a wrong secret → 401, and nothing of the key is echoed', async () => {
    const forged = `${acme.adminKey.slice(0, -64)}${'0'.repeat(64)}`;
    const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(forged) });
    expect(response.statusCode).toBe(401);
    expectEnvelope(response, 'auth.credential_invalid');
    expect(response.body).not.toContain(forged.slice(15, 47));
  });

  it('a key presented with the wrong environment prefix → 401', async () => {
    const relabelled = acme.adminKey.replace('svc_sk_sandbox_', 'svc_sk_live_');
    const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(relabelled) });
    expect(response.statusCode).toBe(401);
  });

  it('a revoked key → 401 auth.credential_revoked, at once', async () => {
    const key = await acme.key('operator');
    expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(key) })).statusCode).toBe(200);
    const keyId = (await app.inject({ url: '/v1/auth/principal', headers: bearer(key) })).json().subject;
    const revoked = await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${keyId}`, headers: bearer(acme.adminKey) });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(key) });
    expect(response.statusCode).toBe(401);
    expectEnvelope(response, 'auth.credential_revoked');
  });

  it('an x-tenant-id that is not the credential\'s tenant → 401', async () => {
    const response = await app.inject({ url: '/v1/auth/principal', headers: { ...bearer(acme.adminKey), 'x-tenant-id': 'globex' } });
    expect(response.statusCode).toBe(401);
    expectEnvelope(response, 'request.tenant_hint_mismatch');
    const matching = await app.inject({ url: '/v1/auth/principal', headers: { ...bearer(acme.adminKey), 'x-tenant-id': 'acme' } });
    expect(matching.statusCode).toBe(200);
  });

  it('insufficient role → 403', async () => {
    const response = await app.inject({ url: '/v1/admin/api-keys', headers: bearer(await acme.key('agent')) });
    expect(response.statusCode).toBe(403);
    expectEnvelope(response, 'auth.role_insufficient');
  });

  it('restricted keys fail closed on routes that name no scope, but may read the principal', async () => {
    const restricted = await acme.key('admin', ['mcp.spend:write']);
    expect(restricted).toMatch(/^svc_rk_sandbox_/);
    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(restricted) });
    expect(principal.json()).toMatchObject({ key_kind: 'restricted', mcp_scopes: ['mcp.spend:write'] });
    const admin = await app.inject({ url: '/v1/admin/api-keys', headers: bearer(restricted) });
    expect(admin.statusCode).toBe(403);
    expectEnvelope(admin, 'auth.scope_insufficient');
  });
});

describe('bad input', () => {
  const post = (payload: string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(acme.adminKey), 'content-type': contentType }, payload });

  it('malformed JSON → 400 request.malformed_json', async () => {
    const response = await post('{"role": ');
    expect(response.statusCode).toBe(400);
    expectEnvelope(response, 'request.malformed_json');
  });

  it('prototype poisoning → 400 request.malformed_json', async () => {
    const response = await post('{"role":"agent","__proto__":{"admin":true}}');
    expect(response.statusCode).toBe(400);
    expectEnvelope(response, 'request.malformed_json');
  });

  it('empty JSON body → 400 request.empty_body', async () => {
    const response = await post('');
    expect(response.statusCode).toBe(400);
    expectEnvelope(response, 'request.empty_body');
  });

  it('wrong content type → 415', async () => {
    const response = await post('role=agent', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(415);
    expectEnvelope(response, 'request.unsupported_media_type');
  });

  it('body over the limit → 413', async () => {
    const response = await post(JSON.stringify({ role: 'agent', name: 'x'.repeat(requestBodyBytesMax) }));
    expect(response.statusCode).toBe(413);
    expectEnvelope(response, 'request.body_too_large');
  });

  it('schema violations → 400 with every offending field named', async () => {
    const response = await post(JSON.stringify({ role: 'emperor', name: 7, colour: 'red' }));
    expect(response.statusCode).toBe(400);
    const body = expectEnvelope(response, 'request.invalid');
    const paths = body.error.details.fields.map((field: { path: string }) => field.path).sort();
    expect(paths).toEqual(['/colour', '/name', '/role']);
  });

  it('no type coercion in bodies: a number given as a string is refused', async () => {
    const response = await post(JSON.stringify({ role: 'agent', name: 'n', scopes: 'a,b' }));
    expect(response.statusCode).toBe(400);
  });

  it('unknown route → 404 request.route_not_found, authenticated or not', async () => {
    for (const headers of [{}, bearer(acme.adminKey)]) {
      const response = await app.inject({ url: '/v1/does-not-exist', headers });
      expect(response.statusCode).toBe(404);
      expectEnvelope(response, 'request.route_not_found');
    }
  });

  it('bad query parameters → 400', async () => {
    const response = await app.inject({ url: '/v1/admin/api-keys?limit=100000', headers: bearer(acme.adminKey) });
    expect(response.statusCode).toBe(400);
    expectEnvelope(response, 'request.invalid');
  });
});

describe('request ids', () => {
  it('echoes a well-formed caller id and replaces an unsafe one', async () => {
    const kept = await app.inject({ url: '/v1/nope', headers: { 'x-request-id': 'client-123:abc' } });
    expect(kept.headers['x-request-id']).toBe('client-123:abc');
    expect(kept.json().request_id).toBe('client-123:abc');
    const replaced = await app.inject({ url: '/v1/nope', headers: { 'x-request-id': 'evil\u0001<script>' } });
    expect(replaced.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('mints a new id per request', async () => {
    const one = await app.inject({ url: '/healthz' });
    const two = await app.inject({ url: '/healthz' });
    expect(one.headers['x-request-id']).not.toBe(two.headers['x-request-id']);
  });
});

describe('API key administration', () => {
  it('creates a key shown once, lists it without the secret, and it works', async () => {
    const created = await app.inject({
      method: 'POST', url: '/v1/admin/api-keys', headers: bearer(acme.adminKey), payload: { role: 'agent', name: 'ci agent' },
    });
    expect(created.statusCode).toBe(201);
    const key = created.json();
    expect(key.api_key).toMatch(/^svc_sk_sandbox_[0-9a-f]{32}_[0-9a-f]{64}$/);
    expect(key).toMatchObject({ object: 'api_key', role: 'agent', name: 'ci agent', key_kind: 'standard', revoked_at: null });
    const read = await app.inject({ url: `/v1/admin/api-keys/${key.key_id}`, headers: bearer(acme.adminKey) });
    expect(read.json().api_key).toBeUndefined();
    expect(read.body).not.toContain(key.api_key.slice(-64));
    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(key.api_key) });
    expect(principal.json().service_account_role).toBe('agent');
  });

  it('pages through keys with next_cursor', async () => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: any = (await app.inject({ url: `/v1/admin/api-keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer(acme.adminKey) })).json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      for (const key of page.data) seen.add(key.key_id);
      cursor = page.next_cursor;
      expect(page.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen.size).toBeGreaterThanOrEqual(5);
  });

  it('another tenant\'s key is 404 to read and to revoke, and stays valid', async () => {
    const globexKeyId = (await app.inject({ url: '/v1/auth/principal', headers: bearer(globex.adminKey) })).json().subject;
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await app.inject({ method, url: `/v1/admin/api-keys/${globexKeyId}`, headers: bearer(acme.adminKey) });
      expect(response.statusCode).toBe(404);
      expectEnvelope(response, 'api_key.not_found');
    }
    expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(globex.adminKey) })).statusCode).toBe(200);
  });

  it('revoking twice keeps the first revocation time', async () => {
    const key = (await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(acme.adminKey), payload: { role: 'auditor' } })).json();
    const first = (await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${key.key_id}`, headers: bearer(acme.adminKey) })).json();
    const second = (await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${key.key_id}`, headers: bearer(acme.adminKey) })).json();
    expect(second.revoked_at).toBe(first.revoked_at);
  });

  it('records last_used_at', async () => {
    const key = (await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(acme.adminKey), payload: { role: 'operator' } })).json();
    await app.inject({ url: '/v1/auth/principal', headers: bearer(key.api_key) });
    await expect.poll(async () =>
      (await app.inject({ url: `/v1/admin/api-keys/${key.key_id}`, headers: bearer(acme.adminKey) })).json().last_used_at,
    ).not.toBeNull();
  });
});

describe('health', () => {
  it('answers liveness and readiness', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ url: '/readyz' })).json()).toMatchObject({ status: 'ready' });
  });
});
