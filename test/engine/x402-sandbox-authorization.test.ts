// The sandbox x402 rail checks what a live facilitator checks, over HTTP on a real Postgres: the authorization's
// validity window, its value as a uint256 and exactly the amount, and its nonce spent once per token and payer,
// across intents and across two service processes on one database (a unique index, not memory). Nothing paid goes
// unrecorded: what the rail accepted is what the ledger posts.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxX402Options, sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
/** Two service processes on one database: nothing one remembers in memory helps the other. */
let first: FastifyInstance;
let second: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const logs = new LogCapture();
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
const payer = '0x857b06519E91e3A54538791bDbb0E22373e36b66';

beforeAll(async () => {
  database = await createTestDatabase();
  first = await buildTestApp(database.connection, { logs });
  second = await buildTestApp(database.connection, { logs });
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  await database?.drop();
});

async function createIntent(tenant = acme, app = first): Promise<string> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, amountCents: 1250 });
  const response = await app.inject({ method: 'POST', url: '/harbor/intents', headers: bearer(tenant.adminKey), payload: body });
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

const fund = (intentId: string, headers: Record<string, string> = {}, app = first, tenant = acme) =>
  app.inject({ method: 'POST', url: `/harbor/intents/${intentId}/fund`, headers: { ...bearer(tenant.adminKey), ...headers }, payload: {} });

/** A credential for the intent's current challenge (a fresh 402 first). */
async function credentialFor(intentId: string, options: Partial<SandboxX402Options>, app = first, tenant = acme): Promise<Record<string, string>> {
  const challenge = await fund(intentId, {}, app, tenant);
  expect(challenge.statusCode, challenge.body).toBe(402);
  return { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: payer, ...options }) };
}

/** The 402 refusal's problem type and funding status and reason. */
function refusalOf(response: LightMyRequestResponse) {
  const body = response.json();
  return { status: response.statusCode, problem: body.type, funding_status: body.funding?.status, error_reason: body.funding?.error_reason };
}

async function stateOf(intentId: string, tenant = acme): Promise<string> {
  return (await first.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(tenant.adminKey) })).json().state;
}

const nonce = (digit: string) => `0x${digit.repeat(64)}`;

