// The provider integrations the public client names and this service does not run, called as the client calls them
// (its Plaid bank reads, its ACH funding with a JSON body and an idempotency key, its Shopify session read): each
// answers the documented 422 `integration.not_supported` with the rails the service does run, never a 404; the
// credential and role are still checked first.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRails } from '../../../src/rails/index.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const bankId = '0c6f1a8e-2f43-4b8e-9d21-4f8f1b0e7a11';
const intentId = '5b1f0f0e-7f4c-4d9a-8a2b-6c1d2e3f4a5b';
const calls = [
  { provider: 'plaid', method: 'GET', url: '/v1/admin/plaid/bank-accounts' },
  { provider: 'plaid', method: 'GET', url: `/v1/admin/plaid/bank-accounts/${bankId}` },
  { provider: 'stripe_ach', method: 'POST', url: `/v1/admin/settlement/stripe/ach/intents/${intentId}/fund`, payload: JSON.stringify({ plaid_bank_account_id: bankId }), headers: { 'idempotency-key': 'ach-1' } },
  { provider: 'stripe_ach', method: 'POST', url: `/v1/admin/settlement/stripe/ach/intents/${intentId}/fund`, payload: '' },
  { provider: 'shopify_payments', method: 'GET', url: '/v1/admin/shopify/payments/sessions/gid-shopify-PaymentSession-42' },
] as const;

describe('provider integrations this service does not run', () => {
  it('answer 422 integration.not_supported with the rails it runs, to every role that may call them', async () => {
    for (const role of ['admin', 'operator'] as const) {
      const key = role === 'admin' ? tenant.adminKey : await tenant.key(role);
      for (const call of calls) {
        const response = await app.inject({
          method: call.method,
          url: call.url,
          headers: { ...bearer(key), accept: 'application/json', 'content-type': 'application/json', ...('headers' in call ? call.headers : {}) },
          ...('payload' in call ? { payload: call.payload } : {}),
        });
        expect(response.statusCode, `${call.method} ${call.url} as ${role}`).toBe(422);
        expect(response.json().error).toMatchObject({ code: 'integration.not_supported', details: { provider: call.provider, supported_rails: registeredRails().map((rail) => rail.name) } });
      }
    }
  });

  it('check the credential and the role first', async () => {
    const unauthenticated = await app.inject({ url: '/v1/admin/plaid/bank-accounts' });
    expect(unauthenticated.statusCode).toBe(401);
    const agent = await app.inject({ url: '/v1/admin/plaid/bank-accounts', headers: bearer(await tenant.key('agent')) });
    expect(agent.statusCode).toBe(403);
    const auditorFunding = await app.inject({ method: 'POST', url: `/v1/admin/settlement/stripe/ach/intents/${intentId}/fund`, headers: bearer(await tenant.key('auditor')), payload: {} });
    expect(auditorFunding.statusCode).toBe(403);
  });
});
