// A fresh, migrated database on the machine's Postgres for one bench entry, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../src/infra/migrate.ts';

const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export async function createBenchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `svc_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  await migrate({ connectionString: url });
  return {
    url,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
