// Bench entry (docs/performance.md): what issuing receipts costs the engine lifecycle. Two service processes, each on
// a fresh migrated database of its own: the service as it runs (receipts signed and logged at every terminal
// transition) and no-receipts-server.ts, the same service composed without the receipt effect (the standing effect
// stays in both). Closed-loop lifecycle rounds at 16 clients, with the lifecycle entry's load generator, alternate
// between them; the row is service + Postgres CPU per engine mutation with receipts over without, target <= 1.15
// (whole-machine CPU per mutation is printed beside it: on a busy machine it carries the neighbours too). A second row
// counts, of Postgres, only the backends connected to the side's own database, so that other work on the machine's
// Postgres (a test suite, another entry) cannot land in it. For the record, a third row: tree heads signed during the
// receipts rounds against receipts issued in them, read from the database, to show that signing is batched (one head
// per tenant per pass).
//
//   node --import tsx bench/receipts-bench.ts [--quick]
// `--quick` runs one short round of each: a smoke test of the instrument, not a measurement.
import pg from 'pg';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard, postgresStartedAt } from './guard.ts';
import { formatRate, median, spreadPercent } from './harness.ts';
import { closedLoop, EngineClient, IntentFactory, IntentPool, mutations, type LoadSample } from './lifecycle-load.ts';
import { quick } from './options.ts';
import { cpuWindow, formatCpu, processCpuSeconds, type CpuBreakdown } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const rounds = quick ? 1 : 5;
const secondsPerRound = quick ? 3 : 8;
const warmupSeconds = quick ? 1 : 3;
const clients = 16;
const cpuRatioMax = 1.15;
/** Cores other processes may take from a round before its figures say more about them than about the service. */
const outsideCoresMax = 0.15;

const serviceEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });
const log = (line: string) => process.stderr.write(`  receipts: ${line}\n`);

/** The pids of the Postgres backends connected to `databaseUrl`'s database (the side's service pool, autovacuum). */
async function backendPids(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

/**
 * CPU of the backends serving one side's database over a window: the figure other work on the machine's Postgres
 * (another entry, a test suite) cannot land in, unlike the all-Postgres reading. A backend that starts during the
 * window counts whole (a pool that closed its idle connections while the other side ran opens new ones); one that
 * exits during it is lost; shared background processes (WAL writer, checkpointer) are left out of both sides alike.
 */
export async function databaseCpuWindow(databaseUrl: string): Promise<{ end(): Promise<number> }> {
  const startedAt = performance.now();
  const before = new Map((await backendPids(databaseUrl)).map((pid) => [pid, processCpuSeconds(pid)] as const));
  return {
    async end() {
      const seconds = (performance.now() - startedAt) / 1000;
      let used = 0;
      for (const pid of new Set([...before.keys(), ...(await backendPids(databaseUrl))])) {
        const now = processCpuSeconds(pid);
        if (Number.isFinite(now)) used += now - (before.get(pid) ?? 0);
      }
      return used / seconds;
    },
  };
}

interface Side {
  readonly name: string;
  readonly databaseUrl: string;
  readonly service: ServiceProcess;
  readonly client: EngineClient;
  readonly pool: IntentPool;
  /** Service + Postgres CPU in ms per mutation, one per round: the row's figure. */
  readonly costs: number[];
  /** Whole-machine CPU in ms per mutation, one per round: for the record (neighbours land in it). */
  readonly machineCosts: number[];
  /** Service + the side's own Postgres backends, in ms per mutation, one per round: neighbours cannot land in it. */
  readonly ownCosts: number[];
  readonly rates: number[];
}

async function benchTenantPool(databaseUrl: string): Promise<IntentPool> {
  const db = new Database({ connectionString: databaseUrl, max: 1 });
  try {
    const { tenant, adminKey } = await createTenant(db, 'bench', 'sandbox');
    return new IntentPool(new IntentFactory([{ tenantId: tenant.tenantId, apiKey: adminKey.apiKey }]));
  } finally {
    await db.close();
  }
}

/** A closed-loop window with enough pre-signed intents (signed before it starts); doubled if it ran out. */
async function window(side: Side, seconds: number, expected: number, measure: boolean): Promise<{ sample: LoadSample; cpu?: CpuBreakdown; backends?: number }> {
  let count = Math.ceil(((expected * 3) / mutations.length) * seconds) + clients * 2;
  for (let attempt = 1; ; attempt += 1) {
    side.pool.ensure(count);
    const own = measure ? await databaseCpuWindow(side.databaseUrl) : undefined;
    const cpu = measure ? cpuWindow(side.service.pid) : undefined;
    const sample = await closedLoop(side.client, side.pool, { clients, seconds });
    const used = cpu?.end();
    const backends = await own?.end();
    if (sample.errors.length > 0) {
      throw new Error(`receipts bench: ${sample.errors.length} failed requests ${side.name}; first: ${sample.errors.slice(0, 3).join(' | ')}`);
    }
    if (!sample.exhausted) return used ? { sample, cpu: used, backends: backends! } : { sample };
    if (attempt === 4) throw new Error(`receipts bench: ran out of pre-signed intents ${side.name} ${attempt} times`);
    count *= 2;
  }
}

/** Tree heads signed and receipts issued so far, in the receipts side's database. */
async function logCounts(databaseUrl: string): Promise<{ heads: number; receipts: number; leaves: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ heads: string; receipts: string; leaves: string }>(
      `SELECT (SELECT count(*) FROM transparency_tree_heads) AS heads, (SELECT count(*) FROM protocol_receipts) AS receipts,
              (SELECT count(*) FROM transparency_log_leaves) AS leaves`,
    );
    const row = rows[0]!;
    return { heads: Number(row.heads), receipts: Number(row.receipts), leaves: Number(row.leaves) };
  } finally {
    await client.end();
  }
}

