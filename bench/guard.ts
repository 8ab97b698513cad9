// Keeps `npm run bench` from leaving anything behind: every database it creates and every process it starts is held
// here, and every way a run can end early (a thrown error, an uncaught one, an unhandled rejection, Ctrl-C) stops
// and drops them before the process exits non-zero with a message that says what went wrong.
import pg from 'pg';

export const adminUrl = process.env['BENCH_DATABASE_ADMIN_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

interface Held {
  readonly what: string;
  /** Runs the release once; every later call answers the same promise. */
  release(): Promise<void>;
}

const held = new Map<number, Held>();
let nextHold = 0;

/** Holds a resource until the returned function has released it (once: later calls wait for the same release). If
 * the run aborts first, `abortBench` releases it; a release already under way is waited for, not cut short. */
export function hold(what: string, release: () => Promise<void>): () => Promise<void> {
  const id = nextHold++;
  let releasing: Promise<void> | undefined;
  const once = () => (releasing ??= release().finally(() => held.delete(id)));
  held.set(id, { what, release: once });
  return once;
}

/** Releases everything still held, newest first (processes before the databases they use); answers what could not
 * be released. */
async function releaseAll(): Promise<string[]> {
  const failures: string[] = [];
  for (const { what, release } of [...held.values()].reverse()) {
    try {
      await release();
    } catch (error) {
      failures.push(`${what}: ${explain(error)}`);
    }
  }
  return failures;
}

/** How long an abort waits for more reasons: a process that dies makes the load generator fail a moment before its
 * exit is noticed, and its death is the better explanation (unless a person interrupted the run: Ctrl-C reaches
 * the child processes too). */
const reasonsWindowMs = 300;
const reasons: Array<{ text: string; rank: number }> = [];
let aborting: Promise<never> | undefined;

/** Ends the run: says why (and in which entry, when `during` names it), releases what is held, exits 1. Reasons
 * that arrive within a moment of the first are printed too, a dead process's first. BENCH_STACK=1 adds stacks. */
export function abortBench(reason: unknown, during?: string): Promise<never> {
  const text = `${during ? `in ${during}: ` : ''}${explain(reason)}`;
  reasons.push({ text, rank: reason instanceof Interrupted ? 0 : reason instanceof ProcessDied ? 1 : 2 });
  if (reason instanceof Error && reason.stack && process.env['BENCH_STACK']) process.stderr.write(`${reason.stack}\n`);
  aborting ??= (async () => {
    await new Promise((resolve) => setTimeout(resolve, reasonsWindowMs));
    const [first, ...others] = [...reasons].sort((a, b) => a.rank - b.rank);
    process.stderr.write(`\nbench: aborted ${first!.text}\n`);
    for (const other of others) process.stderr.write(`bench: and ${other.text}\n`);
    // A service whose database went away answers 500s: say so, rather than leave the reader with the 500s.
    const postgres = await postgresState();
    if (postgres) process.stderr.write(`bench: and ${postgres}\n`);
    const releasing = [...held.values()].map((entry) => entry.what);
    if (releasing.length > 0) process.stderr.write(`bench: stopping and dropping: ${releasing.join(', ')}\n`);
    const failures = await releaseAll();
    for (const failure of failures) process.stderr.write(`bench: could not release ${failure}\n`);
    process.exit(1);
  })();
  return aborting;
}

/** A child process of the bench ended while the bench still needed it. */
export class ProcessDied extends Error {}

class Interrupted extends Error {}

/** Routes every uncaught error, unhandled rejection and interrupt to `abortBench`. */
export function installGuard(): void {
  process.on('uncaughtException', (error) => void abortBench(error));
  process.on('unhandledRejection', (reason) => void abortBench(reason));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void abortBench(new Interrupted(`interrupted by ${signal}`)));
}

const postgresPort = Number(new URL(adminUrl).port || 5432);

/** One line for a reader of the bench's output: what failed, in words, rather than a bare errno. */
export function explain(error: unknown): string {
  const causes = flatten(error);
  const refused = causes.find((cause) => cause.code === 'ECONNREFUSED');
  if (refused) {
    return refused.port === postgresPort
      ? `Postgres refused the connection at ${refused.address ?? '127.0.0.1'}:${refused.port}: it is down or restarting`
      : `nothing listens at ${refused.address ?? '?'}:${refused.port ?? '?'} any more: the process under test has died`;
  }
  const shutdown = causes.find((cause) => typeof cause.code === 'string' && /^57P0[123]$/.test(cause.code));
  if (shutdown) return `Postgres shut down or restarted during the run (SQLSTATE ${shutdown.code}: ${shutdown.message})`;
  // node-postgres's words for a connection that Postgres closed.
  const lost = causes.find((cause) => /Connection terminated/.test(cause.message));
  if (lost) return `a connection to Postgres was lost: ${lost.message}`;
  return error instanceof Error ? error.message : String(error);
}

interface ErrorFacts {
  readonly code?: string;
  readonly port?: number;
  readonly address?: string;
  readonly message: string;
}

/** The error, its causes and the members of an AggregateError (fetch and net wrap the errno one level down). */
function flatten(error: unknown, depth = 0): ErrorFacts[] {
  if (!(error instanceof Error) || depth > 4) return [];
  const facts = error as Error & { code?: string; port?: number; address?: string };
  const nested = error instanceof AggregateError ? error.errors : [];
  return [facts, ...flatten(error.cause, depth + 1), ...nested.flatMap((inner: unknown) => flatten(inner, depth + 1))];
}

/** Runs `work` with a fresh admin connection to the machine's Postgres. */
export async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  // A connection that drops while idle emits 'error'; unheard, that would crash the process before the finally.
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Drops a database the bench created. While Postgres restarts it refuses connections for a few seconds, so refused
 * attempts are retried for up to 30 s; after that the error names the database so that a person can drop it. */
export async function dropDatabase(name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`database ${name} is left behind (${explain(error)}); drop it with DROP DATABASE ${name} WITH (FORCE)`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

let firstStartedAt: string | undefined;

/** When the Postgres server last started: a run whose figures straddle a restart is void. The first answer is
 * kept for the abort message. */
export async function postgresStartedAt(): Promise<string> {
  return withAdmin(async (client) => {
    const { rows } = await client.query<{ started: string }>('SELECT pg_postmaster_start_time()::text AS started');
    firstStartedAt ??= rows[0]!.started;
    return rows[0]!.started;
  });
}

/** What went wrong with Postgres during the run, if anything can be seen now: down, or restarted. */
async function postgresState(): Promise<string | undefined> {
  const before = firstStartedAt;
  try {
    const now = await postgresStartedAt();
    return before !== undefined && now !== before ? `Postgres restarted during the run (it was up since ${before}, now since ${now})` : undefined;
  } catch (error) {
    return `Postgres does not answer: ${explain(error)}`;
  }
}
