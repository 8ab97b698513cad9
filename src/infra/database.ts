// The one door to Postgres: every unit of work is a transaction that runs either as one tenant (row-level
// security on, scoped by `app.tenant_id`) or, explicitly, as the system (operator work across tenants).
import pg from 'pg';
import { inlineParameters, type SqlText } from './sql-literals.ts';
import {
  databasePoolConnectTimeoutMs,
  databasePoolSizeMax,
  databasePreparedStatementsMax,
  databaseStatementTimeoutMs,
  tenantIdLengthMax,
  tenantIdPattern,
} from '../limits.ts';

/** A statement and what to make of its result, so that several can share one round trip (`Queryable.batch`). */
export interface Statement<T> extends SqlText {
  read(result: pg.QueryResult): T;
}

type StatementResults<S extends readonly Statement<unknown>[]> = { -readonly [K in keyof S]: S[K] extends Statement<infer T> ? T : never };

/**
 * Where a queued statement that locks a row shared by many transactions of a tenant stands at COMMIT: after every
 * statement without one, in rank order, then key order, then queue order. Every transaction then takes those locks in
 * one order, so that two of them (two groups of a group commit above all, each holding several commands' statements)
 * can never wait for each other in a circle: Postgres would find the deadlock only after a second and abort one.
 * The locks there are, with their ranks, are in src/db/commit-locks.ts.
 */
export interface CommitLock {
  readonly rank: number;
  /** Orders the statements of one rank that lock different rows of it (an operator's standing rows). */
  readonly key?: string;
}

/** What repository functions receive: a transaction in progress. */
export interface Queryable {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<Row>>;
  /** Runs one statement and answers what its `read` makes of the result. */
  run<T>(statement: Statement<T>): Promise<T>;
  /** Runs `statements` in order in one round trip and answers what each one's `read` makes of its result. */
  batch<const S extends readonly Statement<unknown>[]>(statements: S): Promise<StatementResults<S>>;
  /** Queues a statement nobody needs the result of, to travel with COMMIT in one round trip. If it fails, the
   * transaction does not commit and the caller sees the error, as if it had run at once. A statement that locks a
   * row many transactions want names that lock (CommitLock). */
  beforeCommit(statement: SqlText, lock?: CommitLock): void;
  /** Queues `item` to travel with COMMIT together with every other item of `kind` queued in this transaction: one
   * statement, `render(items)` in the order they were queued, in the place of the last of them (the ledger postings
   * of a group commit, under one lock of the tenant's head). Undone with what queued it, as beforeCommit. */
  beforeCommitMerged<T>(kind: string, item: T, render: (items: readonly T[]) => SqlText, lock?: CommitLock): void;
  /** Runs `callback` once the transaction has committed (never when it rolls back): for process-local caches that
   * must not be refilled from what the transaction saw before its COMMIT. It must not throw. */
  afterCommit(callback: () => void): void;
  /** Runs `work` after a savepoint, which travels with the next statement (no round trip of its own). If `work`
   * throws, all it did is undone (its statements, and the statements and callbacks it queued), the transaction stays
   * usable for what follows, and the error is rethrown. */
  undoableOnError<T>(work: () => Promise<T>): Promise<T>;
}

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionOptions {
  readonly isolation?: IsolationLevel;
}

/** Database roles created by migrations/0001_init.sql. Neither owns a table, so row-level security binds both. */
const tenantRole = 'svc_app';
const systemRole = 'svc_system';

/** A pool's configuration, and whether its connections share one database session. */
export interface DatabaseConfig extends pg.PoolConfig {
  /** True behind the embedded database's socket multiplexer, where every connection is the one PGlite session:
   * session state such as prepared statements would be shared, and outlive the connection that made it, so none
   * is kept. */
  readonly sharedSession?: boolean;
  /** True for the embedded database alone: one process holds it, its connections are one session, and a transaction
   * left open on one of them holds up every other until it ends. Behind a pooler in transaction mode sessions are
   * shared too (sharedSession), but many replicas may use the database and an open transaction holds up no one. */
  readonly heldByOneProcess?: boolean;
}

/** What Postgres shows as `application_name` for the pool's connections (a connection string may set another). */
export const poolApplicationName = 'svc';

export class Database {
  readonly pool: pg.Pool;
  /** Connections keep no session state of their own (DatabaseConfig.sharedSession). */
  readonly sharedSession: boolean;
  /** The embedded database (DatabaseConfig.heldByOneProcess): one process, and one session behind every connection. */
  readonly heldByOneProcess: boolean;
  readonly #prepareStatements: boolean;
  /** Pooled clients whose connection failed, with the error: never handed back to the pool. */
  readonly #lostConnections = new WeakMap<pg.PoolClient, Error>();

