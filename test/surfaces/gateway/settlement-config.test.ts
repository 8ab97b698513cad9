// Settlement configuration over HTTP on a real Postgres: the spec's five 400 cases, round trips, roles, tenants.
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let sandbox: TestTenant;
let live: TestTenant;
let other: TestTenant;

const path = '/v1/admin/settlement/config';
const address = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const sandboxBody = {
  rails: ['x402_usdc_base', 'processor_mpp'],
  x402_address: address,
  mpp_profile_id: 'profile_test_abc123',
  mpp_session_enabled: false,
  settlement_network_recipient: null,
  processor_destination: 'acct_1Sandbox',
};

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  sandbox = await createTestTenant(database.connection);
  live = await createTestTenant(database.connection, 'live');
  other = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const put = (key: string, body: unknown) => app.inject({ method: 'PUT', url: path, headers: bearer(key), payload: body as object });
const get = (key: string) => app.inject({ method: 'GET', url: path, headers: bearer(key) });

describe('settlement configuration', () => {
  it('answers 404 settlement_config.not_found before anything is set', async () => {
    const response = await get(other.adminKey);
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('settlement_config.not_found');
  });

  it('stores a valid sandbox configuration and reads it back', async () => {
    const response = await put(sandbox.adminKey, sandboxBody);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      object: 'settlement_config', environment: 'sandbox', ...sandboxBody, updated_at: expect.any(String),
      // The live rails' endpoints and whether their secrets are set (docs/rails.md#live-rails).
      x402_facilitator_url: null, x402_facilitator_api_key_set: false, mpp_processor_url: null, mpp_processor_secret_key_set: false,
      // x402's escrow flow (docs/rails.md): the scheme, the facilitator's operator address and our consent key.
      x402_scheme: null, x402_capture_authorizer: null, x402_receiver_authorizer_key_set: false,
    });
    expect(Date.parse(body.updated_at)).not.toBeNaN();
    const read = await get(sandbox.adminKey);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(body);
  });

  it('replaces the whole configuration on a second PUT, clearing fields left out', async () => {
    const first = (await put(sandbox.adminKey, sandboxBody)).json();
    const second = await put(sandbox.adminKey, { rails: ['x402_usdc_base'], x402_address: address.toLowerCase() });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({
      rails: ['x402_usdc_base'],
      x402_address: address.toLowerCase(),
      mpp_profile_id: null,
      mpp_session_enabled: false,
      processor_destination: null,
    });
    expect(Date.parse(second.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(first.updated_at));
    expect((await get(sandbox.adminKey)).json().rails).toEqual(['x402_usdc_base']);
  });

  it('stores a valid live configuration with a live profile and sessions', async () => {
    const body = { ...sandboxBody, mpp_profile_id: 'profile_live42', mpp_session_enabled: true, settlement_network_recipient: address };
    const response = await put(live.adminKey, body);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ environment: 'live', mpp_profile_id: 'profile_live42', mpp_session_enabled: true });
  });

  it.each<[string, object, string, 'sandbox' | 'live']>([
    ['an empty rail list', { ...sandboxBody, rails: [] }, 'settlement_config.invalid_rail_combination', 'sandbox'],
    ['an unknown rail', { ...sandboxBody, rails: ['x402_usdc_base', 'stripe_connect'] }, 'settlement_config.invalid_rail_combination', 'sandbox'],
    ['a duplicate rail', { ...sandboxBody, rails: ['processor_mpp', 'processor_mpp'] }, 'settlement_config.invalid_rail_combination', 'sandbox'],
    ['processor_mpp without a destination', { ...sandboxBody, processor_destination: null }, 'settlement_config.processor_destination_required', 'sandbox'],
    ['a malformed x402 address', { ...sandboxBody, x402_address: '0x1234' }, 'settlement_config.x402_address_invalid', 'sandbox'],
    ['x402 without an address', { ...sandboxBody, x402_address: null }, 'settlement_config.x402_address_invalid', 'sandbox'],
    ['a live profile in sandbox', { ...sandboxBody, mpp_profile_id: 'profile_live1' }, 'settlement_config.mpp_profile_invalid', 'sandbox'],
    ['a test profile in live', sandboxBody, 'settlement_config.mpp_profile_invalid', 'live'],
    ['sessions without a recipient', { ...sandboxBody, mpp_session_enabled: true }, 'settlement_config.settlement_recipient_required', 'sandbox'],
    ['sessions with an invalid recipient', { ...sandboxBody, mpp_session_enabled: true, settlement_network_recipient: '0xabc' }, 'settlement_config.settlement_recipient_required', 'sandbox'],
  ])('refuses %s with 400 %s', async (_name, body, code, environment) => {
    const tenant = environment === 'live' ? live : other;
    const response = await put(tenant.adminKey, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe(code);
    expect(response.json().error.details.field).toEqual(expect.any(String));
  });

  it('stores nothing when a PUT is refused', async () => {
    const before = (await get(live.adminKey)).json();
    expect((await put(live.adminKey, { ...sandboxBody, mpp_profile_id: 'profile_test_x' })).statusCode).toBe(400);
    expect((await get(live.adminKey)).json()).toEqual(before);
  });

  it('refuses unknown fields and wrong types as request.invalid', async () => {
    for (const body of [{ ...sandboxBody, stripe_secret: 'sk_live_x' }, { ...sandboxBody, mpp_session_enabled: 'yes' }, { ...sandboxBody, rails: 'x402_usdc_base' }, {}]) {
      const response = await put(sandbox.adminKey, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('request.invalid');
    }
  });

  it('lets only admins write, and admins, operators and auditors read', async () => {
    await put(sandbox.adminKey, sandboxBody);
    for (const role of ['operator', 'auditor', 'agent'] as const) {
      const key = await sandbox.key(role);
      const write = await put(key, sandboxBody);
      expect(write.statusCode).toBe(403);
      expect(write.json().error.code).toBe('auth.role_insufficient');
      expect((await get(key)).statusCode).toBe(role === 'agent' ? 403 : 200);
    }
    expect((await app.inject({ method: 'GET', url: path })).statusCode).toBe(401);
  });

  it('keeps tenants apart: one tenant never reads or overwrites another', async () => {
    await put(sandbox.adminKey, sandboxBody);
    const isolated = await createTestTenant(database.connection);
    expect((await get(isolated.adminKey)).statusCode).toBe(404);
    await put(isolated.adminKey, { rails: ['x402_usdc_base'], x402_address: '0x1111111111111111111111111111111111111111' });
    expect((await get(sandbox.adminKey)).json().x402_address).toBe(address);
    expect((await get(isolated.adminKey)).json().x402_address).toBe('0x1111111111111111111111111111111111111111');
  });

  it('is protected by row-level security underneath: a tenant transaction sees only its own row', async () => {
    const client = new pg.Client(database.connection);
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE svc_app');
      await client.query(`SELECT set_config('app.tenant_id', $1, true)`, [sandbox.tenantId]);
      const { rows } = await client.query('SELECT tenant_id FROM settlement_configs');
      expect(rows.map((row) => row.tenant_id)).toEqual([sandbox.tenantId]);
      await client.query('SAVEPOINT before_write');
      await expect(
        client.query(`INSERT INTO settlement_configs (tenant_id, rails, rail_settings) VALUES ($1, ARRAY['x402_usdc_base'], $2)`, [other.tenantId, { x402_usdc_base: { x402_address: address } }]),
      ).rejects.toThrow(/row-level security/);
      // The rails' sealed secrets, stored per rail, are under the same rule.
      await client.query('ROLLBACK TO SAVEPOINT before_write');
      await expect(
        client.query(`INSERT INTO settlement_rail_secrets (tenant_id, rail, field, sealed) VALUES ($1, 'x402_usdc_base', 'x402_facilitator_api_key', $2)`, [other.tenantId, Buffer.alloc(40)]),
      ).rejects.toThrow(/row-level security/);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
  });
});
