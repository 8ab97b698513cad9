// The ledger verifier and `svc ledger verify` on a real Postgres: a clean ledger passes; each kind of tampering (a
// changed amount, a deleted row, a broken chain, a consistently forged but unbalanced transaction, a head that
// does not name the tip, escrow that disagrees with an intent's state) is reported; the CLI exits 0 or 1.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerVerifyBatchRows } from '../../src/limits.ts';
import { Database } from '../../src/infra/database.ts';
import { ledgerAccounts, queueLedgerTransaction, type LedgerPosting } from '../../src/services/ledger-service.ts';
import { verifyTenantLedger, type LedgerVerifyReport } from '../../src/services/ledger-verifier.ts';
import { encodeLedgerRowBody, ledgerRowHash } from '../../src/signing/index.ts';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/server-process.ts';
import { forgeChain, insertIntent, posting, tamper } from './support.ts';

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

const post = (tenantId: string, value: LedgerPosting) => database.tenant(tenantId, async (tx) => queueLedgerTransaction(tx, tenantId, value));

interface Seeded {
  readonly tenantId: string;
  readonly intents: Record<'open' | 'funded' | 'evidence' | 'released' | 'refunded', string>;
}

/**
 * A tenant with one intent in every state and the ledger the engine would have written for them: rows 1-2 fund
 * `funded`, 3-4 fund `evidence`, 5-6 fund `released`, 7-8 release it, 9-10 fund `refunded`, 11-12 refund it.
 */
async function seedCleanLedger(): Promise<Seeded> {
  const { tenantId } = await createTestTenant(testDatabase.connection);
  const intents = {
    open: await insertIntent(database, tenantId, { state: 'open', amountCents: 100 }),
    funded: await insertIntent(database, tenantId, { state: 'funded', amountCents: 500 }),
    evidence: await insertIntent(database, tenantId, { state: 'evidence_recorded', amountCents: 700 }),
    released: await insertIntent(database, tenantId, { state: 'released', amountCents: 1100 }),
    refunded: await insertIntent(database, tenantId, { state: 'refunded', amountCents: 1300 }),
  };
  await post(tenantId, posting('fund', intents.funded, 500));
  await post(tenantId, posting('fund', intents.evidence, 700));
  await post(tenantId, posting('fund', intents.released, 1100));
  await post(tenantId, posting('release', intents.released, 1100));
  await post(tenantId, posting('fund', intents.refunded, 1300));
  await post(tenantId, posting('refund', intents.refunded, 1300));
  return { tenantId, intents };
}

const verify = (tenantId: string): Promise<LedgerVerifyReport> => verifyTenantLedger(database, tenantId);

function expectProblem(report: LedgerVerifyReport, pattern: RegExp): void {
  expect(report.ok).toBe(false);
  expect(report.problems.some((problem) => pattern.test(problem)), `no problem matches ${pattern}:\n${report.problems.join('\n')}`).toBe(true);
}

describe('a clean ledger', () => {
  it('passes, with its counts, tip and balances', async () => {
    const { tenantId, intents } = await seedCleanLedger();
    const report = await verify(tenantId);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ tenantId, ok: true, rows: 12, transactions: 6, tipSeq: 12 });
    const tip = await database.system((tx) => tx.query('SELECT row_hash FROM ledger_rows WHERE tenant_id = $1 AND ledger_seq = 12', [tenantId]));
    expect(report.tipRowHashHex).toBe((tip.rows[0]!.row_hash as Buffer).toString('hex'));
    expect(report.balances).toEqual({
      [ledgerAccounts.escrow(intents.funded)]: 500n,
      [ledgerAccounts.escrow(intents.evidence)]: 700n,
      [ledgerAccounts.escrow(intents.released)]: 0n,
      [ledgerAccounts.escrow(intents.refunded)]: 0n,
      'rail:x402_usdc_base:funding': -(500n + 700n + 1100n + 1300n),
      'payee:did:key:z6MkPayee:payable': 1100n,
      'payer:did:key:z6MkPrincipal:refund': 1300n,
    });
  });

  it('passes an empty ledger, and a tenant that does not exist is tenant.not_found', async () => {
    const { tenantId } = await createTestTenant(testDatabase.connection);
    expect(await verify(tenantId)).toMatchObject({ ok: true, rows: 0, transactions: 0, tipSeq: 0, tipRowHashHex: '0'.repeat(64), balances: {} });
    await expect(verify('no-such-tenant')).rejects.toMatchObject({ code: 'tenant.not_found' });
  });

  it(`reads a ledger longer than one batch (${ledgerVerifyBatchRows} rows)`, async () => {
    const { tenantId } = await createTestTenant(testDatabase.connection);
    const count = ledgerVerifyBatchRows / 2 + 1;
    const { rows } = await database.system((tx) =>
      tx.query<{ intent_id: string }>(
        `INSERT INTO intents (tenant_id, intent_id, state, signing_version, principal_did, principal_key_registered, payee_did,
           budget, currency, amount_cents, evidence_schema, deadline_text, deadline, predicate_dsl, settlement_rail, allowed_tools)
         SELECT $1, gen_random_uuid(), 'funded', 0, 'did:key:p', false, 'did:key:q', '{}', 'usd', 250, '{}',
           '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z', '{}', 'x402_usdc_base', '{}'
         FROM generate_series(1, $2) RETURNING intent_id`,
        [tenantId, count],
      ),
    );
    await database.tenant(tenantId, async (tx) => {
      for (const { intent_id: intentId } of rows) queueLedgerTransaction(tx, tenantId, posting('fund', intentId, 250));
    });
    const progress: number[] = [];
    const report = await verifyTenantLedger(database, tenantId, { onProgress: (rowsChecked) => progress.push(rowsChecked) });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, rows: 2 * count, transactions: count, tipSeq: 2 * count });
    expect(progress).toEqual([ledgerVerifyBatchRows, 2 * count]);
    expect(report.balances['rail:x402_usdc_base:funding']).toBe(BigInt(-250 * count));
  });
});

