// A preload for the service process (`node --import tsx --import ./bench/statement-counter.ts src/server.ts`) that
// counts what the service asks of Postgres, at the protocol: every ReadyForQuery ends one round trip (a simple-query
// message, or an extended-protocol exchange up to its Sync), every CommandComplete is one statement run, tallied by
// its command tag (BEGIN, SELECT, INSERT, COMMIT, …). A statement that fails ends in an ErrorResponse instead and
// is tallied as ERROR. Statements run inside functions (`ledger_post` and the like) are not messages and are not
// counted. On SIGWINCH it writes the totals so far as one line `bench-counts <json>` to stderr. (SIGWINCH because
// its default is to be ignored and nothing in the service listens to it; SIGUSR2 would shut the service down, as
// close-with-grace treats it like SIGTERM, and SIGUSR1 belongs to node's inspector.)
//
// The measured rounds never load it: the bench starts a second service process with it for a counting phase of its
// own, so the counting costs nothing where throughput and latency are measured.
import pg from 'pg';

interface Counts {
  /** Increments with every report, so that the reader can tell a fresh line from the one before. */
  report: number;
  roundTrips: number;
  statements: number;
  byCommand: Record<string, number>;
}

const counts: Counts = { report: 0, roundTrips: 0, statements: 0, byCommand: {} };
/** Connections whose first ReadyForQuery (the end of the start-up, not a round trip of any request) has passed. */
const started = new WeakSet<object>();

const tally = (command: string) => {
  counts.statements += 1;
  counts.byCommand[command] = (counts.byCommand[command] ?? 0) + 1;
};

const connectionPrototype = (pg as unknown as { Connection: { prototype: { emit(event: string | symbol, ...args: unknown[]): boolean } } }).Connection.prototype;
const emit = connectionPrototype.emit;
connectionPrototype.emit = function (this: object, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'readyForQuery') {
    if (started.has(this)) counts.roundTrips += 1;
    else started.add(this);
  } else if (event === 'commandComplete') {
    const text = (args[0] as { text?: string } | undefined)?.text ?? '';
    tally(text.split(' ', 1)[0] || 'UNKNOWN');
  } else if (event === 'errorMessage') {
    tally('ERROR');
  }
  return emit.call(this, event, ...args);
};

/** The totals so far (a copy), for a reader in the same process. */
export function countsSoFar(): Omit<Counts, 'report'> {
  return { roundTrips: counts.roundTrips, statements: counts.statements, byCommand: { ...counts.byCommand } };
}

process.on('SIGWINCH', () => {
  counts.report += 1;
  process.stderr.write(`bench-counts ${JSON.stringify(counts)}\n`);
});
