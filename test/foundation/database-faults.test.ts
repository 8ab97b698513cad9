// Database faults under load, as an operator meets them: two server processes on one Postgres database carry a
// lifecycle load (create, fund, evidence, confirm, each with an idempotency key) while every backend of that
// database is terminated again and again, and once as in a restart (everything, listeners and timers included,
// with new connections refused for a while). No process may exit, no answer may be a 500, every 503 must carry
// Retry-After, every intent must complete after retries with nothing lost or duplicated, and afterwards a key
// revoked on one process must be refused by the other at once (its revocation listener reconnected).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revocationListenerApplicationName } from '../../src/plugins/authenticator.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { adminUrl, createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/** Concurrent clients, each running one intent's lifecycle after another, alternating between the processes. */
const loops = 6;
/** How long backends are terminated for; the restart-like round comes halfway. */
const stormMs = 12_000;
const terminateEveryMs = 300;
/** How long the restart-like round refuses new connections. */
const restartRefusalMs = 1_500;
/** A client gives up on one request after this long (the SDK's own budget is of the same order). */
const requestBudgetMs = 30_000;

let database: TestDatabase;
let tenant: TestTenant;
let admin: pg.Client;
let servers: ServerProcess[] = [];
const exits: string[] = [];
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  tenant = await createTestTenant(database.connection);
  admin = new pg.Client({ connectionString: adminUrl });
  admin.on('error', () => {});
  await admin.connect();
  // The limiter stays on (it holds connections too); its budget is out of the load's reach.
  const env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_RATE_LIMIT_PER_MINUTE: '1000000' };
  servers = await Promise.all([1, 2].map(() => startServerProcess(env)));
  servers.forEach((server, index) => void server.exited.then((code) => exits.push(`process ${index} exited with ${code}:\n${server.output()}`)));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await admin?.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`).catch(() => {});
  await admin?.end();
  await database?.drop();
});

const databaseName = () => new URL(database.url!).pathname.slice(1);

/** What every answer of the load was, for the assertions at the end. */
const seen = { answers: 0, unavailable: 0, withoutRetryAfter: [] as string[], serverErrors: [] as string[], networkErrors: [] as string[] };

/** One request as the SDK sends it: a 503 is retried after its Retry-After with the same key and body, a 409
 * `idempotency.request_in_progress` after a short backoff, until a final answer or the budget runs out. */
async function send(server: ServerProcess, path: string, body: unknown, headers: Record<string, string>): Promise<HttpAnswer> {
  const deadline = Date.now() + requestBudgetMs;
  for (let attempt = 0; ; attempt += 1) {
    let answer: HttpAnswer;
    try {
      answer = await call(server.baseUrl, tenant.adminKey, 'POST', path, body, headers);
    } catch (error) {
      seen.networkErrors.push(`${path}: ${(error as Error).message}`);
      throw error;
    }
    seen.answers += 1;
    if (answer.status >= 500 && answer.status !== 503) seen.serverErrors.push(`${answer.status} ${path}: ${answer.text}`);
    let waitMs: number | undefined;
    if (answer.status === 503) {
      seen.unavailable += 1;
      const retryAfter = answer.headers.get('retry-after');
      if (retryAfter === null) seen.withoutRetryAfter.push(`${path}: ${answer.text}`);
      waitMs = Math.min(Number(retryAfter ?? 1) * 1000, 5_000);
    } else if (answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress') {
      waitMs = Math.min(100 * 2 ** attempt, 1_000);
    }
    if (waitMs === undefined || Date.now() + waitMs > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** One intent from creation to release, each step on the other process than the one before. */
async function lifecycle(loop: number, round: number): Promise<string> {
  const on = (step: number) => servers[(loop + round + step) % 2]!;
  const created = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
  const intentId = created.intent_id as string;
  const expectStatus = (answer: HttpAnswer, status: number, step: string) => expect(answer.status, `${step} ${intentId}: ${answer.text}`).toBe(status);
  expectStatus(await send(on(0), '/harbor/intents', created, { 'idempotency-key': `create-${intentId}` }), 201, 'create');
  const fundPath = `/harbor/intents/${intentId}/fund`;
  const challenge = await send(on(1), fundPath, {}, { 'idempotency-key': `fund-${intentId}` });
  expectStatus(challenge, 402, 'challenge');
  const credential = sandboxX402PaymentSignature(challenge.headers.get('payment-required')!, { from: sandboxX402Payers.success });
  expectStatus(await send(on(2), fundPath, {}, { 'idempotency-key': `fund-${intentId}`, 'payment-signature': credential }), 200, 'fund');
  const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
  expectStatus(await send(on(3), `/harbor/intents/${intentId}/evidence`, evidence, { 'idempotency-key': `evidence-${intentId}` }), 200, 'evidence');
  const confirmed = await send(on(4), `/harbor/intents/${intentId}/settlement/confirm`, {}, { 'idempotency-key': `confirm-${intentId}` });
  expectStatus(confirmed, 200, 'confirm');
  expect(confirmed.json.state).toBe('released');
  return intentId;
}

/** Terminates the backends of the test database: all but the revocation listeners, or (`everything`) all. */
async function terminateBackends(everything: boolean): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2 OR application_name <> $3)`,
    [databaseName(), everything, revocationListenerApplicationName],
  );
  return rows[0].n;
}

