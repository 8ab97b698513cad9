// kill -9 between the facilitator's capture and our record of it (docs/rails.md#rail-instructions-and-the-sweeper):
// the server process kills itself at `instruct.after_rail_call`, after its sweeper's capture of an auth-capture hold
// was answered and before the outcome is committed. The claim stays; after its lease the restarted server's sweeper
// takes it over and asks the facilitator again under the same idempotency key, which replays the capture: the
// payee is paid once, the instruction succeeds with the capture's transaction, nothing is lost or doubled.
// A split (capture of the payee's part, void of the rest) is killed twice: after the capture, and again after the
// capture's takeover is recorded and before the void is asked (`instruct.after_record`); the third life voids once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recognitionPurposes } from '../../src/signing/recognition.ts';
import { testAccount } from '../helpers/x402-facilitator.ts';
import { signEscrowPayment, startEscrowFacilitator, type EscrowFacilitator, type EscrowPayment } from '../helpers/x402-escrow-facilitator.ts';
import { setUpCrashRig, type CrashRig } from './live-crash-fixtures.ts';

const apiKey = 'fac_escrow_crash_0c1f';
const receiverAuthorizerKey = `0x${randomBytes(32).toString('hex')}`;
let rig: CrashRig;
let facilitator: EscrowFacilitator;

beforeAll(async () => {
  rig = await setUpCrashRig('escrow-crash');
  facilitator = await startEscrowFacilitator({ apiKey });
});

afterAll(async () => {
  await rig?.close();
  await facilitator?.close();
});

const configureEscrow = () => rig.configure({
  rails: ['x402_usdc_base'],
  x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  x402_facilitator_url: facilitator.url,
  x402_facilitator_api_key: apiKey,
  x402_scheme: 'auth-capture',
  x402_capture_authorizer: facilitator.captureAuthorizer,
  x402_receiver_authorizer_key: receiverAuthorizerKey,
});

/** Funds the intent through the escrow (the client's signed authorization, the facilitator's hold): the hold. */
async function fundHeld(intentId: string): Promise<EscrowPayment> {
  const fundPath = `/harbor/intents/${intentId}/fund`;
  const challenge = await rig.post(fundPath, recognitionPurposes.intentFund, {});
  expect(challenge.status).toBe(402);
  const signature = await signEscrowPayment(challenge.headers.get('payment-required')!, testAccount());
  const funded = await rig.post(fundPath, recognitionPurposes.intentFund, {}, { 'payment-signature': signature });
  expect(funded.status, funded.text).toBe(200);
  return facilitator.payments.get(funded.json.funding.authorization_id)!;
}

/** The facilitator's /settle calls for one hold and one operation, each with its idempotency key. */
const settlesOf = (hold: EscrowPayment, operation: 'capture' | 'void') =>
  facilitator.settles.filter((settle) => settle.operation === operation && settle.paymentInfoHash === hold.paymentInfoHash);

describe('a crash between the facilitator\'s capture and our record', () => {
  it('is recovered by the sweeper after the claim\'s lease: captured once, recorded once, the ledger verifies', async () => {
    await rig.start('instruct.after_rail_call');
    await configureEscrow();
    const intentId = await rig.createIntent({ amountCents: 900 });
    const hold = await fundHeld(intentId);
    expect(hold.capturable).toBe(9_000_000n);
    await rig.evidence(intentId, { status: 'completed' });
    expect((await rig.confirm(intentId)).state).toBe('released');

    // The sweeper's next pass captures; the process dies before recording the outcome.
    await rig.crashed();
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold).toMatchObject({ capturable: 0n, paidToReceiver: 9_000_000n });
    expect(await rig.instructions(intentId)).toEqual([{ kind: 'payout', status: 'pending', amount: 900, reference: null, claimed: true }]);

    // Restarted: after the claim's lease, a pass takes it over and asks again under the same idempotency key.
    await rig.start();
    await rig.waitForInstructions(intentId, (rows) => rows[0]!.status !== 'pending', 'the capture\'s recovery');
    expect(await rig.instructions(intentId)).toEqual([{ kind: 'payout', status: 'succeeded', amount: 900, reference: hold.transactions.capture[0], claimed: false }]);
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold).toMatchObject({ capturable: 0n, refundable: 9_000_000n, paidToReceiver: 9_000_000n, returnedToPayer: 0n });
    const captures = settlesOf(hold, 'capture');
    expect(captures).toHaveLength(2);
    expect(captures[0]!.idempotencyKey).toBe(captures[1]!.idempotencyKey);

    expect(await rig.read(intentId)).toMatchObject({ state: 'released', capture_id: hold.transactions.capture[0], void_id: null });
    await rig.expectLedgerVerifies();
  }, 300_000);
});

