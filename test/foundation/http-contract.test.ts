// The HTTP contract of the foundation over real HTTP handling (app.inject) on a real Postgres: credentials,
// roles, the error envelope for every class of bad input (hostile input and malformed HTTP too), request ids, and
// the principal route.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import pg from 'pg';
import { requestBodyBytesMax, requestJsonNestingDepthMax, requestUrlLengthMax, routeParameterLengthMax } from '../../src/limits.ts';
import { app as serviceApp } from '../../src/app.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { revocationListenerApplicationName } from '../../src/plugins/authenticator.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
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

  it('prototype keys → 400 request.prototype_key_forbidden, naming the key', async () => {
    for (const [payload, path] of [
      ['{"role":"agent","__proto__":{"admin":true}}', '/__proto__'],
      ['{"role":"agent","name":{"constructor":{"prototype":{"admin":true}}}}', '/name/constructor'],
      // The escaped spelling is the same key once parsed.
      ['{"role":"agent","\\u005f_proto__":{}}', '/__proto__'],
    ] as const) {
      const response = await post(payload);
      expect(response.statusCode, payload).toBe(400);
      expect(expectEnvelope(response, 'request.prototype_key_forbidden').error.details).toEqual({ location: 'body', path });
    }
    // A key merely named constructor, without prototype inside, is ordinary data.
    const plain = await post('{"role":"agent","name":"constructor"}');
    expect(plain.statusCode).toBe(201);
  });

  it('empty JSON body → 400 request.empty_body', async () => {
    const response = await post('');
    expect(response.statusCode).toBe(400);
    expectEnvelope(response, 'request.empty_body');
  });

  it('wrong content type → 415, text/plain included, and JSON in another charset', async () => {
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'text/plain; charset=utf-8', 'application/json; charset=latin1']) {
      const response = await post(contentType.startsWith('application/json') ? '{"role":"agent"}' : 'role=agent', contentType);
      expect(response.statusCode, contentType).toBe(415);
      expectEnvelope(response, 'request.unsupported_media_type');
    }
    expect((await post('{"role":"agent"}', 'application/json; charset=UTF-8')).statusCode).toBe(201);
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

  it('a query number that coerces to Infinity → 400 naming it, not a 500 from SQL', async () => {
    for (const limit of ['1e400', '-1e400']) {
      const response = await app.inject({ url: `/v1/admin/api-keys?limit=${limit}`, headers: bearer(acme.adminKey) });
      expect(response.statusCode, limit).toBe(400);
      expect(expectEnvelope(response, 'request.invalid').error.details.fields).toEqual([{ location: 'querystring', path: '/limit', message: 'must be a finite number' }]);
    }
  });

  it('a body number past the double range → 400 request.number_out_of_range', async () => {
    const response = await app.inject({
      method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(acme.adminKey), 'content-type': 'application/json' }, payload: '{"role":"agent","scopes":[1e400]}',
    });
    expect(response.statusCode).toBe(400);
    expect(expectEnvelope(response, 'request.number_out_of_range').error.details).toEqual({ location: 'body', path: '/scopes/0' });
  });
});

