// What each holder of a Postgres connection does when its backend is terminated under it, one at a time and
// deterministically: a transaction waiting between statements, the maintenance pass's lock connection, the
// revocation listener, /readyz and the rate limiter with the database out of reach.
import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineEffects } from '../../src/engine/effects.ts';
import { Database, isDatabaseUnavailable } from '../../src/infra/database.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { apiKeyCacheTtlMs } from '../../src/limits.ts';
import { revocationListenerApplicationName } from '../../src/plugins/authenticator.ts';
import { PostgresRateLimitStore } from '../../src/plugins/rate-limit.ts';
import { runMaintenance } from '../../src/services/maintenance.ts';
import { buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { adminUrl, createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let tenant: TestTenant;
let admin: pg.Client;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  tenant = await createTestTenant(database.connection);
  admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await admin?.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`).catch(() => {});
  await admin?.end();
  await database?.drop();
});

const databaseName = () => new URL(database.url!).pathname.slice(1);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Terminates the backends `where` selects in the test database and waits until they have exited. */
async function terminate(where: string, values: unknown[] = []): Promise<number[]> {
  const condition = `datname = $1 AND pid <> pg_backend_pid() AND (${where})`;
  const { rows } = await admin.query(`SELECT pid FROM pg_stat_activity WHERE ${condition}`, [databaseName(), ...values]);
  const pids = rows.map((row) => row.pid as number);
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  await expect.poll(async () => (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)', [pids])).rows[0].n, { timeout: 5_000 }).toBe(0);
  // The client reads the backend's farewell (FATAL 57P01) and the closed socket a moment later.
  await sleep(50);
  return pids;
}

async function listenerPids(): Promise<number[]> {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [databaseName(), revocationListenerApplicationName]);
  return rows.map((row) => row.pid as number);
}

describe('a pooled connection terminated while it is checked out', () => {
  it('a transaction waiting between statements: the process lives, the next statement fails as unavailable, the connection is not pooled again', async () => {
    const db = new Database({ ...database.connection, max: 2 });
    try {
      let continueWork!: () => void;
      const paused = new Promise<void>((resolve) => (continueWork = resolve));
      let reportPid!: (pid: number) => void;
      const backendPid = new Promise<number>((resolve) => (reportPid = resolve));
      const transaction = db.system(async (tx) => {
        reportPid((await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
        await paused;
        await tx.query('SELECT 1');
      });
      const pid = await backendPid;
      await terminate('pid = $2', [pid]);
      continueWork();
      const failure = await transaction.then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      // pg's own words for a statement on a client whose connection failed: the database unavailable, not a bug.
      expect((failure as Error).message).toMatch(/not queryable|terminat/i);
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(db.pool.totalCount).toBe(0);
      // The pool opens a fresh connection for the next transaction.
      const next = await db.system(async (tx) => (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      expect(next).not.toBe(pid);
    } finally {
      await db.close();
    }
  });

  it("the maintenance pass's lock connection: the process lives, the pass fails, the lock is free for the next pass", async () => {
    const db = new Database({ ...database.connection, max: 4 });
    const blocker = new pg.Client(database.connection);
    await blocker.connect();
    try {
      // An old idempotency record that the pass will delete, locked by another transaction so the pass waits on it
      // while it holds the maintenance lock on its own connection.
      const key = `old-${Date.now()}`;
      await blocker.query(
        `INSERT INTO idempotency_records (tenant_id, operation, idempotency_key, fingerprint, response_status, response_headers, response_body, created_at)
         VALUES ($1, 'create', $2, $3, 201, '{}', '{}', now() - interval '30 days')`,
        [tenant.tenantId, key, Buffer.alloc(32)],
      );
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM idempotency_records WHERE idempotency_key = $1 FOR UPDATE', [key]);
      const pass = runMaintenance(db, engineEffects(ephemeralKeyring())).then(() => undefined, (error: unknown) => error);
      // The maintenance lock's key, 7213402118, as pg_locks shows a bigint key: its high and low 32 bits.
      const lockHolder = `pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 1 AND objid = 2918434822)`;
      await expect
        .poll(async () => (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND ${lockHolder}`, [databaseName()])).rows[0].n, { timeout: 5_000 })
        .toBe(1);
      await terminate(lockHolder);
      await blocker.query('COMMIT');
      const failure = await pass;
      expect(isDatabaseUnavailable(failure)).toBe(true);
      // The pass's own work committed; the lock went with its session, so the next pass runs.
      const next = await runMaintenance(db, engineEffects(ephemeralKeyring()));
      expect(next.ran).toBe(true);
    } finally {
      await blocker.end();
      await db.close();
    }
  });
});