describe('the authorization\'s terms', () => {
  it('refuses a validBefore past, a validAfter to come, a value above the amount or above uint256, and moves nothing', async () => {
    const intentId = await createIntent();
    const nowMs = Date.now();
    const cases: Array<[string, Partial<SandboxX402Options>, string, string]> = [
      ['expired', { nowMs: nowMs - 3_600_000 }, 'verification-failed', 'invalid_exact_evm_payload_authorization_valid_before'],
      ['not yet valid', { nowMs: nowMs + 3_600_000 }, 'verification-failed', 'invalid_exact_evm_payload_authorization_valid_after'],
      ['overpaying', { value: '12500001' }, 'verification-failed', 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['above uint256', { value: ((1n << 256n) + 12_500_000n).toString() }, 'verification-failed', 'invalid_payload'],
      ['underpaying', { value: '12499999' }, 'payment-insufficient', 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ];
    for (const [label, options, problem, errorReason] of cases) {
      const refused = await fund(intentId, await credentialFor(intentId, options));
      expect(refusalOf(refused), label).toEqual({ status: 402, problem: `https://paymentauth.org/problems/${problem}`, funding_status: 'authorization_failed', error_reason: errorReason });
      // A fresh challenge to answer, as after every refusal.
      expect(refused.headers['payment-required'], label).toEqual(expect.any(String));
    }
    expect(await stateOf(intentId)).toBe('open');
    const funded = await fund(intentId, await credentialFor(intentId, {}));
    expect(funded.statusCode, funded.body).toBe(200);
  });

  it('records exactly what was paid: the accepted base units, the attempt and the ledger all say the amount', async () => {
    const intentId = await createIntent();
    const funded = await fund(intentId, await credentialFor(intentId, {}));
    expect(funded.json().funding).toMatchObject({ status: 'authorization_succeeded', accepted_cumulative_base_units: '12500000' });
    const paid = JSON.parse(Buffer.from(funded.headers['payment-response'] as string, 'base64').toString());
    expect(paid).toMatchObject({ success: true, amount: '12500000' });
    // The ledger's fund posting moves the amount the rail accepted: 12,500,000 base units are 1,250 cents.
    const lines: Array<{ intent_id: string; event_kind: string; side: string; amount_cents: number }> = [];
    for (let after = 0; after !== null;) {
      const page = (await first.inject({ url: `/harbor/ledger/v1/events?after_seq=${after}&limit=256`, headers: bearer(acme.adminKey) })).json();
      lines.push(...page.events);
      after = page.next_after_seq;
    }
    const posting = lines.filter((line) => line.intent_id === intentId);
    expect(posting.map((line) => [line.event_kind, line.side, line.amount_cents]).sort()).toEqual([['fund', 'credit', 1250], ['fund', 'debit', 1250]]);
  });
});

describe('an authorization is spent once', () => {
  it('refuses a nonce spent on another intent, through another process, and takes a fresh one', async () => {
    const paid = await createIntent();
    const spent = nonce('1');
    expect((await fund(paid, await credentialFor(paid, { nonce: spent }))).statusCode).toBe(200);

    const next = await createIntent(acme, second);
    const reused = await fund(next, await credentialFor(next, { nonce: spent }, second), second);
    expect(refusalOf(reused)).toEqual({
      status: 402, problem: 'https://paymentauth.org/problems/verification-failed', funding_status: 'authorization_failed', error_reason: 'invalid_exact_evm_nonce_already_used',
    });
    // The same nonce in another letter case is the same nonce.
    const shouted = await fund(next, await credentialFor(next, { nonce: spent.toUpperCase().replace('0X', '0x') }, second), second);
    expect(refusalOf(shouted).error_reason).toBe('invalid_exact_evm_nonce_already_used');
    expect(await stateOf(next)).toBe('open');
    // Another payer's nonce is another authorization: the contract counts nonces per payer.
    const otherPayer = await fund(next, await credentialFor(next, { nonce: spent, from: sandboxX402Payers.success }, second), second);
    expect(otherPayer.statusCode, otherPayer.body).toBe(200);
  });

  it('holds a nonce while its payment is pending, and lets a refused or declined one be used again', async () => {
    const pending = await createIntent();
    const held = nonce('2');
    expect((await fund(pending, await credentialFor(pending, { nonce: held, from: sandboxX402Payers.pending }))).statusCode).toBe(202);
    const other = await createIntent();
    const refused = await fund(other, await credentialFor(other, { nonce: held, from: sandboxX402Payers.pending }));
    expect(refusalOf(refused).error_reason).toBe('invalid_exact_evm_nonce_already_used');

    // Refused (wrong recipient) and declined (the payer's funds) spend nothing: the nonce stays usable.
    const free = nonce('3');
    const wrongRecipient = await fund(other, await credentialFor(other, { nonce: free, to: '0x1111111111111111111111111111111111111111' }));
    expect(refusalOf(wrongRecipient).error_reason).toBe('invalid_exact_evm_payload_recipient_mismatch');
    const declinedNonce = nonce('4');
    const declined = await fund(other, await credentialFor(other, { nonce: declinedNonce, from: sandboxX402Payers.decline }));
    expect(refusalOf(declined)).toMatchObject({ status: 402, funding_status: 'authorization_failed', error_reason: 'insufficient_funds' });
    expect((await fund(other, await credentialFor(other, { nonce: free }))).statusCode).toBe(200);
    // The declined authorization, presented again elsewhere, is judged again (declined again), not called spent.
    const third = await createIntent();
    const again = await fund(third, await credentialFor(third, { nonce: declinedNonce, from: sandboxX402Payers.decline }));
    expect(refusalOf(again).error_reason).toBe('insufficient_funds');
  });

  it('polls a pending payment with its own credential: the authorization it holds is its own', async () => {
    const intentId = await createIntent();
    const credential = await credentialFor(intentId, { nonce: nonce('6'), from: sandboxX402Payers.pending });
    expect((await fund(intentId, credential)).statusCode).toBe(202);
    const polled = await fund(intentId, credential, second);
    expect(polled.statusCode, polled.body).toBe(200);
  });

  it('keeps tenants apart: another tenant\'s sandbox spends its own nonces', async () => {
    const mine = await createIntent();
    const theirs = await createIntent(globex);
    expect((await fund(mine, await credentialFor(mine, { nonce: nonce('7') }))).statusCode).toBe(200);
    expect((await fund(theirs, await credentialFor(theirs, { nonce: nonce('7') }, first, globex), first, globex)).statusCode).toBe(200);
  });

  it('funds one of two intents racing with one authorization through two processes, and refuses the other without a 500', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = [await createIntent(), await createIntent(acme, second)];
      const shared = nonce(String.fromCharCode(97 + round));
      const [ca, cb] = [await credentialFor(a, { nonce: shared }), await credentialFor(b, { nonce: shared }, second)];
      const answers = await Promise.all([fund(a, ca), fund(b, cb, second)]);
      const statuses = answers.map((answer) => answer.statusCode).sort();
      expect(statuses, answers.map((answer) => answer.body).join('\n')).toEqual([200, 402]);
      expect(refusalOf(answers.find((answer) => answer.statusCode === 402)!).error_reason).toBe('invalid_exact_evm_nonce_already_used');
    }
    expect(logs.lines.filter((line) => line.includes('"level":50'))).toEqual([]);
  });

  it('is held by a unique index in the database, whatever the code does', async () => {
    const client = new pg.Client(database.connection);
    await client.connect();
    try {
      const { rows } = await client.query<{ attempt_id: string; authorization_key: string }>(
        `SELECT attempt_id, authorization_key FROM funding_attempts WHERE tenant_id = $1 AND authorization_key IS NOT NULL LIMIT 1`, [acme.tenantId]);
      expect(rows[0]?.authorization_key).toMatch(/^eip155:84532\/0x[0-9a-f]{40}\/0x[0-9a-f]{40}\/0x[0-9a-f]{64}$/);
      const copy = client.query(
        `UPDATE funding_attempts SET authorization_key = $2 WHERE tenant_id = $1 AND attempt_id = (
           SELECT attempt_id FROM funding_attempts WHERE tenant_id = $1 AND authorization_key IS NULL LIMIT 1)`,
        [acme.tenantId, rows[0]!.authorization_key]);
      await expect(copy).rejects.toMatchObject({ code: '23505', constraint: 'funding_attempts_authorization_once' });
    } finally {
      await client.end();
    }
  });
});