describe('tampering is reported', () => {
  it('a changed amount', async () => {
    const { tenantId, intents } = await seedCleanLedger();
    await tamper(database, 'UPDATE ledger_rows SET amount_cents = amount_cents + 1 WHERE tenant_id = $1 AND ledger_seq = 3', [tenantId]);
    const report = await verify(tenantId);
    expectProblem(report, /^row 3: body does not match the row's columns$/);
    expectProblem(report, /rows 3\.\.4, fund\) is unbalanced: debits 701, credits 700/);
    expectProblem(report, new RegExp(`intent ${intents.evidence} \\(evidence_recorded\\): escrow balance 701, expected 700`));
  });

  it('a deleted middle row', async () => {
    const { tenantId } = await seedCleanLedger();
    await tamper(database, 'DELETE FROM ledger_rows WHERE tenant_id = $1 AND ledger_seq = 6', [tenantId]);
    const report = await verify(tenantId);
    expectProblem(report, /^row 7: ledger_seq follows 5, expected 6/);
    expectProblem(report, /^row 7: prev_row_hash is not the row_hash of row 5 \(chain broken\)/);
    expectProblem(report, /rows 5\.\.5, fund\) has 1 entries/);
    expect(report).toMatchObject({ rows: 11, tipSeq: 12 });
  });

  it('a broken chain: one row re-encoded and re-hashed, but its successor still points at the original', async () => {
    const { tenantId } = await seedCleanLedger();
    // Redirect the release (row 7) to another payee, keeping row 7 self-consistent.
    await tamper(database, `UPDATE ledger_rows SET account = 'payee:did:key:z6MkMallory:payable' WHERE tenant_id = $1 AND ledger_seq = 7`, [tenantId]);
    const { rows } = await database.pool.query('SELECT * FROM ledger_rows WHERE tenant_id = $1 AND ledger_seq = 7', [tenantId]);
    const row = rows[0];
    const body = Buffer.from(
      encodeLedgerRowBody({
        tenant_id: tenantId, ledger_seq: 7, transaction_id: row.transaction_id, intent_id: row.intent_id, entry_index: row.entry_index,
        account: row.account, side: row.side, amount_cents: Number(row.amount_cents), currency: row.currency, event_kind: row.event_kind,
        recorded_at: (row.recorded_at as Date).toISOString(),
      }),
    );
    const rowHash = Buffer.from(ledgerRowHash(row.prev_row_hash, body));
    await tamper(database, 'UPDATE ledger_rows SET body = $2, row_hash = $3 WHERE tenant_id = $1 AND ledger_seq = 7', [tenantId, body, rowHash]);
    const report = await verify(tenantId);
    expect(report.problems).toEqual(['row 8: prev_row_hash is not the row_hash of row 7 (chain broken)']);
  });

  it('an unbalanced transaction, even with bodies, chain and head forged to match', async () => {
    const { tenantId } = await seedCleanLedger();
    await tamper(database, 'UPDATE ledger_rows SET amount_cents = 1 WHERE tenant_id = $1 AND ledger_seq = 12', [tenantId]);
    await forgeChain(database, tenantId);
    const report = await verify(tenantId);
    expect(report.problems.some((problem) => /body|row_hash|chain|ledger_heads/.test(problem))).toBe(false);
    expectProblem(report, /rows 11\.\.12, refund\) is unbalanced: debits 1300, credits 1$/);
    expectProblem(report, /\(refunded\): escrow balance 1299, expected 0/);
    expectProblem(report, /^the balances of all accounts sum to 1299, not 0$/);
  });

  it('a head that does not name the last row', async () => {
    const { tenantId } = await seedCleanLedger();
    await database.pool.query('UPDATE ledger_heads SET last_ledger_seq = 13 WHERE tenant_id = $1', [tenantId]);
    expectProblem(await verify(tenantId), /^ledger_heads names seq 13 .*, but the last row is 12/);
  });

  it('escrow that does not match the intent\'s state', async () => {
    const { tenantId, intents } = await seedCleanLedger();
    // Funded in the intents table, but nothing ever moved.
    const unfunded = await insertIntent(database, tenantId, { state: 'funded', amountCents: 900 });
    // Marked released, but only the fund is in the ledger.
    await database.system((tx) => tx.query(`UPDATE intents SET state = 'released', released_cents = amount_cents, refunded_cents = 0 WHERE tenant_id = $1 AND intent_id = $2`, [tenantId, intents.funded]));
    const report = await verify(tenantId);
    expectProblem(report, new RegExp(`intent ${unfunded} \\(funded\\): escrow balance 0, expected 900`));
    expectProblem(report, new RegExp(`intent ${unfunded} \\(funded\\): 0 fund transaction\\(s\\), expected 1`));
    expectProblem(report, new RegExp(`intent ${intents.funded} \\(released\\): 0 release transaction\\(s\\), expected 1`));
    expectProblem(report, new RegExp(`intent ${intents.funded} \\(released\\): escrow balance 500, expected 0`));
    expectProblem(report, new RegExp(`intent ${intents.funded} \\(released\\): the ledger paid the payee 0, the intent records released_cents 500`));
    expect(report.problems).toHaveLength(5);
  });

  it('a second settlement, a fund of the wrong amount, and money moved for an intent that does not exist', async () => {
    const { tenantId, intents } = await seedCleanLedger();
    await post(tenantId, posting('release', intents.refunded, 1300));
    const wrongAmount = await insertIntent(database, tenantId, { state: 'funded', amountCents: 400 });
    await post(tenantId, posting('fund', wrongAmount, 450));
    const ghost = randomUUID();
    await post(tenantId, posting('fund', ghost, 10));
    const report = await verify(tenantId);
    expectProblem(report, new RegExp(`intent ${intents.refunded} \\(refunded\\): 1 release transaction\\(s\\), expected 0`));
    expectProblem(report, new RegExp(`intent ${wrongAmount} \\(funded\\): the fund at row 15 moves 450 usd, the intent is 400 usd`));
    expectProblem(report, new RegExp(`intent ${ghost}: 1 ledger transaction\\(s\\), but no such intent`));
  });
});