/** As a restart looks from outside: new connections refused, every session ended, then connections allowed again. */
async function restartLike(): Promise<void> {
  await admin.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS false`);
  try {
    await terminateBackends(true);
    await new Promise((resolve) => setTimeout(resolve, restartRefusalMs));
  } finally {
    await admin.query(`ALTER DATABASE ${databaseName()} ALLOW_CONNECTIONS true`);
  }
}

async function listeners(): Promise<number> {
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`, [
    databaseName(),
    revocationListenerApplicationName,
  ]);
  return rows[0].n;
}

it('survives terminated backends under load: no exit, no 500, Retry-After on every 503, nothing lost or duplicated', async () => {
  expect(await listeners()).toBe(2);
  const stormEndsAt = Date.now() + stormMs;
  const intentIds: string[] = [];
  const failures: unknown[] = [];
  const load = Array.from({ length: loops }, async (_, loop) => {
    try {
      for (let round = 0; Date.now() < stormEndsAt; round += 1) intentIds.push(await lifecycle(loop, round));
    } catch (error) {
      failures.push(error);
    }
  });
  let terminated = 0;
  let restarted = false;
  // A process that exits ends the storm early: the test has failed already.
  while (Date.now() < stormEndsAt && exits.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, terminateEveryMs));
    if (!restarted && Date.now() > stormEndsAt - stormMs / 2) {
      restarted = true;
      await restartLike();
    } else {
      terminated += await terminateBackends(false);
    }
  }
  await Promise.all(load);

  expect(exits).toEqual([]);
  expect(seen.networkErrors).toEqual([]);
  expect(failures).toEqual([]);
  expect(seen.serverErrors).toEqual([]);
  expect(seen.withoutRetryAfter).toEqual([]);
  // The storm reached the load: backends were terminated under it and requests met the database unavailable.
  expect(terminated).toBeGreaterThan(0);
  expect(seen.unavailable).toBeGreaterThan(0);
  expect(intentIds.length).toBeGreaterThanOrEqual(loops);

  // Every intent the load started was released, funded once and released once.
  const check = new pg.Client({ connectionString: database.url });
  await check.connect();
  try {
    const { rows: states } = await check.query(`SELECT state, count(*)::int AS n FROM intents WHERE tenant_id = $1 GROUP BY state`, [tenant.tenantId]);
    expect(states).toEqual([{ state: 'released', n: intentIds.length }]);
    const { rows: postings } = await check.query(
      `SELECT event_kind, count(DISTINCT transaction_id)::int AS transactions, count(DISTINCT intent_id)::int AS intents
         FROM ledger_rows WHERE tenant_id = $1 GROUP BY event_kind ORDER BY event_kind`,
      [tenant.tenantId],
    );
    expect(postings).toEqual([
      { event_kind: 'fund', transactions: intentIds.length, intents: intentIds.length },
      { event_kind: 'release', transactions: intentIds.length, intents: intentIds.length },
    ]);
    // The tree-head timer carried on after its failed ticks: the log's every leaf is under a signed head.
    await expect
      .poll(async () => {
        const { rows } = await check.query(
          `SELECT l.tree_size::int AS leaves, (SELECT max(t.tree_size)::int FROM transparency_tree_heads t WHERE t.tenant_id = l.tenant_id) AS signed
             FROM transparency_log_heads l WHERE l.tenant_id = $1`,
          [tenant.tenantId],
        );
        return rows[0] && rows[0].leaves === rows[0].signed;
      }, { timeout: 10_000, interval: 250 })
      .toBe(true);
  } finally {
    await check.end();
  }
  const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
  expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });

  // Both revocation listeners are back, and a key revoked on one process is refused by the other at once.
  await expect.poll(listeners, { timeout: 5_000, interval: 100 }).toBe(2);
  const [first, second] = servers as [ServerProcess, ServerProcess];
  const created = await call(first.baseUrl, tenant.adminKey, 'POST', '/v1/admin/api-keys', { role: 'agent', name: 'revoked after the storm' });
  expect(created.status, created.text).toBe(201);
  // The second process caches the key, then the first revokes it.
  expect((await call(second.baseUrl, created.json.api_key, 'GET', '/v1/auth/principal')).status).toBe(200);
  const revokedAt = Date.now();
  expect((await call(first.baseUrl, tenant.adminKey, 'DELETE', `/v1/admin/api-keys/${created.json.key_id}`)).status).toBe(200);
  let refusedAfterMs: number | undefined;
  while (Date.now() - revokedAt < 3_000) {
    const answer = await call(second.baseUrl, created.json.api_key, 'GET', '/v1/auth/principal');
    if (answer.status === 401) {
      refusedAfterMs = Date.now() - revokedAt;
      expect(answer.json.error.code).toBe('auth.credential_revoked');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // The cache would hold the key for 5 s; only the listener's notification makes this quick.
  expect(refusedAfterMs).toBeDefined();
  expect(refusedAfterMs!).toBeLessThan(500);
  expect(exits).toEqual([]);
}, 90_000);
