// The rule that lets the service shard by tenant on a distributed Postgres (docs/scaling.md), read from pg_catalog
// after every migration: each table with a tenant_id column is keyed by tenant first (its primary key leads with
// tenant_id; every foreign key to another tenant table leads with tenant_id on both sides; every other unique index
// includes tenant_id) and keeps row-level security on. A table without tenant_id must be named below as global, with
// the reason, and so must a table whose tenant_id may be NULL (its rows exist before a tenant is known, so no shard
// can hold them); a global table refers to no tenant table. Exceptions are named one by one, with the reason.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** Tables that hold no tenant's rows: shared by every tenant, or used before any tenant is known. */
const globalTables: Record<string, string> = {
  schema_migrations: 'which migrations have run: one per database',
  users: 'a person may belong to several tenants (tenant_memberships), and signs in before choosing one',
  login_challenges: "a sign-in code, sent before the person's tenant is known",
  mail_outbox: 'the mail of sign-in codes, keyed by its login challenge',
  rate_limit_counters: 'windows keyed by bucket (a client address or a credential), counted before authentication',
  device_authorizations: 'a device login starts before any tenant is known; tenant_id (nullable) records the approver once decided',
};

/** Foreign keys from a global table into a tenant table, and why each is there. Sharded, the service checks these
 * itself (the database cannot enforce a key from a reference table into a distributed one). */
const globalKeysIntoTenants: Record<string, string> = {
  'device_authorizations.device_authorizations_tenant_id_fkey': 'the tenant that approved the device login',
};

/** Unique indexes on tenant tables that do not include tenant_id, and why each must stay. */
const uniqueWithoutTenant: Record<string, string> = {
  'api_keys.api_keys_key_id': 'authentication finds a key by its id before it knows the tenant',
  'sso_states.sso_states_state': 'the OIDC callback finds its state before it knows the tenant',
  'tenants.tenants_tenant_uuid_key': "the tenant's second id, one to one with tenant_id",
};

interface TableFacts {
  readonly name: string;
  readonly hasTenantId: boolean;
  /** tenant_id exists and is NOT NULL: a tenant table. */
  readonly tenantIdRequired: boolean;
  readonly rowSecurity: boolean;
  readonly forceRowSecurity: boolean;
  readonly primaryKey: string[] | null;
  readonly foreignKeys: Array<{ name: string; columns: string[]; references: string; referencedColumns: string[] }>;
  readonly uniqueIndexes: Array<{ name: string; columns: string[] }>;
}

let database: TestDatabase;
let tables: TableFacts[];

beforeAll(async () => {
  database = await createTestDatabase();
  const client = new pg.Client(database.connection);
  await client.connect();
  try {
    const columnsOf = (relation: string, keys: string) =>
      `(SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(${keys}) WITH ORDINALITY k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.attnum)`;
    const { rows } = await client.query(`
      SELECT c.relname AS name, c.relrowsecurity AS row_security, c.relforcerowsecurity AS force_row_security,
        EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS has_tenant_id,
        EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped AND a.attnotnull) AS tenant_id_required,
        (SELECT ${columnsOf('c.oid', 'pc.conkey')} FROM pg_constraint pc WHERE pc.conrelid = c.oid AND pc.contype = 'p') AS primary_key,
        coalesce((SELECT json_agg(json_build_object('name', pc.conname, 'columns', ${columnsOf('pc.conrelid', 'pc.conkey')},
                   'references', pc.confrelid::regclass::text, 'referencedColumns', ${columnsOf('pc.confrelid', 'pc.confkey')}))
                  FROM pg_constraint pc WHERE pc.conrelid = c.oid AND pc.contype = 'f'), '[]') AS foreign_keys,
        coalesce((SELECT json_agg(json_build_object('name', i.relname, 'columns', ${columnsOf('x.indrelid', 'x.indkey::int2[]')}))
                  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                  WHERE x.indrelid = c.oid AND x.indisunique AND NOT x.indisprimary), '[]') AS unique_indexes
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
      ORDER BY c.relname`);
    tables = rows.map((row) => ({
      name: row.name,
      hasTenantId: row.has_tenant_id,
      tenantIdRequired: row.tenant_id_required,
      rowSecurity: row.row_security,
      forceRowSecurity: row.force_row_security,
      primaryKey: row.primary_key,
      foreignKeys: row.foreign_keys,
      uniqueIndexes: row.unique_indexes.map((index: { name: string; columns: string[] | null }) => ({ name: index.name, columns: index.columns ?? [] })),
    }));
  } finally {
    await client.end();
  }
});

