// API key rotation over HTTP on a real Postgres, called as the public client's `keys rotate` calls it (a JSON content
// type and no body): a new secret under the same key id, the replaced one working for the overlap and refused after
// it (also from a process's cache, and in another replica told by NOTIFY), refusals, roles and tenants.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyCacheTtlMs, apiKeyRotationOverlapSecondsDefault, apiKeyRotationOverlapSecondsMax } from '../../../src/limits.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
/** A second replica on the same database, with its own credential cache and NOTIFY listener. */
let replica: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  replica = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await replica?.close();
  await database?.drop();
});

const principal = (key: string, instance = app) => instance.inject({ url: '/v1/auth/principal', headers: bearer(key) });
const errorCode = (response: LightMyRequestResponse) => response.json().error?.code;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** As the client's CLI posts it: its JSON content type, and no body at all (or the body given). */
function rotate(keyId: string, body?: object, admin = acme.adminKey): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: `/v1/admin/api-keys/${keyId}/rotate`,
    headers: { ...bearer(admin), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

const keyIdOf = (apiKey: string) => `key_${apiKey.split('_')[3]}`;

describe('POST /v1/admin/api-keys/{key_id}/rotate', () => {
  it('gives the key a new secret under the same id, and keeps the old one for the default overlap', async () => {
    const old = await acme.key('agent', ['mcp.spend:write']);
    const keyId = keyIdOf(old);
    expect((await principal(old)).statusCode).toBe(200);

    const before = Date.now();
    const response = await rotate(keyId);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    // What the client reads: `item.key_id` (else the id it asked about) and `api_key`.
    expect(body.item.key_id ?? keyId).toBe(keyId);
    expect(body).toMatchObject({ object: 'api_key_rotation', key_id: keyId, item: { key_id: keyId, role: 'agent', key_kind: 'restricted', scopes: ['mcp.spend:write'], revoked_at: null } });
    const fresh: string = body.api_key;
    expect(fresh).toMatch(new RegExp(`^svc_rk_sandbox_${keyId.slice(4)}_[0-9a-f]{64}$`));
    expect(fresh).not.toBe(old);
    expect(Date.parse(body.previous_secret_expires_at) - before).toBeGreaterThanOrEqual(apiKeyRotationOverlapSecondsDefault * 1000 - 1000);
    expect(response.headers['cache-control']).toBe('no-store');

    // Both work during the overlap, as the same key with the same role and scopes.
    for (const key of [old, fresh]) {
      const answer = (await principal(key)).json();
      expect(answer).toMatchObject({ service_account_role: 'agent', key_kind: 'restricted' });
    }
    // The list still has one key of that id, and no secret anywhere.
    const listed = (await app.inject({ url: '/v1/admin/api-keys', headers: bearer(acme.adminKey) })).json();
    expect(listed.data.filter((key: { key_id: string }) => key.key_id === keyId)).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(fresh.split('_')[4]);
  });

  it('ends the replaced secret at once with 0, and after a short overlap even where it is cached', async () => {
    const old = await acme.key('operator');
    const keyId = keyIdOf(old);
    const immediate = (await rotate(keyId, { previous_secret_expires_in_seconds: 0 })).json();
    expect(immediate.previous_secret_expires_at).toBe(immediate.rotated_at);
    expect(errorCode(await principal(old))).toBe('auth.credential_rotated');
    expect((await principal(immediate.api_key)).statusCode).toBe(200);

    // A one-second overlap: the old secret is used (and so cached) inside it, and refused once it has passed, well
    // within the cache's lifetime.
    const second = (await rotate(keyId, { previous_secret_expires_in_seconds: 1 })).json();
    expect((await principal(immediate.api_key)).statusCode).toBe(200);
    await sleep(1_100);
    expect(1_100).toBeLessThan(apiKeyCacheTtlMs);
    expect(errorCode(await principal(immediate.api_key))).toBe('auth.credential_rotated');
    expect((await principal(second.api_key)).statusCode).toBe(200);

    // A rotation during an overlap ends the older secret: at most two work at once, and only the one replaced last
    // is remembered (and refused as rotated once its overlap ends); an older one is simply not a secret of the key.
    const third = (await rotate(keyId)).json();
    expect((await principal(second.api_key)).statusCode).toBe(200);
    const fourth = (await rotate(keyId)).json();
    expect(errorCode(await principal(second.api_key))).toBe('auth.credential_invalid');
    for (const key of [third.api_key, fourth.api_key]) expect((await principal(key)).statusCode).toBe(200);
  });

  it('reaches another replica through NOTIFY, before its cache would expire', async () => {
    const old = await acme.key('agent');
    const keyId = keyIdOf(old);
    // The replica verifies the old key and caches it as the current secret.
    expect((await principal(old, replica)).statusCode).toBe(200);
    const rotated = (await rotate(keyId, { previous_secret_expires_in_seconds: 0 })).json();
    const started = Date.now();
    let code: string | undefined;
    while (Date.now() - started < apiKeyCacheTtlMs - 1_000) {
      code = errorCode(await principal(old, replica));
      if (code !== undefined) break;
      await sleep(50);
    }
    expect(code).toBe('auth.credential_rotated');
    expect((await principal(rotated.api_key, replica)).statusCode).toBe(200);
  });

  it('refuses a revoked key, an unknown or foreign one, a bad overlap, and anyone but an admin', async () => {
    const revokedKey = await acme.key('agent');
    const revokedId = keyIdOf(revokedKey);
    await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${revokedId}`, headers: bearer(acme.adminKey) });
    const revoked = await rotate(revokedId);
    expect(revoked.statusCode).toBe(409);
    expect(errorCode(revoked)).toBe('api_key.revoked');
    expect(errorCode(await principal(revokedKey))).toBe('auth.credential_revoked');

    const acmeKey = keyIdOf(await acme.key('agent'));
    for (const [keyId, admin] of [[`key_${'0'.repeat(32)}`, acme.adminKey], [acmeKey, globex.adminKey]] as const) {
      const response = await rotate(keyId, undefined, admin);
      expect(response.statusCode).toBe(404);
      expect(errorCode(response)).toBe('api_key.not_found');
    }
    for (const body of [{ previous_secret_expires_in_seconds: apiKeyRotationOverlapSecondsMax + 1 }, { previous_secret_expires_in_seconds: -1 }, { overlap: 5 }]) {
      expect((await rotate(acmeKey, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await rotate(acmeKey, undefined, await acme.key('operator'))).statusCode).toBe(403);
    // The admin may rotate the very key it calls with: it keeps working through the overlap.
    const selfId = keyIdOf(acme.adminKey);
    const self = await rotate(selfId);
    expect(self.statusCode).toBe(200);
    expect((await principal(acme.adminKey)).statusCode).toBe(200);
  });
});
