// Fresh databases for integration tests: one per test file on the machine's Postgres (dropped afterwards), or an
// embedded PGlite in a temporary directory. Never a mock. With TEST_DATABASE_POOLER_URL, the tests' pools reach
// their database through that pooler (PgBouncer in transaction mode: deploy/ha/test-through-pgbouncer.sh).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/infra/database.ts';
import { startEmbeddedPostgres } from '../../src/infra/embedded-postgres.ts';
import { migrate, readMigrations } from '../../src/infra/migrate.ts';

/** The maintenance database of the test cluster (trust auth on this machine and in CI). */
export const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** A pooler in transaction mode in front of the admin URL's server (same user, any database), or undefined. Set, a
 * test database's `connection` and `url` lead through it, with `sharedSession` as the service sets it behind one
 * (src/infra/database-connections.ts), and what needs a session of its own goes to the server directly: the
 * migrations, the app's revocation listener (buildTestApp) and a child server's DATABASE_SESSION_URL. */
export const poolerUrl = process.env.TEST_DATABASE_POOLER_URL || undefined;

export interface TestDatabase {
  readonly kind: 'postgres' | 'pglite';
  readonly connection: DatabaseConfig;
  /** A connection string, for child processes (real Postgres only); through the pooler when there is one. */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

/** `url` with its database replaced by `name`. */
const withDatabase = (url: string, name: string) => url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);

/** True when `connectionString` leads through the pooler. */
export function isThroughPooler(connectionString: string | undefined): boolean {
  return poolerUrl !== undefined && connectionString !== undefined && new URL(connectionString).host === new URL(poolerUrl).host;
}

/** The same database reached directly, for what needs a session of its own; `url` itself when it is direct. */
export function sessionUrlOf(url: string): string {
  return isThroughPooler(url) ? withDatabase(adminUrl, decodeURIComponent(new URL(url).pathname.slice(1))) : url;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // A migrated database is a copy of the migrated template: migrating 70-odd files' databases from scratch was
  // most of the suite's set-up time.
  // TEST_DATABASE_TEMPLATE=off migrates each file's database from scratch instead, as the suite did before the
  // template: it is there to measure what the template saves (test/README.md).
  const migrateEach = options.migrate !== false && process.env.TEST_DATABASE_TEMPLATE === 'off';
  const template = options.migrate === false || migrateEach ? undefined : await migratedTemplate();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    if (template) await createFromTemplate(admin, name, template);
    else await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const directUrl = databaseUrl(name);
  if (migrateEach) await migrate({ connectionString: directUrl });
  const url = poolerUrl === undefined ? directUrl : withDatabase(poolerUrl, name);
  const connection: DatabaseConfig = poolerUrl === undefined ? { connectionString: url } : { connectionString: url, sharedSession: true };
  return {
    kind: 'postgres',
    connection,
    url,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // pg's Pool.end() resolves once it has asked its clients to end, not once their backends are gone; FORCE
        // would then kill a backend mid-goodbye and its client would raise an error nobody listens to. Give the
        // closing connections a moment first (FORCE stays for what a test truly left open).
        for (let waitedMs = 0; waitedMs < 2_000; waitedMs += 50) {
          const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0].n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

const databaseUrl = (name: string): string => withDatabase(adminUrl, name);

/** Any fixed 64-bit number: test runs (also of other checkouts on this cluster) agree on it while building a template. */
const templateLockKey = 7_213_402_118n;

let templateOfThisProcess: Promise<string> | undefined;

/**
 * The name of a database migrated with this checkout's migrations, built once per cluster and migration set: its name
 * carries a digest of every migration's checksum, so a checkout with other migrations gets its own. Built under a
 * name of its own and renamed when complete, under an advisory lock, so parallel test files and runs never see half of
 * one. Nobody connects to it afterwards, which `CREATE DATABASE … TEMPLATE` requires.
 */
function migratedTemplate(): Promise<string> {
  templateOfThisProcess ??= (async () => {
    const digest = createHash('sha256').update(readMigrations().map((migration) => migration.checksum).join(',')).digest('hex');
    const template = `svc_template_${digest.slice(0, 16)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock($1)', [templateLockKey.toString()]);
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rowCount === 0) {
        const building = `${template}_building`;
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${building}`);
        await migrate({ connectionString: databaseUrl(building) });
        await waitUntilUnused(admin, building);
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
      }
    } finally {
      await admin.end();
    }
    return template;
  })();
  return templateOfThisProcess;
}

async function createFromTemplate(admin: pg.Client, name: string, template: string): Promise<void> {
  // Two copies of one template at the same instant can meet each other's short-lived connection to it ("source
  // database is being accessed by other users", 55006); the copy is retried.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt === 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/** Waits until no session is connected to `name` (a closed client's backend leaves a moment after `end()`). */
async function waitUntilUnused(admin: pg.Client, name: string): Promise<void> {
  for (let waitedMs = 0; waitedMs < 5_000; waitedMs += 20) {
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function createEmbeddedTestDatabase(): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pglite-'));
  const embedded = await startEmbeddedPostgres(dataDir);
  await migrate(embedded.connection);
  return {
    kind: 'pglite',
    connection: embedded.connection,
    url: undefined,
    async drop() {
      await embedded.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