describe('a split killed after its capture, and again before its void', () => {
  it('captures the payee\'s part once and voids the rest once: the hold ends paid 120 and returned 130, the ledger verifies', async () => {
    await rig.start('instruct.after_rail_call');
    await configureEscrow();
    // Metered through what the principal signed (a v7 binding): the payee's signed cost of 120 of 250 is released.
    const intentId = await rig.createIntent({ amountCents: 250, policy: await rig.meteredPolicy() });
    const hold = await fundHeld(intentId);
    expect(hold.capturable).toBe(2_500_000n);
    await rig.evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(await rig.confirm(intentId)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });

    // First life: the capture of the part is answered; the process dies before recording it. The void waits for it.
    await rig.crashed();
    expect(hold).toMatchObject({ capturable: 1_300_000n, refundable: 1_200_000n, paidToReceiver: 1_200_000n, returnedToPayer: 0n });
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold.transactions.void).toHaveLength(0);
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'pending', amount: 120, reference: null, claimed: true },
      { kind: 'refund', status: 'pending', amount: 130, reference: null, claimed: false },
    ]);

    // Second life: after the lease, the capture is asked again under its key (replayed, not repeated) and recorded;
    // the process dies right after that record, before the void is claimed or asked.
    await rig.start('instruct.after_record');
    await rig.crashed();
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'succeeded', amount: 120, reference: hold.transactions.capture[0], claimed: false },
      { kind: 'refund', status: 'pending', amount: 130, reference: null, claimed: false },
    ]);
    expect(hold.transactions.capture).toHaveLength(1);
    expect(settlesOf(hold, 'void')).toHaveLength(0);

    // Third life: the void, once.
    await rig.start();
    await rig.waitForInstructions(intentId, (rows) => rows.every((row) => row.status !== 'pending'), 'the void');
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'succeeded', amount: 120, reference: hold.transactions.capture[0], claimed: false },
      { kind: 'refund', status: 'succeeded', amount: 130, reference: hold.transactions.void[0], claimed: false },
    ]);
    // Nothing captured twice, nothing lost: captured = released_cents, voided = refunded_cents, the hold empty.
    expect(hold).toMatchObject({ capturable: 0n, refundable: 1_200_000n, paidToReceiver: 1_200_000n, returnedToPayer: 1_300_000n });
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold.transactions.void).toHaveLength(1);
    const captures = settlesOf(hold, 'capture');
    expect(captures).toHaveLength(2);
    expect(captures[1]!.idempotencyKey).toBe(captures[0]!.idempotencyKey);
    expect(settlesOf(hold, 'void')).toHaveLength(1);
    expect(settlesOf(hold, 'void')[0]!.idempotencyKey).not.toBe(captures[0]!.idempotencyKey);

    expect(await rig.read(intentId)).toMatchObject({
      state: 'resolved_split', released_cents: 120, refunded_cents: 130, capture_id: hold.transactions.capture[0], void_id: hold.transactions.void[0],
    });
    await rig.expectLedgerVerifies();
  }, 400_000);
});
