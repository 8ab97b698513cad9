// A key revoked through one replica is refused by another at once, not when the other's credential cache expires:
// the revocation is pushed with NOTIFY and heard by each replica's LISTEN. Behind a pooler in transaction mode the
// listener needs a connection that keeps its session (DATABASE_SESSION_URL); deploy/ha/test-through-pgbouncer.sh
// runs this file that way.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiKeyCacheTtlMs } from '../../../src/limits.ts';
import { buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let revoking: FastifyInstance;
let other: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  revoking = await buildTestApp(database.connection);
  other = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await revoking?.close();
  await other?.close();
  await database?.drop();
});

const principalStatus = async (app: FastifyInstance, apiKey: string) =>
  (await app.inject({ method: 'GET', url: '/v1/auth/principal', headers: { authorization: `Bearer ${apiKey}` } })).statusCode;

it('reaches the other replica before its cached credential would expire', async () => {
  const created = await revoking.inject({
    method: 'POST', url: '/v1/admin/api-keys', headers: { authorization: `Bearer ${tenant.adminKey}` }, payload: { role: 'operator' },
  });
  expect(created.statusCode).toBe(201);
  const { key_id: keyId, api_key: apiKey } = created.json() as { key_id: string; api_key: string };

  // The other replica has the key in its cache from here on, for apiKeyCacheTtlMs.
  expect(await principalStatus(other, apiKey)).toBe(200);
  const cachedAtMs = Date.now();
  const revoked = await revoking.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${keyId}`, headers: { authorization: `Bearer ${tenant.adminKey}` } });
  expect(revoked.statusCode).toBe(200);

  let status = await principalStatus(other, apiKey);
  while (status === 200 && Date.now() - cachedAtMs < apiKeyCacheTtlMs) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = await principalStatus(other, apiKey);
  }
  expect(status).toBe(401);
  // Refused well before the cache alone would have dropped the key (its entry may be a little older than cachedAtMs):
  // the push arrived.
  expect(Date.now() - cachedAtMs).toBeLessThan(apiKeyCacheTtlMs / 2);
});
