// Embedded mode: Postgres (PGlite, compiled to WASM) in this process, served on a local socket so that the
// app and the `svc` CLI reach it with the same `pg` client and the same SQL as a real Postgres.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { DatabaseConfig } from './database.ts';
import { createFolder, fileErrorReason } from './directories.ts';

/** Connections the socket multiplexer accepts; PGlite runs one statement at a time behind it. */
const embeddedConnectionsMax = 32;
/** The longest path a Unix socket may have on Linux (sun_path is 108 bytes including the terminator). */
const unixSocketPathLengthMax = 107;
const socketPort = 5432;

export interface EmbeddedPostgres {
  /** How a pg client reaches it. */
  readonly connection: DatabaseConfig;
  close(): Promise<void>;
}

interface RuntimeFile {
  readonly pid: number;
  readonly connection: DatabaseConfig;
}

/** The embedded database cannot be opened (another process holds it): an operating error, said in one line. */
export class EmbeddedDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedDatabaseError';
  }
}

const runtimeFileName = 'embedded.json';
const lockFileName = 'embedded.lock';

/** Opens the embedded database in `dataDir` and serves it. Only one process may hold it: a second one gets an
 * error that says which process has it. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  try {
    createFolder(dataDir, 0o700);
  } catch (error) {
    throw new EmbeddedDatabaseError(`SVC_DATA_DIR: cannot create ${dataDir}: ${fileErrorReason(error)}`);
  }
  const releaseLock = acquireLock(dataDir);
  try {
    const database = await PGlite.create(path.join(dataDir, 'pgdata'));
    const socketPath = path.join(dataDir, `.s.PGSQL.${socketPort}`);
    const useUnixSocket = socketPath.length <= unixSocketPathLengthMax;
    if (useUnixSocket) fs.rmSync(socketPath, { force: true });
    const server = new PGLiteSocketServer({
      db: database,
      maxConnections: embeddedConnectionsMax,
      ...(useUnixSocket ? { path: socketPath } : { host: '127.0.0.1', port: 0 }),
    });
    await server.start();
    const connection: DatabaseConfig = {
      ...(useUnixSocket ? { host: dataDir, port: socketPort } : { host: '127.0.0.1', port: tcpPortOf(server) }),
      user: 'postgres',
      database: 'postgres',
      sharedSession: true,
      heldByOneProcess: true,
    };
    // The multiplexer serializes statements; more pool connections than this only queue.
    const runtime: RuntimeFile = { pid: process.pid, connection: { ...connection, max: 8 } };
    fs.writeFileSync(path.join(dataDir, runtimeFileName), JSON.stringify(runtime), { mode: 0o600 });
    return {
      connection: runtime.connection,
      async close() {
        fs.rmSync(path.join(dataDir, runtimeFileName), { force: true });
        await server.stop();
        await database.close();
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

/** For the CLI: the connection of a server that is running embedded on `dataDir`, or undefined. */
export function findRunningEmbeddedPostgres(dataDir: string): DatabaseConfig | undefined {
  let runtime: RuntimeFile;
  try {
    runtime = JSON.parse(fs.readFileSync(path.join(dataDir, runtimeFileName), 'utf8')) as RuntimeFile;
  } catch {
    return undefined;
  }
  return isProcessAlive(runtime.pid) ? runtime.connection : undefined;
}

function acquireLock(dataDir: string): () => void {
  const lockPath = path.join(dataDir, lockFileName);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(fs.readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && isProcessAlive(holder)) {
        throw new EmbeddedDatabaseError(
          `the embedded database in ${dataDir} is open in process ${holder}; stop it, or set DATABASE_URL to use a Postgres server`,
        );
      }
      // The holder died without cleaning up (SIGKILL, power loss): the lock is stale.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new EmbeddedDatabaseError(`could not lock the embedded database in ${dataDir}`);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tcpPortOf(server: PGLiteSocketServer): number {
  // The package does not expose the bound address; its net.Server does.
  const address = (server as unknown as { server?: { address(): unknown } }).server?.address();
  if (address && typeof address === 'object' && 'port' in address) return (address as { port: number }).port;
  throw new Error('the embedded socket server did not report its port');
}
