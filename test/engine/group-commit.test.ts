// Group commit (src/engine/group-commit.ts): many lifecycles of one tenant at once, on a real database, commit in
// groups and come out exactly as they would one at a time (every intent funded once and settled once, every ledger
// transaction once, the chain verifying); a command that fails in a group fails alone; a group the database refuses
// runs again command by command; and no group ever holds two commands on one intent or under one key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Database, type Queryable } from '../../src/infra/database.ts';
import { commandBatcherOf, CommandBatcher } from '../../src/engine/group-commit.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
let batcher: CommandBatcher;
const logs = new LogCapture();
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  // A window long enough that the commands sent together below meet in groups on a loaded machine.
  app = await buildTestApp(database.connection, { logs, appOptions: { groupCommit: { windowMs: 10, groupSizeMax: 8 } } });
  tenant = await createTestTenant(database.connection);
  batcher = commandBatcherOf(app.database)!;
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const post = (url: string, payload: unknown, headers: Record<string, string> = {}, key = tenant.adminKey) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload: payload as Record<string, unknown> });

describe('lifecycles of one tenant at once', () => {
  it('commit in groups, each intent funded and settled once, the ledger whole', async () => {
    const count = 24;
    const before = { ...batcher.stats };
    const bodies = Array.from({ length: count }, () => signedCreateBody({ tenantId: tenant.tenantId, principal, payee }));
    const ids = bodies.map((body) => body.intent_id as string);
    const created = await Promise.all(bodies.map((body) => post('/harbor/intents', body, { 'idempotency-key': `create-${body.intent_id}` })));
    expect(created.map((answer) => answer.statusCode)).toEqual(ids.map(() => 201));
    const challenges = await Promise.all(ids.map((id) => post(`/harbor/intents/${id}/fund`, {})));
    expect(challenges.map((answer) => answer.statusCode)).toEqual(ids.map(() => 402));
    const funds = await Promise.all(
      ids.map((id, index) =>
        post(`/harbor/intents/${id}/fund`, {}, {
          'payment-signature': sandboxX402PaymentSignature(challenges[index]!.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
          'idempotency-key': `fund-${id}`,
        }),
      ),
    );
    expect(funds.map((answer) => answer.statusCode), funds.map((answer) => answer.body).join('\n')).toEqual(ids.map(() => 200));
    const evidence = await Promise.all(
      ids.map((id) => post(`/harbor/intents/${id}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId: id, payee, payload: { status: 'completed' } }))),
    );
    expect(evidence.map((answer) => answer.statusCode)).toEqual(ids.map(() => 200));
    // Every confirm sent twice under its key, at once: the pair never shares a group, and settles once.
    const confirms = await Promise.all(
      [...ids, ...ids].map((id) => post(`/harbor/intents/${id}/settlement/confirm`, {}, { 'idempotency-key': `confirm-${id}` })),
    );
    for (const answer of confirms) {
      if (answer.statusCode === 409) expect(answer.json().error.code).toBe('idempotency.request_in_progress');
      else expect(answer.statusCode, answer.body).toBe(200);
    }
    for (const id of ids) {
      const settled = await app.inject({ method: 'GET', url: `/harbor/intents/${id}`, headers: bearer(tenant.adminKey) });
      expect(settled.json().state).toBe('released');
    }

    // Groups formed: fewer groups than commands, some of more than one.
    const groups = batcher.stats.groups - before.groups;
    const commands = batcher.stats.commands - before.commands;
    expect(commands).toBeGreaterThanOrEqual(count * 5);
    expect(groups).toBeLessThan(commands);
    expect(batcher.stats.largestGroup).toBeGreaterThan(1);
    expect(batcher.stats.largestGroup).toBeLessThanOrEqual(8);

    const db = new Database({ ...database.connection, max: 1 });
    try {
      const movements = await db.tenant(tenant.tenantId, async (tx) =>
        (await tx.query(`SELECT event_kind, count(DISTINCT transaction_id)::int AS transactions, count(*)::int AS rows FROM ledger_rows GROUP BY event_kind ORDER BY event_kind`)).rows,
      );
      expect(movements).toEqual([
        { event_kind: 'fund', transactions: count, rows: count * 2 },
        { event_kind: 'release', transactions: count, rows: count * 2 },
      ]);
      const receipts = await db.tenant(tenant.tenantId, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM transparency_log_leaves`)).rows[0]!.n);
      expect(receipts).toBe(count * 2);
      const report = await verifyTenantLedger(db, tenant.tenantId);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
    } finally {
      await db.close();
    }
    expect(logs.lines.filter((line) => line.includes('"level":50'))).toEqual([]);
    expect(batcher.stats.groupsRerun - before.groupsRerun).toBe(0);
  }, 180_000);

  it('mix fundings, creations and settlements of several payees in groups without a deadlock (no group rerun)', async () => {
    // Groups that each lock the ledger head, the log head and operators' standing rows: in one order, or two groups
    // wait for each other until Postgres aborts one (src/db/commit-locks.ts).
    const payees = [party('did:payee:alpha'), party('did:payee:beta'), party('did:payee:gamma')];
    const before = { ...batcher.stats };
    for (let round = 0; round < 6; round += 1) {
      // A key of its own each round, under the credential's rate limit.
      const key = await tenant.key('admin');
      const send = (url: string, payload: unknown, headers: Record<string, string> = {}) => post(url, payload, headers, key);
      const bodies = Array.from({ length: 24 }, (_, index) => signedCreateBody({ tenantId: tenant.tenantId, principal, payee: payees[index % payees.length]! }));
      const ids = bodies.map((body) => body.intent_id as string);
      expect((await Promise.all(bodies.map((body) => send('/harbor/intents', body)))).map((answer) => answer.statusCode)).toEqual(ids.map(() => 201));
      const challenges = await Promise.all(ids.map((id) => send(`/harbor/intents/${id}/fund`, {})));
      const fund = (index: number) => send(`/harbor/intents/${ids[index]}/fund`, {}, {
        'payment-signature': sandboxX402PaymentSignature(challenges[index]!.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
      });
      // The first half funded and with evidence; then their confirms go with the second half's fundings and new creates.
      const half = ids.length / 2;
      for (const answer of await Promise.all(ids.slice(0, half).map((_, index) => fund(index)))) expect(answer.statusCode, answer.body).toBe(200);
      for (const [index, id] of ids.slice(0, half).entries()) {
        const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId: id, payee: payees[index % payees.length]!, payload: { status: 'completed' } });
        expect((await send(`/harbor/intents/${id}/evidence`, evidence)).statusCode).toBe(200);
      }
      const mixed = await Promise.all([
        ...ids.slice(0, half).map((id) => send(`/harbor/intents/${id}/settlement/confirm`, {})),
        ...ids.slice(half).map((_, index) => fund(half + index)),
        ...Array.from({ length: 8 }, () => send('/harbor/intents', signedCreateBody({ tenantId: tenant.tenantId, principal, payee: payees[0]! }))),
      ]);
      for (const answer of mixed) expect([200, 201], answer.body).toContain(answer.statusCode);
    }
    expect(batcher.stats.groups - before.groups).toBeLessThan(batcher.stats.commands - before.commands);
    expect(batcher.stats.groupsRerun - before.groupsRerun).toBe(0);
  }, 180_000);

  it('answers a command refused in a group its refusal, and the rest of its group theirs', async () => {
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const id = body.intent_id as string;
    expect((await post('/harbor/intents', body)).statusCode).toBe(201);
    // Evidence on an open intent is refused (409); creates sent with it succeed.
    const others = Array.from({ length: 6 }, () => signedCreateBody({ tenantId: tenant.tenantId, principal, payee }));
    const [refused, ...created] = await Promise.all([
      post(`/harbor/intents/${id}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId: id, payee, payload: { status: 'completed' } })),
      ...others.map((other) => post('/harbor/intents', other)),
    ]);
    expect(refused!.statusCode).toBe(409);
    expect(refused!.json().error.code).toBe('intent.invalid_state');
    expect(created.map((answer) => answer.statusCode)).toEqual(others.map(() => 201));
  }, 60_000);
});

describe('the batcher on its own', () => {
  let db: Database;
  beforeAll(() => {
    db = new Database({ ...database.connection, max: 4 });
  });
  afterAll(async () => {
    await db?.close();
  });

  /** A command held open until `release` is called, so that the next ones wait and meet in one group. */
  function holder(): { work: (tx: Queryable) => Promise<string>; release: () => void } {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    return { work: async (tx) => { await tx.query('SELECT 1'); await held; return 'held'; }, release };
  }

  it('runs again one by one the commands of a group the database refuses at COMMIT', async () => {
    const batcher = new CommandBatcher(db, { windowMs: 20, groupSizeMax: 8, groupsInFlightMax: 1 });
    const { work, release } = holder();
    const first = batcher.run(tenant.tenantId, ['a'], 'a', work);
    const committed: string[] = [];
    const good = (name: string) => async (tx: Queryable) => {
      await tx.query('SELECT 1');
      tx.afterCommit(() => committed.push(name));
      return name;
    };
    const results = [
      batcher.run(tenant.tenantId, ['b'], 'b', good('b')),
      // Fails only with COMMIT: the whole group is refused.
      batcher.run(tenant.tenantId, ['c'], 'c', async (tx) => {
        await tx.query('SELECT 1');
        tx.beforeCommit({ text: 'SELECT 1 / 0' });
        return 'c';
      }),
      batcher.run(tenant.tenantId, ['d'], 'd', good('d')),
    ];
    release();
    expect(await first).toBe('held');
    const settled = await Promise.allSettled(results);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 'b' });
    expect(settled[1]!.status).toBe('rejected');
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/division by zero/);
    expect(settled[2]).toEqual({ status: 'fulfilled', value: 'd' });
    // Committed once each, by the reruns: the refused group's callbacks never ran.
    expect(committed.sort()).toEqual(['b', 'd']);
    expect(batcher.stats.groupsRerun).toBe(1);
    expect(batcher.stats.largestGroup).toBe(3);
  });

  it('undoes what a failing command did in its group, and keeps two commands with one conflict apart', async () => {
    const batcher = new CommandBatcher(db, { windowMs: 20, groupSizeMax: 8, groupsInFlightMax: 1 });
    const { work, release } = holder();
    const first = batcher.run(tenant.tenantId, ['x'], 'x', work);
    const order: string[] = [];
    const command = (name: string, fail = false) => async (tx: Queryable) => {
      order.push(name);
      // Visible to the commands after it in the group unless undone.
      await tx.query(`SELECT set_config('app.group_test_' || $1, 'written', true)`, [name]);
      if (fail) throw new Error(`${name} refused`);
      const { rows } = await tx.query<{ failed: string | null }>(`SELECT current_setting('app.group_test_f', true) AS failed`);
      return rows[0]!.failed ?? '';
    };
    const results = Promise.allSettled([
      batcher.run(tenant.tenantId, ['intent-1'], 'g', command('g')),
      batcher.run(tenant.tenantId, ['intent-1'], 'h', command('h')),
      batcher.run(tenant.tenantId, ['intent-2'], 'f', command('f', true)),
    ]);
    release();
    await first;
    const [g, h, f] = await results;
    expect(f!.status).toBe('rejected');
    // g ran after f in its group (ordered by intent), and saw nothing of what f did; h waited for the next group.
    expect(g).toEqual({ status: 'fulfilled', value: '' });
    expect(h).toEqual({ status: 'fulfilled', value: '' });
    expect(order).toEqual(['f', 'g', 'h']);
    expect(batcher.stats.groups).toBe(3);
  });
});
