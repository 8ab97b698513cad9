// Checks at start that DATABASE_URL (and DATABASE_SESSION_URL, when set) answers, so an unreachable or misnamed
// database stops the start with one line naming the variable instead of a driver stack trace (or, for a host that
// drops packets, a silent hang).
import pg from 'pg';
import { ConfigError } from '../config.ts';
import { databaseConnectTimeoutMs } from '../limits.ts';

/** Connects once to `connectionString` and runs `SELECT 1`; throws a ConfigError, naming `variable`, saying why it
 * could not. */
export async function assertDatabaseReachable(
  connectionString: string,
  variable: 'DATABASE_URL' | 'DATABASE_SESSION_URL' = 'DATABASE_URL',
  timeoutMs: number = databaseConnectTimeoutMs,
): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs });
  // A connection that fails after connecting emits 'error'; without a listener the process would crash.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new ConfigError(`${variable}: cannot connect to the database at ${describeTarget(connectionString)}: ${reasonOf(error)}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Host, port and database name only: the URL may carry a password, which must never reach a log or a terminal. */
function describeTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
    return `${url.hostname || 'localhost'}:${url.port || '5432'}/${database}`;
  } catch {
    return 'the configured address';
  }
}

/** The driver's own words for a Postgres refusal (they never include the password), a short phrase for a socket error. */
function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const socketReasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused (is Postgres running and listening there?)',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  if (code !== undefined && socketReasons[code] !== undefined) return socketReasons[code];
  const message = error instanceof Error ? error.message : String(error);
  if (/timeout/i.test(message)) return 'no answer in time (connection timed out)';
  // One line, whatever the driver sent.
  return message.split('\n')[0] || 'unknown error';
}
