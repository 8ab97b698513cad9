// ledger_post_group (migrations/0028): the postings of a group commit appended under one lock of the tenant's head,
// in one call. Postings queued in one transaction through the engine's queueLedgerTransaction go as that one call;
// the chain they leave verifies (bodies, sequence, hashes) exactly as postings made one by one; and one refused
// transaction among them refuses the call whole, writing nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { ledgerAccounts, queueLedgerTransaction } from '../../src/engine/ledger-posting.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let testDatabase: TestDatabase;
let database: Database;
let tenantId: string;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database(testDatabase.connection);
  tenantId = (await createTestTenant(testDatabase.connection)).tenantId;
});

afterAll(async () => {
  await database?.close();
  await testDatabase?.drop();
});

const fundPosting = (amountCents: number) => {
  const intentId = randomUUID();
  return {
    transactionId: randomUUID(),
    intentId,
    eventKind: 'fund' as const,
    currency: 'usd',
    entries: [
      { account: ledgerAccounts.escrow(intentId), side: 'debit' as const, amountCents },
      { account: ledgerAccounts.railFunding('x402_usdc_base'), side: 'credit' as const, amountCents },
    ],
  };
};

const headSeq = async (): Promise<number> =>
  database.system(async (tx) => Number((await tx.query('SELECT coalesce(max(last_ledger_seq), 0) AS seq FROM ledger_heads WHERE tenant_id = $1', [tenantId])).rows[0]!.seq));

it('appends the postings of one transaction in one call, in order, and the chain verifies', async () => {
  // One posting alone first (ledger_post), then three in one transaction (ledger_post_group), then one alone again.
  await database.tenant(tenantId, async (tx) => queueLedgerTransaction(tx, tenantId, fundPosting(100)));
  const group = [fundPosting(200), fundPosting(300), fundPosting(400)];
  await database.tenant(tenantId, async (tx) => {
    for (const posting of group) queueLedgerTransaction(tx, tenantId, posting);
  });
  await database.tenant(tenantId, async (tx) => queueLedgerTransaction(tx, tenantId, fundPosting(500)));
  expect(await headSeq()).toBe(10);
  const rows = await database.system(async (tx) =>
    (await tx.query<{ ledger_seq: string; transaction_id: string; entry_index: number; amount_cents: string }>(
      'SELECT ledger_seq, transaction_id, entry_index, amount_cents FROM ledger_rows WHERE tenant_id = $1 ORDER BY ledger_seq', [tenantId],
    )).rows,
  );
  expect(rows.map((row) => Number(row.amount_cents))).toEqual([100, 100, 200, 200, 300, 300, 400, 400, 500, 500]);
  expect(rows.slice(2, 8).map((row) => [row.transaction_id, row.entry_index])).toEqual(group.flatMap((posting) => [[posting.transactionId, 0], [posting.transactionId, 1]]));
  // The chain, bodies and balances verify; the verifier's only complaint is that these postings have no intents
  // behind them (the test posts without the engine).
  const report = await verifyTenantLedger(database, tenantId);
  expect(report.problems.filter((problem) => !/but no such intent$/.test(problem))).toEqual([]);
  expect(report.problems).toHaveLength(5);
});

it('refuses the whole call when one of its transactions is unbalanced, writing nothing', async () => {
  const before = await headSeq();
  const ids = [randomUUID(), randomUUID()];
  await expect(
    database.tenant(tenantId, (tx) =>
      tx.query(
        `SELECT ledger_post_group($1, $2::uuid[], $3::uuid[], $4::text[], $5::text[], ARRAY[date_trunc('milliseconds', now()), date_trunc('milliseconds', now())],
           $6::integer[], $7::text[], $8::smallint[], $9::bigint[], $10::bytea[], $11::bytea[])`,
        [
          tenantId, ids, [randomUUID(), randomUUID()], ['usd', 'usd'], ['fund', 'fund'], [2, 2],
          ['a:0', 'a:1', 'b:0', 'b:1'], [0, 1, 0, 1], [500, 500, 500, 499],
          [1, 2, 3, 4].map(() => Buffer.from([1])), [1, 2, 3, 4].map(() => Buffer.from([2])),
        ],
      ),
    ),
  ).rejects.toMatchObject({ code: '23514', message: expect.stringMatching(new RegExp(`transaction ${ids[1]} is unbalanced: debits 500, credits 499`)) });
  expect(await headSeq()).toBe(before);
});

it('refuses entry counts that do not add up to the entries given', async () => {
  await expect(
    database.tenant(tenantId, (tx) =>
      tx.query(
        `SELECT ledger_post_group($1, $2::uuid[], $3::uuid[], ARRAY['usd'], ARRAY['fund'], ARRAY[now()], ARRAY[2], $4::text[], $5::smallint[], $6::bigint[], $7::bytea[], $8::bytea[])`,
        [tenantId, [randomUUID()], [randomUUID()], ['a', 'b', 'c'], [0, 1, 0], [5, 5, 5], [1, 2, 3].map(() => Buffer.from([1])), [1, 2, 3].map(() => Buffer.from([2]))],
      ),
    ),
  ).rejects.toMatchObject({ code: '22023' });
});