describe('the revocation listener', () => {
  it('reconnects after its connection is terminated: a key revoked on one app is refused by the other at once', async () => {
    const [first, second] = [await buildTestApp(database.connection), await buildTestApp(database.connection)];
    apps.push(first, second);
    await expect.poll(listenerPids, { timeout: 5_000 }).toHaveLength(2);
    const key = await tenant.key('agent');
    const keyId = (await second.inject({ url: '/v1/auth/principal', headers: bearer(key) })).json().subject;

    const terminated = await terminate('application_name = $2', [revocationListenerApplicationName]);
    expect(terminated).toHaveLength(2);
    const revokedAt = Date.now();
    expect((await first.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${keyId}`, headers: bearer(tenant.adminKey) })).statusCode).toBe(200);
    // Either the notification reaches the new subscription, or the subscription came back after it and the cache
    // was forgotten: both well inside the cache's 5 s.
    await expect
      .poll(async () => (await second.inject({ url: '/v1/auth/principal', headers: bearer(key) })).json().error?.code, { timeout: 2_000, interval: 20 })
      .toBe('auth.credential_revoked');
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
    const back = await listenerPids();
    expect(back).toHaveLength(2);
    expect(back.filter((pid) => terminated.includes(pid))).toEqual([]);
  });

  it('forgets every cached key when it subscribes again, since what was announced meanwhile is lost', async () => {
    const [first, second] = [await buildTestApp(database.connection), await buildTestApp(database.connection)];
    apps.push(first, second);
    await expect.poll(listenerPids, { timeout: 5_000 }).toHaveLength(apps.length);
    const key = await tenant.key('agent');
    // Both pools hold a connection from here on; only new ones will be refused.
    expect((await first.inject({ url: '/v1/auth/principal', headers: bearer(tenant.adminKey) })).statusCode).toBe(200);
    const keyId = (await second.inject({ url: '/v1/auth/principal', headers: bearer(key) })).json().subject;
    const cachedAt = Date.now();

    // As in a restart: the listeners' sessions end and no new connection is let in for a while, during which the
    // revocation (on a connection the first app's pool already holds) is announced to nobody.
    await admin.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS false`);
    try {
      await terminate('application_name = $2', [revocationListenerApplicationName]);
      expect((await first.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${keyId}`, headers: bearer(tenant.adminKey) })).statusCode).toBe(200);
      await sleep(100);
      // The second app still answers from its cache: nothing told it.
      expect((await second.inject({ url: '/v1/auth/principal', headers: bearer(key) })).statusCode).toBe(200);
    } finally {
      await admin.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`);
    }
    // Once subscribed again, the second app has forgotten the key and reads it again: revoked.
    await expect.poll(listenerPids, { timeout: 5_000, interval: 20 }).toHaveLength(apps.length);
    await expect
      .poll(async () => (await second.inject({ url: '/v1/auth/principal', headers: bearer(key) })).json().error?.code, { timeout: 1_000, interval: 20 })
      .toBe('auth.credential_revoked');
    // Before the cache would have let the key go by itself: otherwise this test proves nothing.
    expect(Date.now() - cachedAt).toBeLessThan(apiKeyCacheTtlMs);
  });

  it('closes with the app and is not reopened', async () => {
    for (const app of apps.splice(0)) await app.close();
    await expect.poll(listenerPids, { timeout: 5_000 }).toEqual([]);
    const app = await buildTestApp(database.connection);
    await expect.poll(listenerPids, { timeout: 5_000 }).toHaveLength(1);
    await app.close();
    await expect.poll(listenerPids, { timeout: 5_000 }).toEqual([]);
    await sleep(300);
    expect(await listenerPids()).toEqual([]);
  });
});

describe('the database out of reach', () => {
  async function closedPort(): Promise<number> {
    return new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
  }

  it('/readyz says the database is unreachable (not that migrations are pending), with Retry-After', async () => {
    const unreachable = await buildTestApp({ connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/none` });
    try {
      const answer = await unreachable.inject({ url: '/readyz' });
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.json().error).toMatchObject({ code: 'internal.unavailable', details: { reason: 'database_unreachable' } });
      expect(answer.json().error.details).not.toHaveProperty('schema_version');
    } finally {
      await unreachable.close();
    }
  });

  it('the rate limiter without its counters (Postgres out of reach) answers 503 with Retry-After', async () => {
    const pool = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/none` });
    pool.on('error', () => {});
    const limited = await buildTestApp(database.connection, { appOptions: {
      rateLimit: { perCredential: 100, perAddress: 100, store: new PostgresRateLimitStore(pool) },
    } });
    try {
      for (const url of ['/v1/auth/principal', '/.well-known/jwks.json']) {
        const answer = await limited.inject({ url, headers: bearer(tenant.adminKey) });
        expect(answer.statusCode, url).toBe(503);
        expect(answer.json().error.code).toBe('internal.unavailable');
        expect(answer.headers['retry-after'], url).toBe('1');
      }
    } finally {
      await limited.close();
      await pool.end();
    }
  });
});
