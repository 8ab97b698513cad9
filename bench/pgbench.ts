// The Postgres baseline of the lifecycle bench: `pgbench` tpcb-like on a fresh database of the same server,
// initialized at scale 1 and dropped afterwards. Two kinds of run: closed loop (as fast as it goes) for the
// throughput and CPU baselines, and open loop at a fixed rate (`-R`) with its per-transaction log (`-l`) for the
// tail-latency baseline.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dropDatabase, hold, withAdmin } from './guard.ts';

const run = promisify(execFile);

export interface PgbenchResult {
  /** Transactions per second, "without initial connection time". */
  readonly tps: number;
  readonly latencyAverageMs: number;
}

export interface PacedPgbenchResult {
  /** Transactions per second achieved (the rate asked for, when the server keeps up). */
  readonly tps: number;
  /** Every transaction's latency in milliseconds from its log, measured by pgbench from the transaction's
   * scheduled start, so that a stall delays the transactions behind it and shows in their latency. */
  readonly latencies: number[];
}

export interface PgbenchDatabase {
  /** One bounded tpcb-like run: `pgbench -c clients -j 2 -T seconds -n`. */
  run(clients: number, seconds: number): Promise<PgbenchResult>;
  /** One open-loop run at `rate` transactions per second: `pgbench -c clients -j 2 -T seconds -n -R rate -l`. */
  paced(clients: number, rate: number, seconds: number): Promise<PacedPgbenchResult>;
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

/** Runs pgbench; a failure carries what pgbench printed, not just its exit status. */
async function pgbench(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run('pgbench', argv, { env, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as Error & { stderr?: string; code?: unknown };
    if (failed.code === 'ENOENT') throw new Error('pgbench is not installed (the lifecycle bench needs it for its baseline)');
    throw new Error(`pgbench ${argv.slice(-1)[0]} failed: ${(failed.stderr ?? failed.message).trim().split('\n').slice(-3).join(' | ')}`);
  }
}

/** Latencies in ms from pgbench's per-transaction logs: `client_id transaction_no time_us script_no epoch epoch_us
 * [schedule_lag_us]` per line, one file per thread; skipped transactions (only with --latency-limit) are left out. */
export function parseTransactionLogs(directory: string): number[] {
  const latencies: number[] = [];
  for (const file of readdirSync(directory)) {
    for (const line of readFileSync(join(directory, file), 'utf8').split('\n')) {
      const microseconds = Number(line.split(' ')[2]);
      if (line !== '' && Number.isFinite(microseconds)) latencies.push(microseconds / 1000);
    }
  }
  return latencies;
}

export async function createPgbenchDatabase(adminUrl: string): Promise<PgbenchDatabase> {
  const name = `svc_pgbench_${randomBytes(4).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const drop = hold(`database ${name}`, () => dropDatabase(name));
  const { args, env } = connectionArguments(adminUrl);
  try {
    await pgbench([...args, '-i', '-s', '1', '-q', name], env);
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    async run(clients, seconds) {
      const stdout = await pgbench([...args, '-c', String(clients), '-j', '2', '-T', String(seconds), '-n', name], env);
      const tps = /tps = ([\d.]+)/.exec(stdout);
      const latency = /latency average = ([\d.]+) ms/.exec(stdout);
      if (!tps) throw new Error(`pgbench printed no "tps = …":\n${stdout}`);
      return { tps: Number(tps[1]), latencyAverageMs: latency ? Number(latency[1]) : Number.NaN };
    },
    async paced(clients, rate, seconds) {
      const directory = mkdtempSync(join(tmpdir(), 'svc-pgbench-log-'));
      try {
        const stdout = await pgbench(
          [...args, '-c', String(clients), '-j', '2', '-T', String(seconds), '-n', '-R', rate.toFixed(1), '-l', `--log-prefix=${join(directory, 'log')}`, name],
          env,
        );
        const tps = /tps = ([\d.]+)/.exec(stdout);
        const latencies = parseTransactionLogs(directory);
        if (!tps || latencies.length === 0) throw new Error(`pgbench -R logged no transactions:\n${stdout}`);
        return { tps: Number(tps[1]), latencies };
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
    drop,
  };
}
