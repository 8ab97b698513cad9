// ledger_post (migrations/0014) refuses, in Postgres, what the ledger does not allow even when the service's own
// check is bypassed: fewer than two entries, more than ledgerTransactionEntriesMax, an unbalanced transaction, a
// non-positive amount, an unknown side. Called directly as the request role, the way the service calls it; a refusal
// leaves no row and does not move the head. Through the API a refusal could only surface as 500 internal.error
// (the service refuses the same postings first, as a programmer error).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { ledgerTransactionEntriesMax } from '../../src/limits.ts';
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

interface Entry {
  readonly side: number;
  readonly amount: number;
}

/** Calls ledger_post in a tenant transaction with entries of the given sides and amounts (bodies are placeholders:
 * the refusals come before any body is used, and an accepted call's bodies are never decoded here). */
async function ledgerPost(entries: readonly Entry[]): Promise<void> {
  const intentId = randomUUID();
  await database.tenant(tenantId, (tx) =>
    tx.query(
      `SELECT ledger_post($1, $2, $3, 'usd', 'fund', date_trunc('milliseconds', now()), $4::text[], $5::smallint[], $6::bigint[], $7::bytea[], $8::bytea[])`,
      [
        tenantId,
        randomUUID(),
        intentId,
        entries.map((_, index) => `account:${index}`),
        entries.map((entry) => entry.side),
        entries.map((entry) => entry.amount),
        entries.map(() => Buffer.from([1])),
        entries.map(() => Buffer.from([2])),
      ],
    ),
  );
}

const headSeq = async (): Promise<number> =>
  database.system(async (tx) => Number((await tx.query('SELECT coalesce(max(last_ledger_seq), 0) AS seq FROM ledger_heads WHERE tenant_id = $1', [tenantId])).rows[0]!.seq));
const rowCount = async (): Promise<number> =>
  database.system(async (tx) => Number((await tx.query('SELECT count(*) AS n FROM ledger_rows WHERE tenant_id = $1', [tenantId])).rows[0]!.n));

describe('ledger_post refuses in Postgres', () => {
  it('accepts a balanced two-entry transaction (the control)', async () => {
    await ledgerPost([{ side: 0, amount: 500 }, { side: 1, amount: 500 }]);
    expect(await headSeq()).toBe(2);
  });

  const refusals: Array<[string, Entry[], RegExp]> = [
    ['no entries', [], /has 0 entries; a transaction has 2 to 16/],
    ['one entry', [{ side: 0, amount: 500 }], /has 1 entries/],
    ['an unbalanced pair', [{ side: 0, amount: 500 }, { side: 1, amount: 499 }], /unbalanced: debits 500, credits 499/],
    ['two debits', [{ side: 0, amount: 500 }, { side: 0, amount: 500 }], /unbalanced: debits 1000, credits 0/],
    ['a zero amount', [{ side: 0, amount: 0 }, { side: 1, amount: 0 }], /amounts are positive/],
    ['a negative amount balancing', [{ side: 0, amount: -5 }, { side: 1, amount: -5 }], /amounts are positive/],
    ['an unknown side', [{ side: 2, amount: 5 }, { side: 1, amount: 5 }], /0 is a debit, 1 a credit/],
    ['one entry too many', Array.from({ length: ledgerTransactionEntriesMax + 1 }, (_, index) => ({ side: index === 0 ? 1 : 0, amount: index === 0 ? ledgerTransactionEntriesMax : 1 })), /has 17 entries/],
  ];

  for (const [name, entries, message] of refusals) {
    it(`refuses ${name}, writing nothing`, async () => {
      const [seqBefore, rowsBefore] = [await headSeq(), await rowCount()];
      await expect(ledgerPost(entries)).rejects.toMatchObject({ code: '23514', message: expect.stringMatching(message) });
      expect([await headSeq(), await rowCount()]).toEqual([seqBefore, rowsBefore]);
    });
  }

  it('accepts the largest transaction allowed, balanced across many entries', async () => {
    const count = ledgerTransactionEntriesMax;
    await ledgerPost(Array.from({ length: count }, (_, index) => ({ side: index === 0 ? 1 : 0, amount: index === 0 ? count - 1 : 1 })));
    expect(await headSeq()).toBe(2 + count);
  });

  it('refuses entry arrays of different lengths', async () => {
    await expect(
      database.tenant(tenantId, (tx) =>
        tx.query(
          `SELECT ledger_post($1, $2, $3, 'usd', 'fund', date_trunc('milliseconds', now()), ARRAY['a','b'], ARRAY[0,1]::smallint[], ARRAY[5]::bigint[], $4::bytea[], $4::bytea[])`,
          [tenantId, randomUUID(), randomUUID(), [Buffer.from([1]), Buffer.from([1])]],
        ),
      ),
    ).rejects.toMatchObject({ code: '22023' });
  });
});
