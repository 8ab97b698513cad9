// Builds the real app on a test database, exactly as server.ts does, and gives tests a few fixtures.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { Writable } from 'node:stream';
import { app, type AppOptions } from '../../src/app.ts';
import type { Environment } from '../../src/credentials/api-key.ts';
import type { Role } from '../../src/credentials/roles.ts';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring, type GatewayKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { railRedactedPaths } from '../../src/rails/index.ts';
import { createFastify } from '../../src/server-options.ts';
import { issueApiKey } from '../../src/services/api-key-service.ts';
import { createTenant } from '../../src/services/tenant-service.ts';
import { findTenant } from '../../src/db/tenant-repository.ts';
import { isThroughPooler, sessionUrlOf } from './database.ts';

/** Collects every log line the app writes, for tests that inspect logs. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(chunk.toString('utf8'));
    done();
  }
  get text(): string {
    return this.lines.join('');
  }
}

/** What a test may change about the app it builds; everything left out is as server.ts builds it. */
export interface TestAppOptions {
  /** Collects the app's log lines (at trace level); without it the app logs nothing. */
  readonly logs?: LogCapture;
  /** The gateway's signing keys; an ephemeral keyring by default. */
  readonly gatewayKeys?: GatewayKeyring;
  /** Runs on the bare instance before the app is registered (e.g. an onRoute hook that lists routes). */
  readonly beforeApp?: (instance: FastifyInstance) => void;
  /** Other app options (rate limits, say). */
  readonly appOptions?: Partial<AppOptions>;
}

export async function buildTestApp(connection: pg.PoolConfig, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const { logs, gatewayKeys = ephemeralKeyring(), beforeApp, appOptions = {} } = options;
  const logger = createLogger(logs ? 'trace' : 'silent', logs, railRedactedPaths());
  const instance = createFastify(logger);
  beforeApp?.(instance);
  // Behind the tests' pooler the revocation listener needs the server directly, as DATABASE_SESSION_URL gives it.
  const sessionConnection = isThroughPooler(connection.connectionString) ? { connectionString: sessionUrlOf(connection.connectionString!) } : undefined;
  // Every answer is checked against its route contract unless a test says otherwise (docs/api.md).
  await instance.register(app, { maintenance: false, validateResponses: true, ...(sessionConnection ? { sessionConnection } : {}), ...appOptions, connection, gatewayKeys });
  await instance.ready();
  return instance;
}

export interface TestTenant {
  readonly tenantId: string;
  readonly adminKey: string;
  /** Issues another key of this tenant with the given role. */
  key(role: Role, scopes?: string[]): Promise<string>;
}

let tenantCounter = 0;

export async function createTestTenant(
  connection: pg.PoolConfig,
  environment: Environment = 'sandbox',
  tenantId = `tenant-${process.pid}-${++tenantCounter}`,
): Promise<TestTenant> {
  const database = new Database({ ...connection, max: 1 });
  try {
    const { adminKey } = await createTenant(database, tenantId, environment);
    return {
      tenantId,
      adminKey: adminKey.apiKey,
      async key(role, scopes) {
        const db = new Database({ ...connection, max: 1 });
        try {
          return await db.system(async (tx) => {
            const tenant = (await findTenant(tx, tenantId))!;
            return (await issueApiKey(tx, tenant, { role, ...(scopes ? { scopes } : {}) })).apiKey;
          });
        } finally {
          await db.close();
        }
      },
    };
  } finally {
    await database.close();
  }
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
