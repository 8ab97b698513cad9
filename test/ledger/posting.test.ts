// Posting to the ledger on a real Postgres: balanced transactions and their rows, refused postings, gapless
// sequences under concurrency, independent per-tenant chains kept apart by row-level security, append-only rows.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLedgerHead, listLedgerRows, type LedgerRow } from '../../src/db/ledger-repository.ts';
import { Database } from '../../src/infra/database.ts';
import { ledgerAccounts, queueLedgerTransaction, readLedgerTip, type LedgerPosting } from '../../src/services/ledger-service.ts';
import { encodeLedgerRowBody, ledgerGenesisRowHash, ledgerRowHash, type LedgerSide } from '../../src/signing/index.ts';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { posting } from './support.ts';

let testDatabase: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database(testDatabase.connection);
});

afterAll(async () => {
  await database?.close();
  await testDatabase?.drop();
});

const newTenant = async (): Promise<string> => (await createTestTenant(testDatabase.connection)).tenantId;
const allRows = (tenantId: string) => database.system((tx) => listLedgerRows(tx, tenantId, 0, 10_000));

/** Posts in a transaction of its own, then reads back where the posting's rows landed. */
async function post(tenantId: string, value: LedgerPosting): Promise<{ firstSeq: number; lastSeq: number; tipRowHash: Buffer }> {
  await database.tenant(tenantId, async (tx) => queueLedgerTransaction(tx, tenantId, value));
  const rows = (await allRows(tenantId)).filter((row) => row.transactionId === value.transactionId);
  if (rows.length === 0) throw new Error(`posting ${value.transactionId} left no rows`);
  return { firstSeq: rows[0]!.ledgerSeq, lastSeq: rows.at(-1)!.ledgerSeq, tipRowHash: rows.at(-1)!.rowHash };
}

/** The chain re-derived from the rows: seqs from `firstSeq` (1) on, each body from its columns, each hash from its
 * predecessor (the first from `prev`, the genesis hash). */
function expectValidChain(tenantId: string, rows: LedgerRow[], firstSeq = 1, prev: Buffer = Buffer.from(ledgerGenesisRowHash)): void {
  rows.forEach((row, index) => {
    expect(row.ledgerSeq).toBe(firstSeq + index);
    const body = encodeLedgerRowBody({
      tenant_id: tenantId,
      ledger_seq: row.ledgerSeq,
      transaction_id: row.transactionId,
      intent_id: row.intentId,
      entry_index: row.entryIndex,
      account: row.account,
      side: row.side as LedgerSide,
      amount_cents: row.amountCents,
      currency: row.currency,
      event_kind: row.eventKind,
      recorded_at: row.recordedAt.toISOString(),
    });
    expect(row.body.equals(Buffer.from(body))).toBe(true);
    expect(row.prevRowHash.equals(prev)).toBe(true);
    expect(row.rowHash.equals(Buffer.from(ledgerRowHash(prev, body)))).toBe(true);
    prev = row.rowHash;
  });
}

