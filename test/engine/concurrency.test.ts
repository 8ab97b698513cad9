// Idempotency across processes: 50 concurrent identical requests under one key, spread over two server
// processes on the same database, make exactly one state change and one set of ledger rows; every answer is the
// same success or a 409 "in progress". Once the first has finished, concurrent replays all get its stored answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { idempotencyLockId } from '../../src/plugins/idempotency.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let database: TestDatabase;
let db: Database;
let tenant: TestTenant;
let servers: ServerProcess[];
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  tenant = await createTestTenant(database.connection);
  servers = await Promise.all([1, 2].map(() => startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' })));
}, 60_000);

afterAll(async () => {
  for (const server of servers ?? []) await server.stop();
  await db?.close();
  await database?.drop();
});

/** 50 identical requests, alternating between the two processes, all in flight at once. */
function flood(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<HttpAnswer[]> {
  return Promise.all(Array.from({ length: 50 }, (_, index) => call(servers[index % 2]!.baseUrl, tenant.adminKey, method, path, body, headers)));
}

function expectOneAnswerOrInProgress(answers: HttpAnswer[], status: number): void {
  const successes = answers.filter((answer) => answer.status === status);
  const others = answers.filter((answer) => answer.status !== status);
  expect(successes.length).toBeGreaterThanOrEqual(1);
  expect(new Set(successes.map((answer) => answer.text)).size).toBe(1);
  for (const other of others) {
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('idempotency.request_in_progress');
  }
}

describe('50 concurrent identical requests over two processes', () => {
  it('create: one intent', async () => {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const answers = await flood('POST', '/harbor/intents', body, { 'idempotency-key': `create-${body.intent_id}` });
    expectOneAnswerOrInProgress(answers, 201);
    const count = await db.tenant(tenant.tenantId, async (tx) => (await tx.query('SELECT count(*)::int AS n FROM intents WHERE intent_id = $1', [body.intent_id])).rows[0]!.n);
    expect(count).toBe(1);
  });

  it('fund: one state change and one set of ledger rows', async () => {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    expect((await call(servers[0]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body)).status).toBe(201);
    const path = `/harbor/intents/${body.intent_id}/fund`;
    const challenge = await call(servers[1]!.baseUrl, tenant.adminKey, 'POST', path, {});
    expect(challenge.status).toBe(402);
    const credential = sandboxX402PaymentSignature(challenge.headers.get('payment-required')!, { from: sandboxX402Payers.success });
    const answers = await flood('POST', path, {}, { 'payment-signature': credential, 'idempotency-key': `fund-${body.intent_id}` });
    expectOneAnswerOrInProgress(answers, 200);
    // Later retries replay the same answer.
    const late = await call(servers[0]!.baseUrl, tenant.adminKey, 'POST', path, {}, { 'payment-signature': credential, 'idempotency-key': `fund-${body.intent_id}` });
    expect(late.status).toBe(200);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(late.text).toBe(answers.find((answer) => answer.status === 200)!.text);

    const fundRows = await db.tenant(tenant.tenantId, async (tx) =>
      (await tx.query(`SELECT count(*)::int AS n FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [body.intent_id])).rows[0]!.n,
    );
    expect(fundRows).toBe(2);
    const report = await verifyTenantLedger(db, tenant.tenantId);
    expect(report.problems).toEqual([]);
  });
});

describe('100 concurrent replays of a finished create over two processes', () => {
  it('all get the stored answer, byte for byte, and none answers "in progress"', async () => {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const headers = { 'idempotency-key': `replay-${body.intent_id}` };
    const first = await call(servers[0]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, headers);
    expect(first.status).toBe(201);
    // Every replay holds the key's lock for its own short transaction; none may take another's for a running first.
    const replays = await Promise.all(
      Array.from({ length: 100 }, (_, index) => call(servers[index % 2]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, headers)),
    );
    expect(replays.map((replay) => replay.status).filter((status) => status !== 201)).toEqual([]);
    expect(new Set(replays.map((replay) => replay.text))).toEqual(new Set([first.text]));
    expect(replays.every((replay) => replay.headers.get('idempotent-replayed') === 'true')).toBe(true);

    // A different body under the finished key is still refused as a reused key, from either process.
    const other = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    for (const server of servers) {
      const reused = await call(server.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', other, headers);
      expect(reused.status).toBe(409);
      expect(reused.json.error.code).toBe('idempotency.key_reused');
    }
  }, 60_000);

  it('a key whose first request is still running answers 409 in progress', async () => {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const key = `in-flight-${body.intent_id}`;
    // Holding the key's lock from outside, in a transaction, is exactly what a first request does while its
    // transaction runs (a session lock would not hold behind a pooler in transaction mode).
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLockId(tenant.tenantId, 'intent.create', key)]);
      const answer = await call(servers[1]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, { 'idempotency-key': key });
      expect(answer.status).toBe(409);
      expect(answer.json.error.code).toBe('idempotency.request_in_progress');
      await client.query('ROLLBACK');
      expect((await call(servers[0]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, { 'idempotency-key': key })).status).toBe(201);
    } finally {
      client.release();
    }
  });
});

describe('one key, two different bodies at once over two processes', () => {
  const pairs = 12;
  const classOf = (answer: HttpAnswer) => (answer.status === 409 ? `409 ${answer.json?.error?.code}` : String(answer.status));
  const refusals = ['409 idempotency.request_in_progress', '409 idempotency.key_reused'];

  /** Each pair's two bodies sent at once under the pair's key, one to each process; then, with the first of the pair
   * that ran known, each body re-sent from the other process: the key must be bound to the one that ran. */
  async function raceAndResend(bodies: Array<readonly [object, object]>, keyPrefix: string, ran: string): Promise<Array<{ winner: number; again: string[] }>> {
    return Promise.all(bodies.map(async (pair, index) => {
      const headers = { 'idempotency-key': `${keyPrefix}-${index}` };
      const answers = await Promise.all(pair.map((body, side) => call(servers[side]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, headers)));
      const classes = answers.map(classOf);
      expect(classes.filter((c) => c === ran), `pair ${index}: ${classes.join(', ')}`).toHaveLength(1);
      expect(refusals, `pair ${index}: ${classes.join(', ')}`).toContain(classes.find((c) => c !== ran));
      const winner = classes.indexOf(ran);
      // One after the other: at once, either could find the other holding the key's lock (409 in progress).
      const again: string[] = [];
      for (const [side, body] of pair.entries()) again.push(classOf(await call(servers[1 - side]!.baseUrl, tenant.adminKey, 'POST', '/harbor/intents', body, headers)));
      return { winner, again };
    }));
  }

  it('failing bodies: exactly one of each pair runs, and the key stays bound to it', async () => {
    // Amounts the principal did not sign: each body, when it runs, answers 400 and stores no answer.
    const tampered = () => ({ ...signedCreateBody({ tenantId: tenant.tenantId, principal, payee }), amount_cents: 1 });
    const results = await raceAndResend(Array.from({ length: pairs }, () => [tampered(), tampered()] as const), `bind-failing-${Date.now()}`, '400');
    for (const { winner, again } of results) {
      // The body that ran runs again (a failure is not replayed); the other stays refused.
      expect(again[winner]).toBe('400');
      expect(again[1 - winner]).toBe('409 idempotency.key_reused');
    }
  }, 60_000);

  it('succeeding bodies: exactly one intent per key', async () => {
    const bodies = Array.from({ length: pairs }, () => [
      signedCreateBody({ tenantId: tenant.tenantId, principal, payee }), signedCreateBody({ tenantId: tenant.tenantId, principal, payee }),
    ] as const);
    const results = await raceAndResend(bodies, `bind-succeeding-${Date.now()}`, '201');
    for (const [index, { winner, again }] of results.entries()) {
      expect(again[winner]).toBe('201');
      expect(again[1 - winner]).toBe('409 idempotency.key_reused');
      const ids = bodies[index]!.map((body) => body.intent_id as string);
      const found = await db.tenant(tenant.tenantId, async (tx) => (await tx.query('SELECT intent_id FROM intents WHERE intent_id = ANY($1)', [ids])).rows);
      expect(found).toEqual([{ intent_id: ids[winner] }]);
    }
  }, 60_000);
});
