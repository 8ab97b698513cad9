// Live x402 with the `auth-capture` scheme (docs/rails.md#x402-auth-capture-escrow-held-at-the-rail), against a local
// facilitator that speaks the scheme and its EVM binding and checks every signature (test/helpers/x402-escrow-facilitator.ts);
// the client signs through @x402/core's client. Funding is `authorize` (the hold), a release is `capture` of the
// amount to the tenant's x402_address, a refund is `void` back to the payer: carried out by the sweeper, no
// instruction left for a person.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockIntent, queueEvidenceRecordedTransition } from '../../src/db/intent-repository.ts';
import { checkReleasedCents } from '../../src/engine/decide.ts';
import { settleIntentFor } from '../../src/engine/settle.ts';
import { Database } from '../../src/infra/database.ts';
import { x402CaptureDeadlineMarginSeconds } from '../../src/limits.ts';
import { buildTestApp, LogCapture } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { testAccount } from '../helpers/x402-facilitator.ts';
import { signEscrowPayment, startEscrowFacilitator, type EscrowFacilitator } from '../helpers/x402-escrow-facilitator.ts';
import { liveSecretsKey, setUpLive, type LiveTenant } from './live-fixtures.ts';

const apiKey = 'fac_escrow_5e1d9a77';
const authorizerKey = `0x${'7c'.repeat(32)}`;
const payTo = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let facilitator: EscrowFacilitator;
let live: LiveTenant;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  facilitator = await startEscrowFacilitator({ apiKey });
  app = await buildTestApp(database.connection, { logs, appOptions: { secretsKey: liveSecretsKey, railCallTimeoutMs: 2_000 } });
  live = await setUpLive(app, database.connection);
  const configured = await live.configure({
    rails: ['x402_usdc_base'],
    x402_address: payTo,
    x402_facilitator_url: facilitator.url,
    x402_facilitator_api_key: apiKey,
    x402_scheme: 'auth-capture',
    x402_capture_authorizer: facilitator.captureAuthorizer,
    x402_receiver_authorizer_key: authorizerKey,
  });
  expect(configured.statusCode, configured.body).toBe(200);
  expect(configured.json()).toMatchObject({ x402_scheme: 'auth-capture', x402_receiver_authorizer_key_set: true });
  expect(configured.body).not.toContain(authorizerKey.slice(2));
});

afterAll(async () => {
  await app?.close();
  await facilitator?.close();
  await db?.close();
  await database?.drop();
});

/** Funds an intent through the escrow: the challenge, the client's signed authorization, the hold. */
async function fundHeld(amountCents = 500) {
  const intentId = await live.createIntent({ amountCents });
  const challenge = await live.fund(intentId);
  expect(challenge.statusCode, challenge.body).toBe(402);
  const payer = testAccount();
  const signature = await signEscrowPayment(challenge.headers['payment-required'] as string, payer);
  const funded = await live.fund(intentId, { 'payment-signature': signature });
  expect(funded.statusCode, funded.body).toBe(200);
  return { intentId, challenge, funded, payer };
}

