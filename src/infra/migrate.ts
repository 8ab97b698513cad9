// Applies migrations/NNNN_name.sql in order, each in its own transaction, once per database. Safe when several
// processes start at once: they queue on a Postgres advisory lock and the later ones find nothing to do.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const migrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Any fixed 64-bit number: every process of this service agrees on it. */
const migrationLockKey = 7_213_402_117n;

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export function readMigrations(directory: string = migrationsDir): Migration[] {
  const migrations = fs
    .readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const sql = fs.readFileSync(path.join(directory, file), 'utf8');
      return {
        version: Number(file.slice(0, 4)),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migrations must be numbered 0001, 0002, … without gaps`);
  });
  return migrations;
}

/** The newest version this build knows; /readyz compares the database against it. */
export const latestMigrationVersion = (): number => readMigrations().at(-1)?.version ?? 0;

/** One migration about to be applied: the `index`-th (from 1) of the `pending` this call applies. */
export interface MigrationStep {
  readonly index: number;
  readonly pending: number;
  readonly version: number;
  readonly name: string;
}

/** Brings the database up to date and returns the versions this call applied. `connection` must be a role that
 * may create tables and roles (the database owner or a superuser), not the app's runtime role. `onProgress` hears
 * of each migration before it runs (the CLI shows it on a terminal). */
export async function migrate(connection: pg.ClientConfig, options: { onProgress?: (step: MigrationStep) => void } = {}): Promise<number[]> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey.toString()]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Map<number, string>(
      (await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations')).rows.map(
        (row) => [row.version, row.checksum],
      ),
    );
    const pending: Migration[] = [];
    for (const migration of readMigrations()) {
      const checksum = applied.get(migration.version);
      if (checksum === undefined) pending.push(migration);
      else if (checksum !== migration.checksum) {
        throw new Error(`migration ${migration.version}_${migration.name} was changed after it was applied; add a new migration instead`);
      }
    }
    for (const [index, migration] of pending.entries()) {
      options.onProgress?.({ index: index + 1, pending: pending.length, version: migration.version, name: migration.name });
      await applyOne(client, migration);
    }
    return pending.map((migration) => migration.version);
  } finally {
    // Closing the session releases the advisory lock even if unlocking is never reached.
    await client.end();
  }
}

async function applyOne(client: pg.Client, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
      migration.version,
      migration.name,
      migration.checksum,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new Error(`migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** The newest applied version, or 0 when the database has never been migrated. Any other failure (the database
 * out of reach, say) is thrown: it says nothing about the schema. */
export async function appliedMigrationVersion(query: (text: string) => Promise<pg.QueryResult>): Promise<number> {
  try {
    const result = await query('SELECT coalesce(max(version), 0) AS version FROM schema_migrations');
    return Number(result.rows[0]?.version ?? 0);
  } catch (error) {
    // Before the first migration the table does not exist (SQLSTATE 42P01, undefined_table): version 0.
    if ((error as { code?: unknown } | null)?.code === '42P01') return 0;
    throw error;
  }
}
