// Funding in two phases (docs/engine.md "Funding in two phases"): the rail is called with no row lock and no
// idempotency lock held; a server killed (SIGKILL) between the phases loses and duplicates nothing: the retry with
// the same idempotency key (here with a new credential) completes the funding exactly once, with the first
// credential, and `svc ledger verify` passes.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { fundingClaimLeaseMs } from '../../src/limits.ts';
import { idempotencyLockId } from '../../src/plugins/idempotency.ts';
import { maintenanceLockKey } from '../../src/services/maintenance.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { X402SandboxAdapter } from '../../src/rails/x402/sandbox.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let database: TestDatabase;
let db: Database;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

interface FundingRows {
  readonly state: string;
  readonly attempts: Array<{ status: string; claimed: boolean }>;
  readonly fundTransactions: number;
  readonly fundRows: number;
}

async function fundingRows(tenantId: string, intentId: string): Promise<FundingRows> {
  return db.tenant(tenantId, async (tx) => {
    const state = (await tx.query(`SELECT state FROM intents WHERE intent_id = $1`, [intentId])).rows[0]!.state as string;
    const attempts = (await tx.query(`SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1 ORDER BY created_at`, [intentId])).rows;
    const ledger = (await tx.query(
      `SELECT count(DISTINCT transaction_id)::int AS transactions, count(*)::int AS rows FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`,
      [intentId],
    )).rows[0]!;
    return { state, attempts: attempts as FundingRows['attempts'], fundTransactions: ledger.transactions, fundRows: ledger.rows };
  });
}

describe('the rail call holds no lock', () => {
  let app: FastifyInstance;
  let tenant: TestTenant;

  beforeAll(async () => {
    app = await buildTestApp(database.connection);
    tenant = await createTestTenant(database.connection, 'sandbox');
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await app?.close();
  });

  it('neither the intent row nor the idempotency key is locked while the rail judges the credential', async () => {
    const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    expect((await post('/harbor/intents', body)).statusCode).toBe(201);
    const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
    expect(challenge.statusCode).toBe(402);
    const credential = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
    const key = `fund-${intentId}`;

    const seenDuringCall: Array<{ rowFree: boolean; keyFree: boolean; claimed: boolean }> = [];
    const authorize = X402SandboxAdapter.prototype.authorize;
    vi.spyOn(X402SandboxAdapter.prototype, 'authorize').mockImplementation(async function (this: X402SandboxAdapter, ...args) {
      // Another connection takes, without waiting, the locks a money transaction would hold.
      seenDuringCall.push(await db.system(async (tx) => {
        const [row] = (await tx.query(`SELECT pg_try_advisory_xact_lock($1) AS key_free`, [idempotencyLockId(tenant.tenantId, 'intent.fund', key)])).rows;
        const locked = await tx.query(`SELECT 1 FROM intents WHERE tenant_id = $1 AND intent_id = $2 FOR UPDATE SKIP LOCKED`, [tenant.tenantId, intentId]);
        const claim = await tx.query(`SELECT claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE tenant_id = $1 AND intent_id = $2`, [tenant.tenantId, intentId]);
        return { rowFree: locked.rowCount === 1, keyFree: row!.key_free === true, claimed: claim.rows[0]!.claimed === true };
      }));
      return authorize.apply(this, args);
    });

    const funded = await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': credential, 'idempotency-key': key });
    expect(funded.statusCode, funded.body).toBe(200);
    // The claim was committed before the call (phase 1), and nothing was locked during it.
    expect(seenDuringCall).toEqual([{ rowFree: true, keyFree: true, claimed: true }]);
    expect(await fundingRows(tenant.tenantId, intentId)).toEqual({
      state: 'funded', attempts: [{ status: 'succeeded', claimed: false }], fundTransactions: 1, fundRows: 2,
    });
  });
});

