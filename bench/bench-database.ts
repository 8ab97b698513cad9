// A fresh, migrated database on the machine's Postgres for one bench entry, dropped afterwards (or by the guard,
// should the run abort first).
import { randomBytes } from 'node:crypto';
import { migrate } from '../src/infra/migrate.ts';
import { adminUrl, dropDatabase, hold, withAdmin } from './guard.ts';

export async function createBenchDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `svc_bench_${randomBytes(4).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const drop = hold(`database ${name}`, () => dropDatabase(name));
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  try {
    await migrate({ connectionString: url });
  } catch (error) {
    await drop();
    throw error;
  }
  return { url, name, drop };
}
