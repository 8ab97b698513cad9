// What the entries that compare two compositions of the service share (receipts-bench.ts, split-bench.ts,
// events-bench.ts): each side is a service process on a fresh database of its own with its pool of pre-signed
// intents; closed-loop windows run on one side at a time, alternating, and each window's CPU is read three ways
// (service + all of Postgres, the whole machine, service + the side's own backends).
import pg from 'pg';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import type { BenchRow } from './bench-row.ts';
import { formatRate, median, spreadPercent } from './harness.ts';
import { closedLoop, EngineClient, IntentFactory, IntentPool, mutations, type LoadSample } from './lifecycle-load.ts';
import { quick } from './options.ts';
import { cpuWindow, formatCpu, processCpuSeconds, type CpuBreakdown } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

/** The schedule every two-sided entry runs (`--quick`: one short round, a smoke test of the instrument). */
export const abSchedule = {
  rounds: quick ? 1 : 5,
  secondsPerRound: quick ? 3 : 8,
  warmupSeconds: quick ? 1 : 3,
  clients: 16,
  /** Cores other processes may take from a round before its figures say more about them than about the service. */
  outsideCoresMax: 0.15,
} as const;

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

export interface Side {
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

/** A sandbox tenant on the side's database, and a pool of intents of it. */
export async function sandboxTenantPool(databaseUrl: string): Promise<IntentPool> {
  const db = new Database({ connectionString: databaseUrl, max: 1 });
  try {
    const { tenant, adminKey } = await createTenant(db, 'bench', 'sandbox');
    return new IntentPool(new IntentFactory([{ tenantId: tenant.tenantId, apiKey: adminKey.apiKey }]));
  } finally {
    await db.close();
  }
}

/** A bench service's environment: its database, and a rate limit too high to get in the way of the load. */
export const benchServiceEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });

/** A side: its service (`script`, under `nodeFlags`) started on its database (benchServiceEnv), with a client of
 * abSchedule.clients connections and the pool of pre-signed intents given. */
export async function startSide(
  name: string,
  databaseUrl: string,
  pool: IntentPool,
  start: { readonly script?: string; readonly nodeFlags?: readonly string[] } = {},
): Promise<Side> {
  const service = await startServiceProcess(benchServiceEnv(databaseUrl), [...(start.nodeFlags ?? [])], start.script ?? 'src/server.ts');
  const client = new EngineClient(service.baseUrl, abSchedule.clients);
  return { name, databaseUrl, service, client, pool, costs: [], machineCosts: [], ownCosts: [], rates: [] };
}

export async function stopSides(sides: readonly Side[]): Promise<void> {
  for (const side of sides) {
    side.client.close();
    await side.service.stop();
  }
}

/** How the two rows of a comparison name what they compare. */
export interface ComparisonWords {
  /** What the first row compares, after "per lifecycle mutation": " with receipts issued vs without". */
  readonly comparing: string;
  /** The same, shorter, for the second row: "with receipts vs without". */
  readonly comparingShort: string;
  /** Added inside the first row's parentheses after the clients: ", no endpoint". */
  readonly setting?: string;
  /** The labels of the measured side and of the baseline. */
  readonly measured: string;
  readonly baseline: string;
  /** Added to the measured side's figure in the first row. */
  readonly measuredNote?: string;
}

/** The two rows every two-sided entry answers: service + Postgres CPU per mutation (the target's row, marked when the
 * machine was busy), and service + the side's own backends over the same rounds, both against `cpuRatioMax`. */
