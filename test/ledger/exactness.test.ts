// Money past 2^53 cents, where a JavaScript number stops being exact: a tenant whose accounts hold 2^53 − 1 cents
// and more through real engine postings (create, fund, evidence, confirm over HTTP), verified exactly by
// verifyTenantLedger and by `svc ledger verify` (text and --json, as a child process); a one-cent imbalance at that
// scale is reported, and so is a stored amount past 2^53; spend reservations against an intent of 2^53 − 1 cents are
// exact to the cent.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { ledgerAccounts, queueLedgerTransaction } from '../../src/services/ledger-service.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { runCli } from '../helpers/server-process.ts';
import { forgeChain, insertIntent, posting, tamper } from './support.ts';

/** The largest amount one intent may have, and the largest cents a number holds exactly. */
const largest = Number.MAX_SAFE_INTEGER;
const largestCents = BigInt(largest);

let testDatabase: TestDatabase;
let database: Database;
let app: FastifyInstance;
let tenant: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database({ ...testDatabase.connection, max: 2 });
  app = await buildTestApp(testDatabase.connection);
  tenant = await createTestTenant(testDatabase.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.close();
  await testDatabase?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });

/** Creates a signed intent of `amountCents` and funds it through the x402 sandbox simulator, as a client does. */
async function fundedIntent(amountCents: number): Promise<{ intentId: string; token: string }> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, amountCents });
  const intentId = body.intent_id as string;
  const created = await post('/harbor/intents', body);
  expect(created.statusCode, created.body).toBe(201);
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  expect(challenge.statusCode, challenge.body).toBe(402);
  const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  const funded = await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': paymentSignature });
  expect(funded.statusCode, funded.body).toBe(200);
  return { intentId, token: funded.json().capability_token as string };
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Passing evidence, then confirm: the intent's escrow moves to the payee's payable account. */
async function release(intentId: string): Promise<void> {
  const evidence = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } }));
  expect(evidence.statusCode, evidence.body).toBe(200);
  const confirmed = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  expect(confirmed.json().state).toBe('released');
}

describe('a tenant holding more than 2^53 cents, through real postings', () => {
  // Two intents of 2^53 − 1 cents released, two more of 2^53 − 1 and one of 1 cent held in escrow.
  const payable = 2n * largestCents;
  const escrow = 2n * largestCents + 1n;
  const railFunding = -(payable + escrow);
  let heldIntentIds: string[];

  beforeAll(async () => {
    const released = [await fundedIntent(largest), await fundedIntent(largest)];
    for (const { intentId } of released) await release(intentId);
    heldIntentIds = [(await fundedIntent(largest)).intentId, (await fundedIntent(largest)).intentId, (await fundedIntent(1)).intentId];
  }, 60_000);

  it('verifyTenantLedger reports every balance exactly, as bigint', async () => {
    const report = await verifyTenantLedger(database, tenant.tenantId);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.balances[ledgerAccounts.payeePayable(payee.did)]).toBe(payable);
    expect(report.balances[ledgerAccounts.railFunding('x402_usdc_base')]).toBe(railFunding);
    expect(report.balances[ledgerAccounts.escrow(heldIntentIds[0]!)]).toBe(largestCents);
    expect(report.balances[ledgerAccounts.escrow(heldIntentIds[2]!)]).toBe(1n);
    // A sum as numbers lands on a neighbour: the exactness is what this test is about.
    expect(BigInt(Number(railFunding))).not.toBe(railFunding);
  });

  it('svc ledger verify --json prints each balance as an exact decimal string', async () => {
    const result = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: testDatabase.url });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.balances[ledgerAccounts.payeePayable(payee.did)]).toBe(payable.toString());
    expect(report.balances[ledgerAccounts.railFunding('x402_usdc_base')]).toBe('-36028797018963965');
    expect(report.balances[ledgerAccounts.escrow(heldIntentIds[1]!)]).toBe('9007199254740991');
    expect(Object.values(report.balances).every((cents) => typeof cents === 'string' && /^-?\d+$/.test(cents))).toBe(true);
  });

  it('svc ledger verify prints exact balances and the exact escrow total as text', async () => {
    const result = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId], { DATABASE_URL: testDatabase.url });
    expect(result.code).toBe(0);
    // The figures may carry a unit after them (" cents"); the digits are what must be exact.
    expect(result.stdout).toMatch(new RegExp(`^  ${escaped(ledgerAccounts.railFunding('x402_usdc_base'))}  -36028797018963965( cents)?$`, 'm'));
    expect(result.stdout).toMatch(new RegExp(`^  ${escaped(ledgerAccounts.payeePayable(payee.did))}  18014398509481982( cents)?$`, 'm'));
    // Five escrow accounts: two released to 0, two of 2^53 − 1 and one of 1 cent held: 2^54 − 1 in all.
    expect(result.stdout).toMatch(new RegExp(`^  escrow \\(5 intents\\)  ${escrow}( cents)?$`, 'm'));
    expect(escrow.toString()).toBe('18014398509481983');
    expect(result.stdout).toContain('ok: no problems found');
  });
});

