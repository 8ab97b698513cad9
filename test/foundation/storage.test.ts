// The storage layer on both backends: real Postgres and embedded PGlite run the same migrations and the same
// SQL, and row-level security walls tenants off even from a query that forgets its WHERE clause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findApiKeyCredential, insertApiKey, listApiKeys } from '../../src/db/api-key-repository.ts';
import { findTenant, insertTenant } from '../../src/db/tenant-repository.ts';
import { mintApiKey } from '../../src/credentials/api-key.ts';
import { Database } from '../../src/infra/database.ts';
import { latestMigrationVersion, migrate } from '../../src/infra/migrate.ts';
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe.each([
  ['postgres', createTestDatabase],
  ['pglite', createEmbeddedTestDatabase],
] as const)('storage on %s', (_kind, create) => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await create();
    database = new Database(testDatabase.connection);
    await database.system(async (tx) => {
      await insertTenant(tx, 'alpha', 'sandbox');
      await insertTenant(tx, 'beta', 'live');
      for (const [tenantId, environment] of [['alpha', 'sandbox'], ['beta', 'live']] as const) {
        for (let index = 0; index < 3; index += 1) {
          const minted = mintApiKey('standard', environment);
          await insertApiKey(tx, tenantId, {
            keyId: minted.keyId, kind: 'standard', role: 'operator', name: `${tenantId}-${index}`, scopes: [], secretSha256: minted.secretSha256,
          });
        }
      }
    });
  });

  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('has applied every migration once, and a second run applies nothing', async () => {
    expect(await migrate(testDatabase.connection)).toEqual([]);
    const { rows } = await database.pool.query('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((row) => row.version)).toEqual(Array.from({ length: latestMigrationVersion() }, (_, index) => index + 1));
  });

  it('walls tenants off: with tenant alpha set, an unfiltered SELECT sees none of beta\'s rows', async () => {
    const keys = await database.tenant('alpha', async (tx) => (await tx.query('SELECT tenant_id, name FROM api_keys')).rows);
    expect(keys).toHaveLength(3);
    expect(keys.every((row) => row.tenant_id === 'alpha')).toBe(true);
    const tenants = await database.tenant('alpha', async (tx) => (await tx.query('SELECT tenant_id FROM tenants')).rows);
    expect(tenants).toEqual([{ tenant_id: 'alpha' }]);
  });

  it('refuses a write into another tenant, even with the other tenant id spelled out', async () => {
    const minted = mintApiKey('standard', 'live');
    await expect(
      database.tenant('alpha', (tx) =>
        insertApiKey(tx, 'beta', { keyId: minted.keyId, kind: 'standard', role: 'admin', name: 'x', scopes: [], secretSha256: minted.secretSha256 }),
      ),
    ).rejects.toThrow(/row-level security/);
    const updated = await database.tenant('alpha', async (tx) => (await tx.query(`UPDATE api_keys SET name = 'stolen' WHERE tenant_id = 'beta'`)).rowCount);
    expect(updated).toBe(0);
  });

  it('sees nothing when a transaction names no tenant at all', async () => {
    const client = await database.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL ROLE svc_app');
      const { rows } = await client.query('SELECT * FROM api_keys');
      expect(rows).toEqual([]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('finds a key credential across tenants only as the system role', async () => {
    const someBetaKey = await database.system(async (tx) => (await tx.query(`SELECT key_id FROM api_keys WHERE tenant_id = 'beta' LIMIT 1`)).rows[0]!.key_id as string);
    const asSystem = await database.system((tx) => findApiKeyCredential(tx, someBetaKey));
    expect(asSystem?.tenantId).toBe('beta');
    expect(asSystem?.environment).toBe('live');
    const asAlpha = await database.tenant('alpha', (tx) => findApiKeyCredential(tx, someBetaKey));
    expect(asAlpha).toBeUndefined();
  });

  it('pages keys newest first with a cursor', async () => {
    const first = await database.tenant('alpha', (tx) => listApiKeys(tx, 'alpha', { limit: 2 }));
    expect(first.keys).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    const second = await database.tenant('alpha', (tx) => listApiKeys(tx, 'alpha', { limit: 2, startingAfter: first.keys[1]!.keyId }));
    expect(second.keys).toHaveLength(1);
    expect(second.hasMore).toBe(false);
    const all = [...first.keys, ...second.keys].map((key) => key.keyId);
    expect(new Set(all).size).toBe(3);
  });

  it('rolls back a failed transaction and leaves the pool usable', async () => {
    await expect(
      database.tenant('alpha', async (tx) => {
        await tx.query(`INSERT INTO tenants (tenant_id, tenant_uuid, environment) VALUES ('gamma', gen_random_uuid(), 'sandbox')`);
      }),
    ).rejects.toThrow();
    expect(await database.system((tx) => findTenant(tx, 'gamma'))).toBeUndefined();
    await expect(database.tenant('alpha', (tx) => findTenant(tx, 'alpha'))).resolves.toMatchObject({ tenantId: 'alpha' });
  });
});