afterAll(async () => {
  await database?.drop();
});

const tenantTables = () => tables.filter((table) => table.tenantIdRequired);
const isTenantTable = (name: string) => tables.some((table) => table.name === name && table.tenantIdRequired);
const isGlobal = (table: TableFacts) => !table.tenantIdRequired;

describe('every tenant table is keyed by tenant first', () => {
  it('reads the schema (the catalogue query finds the tables it should)', () => {
    expect(tenantTables().map((table) => table.name)).toEqual(expect.arrayContaining(['tenants', 'intents', 'ledger_rows', 'ledger_heads', 'idempotency_records']));
    expect(tables.find((table) => table.name === 'intents')?.primaryKey).toEqual(['tenant_id', 'intent_id']);
  });

  it("has a primary key whose first column is tenant_id", () => {
    const offenders = tenantTables()
      .filter((table) => table.primaryKey?.[0] !== 'tenant_id')
      .map((table) => `${table.name}: primary key (${table.primaryKey?.join(', ') ?? 'none'})`);
    expect(offenders).toEqual([]);
  });

  it('leads every foreign key to another tenant table with tenant_id, on both sides', () => {
    const offenders: string[] = [];
    for (const table of tenantTables()) {
      for (const key of table.foreignKeys) {
        if (!isTenantTable(key.references)) {
          // A key to a global table (a reference table when sharded) is allowed: it needs no tenant.
          if (!(key.references in globalTables)) offenders.push(`${table.name}.${key.name} refers to ${key.references}, neither a tenant table nor a named global one`);
          continue;
        }
        if (key.columns[0] !== 'tenant_id' || key.referencedColumns[0] !== 'tenant_id') {
          offenders.push(`${table.name}.${key.name} (${key.columns.join(', ')}) → ${key.references} (${key.referencedColumns.join(', ')})`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('includes tenant_id in every other unique index, but for the named exceptions', () => {
    const found = tenantTables().flatMap((table) =>
      table.uniqueIndexes.filter((index) => !index.columns.includes('tenant_id')).map((index) => `${table.name}.${index.name}`),
    );
    expect(found.sort()).toEqual(Object.keys(uniqueWithoutTenant).sort());
  });

  it('keeps row-level security on, forced for the table owner too', () => {
    const offenders = tenantTables()
      .filter((table) => !table.rowSecurity || !table.forceRowSecurity)
      .map((table) => table.name);
    expect(offenders).toEqual([]);
  });
});

describe('tables without a required tenant_id', () => {
  it('are exactly the named global tables', () => {
    const global = tables.filter(isGlobal).map((table) => `${table.name}${table.hasTenantId ? ' (nullable tenant_id)' : ''}`);
    const named = Object.keys(globalTables).map((name) => `${name}${tables.find((table) => table.name === name)?.hasTenantId ? ' (nullable tenant_id)' : ''}`);
    expect(global.sort()).toEqual(named.sort());
  });

  it('refer to no tenant table (a global row cannot point into one shard), but for the named exceptions', () => {
    const found = tables
      .filter(isGlobal)
      .flatMap((table) => table.foreignKeys.filter((key) => isTenantTable(key.references)).map((key) => `${table.name}.${key.name}`));
    expect(found.sort()).toEqual(Object.keys(globalKeysIntoTenants).sort());
  });
});
