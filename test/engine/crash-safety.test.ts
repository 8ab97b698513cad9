// Crash safety: a server process killed (SIGKILL) in the middle of a batch of fund and confirm requests, then
// restarted; the clients retry with the same idempotency keys. Nothing is duplicated or lost: every intent is
// funded once and settled once, and `svc ledger verify` passes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

// Group commit answers a whole group at once, so the batch must span many groups for the first answer to come back
// while others are still in flight: small groups (4) and a batch twelve groups long.
const batchSize = 48;
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

const start = () => startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_GROUP_COMMIT_SIZE: '4' });

interface Step {
  readonly path: string;
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

/** Sends the whole batch at once and kills the server as soon as the first answer is back, so that some
 * requests are done, some are inside their transaction, and some never arrived. */
async function batchWithCrash(steps: Step[]): Promise<void> {
  const running = server!;
  let killed = false;
  await Promise.all(
    steps.map((step) =>
      call(running.baseUrl, tenant.adminKey, 'POST', step.path, step.body, step.headers)
        .then(() => {
          if (!killed) {
            killed = true;
            running.child.kill('SIGKILL');
          }
        })
        .catch(() => undefined),
    ),
  );
  await running.exited;
}

/** What a client does after a failure: the same request, same key, until a final answer (409 in progress waits). */
async function retryUntilFinal(step: Step): Promise<HttpAnswer> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const answer = await call(server!.baseUrl, tenant.adminKey, 'POST', step.path, step.body, step.headers);
    if (!(answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress')) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${step.path} stayed in progress`);
}

it('loses and duplicates nothing when the server is killed mid-batch', async () => {
  server = await start();
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

  await batchWithCrash(funds);
  const fundedAtCrash = await db.tenant(tenant.tenantId, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM intents WHERE state = 'funded'`)).rows[0]!.n);
  // The kill interrupted the batch: otherwise this test would prove nothing about recovery.
  expect(fundedAtCrash).toBeLessThan(batchSize);
  server = await start();
  for (const step of funds) expect((await retryUntilFinal(step)).status).toBe(200);

  for (const intentId of intentIds) {
    const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
    expect((await call(server.baseUrl, tenant.adminKey, 'POST', `/harbor/intents/${intentId}/evidence`, evidence)).status).toBe(200);
  }
  const confirms = intentIds.map((intentId) => ({
    path: `/harbor/intents/${intentId}/settlement/confirm`, body: {}, headers: { 'idempotency-key': `confirm-${intentId}` },
  }));
  await batchWithCrash(confirms);
  server = await start();
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
  const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
  expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
}, 120_000);
