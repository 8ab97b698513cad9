// Fresh databases for integration tests: one per test file on the machine's Postgres (dropped afterwards), or an
// embedded PGlite in a temporary directory. Never a mock.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/infra/embedded-postgres.ts';
import { migrate } from '../../src/infra/migrate.ts';

/** The maintenance database of the test cluster (trust auth on this machine and in CI). */
export const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly kind: 'postgres' | 'pglite';
  readonly connection: pg.PoolConfig;
  /** A connection string, for child processes (real Postgres only). */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const connection = { connectionString: url };
  if (options.migrate !== false) await migrate(connection);
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
