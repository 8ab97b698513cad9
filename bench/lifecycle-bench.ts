// Bench entry (docs/performance.md#engine-lifecycle-throughput-vs-pgbench): engine mutations per second — create, fund,
// evidence, confirm, each one mutation — of whole intent lifecycles against the real service (its own process, real
// Postgres), next to `pgbench` tpcb-like transactions per second at the same client count on the same Postgres, in
// alternating rounds. Then p99 latency at half the peak rate (an open-loop run at 50% of the measured median peak).
// Each row also gives what one unit of work cost the whole machine in its rounds (busy CPU over all processes, the load
// generator and pgbench's client included, per mutation and per pgbench transaction): throughput swings ±15% between
// rounds on a shared machine, and the cost per unit says where the difference comes from (docs/performance.md).
//
// The fund mutation is two HTTP round trips (the 402 challenge, then the paid request) and counts once; its
// latency runs from the first request's send to the second's answer. Latencies are per mutation.
//
//   node --import tsx bench/lifecycle-bench.ts              the rows, as `npm run bench -- lifecycle` prints them
//   node --import tsx bench/lifecycle-bench.ts --profile [dir]   one loaded run under `node --cpu-prof`, summarised
// BENCH_LIFECYCLE_ROUNDS (3) and BENCH_LIFECYCLE_SECONDS (8) size the rounds; BENCH_LIFECYCLE_CLIENTS (16,32) picks
// the client counts (--profile uses the first). BENCH_LIFECYCLE_TENANTS (1) spreads the intents round-robin over that
// many sandbox tenants: a diagnostic (each tenant has its own ledger head), not what the rows are defined on.
import { mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { formatSummary, summarizeCpuProfile } from './cpuprofile-summary.ts';
import { formatRate, median } from './harness.ts';
import {
  allMutationLatencies, closedLoop, EngineClient, IntentFactory, IntentPool, mutations, pacedLoop, percentile, type BenchTenant, type LoadSample,
} from './lifecycle-load.ts';
import { createPgbenchDatabase, type PgbenchDatabase } from './pgbench.ts';
import { cpuWindow, formatCpu, type CpuBreakdown } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { sampleWaitEvents } from './wait-events.ts';

const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const rounds = envNumber('BENCH_LIFECYCLE_ROUNDS', 3);
const secondsPerRound = envNumber('BENCH_LIFECYCLE_SECONDS', 8);
const clientCounts = (process.env['BENCH_LIFECYCLE_CLIENTS'] ?? '16,32').split(',').map(Number);
const tenantCount = envNumber('BENCH_LIFECYCLE_TENANTS', 1);
const warmupSeconds = 2;
const adminUrl = process.env['BENCH_DATABASE_ADMIN_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const p99TargetMs = 50;
/** The service as configured for the bench: the gateway rate limiter stays on (its cost is part of every request)
 * with a per-key quota that a flood from one admin key cannot reach. */
const serviceEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });

const log = (line: string) => process.stderr.write(`  lifecycle: ${line}\n`);
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Sandbox tenants (no recognition proof needed) with an admin key each. */
async function benchTenants(databaseUrl: string): Promise<BenchTenant[]> {
  const db = new Database({ connectionString: databaseUrl, max: 1 });
  try {
    const tenants: BenchTenant[] = [];
    for (let index = 0; index < tenantCount; index += 1) {
      const { tenant, adminKey } = await createTenant(db, tenantCount === 1 ? 'bench' : `bench-${index + 1}`, 'sandbox');
      tenants.push({ tenantId: tenant.tenantId, apiKey: adminKey.apiKey });
    }
    return tenants;
  } finally {
    await db.close();
  }
}

/** Intents for a window at up to three times `mutationsPerSecond`, plus two in flight per client. */
const intentsFor = (mutationsPerSecond: number, seconds: number, clients: number) =>
  Math.ceil(((mutationsPerSecond * 3) / mutations.length) * seconds) + clients * 2;

function assertClean(sample: LoadSample, what: string): void {
  if (sample.errors.length > 0) {
    throw new Error(`lifecycle bench: ${sample.errors.length} failed requests in ${what}; first: ${sample.errors.slice(0, 3).join(' | ')}`);
  }
}

/** Runs a window with at least `count` signed intents ready (signed before it starts); a window that runs out of
 * them (the machine got faster than the estimate) is run again with twice as many. */
async function measuredWindow(pool: IntentPool, count: number, what: string, run: () => Promise<LoadSample>): Promise<LoadSample> {
  for (let attempt = 1; ; attempt += 1) {
    pool.ensure(count);
    const sample = await run();
    assertClean(sample, what);
    if (!sample.exhausted) return sample;
    if (attempt === 4) throw new Error(`lifecycle bench: ${what} ran out of pre-signed intents ${attempt} times`);
    log(`${what} ran out of pre-signed intents at ${Math.round(sample.mutationsPerSecond)} mutations/s; again with more`);
    count *= 2;
  }
}