  constructor({ sharedSession = false, heldByOneProcess = false, ...config }: DatabaseConfig) {
    this.pool = new pg.Pool({
      max: databasePoolSizeMax,
      statement_timeout: databaseStatementTimeoutMs,
      connectionTimeoutMillis: databasePoolConnectTimeoutMs,
      keepAlive: true,
      application_name: poolApplicationName,
      ...config,
    });
    this.sharedSession = sharedSession || heldByOneProcess;
    this.heldByOneProcess = heldByOneProcess;
    this.#prepareStatements = !this.sharedSession;
    // An idle client that loses its connection emits here, and pg-pool drops it.
    this.pool.on('error', () => {});
    // A client in use has no listener of pg-pool's (it removes its own at check-out), and an 'error' event without
    // a listener ends the process: a backend terminated, a restart or a failover while a transaction waits on
    // something else, or while the maintenance pass holds its lock connection. Every client gets one listener for
    // its whole life, which remembers the loss; the statement that next uses the client fails with a connection
    // error (503), and the client is discarded when it is released.
    this.pool.on('connect', (client) => {
      client.on('error', (error: Error) => {
        if (!this.#lostConnections.has(client)) this.#lostConnections.set(client, error);
      });
    });
  }

  /** Runs `work` in a transaction that can see and write only `tenantId`'s rows. */
  tenant<T>(tenantId: string, work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    assertTenantId(tenantId);
    return this.#transaction(
      (client) => [`SET LOCAL ROLE ${tenantRole}`, `SELECT set_config('app.tenant_id', ${client.escapeLiteral(tenantId)}, true)`],
      work,
      options,
    );
  }

  /** Runs `work` as the system role, which sees every tenant: for operator commands, credential lookup and
   * sweepers. Callers name the tenant in every statement themselves. */
  system<T>(work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.#transaction(() => [`SET LOCAL ROLE ${systemRole}`], work, options);
  }

  /** Checks the database answers. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Runs `work` on one connection of the pool, held for its whole duration: for session state such as a
   * session-level advisory lock. When `work` throws (or the connection was lost meanwhile) the connection is closed
   * rather than pooled, so that no session state it holds can outlive the failure. */
  async session<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let failure: Error | undefined;
    try {
      return await work(client);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(failure ?? this.#lostConnections.get(client));
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async #transaction<T>(
    setup: (client: pg.PoolClient) => readonly string[],
    work: (tx: Queryable) => Promise<T>,
    options: TransactionOptions,
  ): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const begin = options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN';
      const transaction = new Transaction(client, [begin, ...setup(client)], this.#prepareStatements);
      try {
        const result = await work(transaction);
        await transaction.commit();
        transaction.runAfterCommit();
        return result;
      } catch (error) {
        await transaction.rollback().catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      }
    } catch (error) {
      if (isConnectionError(error)) broken = error as Error;
      throw error;
    } finally {
      // A client whose connection or transaction state is unknown must not go back to the pool.
      client.release(broken ?? this.#lostConnections.get(client));
    }
  }
}

/**
 * One transaction on one pooled client, with the fewest round trips: BEGIN and the role and tenant settings travel
 * with the first statement, and statements queued with `beforeCommit` travel with COMMIT. Batches go through the
 * simple query protocol with their values inlined (sql-literals.ts); lone statements use the extended protocol.
 */
class Transaction implements Queryable {
  readonly #client: pg.PoolClient;
  /** BEGIN and the settings, until they have been sent with the first statement. */
  #opening: readonly string[] | undefined;
  /** Savepoint commands to send before the next statements, in the same message. */
  readonly #leading: string[] = [];
  #savepoints = 0;
  readonly #queued: Array<QueuedStatement> = [];
  readonly #afterCommit: (() => void)[] = [];
  /** Whether lone statements are prepared by name on the connection (not where connections share one session). */
  readonly #prepare: boolean;

  constructor(client: pg.PoolClient, opening: readonly string[], prepare: boolean) {
    this.#client = client;
    this.#opening = opening;
    this.#prepare = prepare;
  }

  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<Row>> {
    const [result] = await this.#send([{ text, values }]);
    return result as pg.QueryResult<Row>;
  }

  async run<T>(statement: Statement<T>): Promise<T> {
    const [result] = await this.#send([statement]);
    return statement.read(result!);
  }