const formatSide = (side: Side) =>
  `${median(side.costs).toFixed(2)} ms service + Postgres CPU per mutation (spread ${spreadPercent(side.costs).toFixed(0)}%; whole machine ` +
  `${median(side.machineCosts).toFixed(2)} ms), ${formatRate(median(side.rates), 'mutations/s', side.rates)}`;

const formatOwn = (side: Side) =>
  `${median(side.ownCosts).toFixed(2)} ms service + own backends CPU per mutation (spread ${spreadPercent(side.ownCosts).toFixed(0)}%)`;

export async function run(): Promise<BenchRow[]> {
  const startedAt = await postgresStartedAt();
  const withDb = await createBenchDatabase();
  const withoutDb = await createBenchDatabase();
  const sides: Side[] = [];
  try {
    const starts: Array<[string, string, string]> = [
      ['with receipts', withDb.url, 'src/server.ts'],
      ['without receipts', withoutDb.url, 'bench/no-receipts-server.ts'],
    ];
    for (const [name, databaseUrl, script] of starts) {
      const pool = await benchTenantPool(databaseUrl);
      const service = await startServiceProcess(serviceEnv(databaseUrl), [], script);
      const client = new EngineClient(service.baseUrl, clients);
      sides.push({ name, databaseUrl, service, client, pool, costs: [], machineCosts: [], ownCosts: [], rates: [] });
    }
    const [withReceipts, withoutReceipts] = sides as [Side, Side];
    let expected = 400;
    for (const side of sides) {
      const { sample } = await window(side, warmupSeconds, expected, false);
      expected = Math.max(expected, sample.mutationsPerSecond);
    }
    const before = await logCounts(withReceipts.databaseUrl);
    let busy = false;
    for (let round = 0; round < rounds; round += 1) {
      // Alternate which side goes first, so that a drift of the machine falls on both.
      const order = round % 2 === 0 ? [withReceipts, withoutReceipts] : [withoutReceipts, withReceipts];
      for (const side of order) {
        const { sample, cpu, backends } = await window(side, secondsPerRound, expected, true);
        side.rates.push(sample.mutationsPerSecond);
        side.costs.push(((cpu!.service + cpu!.postgres) / sample.mutationsPerSecond) * 1000);
        side.machineCosts.push((cpu!.machine / sample.mutationsPerSecond) * 1000);
        side.ownCosts.push(((cpu!.service + backends!) / sample.mutationsPerSecond) * 1000);
        expected = Math.max(expected, sample.mutationsPerSecond);
        log(`round ${round + 1} ${side.name}: ${Math.round(sample.mutationsPerSecond)} mutations/s; ${formatCpu(cpu!)}; its own backends ${backends!.toFixed(2)}`);
        const outside = cpu!.machine - cpu!.service - cpu!.postgres - cpu!.loadGenerator;
        if (outside > outsideCoresMax) {
          busy = true;
          log(`warning: other processes used ${outside.toFixed(2)} cores during round ${round + 1} ${side.name}: the machine is not idle, so the ratio is not a measurement`);
        }
      }
    }
    // The last pass of the tree-head timer (at most its interval behind) is part of the rounds' signing.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await logCounts(withReceipts.databaseUrl);
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the receipts bench: its figures are void');

    const ratio = median(withReceipts.costs) / median(withoutReceipts.costs);
    const ownRatio = median(withReceipts.ownCosts) / median(withoutReceipts.ownCosts);
    const heads = after.heads - before.heads;
    const receipts = after.receipts - before.receipts;
    const leaves = after.leaves - before.leaves;
    return [
      {
        entry: `service + Postgres CPU per lifecycle mutation with receipts issued vs without (closed loop, ${clients} clients)${busy ? ' [machine busy]' : ''}`,
        figure: `with receipts: ${formatSide(withReceipts)}`,
        baseline: `without the receipt effect: ${formatSide(withoutReceipts)}`,
        ratio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ratio <= cpuRatioMax,
      },
      {
        entry: `service + its own Postgres backends' CPU per lifecycle mutation, with receipts vs without (the same rounds; other work on the machine's Postgres left out)`,
        figure: `with receipts: ${formatOwn(withReceipts)}`,
        baseline: `without the receipt effect: ${formatOwn(withoutReceipts)}`,
        ratio: ownRatio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ownRatio <= cpuRatioMax,
      },
      {
        entry: 'tree heads signed vs receipts issued during the receipts rounds (from the transparency log tables)',
        figure: `${heads} tree heads signed${heads > 0 ? `: one per ${Math.round(receipts / heads)} receipts` : ''}`,
        baseline: `${receipts} receipts issued (${leaves} log leaves) in ${rounds} rounds of ${secondsPerRound} s`,
        ratio: null,
        target: 'printed: batched, one head per tenant per pass',
        met: null,
      },
    ];
  } finally {
    for (const side of sides) {
      side.client.close();
      await side.service.stop();
    }
    await withDb.drop();
    await withoutDb.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installGuard();
  try {
    for (const row of await run()) console.log(JSON.stringify(row));
  } catch (error) {
    await abortBench(error);
  }
}
