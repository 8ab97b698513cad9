// Which connection each use of Postgres takes: the request pool's (DATABASE_URL, which may lead through a pooler in
// transaction mode) and the session's (DATABASE_SESSION_URL, for what holds state across transactions).
import type pg from 'pg';
import type { DatabaseConfig } from './database.ts';

export interface DatabaseConnections {
  /** The request pool's: every unit of work on it is one transaction (src/infra/database.ts). */
  readonly pool: DatabaseConfig;
  /** One server session per connection, for the migrations' advisory lock and the revocation listener's LISTEN. */
  readonly session: pg.ClientConfig;
}

/**
 * Without a session URL, DATABASE_URL serves both. With one, DATABASE_URL is taken to lead through a pooler in
 * transaction mode (PgBouncer `pool_mode = transaction`, docs/deploy.md): consecutive transactions of one pool
 * connection may run on different server sessions, and a session serves other clients in between, so the pool
 * keeps no session state there. `sharedSession` says exactly that to the Database (it then prepares no statement
 * by name, as behind the embedded database's multiplexer), and what needs a session goes to the session URL.
 */
export function databaseConnectionsOf(databaseUrl: string, databaseSessionUrl: string | undefined): DatabaseConnections {
  if (databaseSessionUrl === undefined) {
    const connection = { connectionString: databaseUrl };
    return { pool: connection, session: connection };
  }
  return { pool: { connectionString: databaseUrl, sharedSession: true }, session: { connectionString: databaseSessionUrl } };
}
