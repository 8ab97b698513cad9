// The lifecycle bench's counting phase: Postgres round trips, statements and transactions per engine mutation, read
// from a service process of its own that loads statement-counter.ts (the measured rounds run without it).
//
// Two readings: one intent at a time, a reading around every request (the median per request over the intents, so
// that the occasional background write, such as a credential's `last_used_at`, drops out; the figures
// test/engine/round-trips.test.ts pins), and a closed loop at the bench's client count (totals over every mutation
// it finished, background work included, as the measured rounds see it: the rate limiter coalesces under load).
import { median } from './harness.ts';
import {
  closedLoop, EngineClient, lifecycle, mutations, Recorder, requestSteps, type IntentPool, type RequestStep,
} from './lifecycle-load.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

export interface Counts {
  readonly roundTrips: number;
  readonly statements: number;
  /** Statements by command tag (BEGIN, SELECT, INSERT, UPDATE, COMMIT, …; ERROR for failed ones). */
  readonly byCommand: Readonly<Record<string, number>>;
}

interface Report extends Counts {
  readonly report: number;
}

const counterPreload = new URL('./statement-counter.ts', import.meta.url).href;

/** Control statements: they carry no work of the engine's own, but each is parsed and run. */
const controlCommands = new Set(['BEGIN', 'COMMIT', 'ROLLBACK', 'SET']);

export interface CountsPerMutation {
  /** One intent at a time: median counts per HTTP request of the lifecycle. */
  readonly perRequest: Readonly<Record<RequestStep, Counts>>;
  /** The sum of perRequest over one lifecycle, divided by its four mutations. */
  readonly sequential: Counts;
  /** Totals of a closed loop at `clients`, divided by the mutations it finished. */
  readonly underLoad: Counts;
  readonly clients: number;
}

/** Asks the counting process for its totals and waits for the line it writes (newer than any read before). */
async function reading(service: ServiceProcess): Promise<Report> {
  const previous = (service.output().match(/^bench-counts .*$/gm) ?? []).length;
  service.signal('SIGWINCH');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = service.output().match(/^bench-counts .*$/gm) ?? [];
    const last = lines.length > 0 ? (JSON.parse(lines.at(-1)!.slice('bench-counts '.length)) as Report) : undefined;
    if (last && lines.length > previous) return last;
    if (Date.now() > deadline) throw new Error('the counting service process did not report its statement counts within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const difference = (after: Counts, before: Counts): Counts => ({
  roundTrips: after.roundTrips - before.roundTrips,
  statements: after.statements - before.statements,
  byCommand: Object.fromEntries(
    Object.entries(after.byCommand)
      .map(([command, count]) => [command, count - (before.byCommand[command] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  ),
});

const scale = (counts: Counts, factor: number): Counts => ({
  roundTrips: counts.roundTrips * factor,
  statements: counts.statements * factor,
  byCommand: Object.fromEntries(Object.entries(counts.byCommand).map(([command, count]) => [command, count * factor])),
});

const sum = (all: readonly Counts[]): Counts => {
  const byCommand: Record<string, number> = {};
  for (const counts of all) for (const [command, count] of Object.entries(counts.byCommand)) byCommand[command] = (byCommand[command] ?? 0) + count;
  return { roundTrips: all.reduce((total, counts) => total + counts.roundTrips, 0), statements: all.reduce((total, counts) => total + counts.statements, 0), byCommand };
};

/** The median of each figure over the intents' readings of one request. */
function medianCounts(all: readonly Counts[]): Counts {
  const commands = new Set(all.flatMap((counts) => Object.keys(counts.byCommand)));
  return {
    roundTrips: median(all.map((counts) => counts.roundTrips)),
    statements: median(all.map((counts) => counts.statements)),
    byCommand: Object.fromEntries([...commands].map((command) => [command, median(all.map((counts) => counts.byCommand[command] ?? 0))]).filter(([, count]) => count !== 0)),
  };
}

/** Runs `intents` lifecycles one at a time, reading the counts around every request. */
async function sequentialCounts(service: ServiceProcess, pool: IntentPool, intents: number): Promise<Record<RequestStep, Counts>> {
  const client = new EngineClient(service.baseUrl, 1);
  const readings = Object.fromEntries(requestSteps.map((step) => [step, [] as Counts[]])) as Record<RequestStep, Counts[]>;
  try {
    pool.ensure(intents + 3);
    let last = await reading(service);
    // Warm-up: the credential cache, the pool's first connection, the statements' first plans.
    for (let index = 0; index < 3; index += 1) await lifecycle(client, pool.take()!, new Recorder(Number.POSITIVE_INFINITY));
    for (let index = 0; index < intents; index += 1) {
      const recorder = new Recorder(Number.POSITIVE_INFINITY);
      let current: RequestStep | undefined;
      await lifecycle(client, pool.take()!, recorder, undefined, async (step) => {
        const now = await reading(service);
        if (current !== undefined) readings[current].push(difference(now, last));
        last = now;
        current = step === 'done' ? undefined : step;
      });
      if (recorder.errors.length > 0) throw new Error(`the counting phase saw a failed request: ${recorder.errors[0]}`);
    }
  } finally {
    client.close();
  }
  return Object.fromEntries(requestSteps.map((step) => [step, medianCounts(readings[step])])) as Record<RequestStep, Counts>;
}

export async function countPerMutation(
  env: Record<string, string>,
  pool: IntentPool,
  options: { intents: number; clients: number; seconds: number },
): Promise<CountsPerMutation> {
  const service = await startServiceProcess(env, ['--import', counterPreload]);
  try {
    const perRequest = await sequentialCounts(service, pool, options.intents);
    const sequential = scale(sum(Object.values(perRequest)), 1 / mutations.length);

    const client = new EngineClient(service.baseUrl, options.clients);
    try {
      pool.ensure(Math.max(200, options.clients * 2) * options.seconds);
      const before = await reading(service);
      const sample = await closedLoop(client, pool, { clients: options.clients, seconds: options.seconds });
      if (sample.errors.length > 0) throw new Error(`the counting phase saw a failed request: ${sample.errors[0]}`);
      // Background work a request started (a credential's `last_used_at`) settles within moments of the loop's end.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = await reading(service);
      return { perRequest, sequential, underLoad: scale(difference(after, before), 1 / sample.finished), clients: options.clients };
    } finally {
      client.close();
    }
  } finally {
    await service.stop();
  }
}

const figure = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/** "3.75 round trips, 9.5 statements (4.5 BEGIN/COMMIT/SET)": one reading in words. */
export function formatCounts(counts: Counts): string {
  const control = Object.entries(counts.byCommand).filter(([command]) => controlCommands.has(command)).reduce((total, [, count]) => total + count, 0);
  return `${figure(counts.roundTrips)} round trips, ${figure(counts.statements)} statements (of which ${figure(control)} BEGIN/COMMIT/SET)`;
}

/** Every command tag with its count, largest first. */
export const formatCommands = (counts: Counts) =>
  Object.entries(counts.byCommand).sort((a, b) => b[1] - a[1]).map(([command, count]) => `${command} ${figure(count)}`).join(', ');