/** Warm-up (JIT, both pools, the credential cache, the ledger head row); answers the rate to expect next. */
async function warmUp(client: EngineClient, pool: IntentPool, clients: number): Promise<number> {
  const warm = await measuredWindow(pool, 400, 'the warm-up', () => closedLoop(client, pool, { clients, seconds: warmupSeconds }));
  return warm.mutationsPerSecond;
}

function describeSample(sample: LoadSample): string {
  const perKind = mutations.map((kind) => `${kind} p50 ${ms(percentile(sample.latencies[kind], 0.5))} p99 ${ms(percentile(sample.latencies[kind], 0.99))}`);
  const all = allMutationLatencies(sample);
  return `${Math.round(sample.mutationsPerSecond)} mutations/s; per mutation p50 ${ms(percentile(all, 0.5))} p99 ${ms(percentile(all, 0.99))}; ` +
    `per request p50 ${ms(percentile(sample.requestLatencies, 0.5))} p99 ${ms(percentile(sample.requestLatencies, 0.99))}; ${perKind.join('; ')}`;
}

interface AtClients {
  readonly clients: number;
  readonly rates: number[];
  readonly pgbenchTps: number[];
  /** Busy CPU of the whole machine per unit of work in each round, in milliseconds. */
  readonly msPerMutation: number[];
  readonly msPerTransaction: number[];
  /** Mutation latencies of every round, pooled. */
  readonly latencies: number[];
}