describe('a crash between the phases', () => {
  let server: ServerProcess | undefined;
  let tenant: TestTenant;

  beforeAll(async () => {
    tenant = await createTestTenant(database.connection, 'sandbox');
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  const start = (crashAt?: string) =>
    startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) });

  /** What a client does after a failure: the same request, same key, until it is no longer "in progress". */
  async function retryUntilFinal(path: string, headers: Record<string, string>): Promise<HttpAnswer> {
    const deadline = Date.now() + fundingClaimLeaseMs + 20_000;
    for (;;) {
      const answer = await call(server!.baseUrl, tenant.adminKey, 'POST', path, {}, headers);
      if (!(answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress')) return answer;
      if (Date.now() > deadline) throw new Error(`${path} stayed in progress`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('is recovered by the retry with the same key: funded once, one fund posting, the ledger verifies', async () => {
    server = await start('fund.after_phase1');
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    const fundPath = `/harbor/intents/${intentId}/fund`;
    expect((await call(server.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body)).status).toBe(201);
    // A challenge needs no rail call: the crash point is not reached.
    const challenge = await call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {});
    expect(challenge.status).toBe(402);
    const credential = sandboxX402PaymentSignature(challenge.headers.get('payment-required')!, { from: sandboxX402Payers.success });
    const headers = { 'payment-signature': credential, 'idempotency-key': `fund-${intentId}` };

    // The server kills itself after phase 1 commits, before the rail call: the client sees no answer.
    await expect(call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {}, headers)).rejects.toThrow();
    expect(await server.exited).toBeNull();
    expect(server.child.signalCode).toBe('SIGKILL');
    expect(await fundingRows(tenant.tenantId, intentId)).toEqual({
      state: 'open', attempts: [{ status: 'challenged', claimed: true }], fundTransactions: 0, fundRows: 0,
    });

    // The maintenance lock held from here keeps the new process's sweeper from resolving the claim first: what
    // follows is the requests' own doing. Held as the pass holds it, in an open transaction: behind a pooler in
    // transaction mode a session lock would stay on a server session the pass itself may be given.
    const sweeperLock = await db.pool.connect();
    await sweeperLock.query('BEGIN');
    await sweeperLock.query('SELECT pg_advisory_xact_lock($1)', [maintenanceLockKey]);
    try {
      server = await start();
      // Another credential (a fresh challenge) under no key, or another key, may not reach its rail while the first
      // one's outcome is unknown, even after the lease: it could charge the principal a second time.
      const second = await call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {});
      expect(second.status).toBe(402);
      const secondCredential = sandboxX402PaymentSignature(second.headers.get('payment-required')!, { from: sandboxX402Payers.success });
      await new Promise((resolve) => setTimeout(resolve, fundingClaimLeaseMs));
      for (const otherKey of [{}, { 'idempotency-key': `other-${intentId}` }] as Array<Record<string, string>>) {
        const refused = await call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {}, { 'payment-signature': secondCredential, ...otherKey });
        expect(refused.status, refused.text).toBe(409);
        expect(refused.json.error.code).toBe('idempotency.request_in_progress');
      }

      // The same key is the same request, whatever credential it carries now: it takes the claim over and funds
      // with the first credential.
      const recovered = await retryUntilFinal(fundPath, { 'payment-signature': secondCredential, 'idempotency-key': headers['idempotency-key'] });
      expect(recovered.status, recovered.text).toBe(200);
      expect(recovered.json).toMatchObject({ state: 'funded', funded: true });
      expect(recovered.headers.get('idempotent-replayed')).toBeNull();
      const replay = await call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {}, headers);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(recovered.text);
      // The second credential now finds a funded intent: nothing moves twice.
      const late = await call(server.baseUrl, tenant.adminKey, 'POST', fundPath, {}, { 'payment-signature': secondCredential });
      expect(late.status).toBe(409);
      expect(late.json.error.code).toBe('intent.invalid_state');
    } finally {
      await sweeperLock.query('ROLLBACK');
      sweeperLock.release();
    }

    const rows = await fundingRows(tenant.tenantId, intentId);
    expect(rows.state).toBe('funded');
    expect(rows.fundTransactions).toBe(1);
    expect(rows.fundRows).toBe(2);
    expect(rows.attempts.filter((attempt) => attempt.status === 'succeeded')).toHaveLength(1);
    expect(rows.attempts.every((attempt) => !attempt.claimed)).toBe(true);
    const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
  }, 120_000);
});
