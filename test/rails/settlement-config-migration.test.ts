// The migration to settlement configuration per rail (migrations/*_settlement_config_per_rail.sql) on a database that
// holds configurations in the columns of 0006 and 0020: every value and every sealed secret is carried over to its rail, the secrets still open with the same
// key, the configuration answers exactly as it did, and the database still refuses what it refused before.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSettlementConfig, openRailSecrets } from '../../src/db/settlement-config-repository.ts';
import { Database } from '../../src/infra/database.ts';
import { migrate, readMigrations } from '../../src/infra/migrate.ts';
import { SecretBox, secretContext } from '../../src/infra/secret-box.ts';
import { presentSettlementConfig } from '../../src/rails/settlement-config.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** Found by its name, so that renumbering the migration changes nothing here. */
const perRailVersion = readMigrations().find((migration) => migration.name === 'settlement_config_per_rail')!.version;
const box = SecretBox.fromBase64(randomBytes(32).toString('base64'));
const address = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
let database: TestDatabase;
let db: Database;

/** Applies the migrations before `version` as migrate() does, each in its own transaction and recorded. */
async function migrateBefore(connection: pg.ClientConfig, version: number): Promise<void> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    await client.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const migration of readMigrations().filter((candidate) => candidate.version < version)) {
      await client.query('BEGIN');
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, migration.checksum]);
      await client.query('COMMIT');
    }
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  await migrateBefore(database.connection, perRailVersion);
  db = new Database({ ...database.connection, max: 2 });
  // Three tenants in the old columns: both rails live with both secrets, x402 alone in sandbox, MPP with sessions.
  await db.system(async (tx) => {
    // The tenants as rows of that schema: the service's tenant creation writes tables that come later (the event log).
    await tx.query(`INSERT INTO tenants (tenant_id, tenant_uuid, environment) VALUES ('both-live', gen_random_uuid(), 'live'), ('x402-sandbox', gen_random_uuid(), 'sandbox'), ('mpp-sessions', gen_random_uuid(), 'sandbox')`);
    await tx.query(
      `INSERT INTO settlement_configs (tenant_id, rails, x402_address, mpp_profile_id, processor_destination, x402_facilitator_url, mpp_processor_url,
         x402_facilitator_api_key_sealed, mpp_processor_secret_key_sealed, updated_at)
       VALUES ('both-live', ARRAY['processor_mpp', 'x402_usdc_base'], $1, 'profile_live1', 'acct_1Live', 'https://facilitator.example.com',
         'https://processor.example.com', $2, $3, '2026-11-20T10:00:00Z')`,
      [address, box.seal('facilitator-key', secretContext('both-live', 'x402_facilitator_api_key')), box.seal('sk_live_x', secretContext('both-live', 'mpp_processor_secret_key'))],
    );
    await tx.query(`INSERT INTO settlement_configs (tenant_id, rails, x402_address, updated_at) VALUES ('x402-sandbox', ARRAY['x402_usdc_base'], $1, '2026-11-21T10:00:00Z')`, [address.toLowerCase()]);
    await tx.query(
      `INSERT INTO settlement_configs (tenant_id, rails, mpp_profile_id, processor_destination, mpp_session_enabled, settlement_network_recipient, updated_at)
       VALUES ('mpp-sessions', ARRAY['processor_mpp'], 'profile_test_1', 'acct_1', true, $1, '2026-11-22T10:00:00Z')`,
      [address],
    );
  });
  // The migrations after it (if any) too: they must carry the configurations over as well.
  expect((await migrate(database.connection))[0]).toBe(perRailVersion);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const read = (tenantId: string) => db.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));

describe('the migration to settlement configuration per rail', () => {
  it('carries every value over to its rail, and answers each configuration as the columns did', async () => {
    expect(presentSettlementConfig('live', (await read('both-live'))!)).toEqual({
      object: 'settlement_config', environment: 'live', rails: ['processor_mpp', 'x402_usdc_base'],
      x402_address: address, mpp_profile_id: 'profile_live1', mpp_session_enabled: false, settlement_network_recipient: null, processor_destination: 'acct_1Live',
      x402_facilitator_url: 'https://facilitator.example.com', x402_facilitator_api_key_set: true,
      mpp_processor_url: 'https://processor.example.com', mpp_processor_secret_key_set: true,
      // Fields the columns never had (x402's escrow flow) answer as unset.
      x402_scheme: null, x402_capture_authorizer: null, x402_receiver_authorizer_key_set: false,
      updated_at: '2026-11-20T10:00:00.000Z',
    });
    expect(presentSettlementConfig('sandbox', (await read('x402-sandbox'))!)).toMatchObject({
      rails: ['x402_usdc_base'], x402_address: address.toLowerCase(), mpp_profile_id: null, x402_facilitator_api_key_set: false, mpp_processor_secret_key_set: false,
    });
    expect((await read('mpp-sessions'))!.settings['processor_mpp']).toEqual({
      mpp_profile_id: 'profile_test_1', mpp_session_enabled: true, settlement_network_recipient: address, processor_destination: 'acct_1', mpp_processor_url: null,
    });
  });

  it('moves the sealed secrets to their rails, still sealed, still opened by the same key', async () => {
    const stored = (await read('both-live'))!;
    expect(openRailSecrets(box, 'both-live', stored)).toEqual({
      x402_usdc_base: { x402_facilitator_api_key: 'facilitator-key' },
      processor_mpp: { mpp_processor_secret_key: 'sk_live_x' },
    });
    const rows = await db.system(async (tx) => (await tx.query('SELECT rail, field, sealed FROM settlement_rail_secrets ORDER BY rail')).rows);
    expect(rows.map(({ rail, field }) => [rail, field])).toEqual([['processor_mpp', 'mpp_processor_secret_key'], ['x402_usdc_base', 'x402_facilitator_api_key']]);
    for (const { sealed } of rows) expect(Buffer.from(sealed).toString('latin1')).not.toMatch(/facilitator-key|sk_live_x/);
  });

  it('drops the old columns, and still refuses in the database what 0006 and 0020 refused', async () => {
    const columns = await db.system(async (tx) => (await tx.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'settlement_configs' ORDER BY column_name`)).rows);
    expect(columns.map(({ column_name }) => column_name)).toEqual(['created_at', 'rail_settings', 'rails', 'tenant_id', 'updated_at']);
    const refused: [string, string[], unknown][] = [
      ['an empty list of rails', [], {}],
      ['a rail named twice', ['x402_usdc_base', 'x402_usdc_base'], { x402_usdc_base: { x402_address: address } }],
      ['x402 listed without an address', ['x402_usdc_base'], { x402_usdc_base: { x402_address: null } }],
      ['a malformed address', ['x402_usdc_base'], { x402_usdc_base: { x402_address: '0x12' } }],
      ['MPP listed without a destination', ['processor_mpp'], { processor_mpp: { mpp_profile_id: 'profile_test_1' } }],
      ['sessions without a recipient', ['x402_usdc_base'], { x402_usdc_base: { x402_address: address }, processor_mpp: { mpp_session_enabled: true } }],
      ['an endpoint that is not a URL', ['x402_usdc_base'], { x402_usdc_base: { x402_address: address, x402_facilitator_url: 'facilitator' } }],
    ];
    for (const [what, rails, settings] of refused) {
      const write = db.tenant('x402-sandbox', (tx) => tx.query('UPDATE settlement_configs SET rails = $1, rail_settings = $2 WHERE tenant_id = $3', [rails, settings, 'x402-sandbox']));
      await expect(write, what).rejects.toMatchObject({ code: '23514' });
    }
  });
});
