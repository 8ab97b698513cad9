// The one door to Postgres: every unit of work is a transaction that runs either as one tenant (row-level
// security on, scoped by `app.tenant_id`) or, explicitly, as the system (operator work across tenants).
import pg from 'pg';
import { databasePoolSizeMax, databaseStatementTimeoutMs, tenantIdLengthMax, tenantIdPattern } from '../limits.ts';

/** What repository functions receive: a client inside an open transaction. */
export interface Queryable {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionOptions {
  readonly isolation?: IsolationLevel;
}

/** Database roles created by migrations/0001_init.sql. Neither owns a table, so row-level security binds both. */
const tenantRole = 'svc_app';
const systemRole = 'svc_system';

export class Database {
  readonly pool: pg.Pool;

  constructor(config: pg.PoolConfig) {
    this.pool = new pg.Pool({
      max: databasePoolSizeMax,
      statement_timeout: databaseStatementTimeoutMs,
      ...config,
    });
    // An idle client that loses its connection emits here; without a listener the process would crash.
    this.pool.on('error', () => {});
  }

  /** Runs `work` in a transaction that can see and write only `tenantId`'s rows. */
  tenant<T>(tenantId: string, work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    assertTenantId(tenantId);
    return this.#transaction(
      (client) => `SET LOCAL ROLE ${tenantRole}; SELECT set_config('app.tenant_id', ${client.escapeLiteral(tenantId)}, true)`,
      work,
      options,
    );
  }

  /** Runs `work` as the system role, which sees every tenant: for operator commands, credential lookup and
   * sweepers. Callers name the tenant in every statement themselves. */
  system<T>(work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.#transaction(() => `SET LOCAL ROLE ${systemRole}`, work, options);
  }

  /** Checks the database answers. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async #transaction<T>(
    setup: (client: pg.PoolClient) => string,
    work: (tx: Queryable) => Promise<T>,
    options: TransactionOptions,
  ): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      // BEGIN, the role and the tenant setting travel in one round trip (simple query protocol).
      const begin = options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN';
      await client.query(`${begin}; ${setup(client)}`);
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      }
    } catch (error) {
      if (isConnectionError(error)) broken = error as Error;
      throw error;
    } finally {
      // A client whose connection or transaction state is unknown must not go back to the pool.
      client.release(broken);
    }
  }
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