describe('posting a balanced transaction', () => {
  it('appends one row per entry, chained from genesis, and moves the head', async () => {
    const tenantId = await newTenant();
    const intentId = randomUUID();
    const fund = { ...posting('fund', intentId, 1250), recordedAtMs: Date.parse('2030-01-02T03:04:05.678Z') };
    const first = await post(tenantId, fund);
    expect(first).toMatchObject({ firstSeq: 1, lastSeq: 2 });
    const second = await post(tenantId, posting('release', intentId, 1250));
    expect(second).toMatchObject({ firstSeq: 3, lastSeq: 4 });

    const rows = await allRows(tenantId);
    expect(rows).toHaveLength(4);
    expectValidChain(tenantId, rows);
    expect(rows[0]).toMatchObject({
      transactionId: fund.transactionId,
      intentId,
      entryIndex: 0,
      account: ledgerAccounts.escrow(intentId),
      side: 0,
      amountCents: 1250n,
      currency: 'usd',
      eventKind: 'fund',
    });
    expect(rows[0]!.recordedAt.toISOString()).toBe('2030-01-02T03:04:05.678Z');
    expect(rows[1]).toMatchObject({ entryIndex: 1, account: 'rail:x402_usdc_base:funding', side: 1 });
    expect(rows[2]).toMatchObject({ account: 'payee:did:key:z6MkPayee:payable', side: 0, eventKind: 'release' });
    expect(first.tipRowHash.equals(rows[1]!.rowHash)).toBe(true);
    expect(second.tipRowHash.equals(rows[3]!.rowHash)).toBe(true);

    const head = await database.tenant(tenantId, (tx) => findLedgerHead(tx, tenantId));
    expect(head).toEqual({ lastLedgerSeq: 4, lastRowHash: rows[3]!.rowHash });
    expect(await database.tenant(tenantId, (tx) => readLedgerTip(tx, tenantId))).toEqual({ ledgerSeq: 4, rowHash: rows[3]!.rowHash });
  });

  it('names the accounts as documented', () => {
    expect(ledgerAccounts.railFunding('processor_mpp')).toBe('rail:processor_mpp:funding');
    expect(ledgerAccounts.escrow('00000000-0000-4000-8000-000000000001')).toBe('intent:00000000-0000-4000-8000-000000000001:escrow');
    expect(ledgerAccounts.payeePayable('did:web:shop.example')).toBe('payee:did:web:shop.example:payable');
    expect(ledgerAccounts.payerRefund('did:key:z6Mk1')).toBe('payer:did:key:z6Mk1:refund');
  });

  it('reads an empty ledger as seq 0 at the genesis hash', async () => {
    const tenantId = await newTenant();
    expect(await database.tenant(tenantId, (tx) => readLedgerTip(tx, tenantId))).toEqual({ ledgerSeq: 0, rowHash: Buffer.alloc(32) });
  });

  it('commits or rolls back with the caller\'s transaction', async () => {
    const tenantId = await newTenant();
    await expect(
      database.tenant(tenantId, async (tx) => {
        queueLedgerTransaction(tx, tenantId, posting('fund', randomUUID(), 100));
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(await allRows(tenantId)).toEqual([]);
    expect((await post(tenantId, posting('fund', randomUUID(), 100))).firstSeq).toBe(1);
  });

  it('lets one transaction post several times, in order, and lands nothing when its commit fails', async () => {
    const tenantId = await newTenant();
    const intentId = randomUUID();
    const [fund, release] = [posting('fund', intentId, 400), posting('release', intentId, 400)];
    await database.tenant(tenantId, async (tx) => {
      queueLedgerTransaction(tx, tenantId, fund);
      queueLedgerTransaction(tx, tenantId, release);
    });
    const rows = await allRows(tenantId);
    expect(rows.map((row) => row.transactionId)).toEqual([fund.transactionId, fund.transactionId, release.transactionId, release.transactionId]);
    expectValidChain(tenantId, rows);

    // A statement queued after the posting fails: the commit does not run, so the posting does not land either.
    await expect(
      database.tenant(tenantId, async (tx) => {
        queueLedgerTransaction(tx, tenantId, posting('fund', randomUUID(), 100));
        tx.beforeCommit({ text: 'SELECT 1 / 0' });
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await allRows(tenantId)).toHaveLength(4);
  });

  // ledger_post encodes ledger_seq in SQL (migrations/0011_ledger_post.sql); each width of the bincode varint must
  // give the bytes our encoder gives, which expectValidChain re-derives.
  it.each([
    [249, 'one byte up to 250, then fb + u16'],
    [65_534, 'fb + u16 up to 65535, then fc + u32'],
    [4_294_967_294, 'fc + u32 up to 2^32 - 1, then fd + u64'],
  ])('places ledger_seq around %i like the bincode encoder (%s)', async (headSeq) => {
    const tenantId = await newTenant();
    const prev = Buffer.alloc(32, 7);
    await database.pool.query(
      'INSERT INTO ledger_heads (tenant_id, last_ledger_seq, last_row_hash) VALUES ($1, $2, $3)',
      [tenantId, headSeq, prev],
    );
    await post(tenantId, posting('fund', randomUUID(), 100));
    await post(tenantId, posting('fund', randomUUID(), 100));
    const rows = await allRows(tenantId);
    expect(rows.map((row) => row.ledgerSeq)).toEqual([headSeq + 1, headSeq + 2, headSeq + 3, headSeq + 4]);
    expectValidChain(tenantId, rows, headSeq + 1, prev);
  });
});

describe('refused postings are programmer errors', () => {
  const intentId = randomUUID();
  const fund = posting('fund', intentId, 500);
  const [debit, credit] = fund.entries as [LedgerPosting['entries'][number], LedgerPosting['entries'][number]];

  it.each<[string, LedgerPosting, RegExp]>([
    ['unbalanced', { ...fund, entries: [debit, { ...credit, amountCents: 499 }] }, /unbalanced: debits 500, credits 499/],
    ['one entry', { ...fund, entries: [debit] }, /has 1 entries/],
    ['no entries', { ...fund, entries: [] }, /has 0 entries/],
    ['a zero amount', { ...fund, entries: [{ ...debit, amountCents: 0 }, { ...credit, amountCents: 0 }] }, /amount 0/],
    ['a negative amount', { ...fund, entries: [{ ...debit, amountCents: -5 }, { ...credit, amountCents: -5 }] }, /amount -5/],
    ['a fractional amount', { ...fund, entries: [{ ...debit, amountCents: 1.5 }, { ...credit, amountCents: 1.5 }] }, /amount 1.5/],
    ['an unsafe amount', { ...fund, entries: [{ ...debit, amountCents: 2 ** 53 }, { ...credit, amountCents: 2 ** 53 }] }, /safe integers/],
    ['an uppercase currency', { ...fund, currency: 'USD' }, /currency "USD"/],
    ['an unknown kind', { ...fund, eventKind: 'chargeback' as 'fund' }, /event_kind "chargeback"/],
    ['the wrong shape', { ...fund, entries: [{ ...debit, side: 'credit' }, { ...credit, side: 'debit' }] }, /a fund must debit intent/],
    ['another intent\'s escrow', { ...fund, entries: [{ ...debit, account: ledgerAccounts.escrow(randomUUID()) }, credit] }, /a fund must/],
    ['an uppercase transaction id', { ...fund, transactionId: fund.transactionId.toUpperCase() }, /transaction_id/],
    ['a bad recordedAtMs', { ...fund, recordedAtMs: Number.NaN }, /recordedAtMs/],
  ])('refuses %s and writes nothing', async (_name, value, message) => {
    const tenantId = await newTenant();
    const attempt = post(tenantId, value);
    await expect(attempt).rejects.toThrow(message);
    await expect(attempt).rejects.not.toHaveProperty('code');
    expect(await allRows(tenantId)).toEqual([]);
  });
});

describe('concurrency', () => {
  it('gives 30 concurrent postings on a fresh tenant gapless seqs and one valid chain', async () => {
    const tenantId = await newTenant();
    const postings = Array.from({ length: 30 }, () => posting('fund', randomUUID(), 100));
    const results = await Promise.all(postings.map((value) => post(tenantId, value)));
    const firstSeqs = results.map((result) => result.firstSeq).sort((a, b) => a - b);
    expect(firstSeqs).toEqual(Array.from({ length: 30 }, (_, index) => 2 * index + 1));
    expect(results.every((result) => result.lastSeq === result.firstSeq + 1)).toBe(true);

    const rows = await allRows(tenantId);
    expect(rows).toHaveLength(60);
    expectValidChain(tenantId, rows);
    // Each transaction's rows are contiguous: the head lock serializes whole postings.
    for (let index = 0; index < rows.length; index += 2) expect(rows[index]!.transactionId).toBe(rows[index + 1]!.transactionId);
    const head = await database.system((tx) => findLedgerHead(tx, tenantId));
    expect(head).toEqual({ lastLedgerSeq: 60, lastRowHash: rows[59]!.rowHash });
  });
});

describe('tenants', () => {
  it('keeps one chain per tenant, each starting at 1, and row-level security keeps them apart', async () => {
    const [acme, globex] = [await newTenant(), await newTenant()];
    await post(acme, posting('fund', randomUUID(), 700));
    await post(globex, posting('fund', randomUUID(), 900));
    await post(acme, posting('fund', randomUUID(), 300));

    const acmeRows = await allRows(acme);
    const globexRows = await allRows(globex);
    expect(acmeRows.map((row) => row.ledgerSeq)).toEqual([1, 2, 3, 4]);
    expect(globexRows.map((row) => row.ledgerSeq)).toEqual([1, 2]);
    expectValidChain(acme, acmeRows);
    expectValidChain(globex, globexRows);

    // Without a WHERE clause, a tenant transaction still sees only its own rows and head.
    const seen = await database.tenant(acme, async (tx) => ({
      rows: (await tx.query<{ tenant_id: string }>('SELECT tenant_id FROM ledger_rows')).rows,
      heads: (await tx.query<{ tenant_id: string }>('SELECT tenant_id FROM ledger_heads')).rows,
      globexByName: await listLedgerRows(tx, globex, 0, 100),
    }));
    expect(new Set(seen.rows.map((row) => row.tenant_id))).toEqual(new Set([acme]));
    expect(seen.heads).toEqual([{ tenant_id: acme }]);
    expect(seen.globexByName).toEqual([]);

    // Nor can it post into another tenant's ledger by naming it.
    await expect(database.tenant(acme, async (tx) => queueLedgerTransaction(tx, globex, posting('fund', randomUUID(), 1)))).rejects.toThrow(
      /row-level security/,
    );
    expect(await allRows(globex)).toHaveLength(2);
  });
});

describe('append-only', () => {
  it('refuses UPDATE, DELETE and TRUNCATE of rows, even to the owner', async () => {
    const tenantId = await newTenant();
    await post(tenantId, posting('fund', randomUUID(), 100));
    const owner = database.pool;
    await expect(owner.query('UPDATE ledger_rows SET amount_cents = 1 WHERE tenant_id = $1', [tenantId])).rejects.toThrow(/append-only/);
    await expect(owner.query('DELETE FROM ledger_rows WHERE tenant_id = $1', [tenantId])).rejects.toThrow(/append-only/);
    await expect(owner.query('TRUNCATE ledger_rows CASCADE')).rejects.toThrow(/append-only/);
    await expect(database.system((tx) => tx.query('UPDATE ledger_rows SET amount_cents = 1'))).rejects.toThrow(/permission denied/);
    await expect(database.tenant(tenantId, (tx) => tx.query('DELETE FROM ledger_rows'))).rejects.toThrow(/permission denied/);
    expect(await allRows(tenantId)).toHaveLength(2);
  });

  it('refuses to delete a head or move it backwards', async () => {
    const tenantId = await newTenant();
    await post(tenantId, posting('fund', randomUUID(), 100));
    const owner = database.pool;
    await expect(owner.query('UPDATE ledger_heads SET last_ledger_seq = 1 WHERE tenant_id = $1', [tenantId])).rejects.toThrow(/only move forward/);
    await expect(owner.query('DELETE FROM ledger_heads WHERE tenant_id = $1', [tenantId])).rejects.toThrow(/only move forward/);
    expect((await database.system((tx) => findLedgerHead(tx, tenantId)))?.lastLedgerSeq).toBe(2);
  });
});