describe('x402 auth-capture: escrow held at the rail', () => {
  it('the challenge offers the escrow scheme, its capture deadline the intent deadline plus the margin', async () => {
    const intentId = await live.createIntent();
    const challenge = await live.fund(intentId);
    expect(challenge.statusCode).toBe(402);
    const required = JSON.parse(Buffer.from(challenge.headers['payment-required'] as string, 'base64').toString('utf8'));
    const [offer] = required.accepts;
    expect(offer).toMatchObject({
      scheme: 'auth-capture',
      network: 'eip155:8453',
      payTo,
      extra: { captureAuthorizer: facilitator.captureAuthorizer, operatorType: 'delegated', paymentFlow: 'escrow', minFeeBps: 0, maxFeeBps: 0 },
    });
    const intent = await live.read(intentId);
    expect(offer.extra.captureDeadline).toBe(Math.ceil(Date.parse(intent.deadline) / 1000) + x402CaptureDeadlineMarginSeconds);
    expect(offer.extra.refundDeadline).toBeGreaterThan(offer.extra.captureDeadline);
    expect(challenge.json().funding).toMatchObject({ scheme: 'auth-capture', capture_expires_at: new Date(offer.extra.captureDeadline * 1000).toISOString() });
  });

  it('fund = authorize: the facilitator holds the full amount; the answer carries the authorize fields', async () => {
    const { funded, payer } = await fundHeld(700);
    const funding = funded.json().funding;
    const hold = facilitator.payments.get(funding.authorization_id)!;
    expect(hold).toMatchObject({ payer: payer.address, capturable: 7_000_000n, refundable: 0n });
    expect(funding).toMatchObject({
      status: 'authorization_succeeded',
      scheme: 'auth-capture',
      onchain_transaction_hashes: { authorizations: [hold.transactions.authorize[0]] },
    });
    expect(funding.capture_expires_at).toBe(funding.authorization_expires_at);
    expect(Date.parse(funding.refund_expires_at)).toBeGreaterThan(Date.parse(funding.capture_expires_at));
  });

  it('a credential bound to another receiver authorizer is refused before the facilitator sees it', async () => {
    const intentId = await live.createIntent();
    const challenge = await live.fund(intentId);
    const header = challenge.headers['payment-required'] as string;
    const required = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    // The payer signs a hold whose salt commits to another authorizer: a payment this service could not consent to.
    const forged = { ...required, accepts: [{ ...required.accepts[0], extra: { ...required.accepts[0].extra, receiverAuthorizer: testAccount().address } }] };
    const signed = JSON.parse(Buffer.from(await signEscrowPayment(Buffer.from(JSON.stringify(forged)).toString('base64'), testAccount()), 'base64').toString('utf8'));
    signed.accepted = required.accepts[0];
    const settlesBefore = facilitator.settles.length;
    const refused = await live.fund(intentId, { 'payment-signature': Buffer.from(JSON.stringify(signed)).toString('base64') });
    expect(refused.statusCode).toBe(402);
    expect(refused.json().funding).toMatchObject({ status: 'authorization_failed', error_reason: 'invalid_auth_capture_evm_salt_binding_mismatch' });
    expect(facilitator.settles.length).toBe(settlesBefore);
  });

  it('release = capture of the amount to the receiver, by the sweeper; the intent shows the capture', async () => {
    const { intentId, funded } = await fundHeld(500);
    const hash = funded.json().funding.authorization_id;
    expect((await live.evidence(intentId, 'completed')).statusCode).toBe(200);
    const confirmed = await live.confirm(intentId);
    expect(confirmed.json().state).toBe('released');
    const report = await live.sweep();
    expect(report.instructions.succeeded).toBeGreaterThanOrEqual(1);
    const hold = facilitator.payments.get(hash)!;
    expect(hold).toMatchObject({ capturable: 0n, refundable: 5_000_000n, paidToReceiver: 5_000_000n, returnedToPayer: 0n });
    expect(hold.transactions.capture).toHaveLength(1);
    const intent = await live.read(intentId);
    expect(intent.rail_instructions).toMatchObject([{ kind: 'payout', status: 'succeeded', reference: hold.transactions.capture[0] }]);
    expect(intent).toMatchObject({
      authorization_id: hash,
      capture_id: hold.transactions.capture[0],
      onchain_transaction_hashes: { authorizations: [hold.transactions.authorize[0]], captures: [hold.transactions.capture[0]], voids: [], refunds: [] },
    });
    // A second pass finds nothing to do: the capture is not asked again.
    await live.sweep();
    expect(hold.transactions.capture).toHaveLength(1);
  });

  it('refund = void of the hold back to the payer', async () => {
    const { intentId, funded } = await fundHeld(300);
    const hash = funded.json().funding.authorization_id;
    expect((await live.evidence(intentId, 'failed')).statusCode).toBe(200);
    expect((await live.confirm(intentId)).json().state).toBe('refunded');
    await live.sweep();
    const hold = facilitator.payments.get(hash)!;
    expect(hold).toMatchObject({ capturable: 0n, refundable: 0n, paidToReceiver: 0n, returnedToPayer: 3_000_000n });
    const intent = await live.read(intentId);
    expect(intent.rail_instructions).toMatchObject([{ kind: 'refund', status: 'succeeded', reference: hold.transactions.void[0] }]);
    expect(intent).toMatchObject({ void_id: hold.transactions.void[0], onchain_transaction_hashes: { voids: [hold.transactions.void[0]] } });
  });

  it('split = capture of the payee\'s part, then void of the rest; both automatic, in that order', async () => {
    const { intentId, funded } = await fundHeld(250);
    const hash = funded.json().funding.authorization_id;
    // The engine's entry for a named part (as a metered release or an operator's resolution settles): 120 of 250.
    const settled = await db.tenant(live.tenant.tenantId, async (tx) => {
      const recorded = queueEvidenceRecordedTransition(tx, (await lockIntent(tx, live.tenant.tenantId, intentId))!, true);
      return settleIntentFor(tx, recorded, app.engineEffects, { command: 'confirm', releasedCents: checkReleasedCents(recorded, 120), reason: 'predicate_passed' });
    });
    expect(settled).toMatchObject({ releasedCents: 120, refundedCents: 130, intent: { state: 'resolved_split' } });
    // The first pass captures; the void waits for the capture to succeed, and goes on the next pass.
    await live.sweep();
    const hold = facilitator.payments.get(hash)!;
    expect(hold).toMatchObject({ capturable: 1_300_000n, refundable: 1_200_000n, paidToReceiver: 1_200_000n, returnedToPayer: 0n });
    await live.sweep();
    expect(hold).toMatchObject({ capturable: 0n, refundable: 1_200_000n, paidToReceiver: 1_200_000n, returnedToPayer: 1_300_000n });
    const intent = await live.read(intentId);
    expect(intent).toMatchObject({
      state: 'resolved_split', released_cents: 120, refunded_cents: 130,
      capture_id: hold.transactions.capture[0], void_id: hold.transactions.void[0],
    });
    expect(intent.rail_instructions).toMatchObject([
      { kind: 'payout', amount_cents: 120, status: 'succeeded', reference: hold.transactions.capture[0] },
      { kind: 'refund', amount_cents: 130, status: 'succeeded', reference: hold.transactions.void[0] },
    ]);
    // Nothing more to do: a third pass moves nothing.
    await live.sweep();
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold.transactions.void).toHaveLength(1);
  });

  it('a capture asked again under the same idempotency key is answered, not repeated', async () => {
    // What the sweeper does after a crash between the facilitator's answer and our commit (the kill -9 test in
    // live-x402-escrow-crash.test.ts): the facilitator replays; the signed balances would refuse a second capture.
    const settles = facilitator.settles.filter((settle) => settle.operation === 'capture');
    const keys = new Set(settles.map((settle) => settle.idempotencyKey));
    expect(keys.size).toBe(settles.length);
    expect([...keys].every((key) => key?.startsWith('svc_'))).toBe(true);
    expect(logs.text).not.toContain(authorizerKey.slice(2));
  });
});
