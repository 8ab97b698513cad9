// Logs of a full request cycle and every error body are free of credentials, tokens and signatures.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { logs });
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

it('writes no credential to the logs or to an error body over a full cycle', async () => {
  const secrets: string[] = [tenant.adminKey];
  const errorBodies: string[] = [];
  const sensitiveHeaders = {
    'x-svc-agent-recognition-proof': 'eyJwcm9vZiI6InNlY3JldC1wcm9vZi12YWx1ZSJ9',
    'payment-signature': 'c2VjcmV0LXBheW1lbnQtc2lnbmF0dXJl',
    'x-svc-payment-authorization': 'Payment c2VjcmV0LW1wcC1jcmVkZW50aWFs',
    cookie: 'session=secret-cookie-value',
  };
  secrets.push(...Object.values(sensitiveHeaders));

  const created = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey), payload: { role: 'agent' } });
  const agentKey = created.json().api_key as string;
  secrets.push(agentKey);

  const forged = `${agentKey.slice(0, -64)}${'f'.repeat(64)}`;
  secrets.push(forged);
  const accepted = await app.inject({ url: '/v1/auth/principal', headers: { ...bearer(agentKey), ...sensitiveHeaders } });
  expect(accepted.statusCode).toBe(200);
  const attempts = [
    { url: '/v1/auth/principal', headers: bearer(forged) },
    { url: '/v1/auth/principal', headers: bearer('not-a-key-but-a-secret-looking-token') },
    { url: '/v1/admin/api-keys', headers: bearer(agentKey) },
    { url: `/v1/admin/api-keys?cursor=${agentKey}`, headers: bearer(tenant.adminKey) },
    { url: `/v1/auth/principal?api_key=${agentKey}`, headers: {} },
    { method: 'POST' as const, url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json' }, payload: `{"role":"${agentKey}"` },
    { method: 'POST' as const, url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey), payload: { role: agentKey } },
  ];
  secrets.push('not-a-key-but-a-secret-looking-token');
  for (const attempt of attempts) {
    const response = await app.inject(attempt);
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    errorBodies.push(response.body);
  }
  const keyId = (await app.inject({ url: '/v1/auth/principal', headers: bearer(agentKey) })).json().subject;
  // A rotation: its answer carries the new key once, and neither secret reaches a log or the refusal of the old one.
  const rotated = await app.inject({ method: 'POST', url: `/v1/admin/api-keys/${keyId}/rotate`, headers: bearer(tenant.adminKey), payload: { previous_secret_expires_in_seconds: 0 } });
  const rotatedKey = rotated.json().api_key as string;
  secrets.push(rotatedKey);
  expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(rotatedKey) })).statusCode).toBe(200);
  errorBodies.push((await app.inject({ url: '/v1/auth/principal', headers: bearer(agentKey) })).body);
  await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${keyId}`, headers: bearer(tenant.adminKey) });
  errorBodies.push((await app.inject({ url: '/v1/auth/principal', headers: bearer(rotatedKey) })).body);

  // The logs did capture the cycle (the test can fail only if they are there to inspect).
  expect(logs.lines.length).toBeGreaterThan(attempts.length * 2);
  expect(logs.text).toContain('/v1/auth/principal');
  for (const secret of secrets) {
    const secretPart = secret.startsWith('svc_') ? secret.slice(-64) : secret;
    expect(logs.text, 'logs').not.toContain(secretPart);
    for (const body of errorBodies) expect(body, 'error body').not.toContain(secretPart);
  }
});