describe('svc ledger verify', () => {
  it('exits 0 on a clean ledger and 1 on a tampered one, with the report as JSON', async () => {
    const { tenantId } = await seedCleanLedger();
    const env = { DATABASE_URL: testDatabase.url };
    const clean = await runCli(['ledger', 'verify', '--tenant-id', tenantId, '--json'], env);
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ tenant_id: tenantId, ok: true, rows: 12, transactions: 6, tip_seq: 12, problems: [] });

    await tamper(database, 'UPDATE ledger_rows SET amount_cents = 2 WHERE tenant_id = $1 AND ledger_seq = 1', [tenantId]);
    const tampered = await runCli(['ledger', 'verify', '--tenant-id', tenantId, '--json'], env);
    expect(tampered.code).toBe(1);
    const report = JSON.parse(tampered.stdout);
    expect(report.ok).toBe(false);
    expect(report.problems).toContain("row 1: body does not match the row's columns");

    const text = await runCli(['ledger', 'verify', '--tenant-id', tenantId], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('- row 1: body does not match');
  });

  it('exits 1 with tenant.not_found for an unknown tenant, and 2 without --tenant-id', async () => {
    const env = { DATABASE_URL: testDatabase.url };
    const unknown = await runCli(['ledger', 'verify', '--tenant-id', 'nobody-here'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('tenant.not_found');
    expect((await runCli(['ledger', 'verify'], env)).code).toBe(2);
  });
});