  async batch<const S extends readonly Statement<unknown>[]>(statements: S): Promise<StatementResults<S>> {
    const results = await this.#send(statements);
    return statements.map((statement, index) => statement.read(results[index]!)) as StatementResults<S>;
  }

  beforeCommit(statement: SqlText, lock: CommitLock = noSharedLock): void {
    this.#queued.push({ text: inlineParameters(statement), lock });
  }

  beforeCommitMerged<T>(kind: string, item: T, render: (items: readonly T[]) => SqlText, lock: CommitLock = noSharedLock): void {
    this.#queued.push({ kind, item, render: render as MergedItem['render'], lock });
  }

  afterCommit(callback: () => void): void {
    this.#afterCommit.push(callback);
  }

  async undoableOnError<T>(work: () => Promise<T>): Promise<T> {
    const name = `undoable_${(this.#savepoints += 1)}`;
    const savepoint = `SAVEPOINT ${name}`;
    this.#leading.push(savepoint);
    const queued = this.#queued.length;
    const callbacks = this.#afterCommit.length;
    try {
      return await work();
    } catch (error) {
      this.#queued.length = queued;
      this.#afterCommit.length = callbacks;
      // Unsent, the savepoint is simply dropped; sent, the rollback to it leads the next message, which also clears
      // a failed statement's aborted state.
      const unsent = this.#leading.indexOf(savepoint);
      if (unsent !== -1) this.#leading.splice(unsent, 1);
      else this.#leading.push(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
  }

  runAfterCommit(): void {
    for (const callback of this.#afterCommit.splice(0)) callback();
  }

  async commit(): Promise<void> {
    // A transaction that never sent a statement has nothing to commit (an unsent savepoint protects nothing).
    if (this.#opening !== undefined && this.#queued.length === 0) return;
    const results = await this.#sendText([...this.#takeOpening(), ...renderQueued(this.#queued.splice(0)), 'COMMIT']);
    // Postgres answers COMMIT with ROLLBACK when a statement failed earlier and the work caught its error: the
    // caller must not believe that anything was committed.
    if (results.at(-1)?.command === 'ROLLBACK') throw new Error('the transaction was rolled back: a statement in it had failed');
  }

  async rollback(): Promise<void> {
    this.#queued.length = 0;
    this.#leading.length = 0;
    this.#afterCommit.length = 0;
    if (this.#opening !== undefined) return;
    await this.#client.query('ROLLBACK');
  }

  /** Sends `statements` (after the opening, if it is still due) in one round trip; answers their own results. */
  async #send(statements: readonly SqlText[]): Promise<pg.QueryResult[]> {
    if (this.#opening === undefined && statements.length <= 1) {
      if (statements.length === 0) return [];
      const lone = statements[0]!;
      if (this.#leading.length > 0) {
        // A savepoint due travels with the statement when inlining it means exactly what its parameters would;
        // otherwise it takes a round trip of its own and the statement keeps the extended protocol.
        const inlined = inlinedExactly(lone);
        if (inlined !== undefined) return (await this.#sendText([...this.#leading.splice(0), inlined])).slice(-1);
        await this.#sendText(this.#leading.splice(0));
      }
      // Alone, a statement keeps the extended protocol: its values travel as parameters, not inlined, and under a
      // name, so each connection parses and plans it once.
      const { text, values } = lone;
      const name = this.#prepare ? preparedStatementName(text) : undefined;
      return [await this.#client.query({ name, text, values: values as unknown[] | undefined })];
    }
    // Inlined before the opening is taken: a statement refused here leaves the transaction unbegun, not begun
    // without its settings.
    const inlined = statements.map(inlineParameters);
    const opening = this.#takeOpening();
    const results = await this.#sendText([...opening, ...inlined]);
    return results.slice(opening.length);
  }

  /** The opening once (after its first send the transaction counts as begun, even if that send failed), then any
   * savepoint commands due. */
  #takeOpening(): readonly string[] {
    const opening = this.#opening ?? [];
    this.#opening = undefined;
    return [...opening, ...this.#leading.splice(0)];
  }

  /** One simple-query message. A line break before each `;` keeps a statement's closing `--` comment from
   * swallowing the next statement. */
  async #sendText(statements: readonly string[]): Promise<pg.QueryResult[]> {
    const result = (await this.#client.query(statements.join('\n; '))) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(result) ? result : [result];
  }
}

/** A statement that takes no shared lock travels first, in queue order. */
const noSharedLock: CommitLock = { rank: 0 };

/** A statement queued by beforeCommit. */
interface QueuedText {
  readonly text: string;
  readonly lock: CommitLock;
}

/** An item queued by beforeCommitMerged. */
interface MergedItem {
  readonly kind: string;
  readonly item: unknown;
  readonly render: (items: readonly unknown[]) => SqlText;
  readonly lock: CommitLock;
}

type QueuedStatement = QueuedText | MergedItem;

/** Keys in code-unit order (no locale: every process must agree), a missing key first. */
function compareKeys(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}

/** The queued statements' texts in lock order (CommitLock), each kind of merged items rendered once, where the last
 * of its items stands. */
function renderQueued(queued: readonly QueuedStatement[]): string[] {
  const ordered = queued
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.lock.rank - b.entry.lock.rank || compareKeys(a.entry.lock.key, b.entry.lock.key) || a.index - b.index)
    .map(({ entry }) => entry);
  const last = new Map<string, number>();
  ordered.forEach((entry, index) => {
    if ('kind' in entry) last.set(entry.kind, index);
  });
  const texts: string[] = [];
  ordered.forEach((entry, index) => {
    if (!('kind' in entry)) texts.push(entry.text);
    else if (last.get(entry.kind) === index) {
      const items = ordered.filter((other): other is MergedItem => 'kind' in other && other.kind === entry.kind).map((other) => other.item);
      texts.push(inlineParameters(entry.render(items)));
    }
  });
  return texts;
}

/** `statement` with its values inlined, unless a value is a byte string (sent as a binary parameter, it would be
 * read as bytea wherever it stands; inlined, only where Postgres reads bytea) or the text cannot be scanned. */
function inlinedExactly(statement: SqlText): string | undefined {
  if (statement.values?.some((value) => value instanceof Uint8Array)) return undefined;
  try {
    return inlineParameters(statement);
  } catch {
    return undefined;
  }
}

const preparedStatementNames = new Map<string, string>();

/** The name a statement text is prepared under; undefined (unnamed, parsed every time) once the process has named
 * databasePreparedStatementsMax texts, so that generated texts cannot grow every connection's statement cache. */
function preparedStatementName(text: string): string | undefined {
  let name = preparedStatementNames.get(text);
  if (name === undefined && preparedStatementNames.size < databasePreparedStatementsMax) {
    name = `svc_${preparedStatementNames.size + 1}`;
    preparedStatementNames.set(text, name);
  }
  return name;
}

function assertTenantId(tenantId: string): void {
  if (tenantId.length === 0 || tenantId.length > tenantIdLengthMax || !tenantIdPattern.test(tenantId)) {
    // Tenant ids reach here only from credentials and validated input: anything else is a programmer error.
    throw new Error(`Database.tenant called with an invalid tenant id`);
  }
}

/** The driver's words for a connection that is gone or could not be had; pg's own errors carry no code. */
const connectionErrorMessages = new RegExp(
  [
    'Connection terminated', // the socket closed (also "… unexpectedly", "… due to connection timeout")
    'not queryable', // a statement on a client whose connection had already failed, or was closed
    'ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH',
    'is not currently accepting connections', // a database closed to connections (ALLOW_CONNECTIONS false)
  ].join('|'),
);

function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // Postgres SQLSTATE class 08 is connection exceptions; 57P01..57P03 are administrator/crash shutdowns.
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P') || connectionErrorMessages.test(code))) return true;
  return connectionErrorMessages.test(error.message);
}

/** How deep `isDatabaseUnavailable` looks into an error's causes (code that wraps a driver error keeps it there). */
const causeDepthMax = 4;

/** True when a statement failed because the database could not be had, not because of what it said: the connection
 * was lost or refused, Postgres is out of connection slots or other resources (SQLSTATE class 53, e.g. 53300 "too
 * many clients"), or it is shutting down. Nothing of the statement's transaction was committed, or (a connection lost
 * during COMMIT) nothing can tell whether it was: either way the same request, with the same idempotency key, can
 * be sent again and finds the stored answer or runs once. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth <= causeDepthMax && current instanceof Error; depth += 1) {
    if (isConnectionError(current)) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('53')) return true;
    // The pool's own refusal when no connection could be had in time (pg-pool's connectionTimeoutMillis).
    if (/timeout exceeded when trying to connect/i.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/** True when a Postgres error is a unique-constraint violation (SQLSTATE 23505), optionally on `constraint`. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown };
  return pgError?.code === '23505' && (constraint === undefined || pgError.constraint === constraint);
}