describe('a one-cent imbalance at 2^53 cents', () => {
  it('is reported by the verifier and by the CLI, even with bodies, chain and head forged to match', async () => {
    const { tenantId } = await createTestTenant(testDatabase.connection, 'sandbox');
    const intentIds = [
      await insertIntent(database, tenantId, { state: 'funded', amountCents: largest }),
      await insertIntent(database, tenantId, { state: 'funded', amountCents: largest }),
    ];
    // Posted the way the engine posts (queueLedgerTransaction inside a tenant transaction).
    await database.tenant(tenantId, async (tx) => {
      for (const intentId of intentIds) queueLedgerTransaction(tx, tenantId, posting('fund', intentId, largest));
    });
    expect((await verifyTenantLedger(database, tenantId)).problems).toEqual([]);

    // The rail's side of the second fund loses one cent; a careful forger then rebuilds bodies, chain and head.
    await tamper(database, 'UPDATE ledger_rows SET amount_cents = amount_cents - 1 WHERE tenant_id = $1 AND ledger_seq = 4', [tenantId]);
    await forgeChain(database, tenantId);
    const report = await verifyTenantLedger(database, tenantId);
    expect(report.ok).toBe(false);
    expect(report.problems.some((problem) => /body|row_hash|chain|ledger_heads/.test(problem))).toBe(false);
    expect(report.problems).toContainEqual(expect.stringMatching(/\(rows 3\.\.4, fund\) is unbalanced: debits 9007199254740991, credits 9007199254740990$/));
    expect(report.problems).toContain('the balances of all accounts sum to 1, not 0');
    expect(report.balances[ledgerAccounts.railFunding('x402_usdc_base')]).toBe(-(2n * largestCents - 1n));

    const result = await runCli(['ledger', 'verify', '--tenant-id', tenantId, '--json'], { DATABASE_URL: testDatabase.url });
    expect(result.code).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed.problems).toContain('the balances of all accounts sum to 1, not 0');
    expect(printed.balances[ledgerAccounts.railFunding('x402_usdc_base')]).toBe('-18014398509481981');
  });
});

describe('a stored amount past 2^53 cents', () => {
  it('is reported as a problem, with the balances still exact, rather than stopping the verifier', async () => {
    const { tenantId } = await createTestTenant(testDatabase.connection, 'sandbox');
    const intentId = await insertIntent(database, tenantId, { state: 'funded', amountCents: largest });
    await database.tenant(tenantId, async (tx) => queueLedgerTransaction(tx, tenantId, posting('fund', intentId, largest)));
    // Both sides two cents more than any posting may move, with bodies, chain and head forged to match.
    await tamper(database, 'UPDATE ledger_rows SET amount_cents = amount_cents + 2 WHERE tenant_id = $1', [tenantId]);
    await forgeChain(database, tenantId);
    const report = await verifyTenantLedger(database, tenantId);
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual(expect.stringMatching(/entry 0 has amount \d+; amounts are positive safe integers$/));
    expect(report.balances[ledgerAccounts.escrow(intentId)]).toBe(largestCents + 2n);
    expect(report.balances[ledgerAccounts.railFunding('x402_usdc_base')]).toBe(-(largestCents + 2n));
    expect(report.problems).toContainEqual(expect.stringMatching(/escrow balance 9007199254740993, expected 9007199254740991$/));
  });
});

describe('spend reservations against an intent of 2^53 − 1 cents', () => {
  it('reserve to the last cent, then refuse one more', async () => {
    const { intentId, token } = await fundedIntent(largest);
    const verify = (requestedSpendCents: number) =>
      post('/verify', { token, intent_id: intentId, operation: 'search.web', requested_spend_cents: requestedSpendCents });
    const most = await verify(largest - 1);
    expect(most.json()).toMatchObject({ allow: true, remaining_cents: 1 });
    const last = await verify(1);
    expect(last.json()).toMatchObject({ allow: true, remaining_cents: 0 });
    const over = await verify(1);
    expect(over.json()).toMatchObject({ allow: false, code: 'capability.budget_exceeded', remaining_cents: 0 });
  });
});
