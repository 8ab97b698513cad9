// The Postgres baseline of the lifecycle bench: `pgbench` tpcb-like on a fresh database of the same server,
// initialized at scale 1 and dropped afterwards.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface PgbenchResult {
  /** Transactions per second, "without initial connection time". */
  readonly tps: number;
  readonly latencyAverageMs: number;
}

export interface PgbenchDatabase {
  /** One bounded tpcb-like run: `pgbench -c clients -j 2 -T seconds -n`. */
  run(clients: number, seconds: number): Promise<PgbenchResult>;
  drop(): Promise<void>;
}

/** libpq's connection arguments from a postgresql:// URL (password through PGPASSWORD, never argv). */
function connectionArguments(adminUrl: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const url = new URL(adminUrl);
  const args = ['-h', url.hostname || '127.0.0.1', '-p', url.port || '5432'];
  if (url.username) args.push('-U', decodeURIComponent(url.username));
  const env = { ...process.env };
  if (url.password) env['PGPASSWORD'] = decodeURIComponent(url.password);
  return { args, env };
}

export async function createPgbenchDatabase(adminUrl: string): Promise<PgbenchDatabase> {
  const name = `svc_pgbench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const { args, env } = connectionArguments(adminUrl);
  const drop = async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
  try {
    await run('pgbench', [...args, '-i', '-s', '1', '-q', name], { env });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    async run(clients, seconds) {
      const { stdout } = await run('pgbench', [...args, '-c', String(clients), '-j', '2', '-T', String(seconds), '-n', name], { env });
      const tps = /tps = ([\d.]+)/.exec(stdout);
      const latency = /latency average = ([\d.]+) ms/.exec(stdout);
      if (!tps) throw new Error(`pgbench printed no "tps = …":\n${stdout}`);
      return { tps: Number(tps[1]), latencyAverageMs: latency ? Number(latency[1]) : Number.NaN };
    },
    drop,
  };
}
