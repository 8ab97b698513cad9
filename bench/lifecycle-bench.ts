// Bench entry (docs/performance.md#engine-lifecycle-vs-pgbench): whole intent lifecycles (create, fund, evidence,
// confirm: four engine mutations) against the real service in its own process on the machine's Postgres, next to
// `pgbench` tpcb-like on the same Postgres at the same client count, in alternating rounds. Per client count it
// gives three rows, each a ratio to pgbench measured in the same run:
//   - throughput: mutations/s over pgbench's tps, closed loop (target >= 0.5);
//   - tail latency: at half the lifecycle's peak rate, open loop, p99 per mutation over pgbench's p99 per transaction
//     at the same rate and client count (`pgbench -R <rate> -l`, from its per-transaction log) (target <= 3);
//   - machine CPU per mutation over machine CPU per pgbench transaction, in the closed-loop rounds (target <= 2).
// And one row with the Postgres round trips, statements and transactions per mutation (lifecycle-counts.ts), counted
// first, in a service process of its own.
//
// The fund mutation is two HTTP round trips (the 402 challenge, then the paid request) and counts once; its
// latency runs from the first request's send to the second's answer. Latencies are per mutation.
//
//   node --import tsx bench/lifecycle-bench.ts [--quick]      the rows, as `npm run bench -- lifecycle` prints them
//   node --import tsx bench/lifecycle-bench.ts --profile [dir]   one loaded run under `node --cpu-prof`, summarised
// `--quick` (or BENCH_QUICK=1) runs one short round of each kind: a smoke test of the instrument, not a measurement.
// BENCH_LIFECYCLE_ROUNDS (3), BENCH_LIFECYCLE_SECONDS (8) and BENCH_LIFECYCLE_WARMUP_SECONDS (2) size the rounds
// (a profile on a slow machine wants a longer warm-up: code still being compiled shows up as the service's cost);
// BENCH_LIFECYCLE_CLIENTS (16,32) picks the client counts (--profile uses the first). BENCH_LIFECYCLE_TENANTS (1)
// spreads the intents round-robin over that many sandbox tenants: a diagnostic (each tenant has its own ledger
// head), not what the rows are defined on. BENCH_LIFECYCLE_ROWS=groups runs only the rows that need no pgbench
// (one tenant vs 16, group commit on vs off, the counts): a diagnostic of group commit.
import { mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { formatSummary, summarizeCpuProfile, type SampleWindow } from './cpuprofile-summary.ts';
import { abortBench, adminUrl, installGuard, postgresStartedAt } from './guard.ts';
import { formatRate, median } from './harness.ts';
import { countPerMutation, formatCommands, formatCounts, type Counts } from './lifecycle-counts.ts';
import {
  allMutationLatencies, closedLoop, EngineClient, IntentFactory, IntentPool, mutations, pacedLoop, percentile, requestSteps, type BenchTenant,
  type LoadSample,
} from './lifecycle-load.ts';
import { quick } from './options.ts';
import { createPgbenchDatabase, type PgbenchDatabase } from './pgbench.ts';
import { cpuWindow, formatCpu, type CpuBreakdown } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { sampleWaitEvents } from './wait-events.ts';

const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const rounds = quick ? 1 : envNumber('BENCH_LIFECYCLE_ROUNDS', 3);
const secondsPerRound = quick ? 3 : envNumber('BENCH_LIFECYCLE_SECONDS', 8);
const warmupSeconds = quick ? 1 : envNumber('BENCH_LIFECYCLE_WARMUP_SECONDS', 2);
const clientCounts = (process.env['BENCH_LIFECYCLE_CLIENTS'] ?? '16,32').split(',').map(Number);
const tenantCount = envNumber('BENCH_LIFECYCLE_TENANTS', 1);
/** The counting phase: intents run one at a time, then a closed loop of this many seconds. */
const countedIntents = quick ? 5 : 20;
const countedSeconds = quick ? 2 : 4;

/** The targets (docs/performance.md): each a ratio to pgbench measured in the same run, or (one tenant) to the same
 * load spread over spreadTenantCount tenants. */
const throughputRatioMin = 1;
const tailLatencyRatioMax = 3;
const cpuRatioMax = 1.5;
const oneTenantRatioMin = 0.8;
/** The tenants the one-tenant row spreads its load over, and its clients. */
const spreadTenantCount = 16;
const spreadClients = 16;

/** The service as configured for the bench: the gateway rate limiter stays on (its cost is part of every request)
 * with a per-key quota that a flood from one admin key cannot reach. */
const serviceEnv = (databaseUrl: string, groupCommit: 'on' | 'off' = 'on') => ({
  DATABASE_URL: databaseUrl,
  SVC_RATE_LIMIT_PER_MINUTE: '1000000000',
  SVC_GROUP_COMMIT: groupCommit,
});

const log = (line: string) => process.stderr.write(`  lifecycle: ${line}\n`);
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Sandbox tenants (no recognition proof needed) with an admin key each. */
async function benchTenants(databaseUrl: string, count = tenantCount, prefix = 'bench'): Promise<BenchTenant[]> {
  const db = new Database({ connectionString: databaseUrl, max: 1 });
  try {
    const tenants: BenchTenant[] = [];
    for (let index = 0; index < count; index += 1) {
      const { tenant, adminKey } = await createTenant(db, count === 1 ? prefix : `${prefix}-${index + 1}`, 'sandbox');
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

/** What one unit of work cost each party, in ms of CPU: cores used over the window divided by units per second. */
interface CostPerUnit {
  readonly machine: number;
  readonly service: number;
  readonly postgres: number;
  readonly loadGenerator: number;
  /** pgbench's own client, in its rounds. */
  readonly pgbenchClient: number;
  /** The rest of the machine: anything else running (on an idle machine, close to zero). */
  readonly other: number;
}

const costPerUnit = (cpu: CpuBreakdown, unitsPerSecond: number): CostPerUnit => {
  const per = (cores: number) => (cores / unitsPerSecond) * 1000;
  return {
    machine: per(cpu.machine),
    service: per(cpu.service),
    postgres: per(cpu.postgres),
    loadGenerator: per(cpu.loadGenerator),
    pgbenchClient: per(cpu.exitedChildren),
    other: per(cpu.machine - cpu.service - cpu.postgres - cpu.loadGenerator - cpu.exitedChildren),
  };
};

/** The median of each party's cost over the rounds. */
const medianCost = (costs: readonly CostPerUnit[]): CostPerUnit => ({
  machine: median(costs.map((cost) => cost.machine)),
  service: median(costs.map((cost) => cost.service)),
  postgres: median(costs.map((cost) => cost.postgres)),
  loadGenerator: median(costs.map((cost) => cost.loadGenerator)),
  pgbenchClient: median(costs.map((cost) => cost.pgbenchClient)),
  other: median(costs.map((cost) => cost.other)),
});

interface AtClients {
  readonly clients: number;
  /** Closed loop. */
  readonly rates: number[];
  readonly pgbenchTps: number[];
  readonly mutationCosts: CostPerUnit[];
  readonly transactionCosts: CostPerUnit[];
  /** Mutation latencies of every closed-loop round, pooled. */
  readonly latencies: number[];
  /** Open loop at half the median closed-loop rate, for both. */
  readonly pacedRate: number;
  readonly pacedRates: number[];
  readonly pacedLatencies: number[];
  readonly pacedPgbenchTps: number[];
  readonly pacedPgbenchLatencies: number[];
}

/** Cores that other processes took from a round: above this, the machine was not idle and the CPU row (a ratio of
 * whole-machine costs) says more about the neighbours than about the engine. */
const outsideCoresMax = 0.15;

function warnIfBusy(cpu: CpuBreakdown, what: string): void {
  const outside = cpu.machine - cpu.service - cpu.postgres - cpu.loadGenerator - cpu.exitedChildren;
  if (outside > outsideCoresMax) log(`warning: other processes used ${outside.toFixed(2)} cores during ${what}: the machine is not idle, so its figures (the CPU row above all) are not a measurement`);
}

/** Closed-loop rounds, each lifecycle round followed by a pgbench round: rates and what a unit cost. */
async function closedRounds(service: ServiceProcess, client: EngineClient, pool: IntentPool, pgbench: PgbenchDatabase, at: AtClients): Promise<void> {
  const { clients } = at;
  let expected = await warmUp(client, pool, clients);
  for (let round = 0; round < rounds; round += 1) {
    let used: CpuBreakdown | undefined;
    const what = `round ${round + 1} at ${clients} clients`;
    const sample = await measuredWindow(pool, intentsFor(expected, secondsPerRound, clients), what, async () => {
      const cpu = cpuWindow(service.pid);
      const measured = await closedLoop(client, pool, { clients, seconds: secondsPerRound });
      used = cpu.end();
      return measured;
    });
    at.rates.push(sample.mutationsPerSecond);
    at.mutationCosts.push(costPerUnit(used!, sample.mutationsPerSecond));
    at.latencies.push(...allMutationLatencies(sample));
    expected = Math.max(expected, sample.mutationsPerSecond);
    log(`${what}: ${describeSample(sample)}; ${formatCpu(used!)}`);
    warnIfBusy(used!, what);
    const cpu = cpuWindow(service.pid);
    const baseline = await pgbench.run(clients, secondsPerRound);
    const pgbenchUsed = cpu.end();
    at.pgbenchTps.push(baseline.tps);
    at.transactionCosts.push(costPerUnit(pgbenchUsed, baseline.tps));
    log(`${what}: pgbench ${Math.round(baseline.tps)} tps, latency average ${ms(baseline.latencyAverageMs)}; ${formatCpu(pgbenchUsed)}`);
    warnIfBusy(pgbenchUsed, `${what} (pgbench)`);
  }
}

/** Open-loop rounds at `at.pacedRate`, each lifecycle round followed by `pgbench -R` at the same rate and clients. */
async function pacedRounds(service: ServiceProcess, client: EngineClient, pool: IntentPool, pgbench: PgbenchDatabase, at: AtClients): Promise<void> {
  const { clients, pacedRate } = at;
  for (let round = 0; round < rounds; round += 1) {
    let used: CpuBreakdown | undefined;
    const what = `paced round ${round + 1} at ${Math.round(pacedRate)} mutations/s, ${clients} connections`;
    // Open loop: the intents it needs follow from the rate alone, with room for the randomness of Poisson arrivals.
    const intents = Math.ceil((pacedRate / mutations.length) * secondsPerRound * 1.5) + 10;
    const sample = await measuredWindow(pool, intents, what, async () => {
      const cpu = cpuWindow(service.pid);
      const measured = await pacedLoop(client, pool, { mutationsPerSecond: pacedRate, seconds: secondsPerRound });
      used = cpu.end();
      return measured;
    });
    at.pacedRates.push(sample.mutationsPerSecond);
    at.pacedLatencies.push(...allMutationLatencies(sample));
    log(`${what}: ${describeSample(sample)}; ${formatCpu(used!)}`);
    const baseline = await pgbench.paced(clients, pacedRate, secondsPerRound);
    at.pacedPgbenchTps.push(baseline.tps);
    at.pacedPgbenchLatencies.push(...baseline.latencies);
    log(`${what}: pgbench -R ${Math.round(pacedRate)}: ${Math.round(baseline.tps)} tps, p50 ${ms(percentile(baseline.latencies, 0.5))} p99 ${ms(percentile(baseline.latencies, 0.99))}`);
  }
}

async function measureAtClients(service: ServiceProcess, pool: IntentPool, pgbench: PgbenchDatabase, clients: number): Promise<AtClients> {
  const client = new EngineClient(service.baseUrl, clients);
  try {
    const closed = { clients, rates: [], pgbenchTps: [], mutationCosts: [], transactionCosts: [], latencies: [] };
    const paced = { pacedRates: [], pacedLatencies: [], pacedPgbenchTps: [], pacedPgbenchLatencies: [] };
    const at: AtClients = { ...closed, ...paced, pacedRate: 0 };
    await closedRounds(service, client, pool, pgbench, at);
    const withRate: AtClients = { ...at, pacedRate: median(at.rates) / 2 };
    await pacedRounds(service, client, pool, pgbench, withRate);
    return withRate;
  } finally {
    client.close();
  }
}

const formatCost = (cost: CostPerUnit, pgbenchRound: boolean) =>
  pgbenchRound
    ? `machine CPU ${ms(cost.machine)} per transaction (Postgres ${cost.postgres.toFixed(2)}, pgbench's client ${cost.pgbenchClient.toFixed(2)}, ` +
      `the rest ${(cost.machine - cost.postgres - cost.pgbenchClient).toFixed(2)})`
    : `machine CPU ${ms(cost.machine)} per mutation (service ${cost.service.toFixed(2)}, Postgres ${cost.postgres.toFixed(2)}, ` +
      `load generator ${cost.loadGenerator.toFixed(2)}, the rest ${cost.other.toFixed(2)})`;

/** The three rows of one client count. */
function rowsAt(at: AtClients): { throughput: BenchRow; tail: BenchRow; cpu: BenchRow } {
  const tenants = tenantCount > 1 ? `, ${tenantCount} tenants` : '';
  const throughput = median(at.rates) / median(at.pgbenchTps);
  const p99 = percentile(at.pacedLatencies, 0.99);
  const pgbenchP99 = percentile(at.pacedPgbenchLatencies, 0.99);
  const mutationCost = medianCost(at.mutationCosts);
  const transactionCost = medianCost(at.transactionCosts);
  const cpu = mutationCost.machine / transactionCost.machine;
  return {
    throughput: {
      entry: `lifecycle mutations/s (create, fund, evidence, confirm), ${at.clients} clients${tenants}, vs pgbench tpcb-like`,
      figure: `${formatRate(median(at.rates), 'mutations/s', at.rates)}, p50 ${ms(percentile(at.latencies, 0.5))} p99 ${ms(percentile(at.latencies, 0.99))}`,
      baseline: `pgbench tpcb-like, ${at.clients} clients: ${formatRate(median(at.pgbenchTps), 'tps', at.pgbenchTps)}`,
      ratio: throughput,
      target: `>= ${throughputRatioMin.toFixed(2)}`,
      met: throughput >= throughputRatioMin,
    },
    tail: {
      entry: `lifecycle p99 per mutation at half its peak rate (open loop), ${at.clients} connections${tenants}, vs pgbench -R at the same rate`,
      figure: `p99 ${ms(p99)}, p50 ${ms(percentile(at.pacedLatencies, 0.5))} at ${formatRate(median(at.pacedRates), 'mutations/s', at.pacedRates)}`,
      baseline: `pgbench -R ${Math.round(at.pacedRate)} -c ${at.clients}: p99 ${ms(pgbenchP99)}, p50 ${ms(percentile(at.pacedPgbenchLatencies, 0.5))} at ${formatRate(median(at.pacedPgbenchTps), 'tps')}`,
      ratio: p99 / pgbenchP99,
      target: `<= ${tailLatencyRatioMax.toFixed(2)}`,
      met: p99 / pgbenchP99 <= tailLatencyRatioMax,
    },
    cpu: {
      entry: `machine CPU per lifecycle mutation, ${at.clients} clients${tenants}, vs per pgbench transaction (closed-loop rounds)`,
      figure: formatCost(mutationCost, false),
      baseline: formatCost(transactionCost, true),
      ratio: cpu,
      target: `<= ${cpuRatioMax.toFixed(2)}`,
      met: cpu <= cpuRatioMax,
    },
  };
}

/** The counts rows: one intent at a time, and under load at the first client count, with group commit (as the
 * service runs) and, for the record of what it buys, without. */
async function countsRows(databaseUrl: string, pool: IntentPool): Promise<BenchRow[]> {
  const transactions = (counts: Counts) => ((counts.byCommand['COMMIT'] ?? 0) + (counts.byCommand['ROLLBACK'] ?? 0)).toFixed(2);
  const rows: BenchRow[] = [];
  for (const groupCommit of ['on', 'off'] as const) {
    const counted = await countPerMutation(serviceEnv(databaseUrl, groupCommit), pool, { intents: countedIntents, clients: clientCounts[0]!, seconds: countedSeconds });
    const label = `group commit ${groupCommit}`;
    for (const step of requestSteps) log(`${label}: counted, one intent at a time, ${step}: ${formatCounts(counted.perRequest[step])}; ${formatCommands(counted.perRequest[step])}`);
    log(`${label}: counted per mutation, one intent at a time: ${formatCounts(counted.sequential)}; ${formatCommands(counted.sequential)}`);
    log(`${label}: counted per mutation, ${counted.clients} clients: ${formatCounts(counted.underLoad)}; ${formatCommands(counted.underLoad)}`);
    rows.push({
      entry: `Postgres round trips, statements and transactions per lifecycle mutation (counted at the protocol), ${label}`,
      figure: `one intent at a time: ${formatCounts(counted.sequential)}, ${transactions(counted.sequential)} transactions`,
      baseline: `${counted.clients} clients: ${formatCounts(counted.underLoad)}, ${transactions(counted.underLoad)} transactions`,
      ratio: null,
      target: 'printed (test/engine/round-trips.test.ts pins the round trips)',
      met: null,
    });
  }
  return rows;
}

/** Alternating closed-loop rounds of `sides` (each a service and a pool of intents) at `clients`: each side's rates
 * and machine CPU per mutation. */
async function alternatingRounds(
  sides: ReadonlyArray<{ readonly name: string; readonly service: ServiceProcess; readonly pool: IntentPool }>,
  clients: number,
): Promise<Array<{ rates: number[]; costs: CostPerUnit[] }>> {
  const engines = sides.map((side) => new EngineClient(side.service.baseUrl, clients));
  try {
    const results = sides.map(() => ({ rates: [] as number[], costs: [] as CostPerUnit[], expected: 0 }));
    for (const [index, side] of sides.entries()) results[index]!.expected = await warmUp(engines[index]!, side.pool, clients);
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, side] of sides.entries()) {
        const result = results[index]!;
        let used: CpuBreakdown | undefined;
        const what = `${side.name}, round ${round + 1} at ${clients} clients`;
        const sample = await measuredWindow(side.pool, intentsFor(result.expected, secondsPerRound, clients), what, async () => {
          const cpu = cpuWindow(side.service.pid);
          const measured = await closedLoop(engines[index]!, side.pool, { clients, seconds: secondsPerRound });
          used = cpu.end();
          return measured;
        });
        result.rates.push(sample.mutationsPerSecond);
        result.costs.push(costPerUnit(used!, sample.mutationsPerSecond));
        result.expected = Math.max(result.expected, sample.mutationsPerSecond);
        log(`${what}: ${describeSample(sample)}; ${formatCpu(used!)}`);
        warnIfBusy(used!, what);
      }
    }
    return results;
  } finally {
    for (const engine of engines) engine.close();
  }
}

/** One tenant against the same load spread over spreadTenantCount tenants, same service, alternating rounds: the
 * tenant's ledger head no longer bounds it. */
async function oneTenantRow(service: ServiceProcess, tenants: readonly BenchTenant[]): Promise<BenchRow> {
  const [one, spread] = await alternatingRounds(
    [
      { name: 'one tenant', service, pool: new IntentPool(new IntentFactory(tenants.slice(0, 1))) },
      { name: `${tenants.length} tenants`, service, pool: new IntentPool(new IntentFactory(tenants)) },
    ],
    spreadClients,
  );
  const ratio = median(one!.rates) / median(spread!.rates);
  return {
    entry: `lifecycle mutations/s, one tenant vs the same load over ${tenants.length} tenants, ${spreadClients} clients`,
    figure: `one tenant: ${formatRate(median(one!.rates), 'mutations/s', one!.rates)}, machine CPU ${ms(medianCost(one!.costs).machine)} per mutation`,
    baseline: `${tenants.length} tenants: ${formatRate(median(spread!.rates), 'mutations/s', spread!.rates)}, machine CPU ${ms(medianCost(spread!.costs).machine)} per mutation`,
    ratio,
    target: `>= ${oneTenantRatioMin.toFixed(2)}`,
    met: ratio >= oneTenantRatioMin,
  };
}

/** The service with group commit against the same service without it (SVC_GROUP_COMMIT=off), one tenant, same
 * database, alternating rounds: what group commit buys, printed for the record. */
async function groupCommitRow(service: ServiceProcess, withoutGroups: ServiceProcess, pool: IntentPool): Promise<BenchRow> {
  const [on, off] = await alternatingRounds(
    [
      { name: 'group commit on', service, pool },
      { name: 'group commit off', service: withoutGroups, pool },
    ],
    spreadClients,
  );
  const costOn = medianCost(on!.costs);
  const costOff = medianCost(off!.costs);
  const describe = (rates: number[], cost: CostPerUnit) =>
    `${formatRate(median(rates), 'mutations/s', rates)}, machine CPU ${ms(cost.machine)} per mutation (service ${cost.service.toFixed(2)}, Postgres ${cost.postgres.toFixed(2)})`;
  return {
    entry: `lifecycle mutations/s, group commit on vs off (SVC_GROUP_COMMIT), one tenant, ${spreadClients} clients`,
    figure: `on: ${describe(on!.rates, costOn)}`,
    baseline: `off: ${describe(off!.rates, costOff)}`,
    ratio: median(on!.rates) / median(off!.rates),
    target: 'printed',
    met: null,
  };
}

export async function run(): Promise<BenchRow[]> {
  const startedAt = await postgresStartedAt();
  const database = await createBenchDatabase();
  let pgbench: PgbenchDatabase | undefined;
  let service: ServiceProcess | undefined;
  let withoutGroups: ServiceProcess | undefined;
  try {
    pgbench = await createPgbenchDatabase(adminUrl);
    const pool = new IntentPool(new IntentFactory(await benchTenants(database.url)));
    const spreadTenants = [...(await benchTenants(database.url, 1, 'bench-one')), ...(await benchTenants(database.url, spreadTenantCount - 1, 'bench-spread'))];
    // Counted first, in a service process of its own: a short phase that fails fast if the service does.
    const counts = await countsRows(database.url, pool);

    service = await startServiceProcess(serviceEnv(database.url));
    const measured: AtClients[] = [];
    const groupsOnly = process.env['BENCH_LIFECYCLE_ROWS'] === 'groups';
    if (!groupsOnly) for (const clients of clientCounts) measured.push(await measureAtClients(service, pool, pgbench, clients));
    const oneTenant = await oneTenantRow(service, spreadTenants);
    withoutGroups = await startServiceProcess(serviceEnv(database.url, 'off'));
    const groupCommit = await groupCommitRow(service, withoutGroups, pool);

    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the lifecycle bench: its figures are void');
    const rows = measured.map(rowsAt);
    return [...rows.map((row) => row.throughput), ...rows.map((row) => row.tail), ...rows.map((row) => row.cpu), oneTenant, groupCommit, ...counts];
  } finally {
    await withoutGroups?.stop();
    await service?.stop();
    await pgbench?.drop();
    await database.drop();
  }
}

/** One loaded closed-loop run under `node --cpu-prof`, with the CPU split and Postgres wait states; prints a summary. */
export async function profile(directory: string, clients: number): Promise<void> {
  const database = await createBenchDatabase();
  const service = await startServiceProcess(serviceEnv(database.url), ['--cpu-prof', `--cpu-prof-dir=${directory}`]);
  let window: SampleWindow | undefined;
  try {
    const pool = new IntentPool(new IntentFactory(await benchTenants(database.url)));
    const client = new EngineClient(service.baseUrl, clients);
    try {
      pool.ensure(intentsFor(await warmUp(client, pool, clients), secondsPerRound, clients));
      const waits = await sampleWaitEvents(adminUrl, database.name);
      const cpu = cpuWindow(service.pid);
      // The profile's timestamps are µs of the machine's monotonic clock, as process.hrtime reads it: the summary
      // counts this window only, not the start-up and warm-up before it.
      const fromUs = Number(process.hrtime.bigint() / 1000n);
      const sample = await closedLoop(client, pool, { clients, seconds: secondsPerRound });
      window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
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
    // One file per thread (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile): thread 0 is the main thread; the
    // others are tsx's module-loader worker.
    const written = readdirSync(directory).filter((name) => name.includes(`.${service.pid}.0.`) && name.endsWith('.cpuprofile'));
    const newest = written.map((name) => join(directory, name)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (!newest) throw new Error(`no .cpuprofile in ${directory}; the service printed:\n${service.output()}`);
    console.log(`${newest}\n${formatSummary(summarizeCpuProfile(newest, 30, window))}`);
  } finally {
    await service.stop();
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installGuard();
  const profileAt = process.argv.indexOf('--profile');
  try {
    if (profileAt >= 0) {
      // Absolute: the service resolves --cpu-prof-dir against its own working directory.
      const given = process.argv[profileAt + 1];
      const directory = given && !given.startsWith('--') ? resolve(given) : mkdtempSync(join(tmpdir(), 'svc-lifecycle-profile-'));
      mkdirSync(directory, { recursive: true });
      await profile(directory, clientCounts[0]!);
    } else {
      for (const row of await run()) console.log(JSON.stringify(row));
    }
  } catch (error) {
    await abortBench(error);
  }
}