async function measureAtClients(service: ServiceProcess, pool: IntentPool, pgbench: PgbenchDatabase, clients: number): Promise<AtClients> {
  const client = new EngineClient(service.baseUrl, clients);
  try {
    let expected = await warmUp(client, pool, clients);
    const result: AtClients = { clients, rates: [], pgbenchTps: [], msPerMutation: [], msPerTransaction: [], latencies: [] };
    for (let round = 0; round < rounds; round += 1) {
      let used: CpuBreakdown | undefined;
      const what = `round ${round + 1} at ${clients} clients`;
      const sample = await measuredWindow(pool, intentsFor(expected, secondsPerRound, clients), what, async () => {
        const cpu = cpuWindow(service.pid);
        const measured = await closedLoop(client, pool, { clients, seconds: secondsPerRound });
        used = cpu.end();
        return measured;
      });
      result.rates.push(sample.mutationsPerSecond);
      result.msPerMutation.push((used!.machine / sample.mutationsPerSecond) * 1000);
      result.latencies.push(...allMutationLatencies(sample));
      expected = Math.max(expected, sample.mutationsPerSecond);
      log(`${clients} clients, round ${round + 1}: ${describeSample(sample)}; ${formatCpu(used!)}`);
      const cpu = cpuWindow(service.pid);
      const baseline = await pgbench.run(clients, secondsPerRound);
      const machine = cpu.end().machine;
      result.pgbenchTps.push(baseline.tps);
      result.msPerTransaction.push((machine / baseline.tps) * 1000);
      log(`${clients} clients, round ${round + 1}: pgbench ${Math.round(baseline.tps)} tps, latency average ${ms(baseline.latencyAverageMs)}; whole machine ${machine.toFixed(2)} cores`);
    }
    return result;
  } finally {
    client.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const database = await createBenchDatabase();
  let pgbench: PgbenchDatabase | undefined;
  let service: ServiceProcess | undefined;
  try {
    pgbench = await createPgbenchDatabase(adminUrl);
    service = await startServiceProcess(serviceEnv(database.url));
    const pool = new IntentPool(new IntentFactory(await benchTenants(database.url)));

    const measured: AtClients[] = [];
    for (const clients of clientCounts) measured.push(await measureAtClients(service, pool, pgbench, clients));
    const rows: BenchRow[] = measured.map((at) => {
      const ratio = median(at.rates) / median(at.pgbenchTps);
      return {
        entry: `lifecycle mutations/s (create, fund, evidence, confirm), ${at.clients} clients${tenantCount > 1 ? `, ${tenantCount} tenants` : ''}, vs pgbench tpcb-like`,
        figure:
          `${formatRate(median(at.rates), 'mutations/s', at.rates)}, p50 ${ms(percentile(at.latencies, 0.5))} p99 ${ms(percentile(at.latencies, 0.99))}; ` +
          `machine CPU ${ms(median(at.msPerMutation))} per mutation`,
        baseline:
          `pgbench tpcb-like, ${at.clients} clients: ${formatRate(median(at.pgbenchTps), 'tps', at.pgbenchTps)}; ` +
          `machine CPU ${ms(median(at.msPerTransaction))} per transaction`,
        ratio,
        target: '>= 0.50',
        met: ratio >= 0.5,
      };
    });

    // Half the peak: the client count with the higher median rate, paced open-loop at 50% of it.
    const peak = measured.reduce((best, at) => (median(at.rates) > median(best.rates) ? at : best));
    const halfRate = median(peak.rates) / 2;
    const client = new EngineClient(service.baseUrl, peak.clients);
    const paced: LoadSample[] = [];
    const servicePid = service.pid;
    try {
      for (let round = 0; round < rounds; round += 1) {
        let used: CpuBreakdown | undefined;
        // Open loop: the intents it needs follow from the rate alone.
        const intents = Math.ceil((halfRate / mutations.length) * secondsPerRound) + 1;
        const sample = await measuredWindow(pool, intents, `paced round ${round + 1}`, async () => {
          const cpu = cpuWindow(servicePid);
          const measured = await pacedLoop(client, pool, { mutationsPerSecond: halfRate, seconds: secondsPerRound });
          used = cpu.end();
          return measured;
        });
        paced.push(sample);
        log(`paced at ${Math.round(halfRate)} mutations/s, round ${round + 1}: ${describeSample(sample)}; ${formatCpu(used!)}`);
      }
    } finally {
      client.close();
    }
    const pacedLatencies = paced.flatMap(allMutationLatencies);
    const pacedRates = paced.map((sample) => sample.mutationsPerSecond);
    const p99 = percentile(pacedLatencies, 0.99);
    rows.push({
      entry: `lifecycle p99 per mutation at half the peak rate (open loop, up to ${peak.clients} connections)`,
      figure: `p99 ${ms(p99)}, p50 ${ms(percentile(pacedLatencies, 0.5))} at ${formatRate(median(pacedRates), 'mutations/s', pacedRates)}`,
      baseline: `peak ${formatRate(median(peak.rates), 'mutations/s')} at ${peak.clients} clients, p99 ${ms(percentile(peak.latencies, 0.99))}`,
      ratio: null,
      target: `p99 < ${p99TargetMs} ms`,
      met: p99 < p99TargetMs,
    });
    return rows;
  } finally {
    await service?.stop();
    await pgbench?.drop();
    await database.drop();
  }
}

/** One loaded closed-loop run under `node --cpu-prof`, with the CPU split and Postgres wait states; prints a summary. */
export async function profile(directory: string, clients: number): Promise<void> {
  const database = await createBenchDatabase();
  const service = await startServiceProcess(serviceEnv(database.url), ['--cpu-prof', `--cpu-prof-dir=${directory}`]);
  let stopped = false;
  try {
    const pool = new IntentPool(new IntentFactory(await benchTenants(database.url)));
    const client = new EngineClient(service.baseUrl, clients);
    try {
      pool.ensure(intentsFor(await warmUp(client, pool, clients), secondsPerRound, clients));
      const waits = await sampleWaitEvents(adminUrl, new URL(database.url).pathname.slice(1));
      const cpu = cpuWindow(service.pid);
      const sample = await closedLoop(client, pool, { clients, seconds: secondsPerRound });
      const used = cpu.end();
      const states = await waits.stop();
      assertClean(sample, 'the profiled run');
      if (sample.exhausted) log('the profiled run ran out of pre-signed intents: its rate is a lower bound');
      log(`profiled run, ${clients} clients, ${tenantCount} tenant(s): ${describeSample(sample)}`);
      log(formatCpu(used));
      log(`postgres backends (share of samples): ${states.map((entry) => `${entry.state} ${entry.percent.toFixed(0)}%`).join('; ')}`);
    } finally {
      client.close();
    }
    await service.stop();
    stopped = true;
    // One file per thread (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile): thread 0 is the main thread; the
    // others are tsx's module-loader worker.
    const written = readdirSync(directory).filter((name) => name.includes(`.${service.pid}.0.`) && name.endsWith('.cpuprofile'));
    const newest = written.map((name) => join(directory, name)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (!newest) throw new Error(`no .cpuprofile in ${directory}; the service printed:\n${service.output()}`);
    console.log(`${newest}\n${formatSummary(summarizeCpuProfile(newest, 30))}`);
  } finally {
    if (!stopped) await service.stop();
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const profileAt = process.argv.indexOf('--profile');
  if (profileAt >= 0) {
    // Absolute: the service resolves --cpu-prof-dir against its own working directory.
    const given = process.argv[profileAt + 1];
    const directory = given ? resolve(given) : mkdtempSync(join(tmpdir(), 'svc-lifecycle-profile-'));
    mkdirSync(directory, { recursive: true });
    await profile(directory, clientCounts[0]!);
  } else {
    for (const row of await run()) console.log(JSON.stringify(row));
  }
}
