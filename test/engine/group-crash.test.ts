// Crash safety of group commit: a server process killed (SIGKILL) with a group of commands run in its transaction
// and its COMMIT not yet sent (the crash point `group.before_commit`), then replaced by a server without it; the
// clients retry with the same idempotency keys. Nothing is lost or duplicated: every intent is funded once and
// settled once, and `svc ledger verify` passes. Then the same with a kill at an arbitrary moment of a batch sent at
// once (groups committing, some not yet begun), as test/engine/crash-safety.test.ts does for one command per
// transaction.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const batchSize = 24;
let database: TestDatabase;
let db: Database;
let tenant: TestTenant;
let server: ServerProcess | undefined;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await db?.close();
  await database?.drop();
});

/** A server that groups commands sent together (a window long enough for a loaded machine), optionally dying at
 * the crash point. */
const start = (crash: boolean) =>
  startServerProcess({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    SVC_GROUP_COMMIT: 'on',
    SVC_GROUP_COMMIT_WINDOW_MS: '20',
    SVC_GROUP_COMMIT_SIZE: '8',
    ...(crash ? { SVC_TEST_CRASH_AT: 'group.before_commit' } : {}),
  }, 180_000);

interface Step {
  readonly path: string;
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

/** Sends the whole batch at once; with `killAtFirstAnswer`, kills the server when the first answer is back. */
async function batch(steps: Step[], killAtFirstAnswer: boolean): Promise<void> {
  const running = server!;
  let killed = false;
  await Promise.all(
    steps.map((step) =>
      call(running.baseUrl, tenant.adminKey, 'POST', step.path, step.body, step.headers)
        .then(() => {
          if (killAtFirstAnswer && !killed) {
            killed = true;
            running.child.kill('SIGKILL');
          }
        })
        .catch(() => undefined),
    ),
  );
  await running.exited;
}

async function retryUntilFinal(step: Step): Promise<HttpAnswer> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const answer = await call(server!.baseUrl, tenant.adminKey, 'POST', step.path, step.body, step.headers);
    if (!(answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress')) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${step.path} stayed in progress`);
}

const countIn = (state: string) =>
  db.tenant(tenant.tenantId, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM intents WHERE state = $1`, [state])).rows[0]!.n as number);

it('loses and duplicates nothing when the server dies inside a group, or anywhere in a grouped batch', async () => {
  // Creates and challenges one at a time: groups of one, which the crash point spares.
  server = await start(true);
  const intentIds: string[] = [];
  const funds: Step[] = [];
  for (let index = 0; index < batchSize; index += 1) {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    expect((await call(server.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body)).status).toBe(201);
    const challenge = await call(server.baseUrl, tenant.adminKey, 'POST', `/harbor/intents/${intentId}/fund`, {});
    const credential = sandboxX402PaymentSignature(challenge.headers.get('payment-required')!, { from: sandboxX402Payers.success });
    intentIds.push(intentId);
    funds.push({ path: `/harbor/intents/${intentId}/fund`, body: {}, headers: { 'payment-signature': credential, 'idempotency-key': `fund-${intentId}` } });
  }

  // The paid funds at once: the first runs alone, the next wait and meet in a group, and the process dies before
  // that group's COMMIT.
  await batch(funds, false);
  const fundedAtCrash = await countIn('funded');
  expect(fundedAtCrash).toBeLessThan(batchSize);
  server = await start(false);
  for (const step of funds) expect((await retryUntilFinal(step)).status).toBe(200);
  expect(await countIn('funded')).toBe(batchSize);

  for (const intentId of intentIds) {
    const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
    expect((await call(server.baseUrl, tenant.adminKey, 'POST', `/harbor/intents/${intentId}/evidence`, evidence)).status).toBe(200);
  }
  const confirms = intentIds.map((intentId) => ({
    path: `/harbor/intents/${intentId}/settlement/confirm`, body: {}, headers: { 'idempotency-key': `confirm-${intentId}` },
  }));
  // Half the confirms die inside a group; then all of them, killed at the first answer of a grouping server.
  await server.stop('SIGKILL');
  server = await start(true);
  await batch(confirms.slice(0, batchSize / 2), false);
  expect(await countIn('released')).toBeLessThan(batchSize / 2);
  server = await start(false);
  await batch(confirms, true);
  server = await start(false);
  for (const step of confirms) {
    const answer = await retryUntilFinal(step);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.state).toBe('released');
  }

  const movements = await db.tenant(tenant.tenantId, async (tx) =>
    (await tx.query(`SELECT event_kind, count(DISTINCT transaction_id)::int AS transactions, count(*)::int AS rows FROM ledger_rows GROUP BY event_kind ORDER BY event_kind`)).rows,
  );
  expect(movements).toEqual([
    { event_kind: 'fund', transactions: batchSize, rows: batchSize * 2 },
    { event_kind: 'release', transactions: batchSize, rows: batchSize * 2 },
  ]);
  const receipts = await db.tenant(tenant.tenantId, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM transparency_log_leaves`)).rows[0]!.n);
  expect(receipts).toBe(batchSize * 2);
  const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
  expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
}, 900_000);
