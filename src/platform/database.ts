// The one door to Postgres: every unit of work is a transaction that runs either as one tenant (row-level
// security on, scoped by `app.tenant_id`) or, explicitly, as the system (operator work across tenants).
import pg from 'pg';
import { inlineParameters, sqlLiteral, type SqlText } from './sql-literals.ts';
import { databasePoolSizeMax, databasePreparedStatementsMax, databaseStatementTimeoutMs, tenantIdLengthMax, tenantIdPattern } from '../limits.ts';

/** A statement and what to make of its result, so that several can share one round trip (`Queryable.batch`). */
export interface Statement<T> extends SqlText {
  read(result: pg.QueryResult): T;
}

type StatementResults<S extends readonly Statement<unknown>[]> = { -readonly [K in keyof S]: S[K] extends Statement<infer T> ? T : never };

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
   * transaction does not commit and the caller sees the error, as if it had run at once. */
  beforeCommit(statement: SqlText): void;
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
}

export class Database {
  readonly pool: pg.Pool;
  readonly #prepareStatements: boolean;

  constructor({ sharedSession = false, ...config }: DatabaseConfig) {
    this.pool = new pg.Pool({
      max: databasePoolSizeMax,
      statement_timeout: databaseStatementTimeoutMs,
      ...config,
    });
    this.#prepareStatements = !sharedSession;
    // An idle client that loses its connection emits here; without a listener the process would crash.
    this.pool.on('error', () => {});
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
    let transaction: Transaction | undefined;
    try {
      const begin = options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN';
      transaction = new Transaction(client, [begin, ...setup(client)], this.#prepareStatements);
      try {
        const result = await work(transaction);
        await transaction.commit();
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
      // A client whose connection, transaction state or prepared statements are unknown must not go back to the pool.
      client.release(broken ?? (transaction?.connectionUnknown ? new Error('prepared statements unknown after a failed message') : undefined));
    }
  }
}

/**
 * One transaction on one pooled client, with the fewest round trips: BEGIN and the role and tenant settings travel
 * with the first statement, and statements queued with `beforeCommit` travel with COMMIT. Several statements share
 * one simple-query message; each is prepared once per connection with SQL `PREPARE` and then run with `EXECUTE`
 * and its values as literals (sql-literals.ts), so Postgres parses and plans it once per connection, as it does
 * a lone statement, which keeps the extended protocol under a protocol-level name.
 */
class Transaction implements Queryable {
  readonly #client: pg.PoolClient;
  /** BEGIN and the settings, until they have been sent with the first statement. */
  #opening: readonly string[] | undefined;
  readonly #queued: SqlText[] = [];
  /** Whether statements are prepared on the connection (not where connections share one session). */
  readonly #prepare: boolean;
  /** Set when a failed message may or may not have prepared a statement: the connection's statement names are no
   * longer known, so it must not go back to the pool. */
  #connectionUnknown = false;

  constructor(client: pg.PoolClient, opening: readonly string[], prepare: boolean) {
    this.#client = client;
    this.#opening = opening;
    this.#prepare = prepare;
  }

  /** True when the connection must be closed rather than reused (see #connectionUnknown). */
  get connectionUnknown(): boolean {
    return this.#connectionUnknown;
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

  beforeCommit(statement: SqlText): void {
    this.#queued.push(statement);
  }

  async commit(): Promise<void> {
    // A transaction that never sent a statement has nothing to commit.
    if (this.#opening !== undefined && this.#queued.length === 0) return;
    const results = await this.#sendMessage(this.#queued.splice(0), ['COMMIT']);
    // Postgres answers COMMIT with ROLLBACK when a statement failed earlier and the work caught its error: the
    // caller must not believe that anything was committed.
    if (results.at(-1)?.command === 'ROLLBACK') throw new Error('the transaction was rolled back: a statement in it had failed');
  }

  async rollback(): Promise<void> {
    this.#queued.length = 0;
    if (this.#opening !== undefined) return;
    await this.#client.query('ROLLBACK');
  }

  /** Sends `statements` (after the opening, if it is still due) in one round trip; answers their own results. */
  async #send(statements: readonly SqlText[]): Promise<pg.QueryResult[]> {
    if (this.#opening === undefined && statements.length <= 1) {
      if (statements.length === 0) return [];
      // Alone, a statement keeps the extended protocol: its values travel as parameters, and under a name, so each
      // connection parses and plans it once.
      const { text, values } = statements[0]!;
      const index = this.#prepare ? statementIndex(text) : undefined;
      return [await this.#client.query({ name: index === undefined ? undefined : `svc_${index}`, text, values: values as unknown[] | undefined })];
    }
    return this.#sendMessage(statements, []);
  }

  /**
   * One simple-query message: the opening if it is still due, `statements` (each answering one result), then
   * `trailer`. Answers the results of `statements` and `trailer`. A line break before each `;` keeps a statement's
   * closing `--` comment from swallowing the next one.
   */
  async #sendMessage(statements: readonly SqlText[], trailer: readonly string[]): Promise<pg.QueryResult[]> {
    const prepared = preparedOn(this.#client);
    const preparing: string[] = [];
    const parts: string[] = [];
    /** Where each statement's own result is among the message's results. */
    const resultAt: number[] = [];
    // Rendered before the opening is taken: a statement refused here leaves the transaction unbegun, not begun
    // without its settings.
    for (const statement of statements) {
      const index = this.#prepare && preparablePattern.test(statement.text) ? statementIndex(statement.text) : undefined;
      if (index === undefined) {
        parts.push(inlineParameters(statement));
      } else {
        const name = `svc_sql_${index}`;
        if (!prepared.has(name) && !preparing.includes(name)) {
          parts.push(`PREPARE ${name} AS ${statement.text}`);
          preparing.push(name);
        }
        const values = statement.values ?? [];
        parts.push(values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${values.map(sqlLiteral).join(', ')})`);
      }
      resultAt.push(parts.length - 1);
    }
    const opening = this.#takeOpening();
    let results: pg.QueryResult[];
    try {
      const answer = (await this.#client.query([...opening, ...parts, ...trailer].join('\n; '))) as pg.QueryResult | pg.QueryResult[];
      results = Array.isArray(answer) ? answer : [answer];
    } catch (error) {
      // PREPARE is not transactional: a failed message may have created some of its statements and not others.
      if (preparing.length > 0) this.#connectionUnknown = true;
      throw error;
    }
    for (const name of preparing) prepared.add(name);
    const own = results.slice(opening.length);
    return [...resultAt.map((at) => own[at]!), ...own.slice(parts.length)];
  }

  /** The opening once: after its first send the transaction counts as begun, even if that send failed. */
  #takeOpening(): readonly string[] {
    const opening = this.#opening ?? [];
    this.#opening = undefined;
    return opening;
  }
}

/** What SQL PREPARE accepts; other statements (SHOW, SET, …) in a message are inlined. */
const preparablePattern = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES)\b/i;

/** The statement names each connection has prepared with SQL PREPARE (pg tracks its protocol-level ones itself). */
const preparedStatements = new WeakMap<pg.ClientBase, Set<string>>();

function preparedOn(client: pg.ClientBase): Set<string> {
  let names = preparedStatements.get(client);
  if (!names) preparedStatements.set(client, (names = new Set()));
  return names;
}

const statementIndexes = new Map<string, number>();

/** The number a statement text is prepared under (as `svc_N` by pg, `svc_sql_N` by PREPARE); undefined (parsed
 * every time) once the process has numbered databasePreparedStatementsMax texts, so that generated texts cannot
 * grow every connection's statement cache. */
function statementIndex(text: string): number | undefined {
  let index = statementIndexes.get(text);
  if (index === undefined && statementIndexes.size < databasePreparedStatementsMax) {
    index = statementIndexes.size + 1;
    statementIndexes.set(text, index);
  }
  return index;
}

function assertTenantId(tenantId: string): void {
  if (tenantId.length === 0 || tenantId.length > tenantIdLengthMax || !tenantIdPattern.test(tenantId)) {
    // Tenant ids reach here only from credentials and validated input: anything else is a programmer error.
    throw new Error(`Database.tenant called with an invalid tenant id`);
  }
}

function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // Postgres SQLSTATE class 08 is connection exceptions; 57P01..57P03 are administrator/crash shutdowns.
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P'))) return true;
  return /Connection terminated|ECONNRESET|ECONNREFUSED|EPIPE/.test(error.message);
}

/** True when a Postgres error is a unique-constraint violation (SQLSTATE 23505), optionally on `constraint`. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown };
  return pgError?.code === '23505' && (constraint === undefined || pgError.constraint === constraint);
}