export function comparisonRows([measured, baseline]: readonly [Side, Side], words: ComparisonWords, cpuRatioMax: number, busy: boolean): BenchRow[] {
  const ratio = median(measured.costs) / median(baseline.costs);
  const ownRatio = median(measured.ownCosts) / median(baseline.ownCosts);
  const target = `<= ${cpuRatioMax.toFixed(2)}`;
  return [
    {
      entry: `service + Postgres CPU per lifecycle mutation${words.comparing} (closed loop, ${abSchedule.clients} clients${words.setting ?? ''})${busy ? ' [machine busy]' : ''}`,
      figure: `${words.measured}: ${formatSide(measured)}${words.measuredNote ?? ''}`,
      baseline: `${words.baseline}: ${formatSide(baseline)}`,
      ratio,
      target,
      met: ratio <= cpuRatioMax,
    },
    {
      entry: `service + its own Postgres backends' CPU per lifecycle mutation, ${words.comparingShort} (the same rounds; other work on the machine's Postgres left out)`,
      figure: `${words.measured}: ${formatOwn(measured)}`,
      baseline: `${words.baseline}: ${formatOwn(baseline)}`,
      ratio: ownRatio,
      target,
      met: ownRatio <= cpuRatioMax,
    },
  ];
}

/** A closed-loop window of abSchedule.clients with enough pre-signed intents (signed before it starts); doubled if it
 * ran out. */
async function closedLoopWindow(
  entry: string,
  side: Side,
  seconds: number,
  expected: number,
  measure: boolean,
): Promise<{ sample: LoadSample; cpu?: CpuBreakdown; backends?: number }> {
  const { clients } = abSchedule;
  let count = Math.ceil(((expected * 3) / mutations.length) * seconds) + clients * 2;
  for (let attempt = 1; ; attempt += 1) {
    side.pool.ensure(count);
    const own = measure ? await databaseCpuWindow(side.databaseUrl) : undefined;
    const cpu = measure ? cpuWindow(side.service.pid) : undefined;
    const sample = await closedLoop(side.client, side.pool, { clients, seconds });
    const used = cpu?.end();
    const backends = await own?.end();
    if (sample.errors.length > 0) {
      throw new Error(`${entry} bench: ${sample.errors.length} failed requests ${side.name}; first: ${sample.errors.slice(0, 3).join(' | ')}`);
    }
    if (!sample.exhausted) return used ? { sample, cpu: used, backends: backends! } : { sample };
    if (attempt === 4) throw new Error(`${entry} bench: ran out of pre-signed intents ${side.name} ${attempt} times`);
    count *= 2;
  }
}

/** A side's service + Postgres figure, with the whole machine's and the rate, for a row. */
const formatSide = (side: Side) =>
  `${median(side.costs).toFixed(2)} ms service + Postgres CPU per mutation (spread ${spreadPercent(side.costs).toFixed(0)}%; whole machine ` +
  `${median(side.machineCosts).toFixed(2)} ms), ${formatRate(median(side.rates), 'mutations/s', side.rates)}`;

/** A side's service + own backends figure, for a row. */
const formatOwn = (side: Side) =>
  `${median(side.ownCosts).toFixed(2)} ms service + own backends CPU per mutation (spread ${spreadPercent(side.ownCosts).toFixed(0)}%)`;

/** Each side's unmeasured warm-up window; answers the fastest rate seen, for sizing the pools of the rounds. */
export async function warmUp(entry: string, sides: readonly Side[]): Promise<number> {
  let expected = 400;
  for (const side of sides) {
    const { sample } = await closedLoopWindow(entry, side, abSchedule.warmupSeconds, expected, false);
    expected = Math.max(expected, sample.mutationsPerSecond);
  }
  return expected;
}

/** abSchedule.rounds measured rounds, the two sides alternating which goes first so that a drift of the machine falls
 * on both; each side's rates and costs are appended to it. `expected` is warmUp's answer. Answers whether other
 * processes took more than abSchedule.outsideCoresMax of a round (the machine was busy, and the ratio is not a
 * measurement). */
export async function alternatingRounds(entry: string, [first, second]: readonly [Side, Side], expected: number, log: (line: string) => void): Promise<boolean> {
  const { rounds, secondsPerRound, outsideCoresMax } = abSchedule;
  let busy = false;
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? [first, second] : [second, first];
    for (const side of order) {
      const { sample, cpu, backends } = await closedLoopWindow(entry, side, secondsPerRound, expected, true);
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
  return busy;
}
