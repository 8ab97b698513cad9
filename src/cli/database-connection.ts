// How the CLI reaches the database: DATABASE_SESSION_URL when set (the CLI migrates first, which needs a session of
// its own, and its two connections gain nothing from a pooler), else DATABASE_URL; otherwise the embedded database,
// through the running server's socket when a server has it open, or opened by the CLI itself when none does.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { assertDatabaseReachable } from '../infra/database-reachability.ts';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres } from '../infra/embedded-postgres.ts';

export interface CliConnection {
  readonly connection: pg.PoolConfig;
  close(): Promise<void>;
}

export async function openCliConnection(config: Config): Promise<CliConnection> {
  if (config.databaseSessionUrl) {
    await assertDatabaseReachable(config.databaseSessionUrl, 'DATABASE_SESSION_URL');
    return { connection: { connectionString: config.databaseSessionUrl }, close: async () => {} };
  }
  if (config.databaseUrl) {
    // One line naming DATABASE_URL when it does not answer, rather than the driver's error.
    await assertDatabaseReachable(config.databaseUrl);
    return { connection: { connectionString: config.databaseUrl }, close: async () => {} };
  }
  const running = findRunningEmbeddedPostgres(config.dataDir);
  if (running) return { connection: running, close: async () => {} };
  const embedded = await startEmbeddedPostgres(config.dataDir);
  return { connection: embedded.connection, close: () => embedded.close() };
}