describe('hostile input at the boundary', () => {
  const post = (payload: string | Buffer, url = '/v1/admin/api-keys') =>
    app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), 'content-type': 'application/json' }, payload });

  it('U+0000 or a lone surrogate in a body string or key → 400 request.character_invalid with a pointer', async () => {
    for (const [payload, path] of [
      ['{"role":"agent","name":"a\\u0000b"}', '/name'],
      ['{"role":"agent","name":"a\\ud800b"}', '/name'],
      ['{"role":"agent","name":"a\\udc00"}', '/name'],
      ['{"role":"agent","scopes":["ok","x\\u0000"]}', '/scopes/1'],
      ['{"role":"agent","a/b~\\u0000":1}', '/a~1b~0\u0000'],
    ] as const) {
      const response = await post(payload);
      expect(response.statusCode, payload).toBe(400);
      expect(expectEnvelope(response, 'request.character_invalid').error.details).toEqual({ location: 'body', path });
    }
    // A surrogate pair is one ordinary character.
    const paired = await post('{"role":"agent","name":"a\\ud83d\\ude00"}');
    expect(paired.statusCode).toBe(201);
    expect(paired.json().name).toBe('a\u{1f600}');
  });

  it('evidence with U+0000 is refused at the boundary, not by Postgres', async () => {
    const response = await post('{"payload":{"note":"\\u0000"}}', '/harbor/intents/00000000-0000-4000-8000-000000000001/evidence');
    expect(response.statusCode).toBe(400);
    expect(expectEnvelope(response, 'request.character_invalid').error.details).toEqual({ location: 'body', path: '/payload/note' });
  });

  it('a body that is not UTF-8 → 400 request.malformed_json', async () => {
    const response = await post(Buffer.concat([Buffer.from('{"role":"agent","name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]));
    expect(response.statusCode).toBe(400);
    expect(expectEnvelope(response, 'request.malformed_json').error.message).toMatch(/UTF-8/);
  });

  it('a body nested past the limit → 400 request.nesting_too_deep; at the limit it reaches the route', async () => {
    const nested = (depth: number) => `{"role":"agent","name":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const deep = await post(nested(requestJsonNestingDepthMax + 1));
    expect(deep.statusCode).toBe(400);
    expect(expectEnvelope(deep, 'request.nesting_too_deep').error.details.location).toBe('body');
    const atLimit = await post(nested(requestJsonNestingDepthMax));
    expect(expectEnvelope(atLimit, 'request.invalid').error.details.fields[0].path).toBe('/name');
    const million = await post(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(million.statusCode).toBe(400);
  });

  it('U+0000 in a path parameter or a query value → 400 naming it', async () => {
    const param = await app.inject({ url: '/v1/admin/api-keys/key_%00', headers: bearer(acme.adminKey) });
    expect(param.statusCode).toBe(400);
    expect(expectEnvelope(param, 'request.character_invalid').error.details).toEqual({ location: 'params', path: '/key_id' });
    const query = await app.inject({ url: '/v1/admin/api-keys?cursor=a%00', headers: bearer(acme.adminKey) });
    expect(query.statusCode).toBe(400);
    expect(expectEnvelope(query, 'request.character_invalid').error.details).toEqual({ location: 'querystring', path: '/cursor' });
  });

  it('bad percent-encoding in the path or the query → 400 request.malformed_url in the envelope', async () => {
    for (const url of ['/v1/admin/api-keys/%zz', '/v1/admin/api-keys/key_%ED%A0%80', '/v1/admin/api-keys?cursor=%zz', '/v1/admin/api-keys?cursor=%ED%A0%80']) {
      const response = await app.inject({ url, headers: { ...bearer(acme.adminKey), 'x-request-id': 'bad-url-1' } });
      expect(response.statusCode, url).toBe(400);
      expect(expectEnvelope(response, 'request.malformed_url').request_id).toBe('bad-url-1');
    }
  });

  it('an over-long path parameter or URL → 414 request.url_too_long', async () => {
    for (const url of [`/v1/admin/api-keys/${'a'.repeat(routeParameterLengthMax + 1)}`, `/v1/admin/api-keys?cursor=${'a'.repeat(requestUrlLengthMax)}`]) {
      const response = await app.inject({ url, headers: bearer(acme.adminKey) });
      expect(response.statusCode).toBe(414);
      expectEnvelope(response, 'request.url_too_long');
    }
  });

  it('a known path with another method → 405 with Allow; an unknown path stays 404', async () => {
    const collection = await app.inject({ method: 'PATCH', url: '/v1/admin/api-keys', headers: bearer(acme.adminKey) });
    expect(collection.statusCode).toBe(405);
    expectEnvelope(collection, 'request.method_not_allowed');
    expect(collection.headers.allow).toBe('GET, HEAD, POST');
    const item = await app.inject({ method: 'PUT', url: `/v1/admin/api-keys/key_${'0'.repeat(32)}?x=1` });
    expect(item.statusCode).toBe(405);
    expect(item.headers.allow).toBe('GET, HEAD, DELETE');
    const postOnly = await app.inject({ method: 'GET', url: '/v1/policy/rollback' });
    expect(postOnly.headers.allow).toBe('POST');
    expect((await app.inject({ method: 'PATCH', url: '/v1/nothing-here' })).statusCode).toBe(404);
  });
});

describe('malformed HTTP on a real socket', () => {
  let port: number;
  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });

  /** Sends raw bytes and reads until the server closes the connection. */
  const exchange = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });

  function parseAnswer(answer: string) {
    const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
    const requestId = /^x-request-id: (\S+)$/im.exec(head)?.[1];
    return { status: Number(head.split(' ')[1]), body: JSON.parse(body), requestId };
  }

  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'request.malformed_http'],
    ['headers past Node\'s limit', `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request.headers_too_large'],
    ['a URL past Node\'s limit', `GET /healthz?${'a'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`, 431, 'request.headers_too_large'],
  ])('%s → %i in the envelope', async (_name, bytes, status, code) => {
    const answer = parseAnswer(await exchange(bytes));
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(answer.body.request_id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(answer.requestId).toBe(answer.body.request_id);
  });

  it('a request that arrives while the server closes → 503 internal.unavailable in the envelope', async () => {
    const closing = createFastify(createLogger('silent'));
    await closing.register(serviceApp, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true });
    let answer: Response | undefined;
    // Runs after the app's own preClose hook, while the server still accepts connections.
    closing.addHook('preClose', async () => {
      answer = await fetch(`http://127.0.0.1:${(closing.server.address() as AddressInfo).port}/healthz`);
    });
    await closing.listen({ port: 0, host: '127.0.0.1' });
    await closing.close();
    expect(answer!.status).toBe(503);
    expect(answer!.headers.get('connection')).toBe('close');
    const body = (await answer!.json()) as { error: { code: string }; request_id: string };
    expect(body.error.code).toBe('internal.unavailable');
    expect(answer!.headers.get('x-request-id')).toBe(body.request_id);
  });

  it('a path with bad percent-encoding over the socket → 400 malformed_url with the request id header', async () => {
    const answer = parseAnswer(await exchange('GET /v1/admin/api-keys/%zz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('request.malformed_url');
    expect(answer.requestId).toBe(answer.body.request_id);
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

describe('the database out of reach', () => {
  it('a database with no connection to give (SQLSTATE 53300) → 503 internal.unavailable with Retry-After; the next request works', async () => {
    // A login role that may hold two connections: the app's revocation listener holds one and the test the other,
    // so the app's next connection is refused by Postgres itself ("too many connections for role"), as when
    // max_connections is reached.
    const role = `svc_limited_${process.pid}`;
    const admin = new pg.Client(database.connection);
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN; GRANT svc_app, svc_system TO ${role}`);
    const limited = { connectionString: database.url!.replace('postgres@', `${role}@`) };
    const limitedApp = await buildTestApp(limited);
    const holder = new pg.Client(limited);
    const connectionsOf = async (name: string, applicationName?: string) =>
      (await admin.query('SELECT pid FROM pg_stat_activity WHERE usename = $1 AND ($2::text IS NULL OR application_name = $2)', [name, applicationName ?? null])).rows.map((row) => row.pid as number);
    /** Ends the role's connections; terminating is asynchronous, so this waits until those backends have exited. */
    const endConnectionsOf = async (name: string) => {
      const pids = await connectionsOf(name);
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
      await expect.poll(async () => (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)', [pids])).rows[0].n, { timeout: 5_000 }).toBe(0);
    };
    try {
      const key = await acme.key('agent');
      expect((await limitedApp.inject({ url: '/v1/auth/principal', headers: bearer(key) })).statusCode).toBe(200);
      // The app's connections go; its revocation listener comes back at once and takes one slot, the test the other.
      await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT 2`);
      await endConnectionsOf(role);
      await expect.poll(() => connectionsOf(role, revocationListenerApplicationName), { timeout: 5_000 }).toHaveLength(1);
      await holder.connect();
      // A key the app has not cached: its look-up needs the database.
      const refused = await limitedApp.inject({ url: '/v1/auth/principal', headers: bearer(await acme.key('auditor')) });
      expect(refused.statusCode).toBe(503);
      expectEnvelope(refused, 'internal.unavailable');
      expect(refused.headers['retry-after']).toBe('1');
      // Connections to give again (the app may use two at once: the rate limiter's counter and the key's look-up).
      await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
      await holder.end();
      const again = await limitedApp.inject({ url: '/v1/auth/principal', headers: bearer(await acme.key('auditor')) });
      expect(again.statusCode).toBe(200);
    } finally {
      await holder.end().catch(() => {});
      await limitedApp.close();
      await endConnectionsOf(role);
      await expect.poll(() => connectionsOf(role)).toEqual([]);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
  });

  it('a database that refuses connections (ECONNREFUSED) → 503 internal.unavailable with Retry-After', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const unreachable = await buildTestApp({ connectionString: `postgresql://postgres@127.0.0.1:${closedPort}/none` });
    try {
      const answer = await unreachable.inject({ url: '/v1/auth/principal', headers: bearer(await acme.key('agent')) });
      expect(answer.statusCode).toBe(503);
      expectEnvelope(answer, 'internal.unavailable');
      expect(answer.headers['retry-after']).toBe('1');
    } finally {
      await unreachable.close();
    }
  });
});
