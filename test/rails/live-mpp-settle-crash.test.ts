// MPP live settlement across a crash (docs/rails.md#rail-instructions-and-the-sweeper): the server's sweeper makes
// the processor's transfer (payout) or refund, and the process is killed (SIGKILL, `instruct.after_rail_call`) before
// it records the outcome. After the claim's lease the restarted server's sweeper asks the processor again under the
// instruction's idempotency key: the processor replays the first transfer or refund, nothing is paid twice, the
// instruction succeeds with the processor's reference. A split (transfer of the payee's part, refund of the rest) is
// killed twice: after the transfer, and again after the transfer's takeover is recorded and before the refund is
// asked (`instruct.after_record`); the third life refunds once.
import { Challenge, Credential } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recognitionPurposes } from '../../src/signing/recognition.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { setUpCrashRig, type CrashRig } from './live-crash-fixtures.ts';

const destination = 'acct_1SettleCrash';
let rig: CrashRig;
let processor: MppProcessor;

beforeAll(async () => {
  rig = await setUpCrashRig('mpp-settle-crash');
  processor = await startMppProcessor({ accounts: [destination] });
});

afterAll(async () => {
  await rig?.close();
  await processor?.close();
});

const configureMpp = () => rig.configure({
  rails: ['processor_mpp'], mpp_profile_id: 'profile_live_settle_crash', processor_destination: destination,
  mpp_processor_url: processor.url, mpp_processor_secret_key: processor.secretKey,
});

/** Funds the intent with a public mppx client's credential: the processor's payment. */
async function fundWithCard(intentId: string, token: string) {
  const fundPath = `/harbor/intents/${intentId}/fund`;
  const challenge = await rig.post(fundPath, recognitionPurposes.intentFund, {});
  expect(challenge.status, challenge.text).toBe(402);
  const credential = Credential.serialize({ challenge: Challenge.deserialize(challenge.headers.get('www-authenticate')!), payload: { spt: token } });
  const funded = await rig.post(fundPath, recognitionPurposes.intentFund, {}, { 'x-svc-payment-authorization': credential });
  expect(funded.status, funded.text).toBe(200);
  const [payment] = processor.paymentsFor(token);
  return payment!;
}

/** The processor's POSTs to `path` from the request at `since` on, each with its idempotency key. */
const postsTo = (path: '/v1/transfers' | '/v1/refunds', since: number) =>
  processor.requests.slice(since).filter((request) => request.method === 'POST' && request.path === path);

describe('MPP live: a crash between the processor\'s transfer and our record', () => {
  it('is recovered by the sweeper after the claim\'s lease: one transfer, recorded once, the ledger verifies', async () => {
    await rig.start('instruct.after_rail_call');
    await configureMpp();
    const intentId = await rig.createIntent({ settlementRail: 'processor_mpp', amountCents: 1500 });
    await fundWithCard(intentId, 'spt_success_settle_crash');
    await rig.evidence(intentId, { status: 'completed' });
    expect((await rig.confirm(intentId)).state).toBe('released');

    // The sweeper's pass transfers; the process dies before recording it.
    await rig.crashed();
    expect(processor.transfers).toHaveLength(1);
    expect(await rig.instructions(intentId)).toEqual([{ kind: 'payout', status: 'pending', amount: 1500, reference: null, claimed: true }]);

    await rig.start();
    await rig.waitForInstructions(intentId, (rows) => rows.every((row) => row.status !== 'pending'), 'the payout\'s recovery');
    expect(processor.transfers).toHaveLength(1);
    expect(processor.transfers[0]).toMatchObject({ amount: 1500, destination });
    expect(await rig.instructions(intentId)).toEqual([{ kind: 'payout', status: 'succeeded', amount: 1500, reference: processor.transfers[0]!.id, claimed: false }]);
    await rig.expectLedgerVerifies();
  }, 300_000);
});

describe('MPP live: a split killed after its transfer, and again before its refund', () => {
  it('transfers the payee\'s part once and refunds the rest once, each recorded once; the ledger verifies', async () => {
    const since = processor.requests.length;
    const transfersBefore = processor.transfers.length;
    await rig.start('instruct.after_rail_call');
    await configureMpp();
    // Metered through what the principal signed (a v7 binding): the payee's signed cost of 120 of 250 is released.
    const intentId = await rig.createIntent({ settlementRail: 'processor_mpp', amountCents: 250, policy: await rig.meteredPolicy() });
    const payment = await fundWithCard(intentId, 'spt_success_split_crash');
    expect(payment).toMatchObject({ amount: 250, status: 'succeeded' });
    await rig.evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(await rig.confirm(intentId)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });

    // First life: the transfer of the part is made; the process dies before recording it. The refund waits for it.
    await rig.crashed();
    const transfers = () => processor.transfers.slice(transfersBefore);
    const refunds = () => processor.refunds.filter((refund) => refund.payment_intent === payment.id);
    expect(transfers()).toMatchObject([{ amount: 120, destination }]);
    expect(refunds()).toHaveLength(0);
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'pending', amount: 120, reference: null, claimed: true },
      { kind: 'refund', status: 'pending', amount: 130, reference: null, claimed: false },
    ]);

    // Second life: after the lease, the transfer is asked again under its key (replayed, not repeated) and recorded;
    // the process dies right after that record, before the refund is claimed or asked.
    await rig.start('instruct.after_record');
    await rig.crashed();
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'succeeded', amount: 120, reference: transfers()[0]!.id, claimed: false },
      { kind: 'refund', status: 'pending', amount: 130, reference: null, claimed: false },
    ]);
    expect(transfers()).toHaveLength(1);
    expect(postsTo('/v1/refunds', since)).toHaveLength(0);

    // Third life: the refund, once.
    await rig.start();
    await rig.waitForInstructions(intentId, (rows) => rows.every((row) => row.status !== 'pending'), 'the refund');
    expect(await rig.instructions(intentId)).toEqual([
      { kind: 'payout', status: 'succeeded', amount: 120, reference: transfers()[0]!.id, claimed: false },
      { kind: 'refund', status: 'succeeded', amount: 130, reference: refunds()[0]!.id, claimed: false },
    ]);
    // Nothing paid twice, nothing lost: transferred = released_cents, refunded = refunded_cents, of the one payment.
    expect(transfers()).toMatchObject([{ amount: 120, destination }]);
    expect(refunds()).toMatchObject([{ amount: 130, status: 'succeeded' }]);
    const transferPosts = postsTo('/v1/transfers', since);
    expect(transferPosts).toHaveLength(2);
    expect(transferPosts[1]!.idempotencyKey).toBe(transferPosts[0]!.idempotencyKey);
    expect(postsTo('/v1/refunds', since)).toHaveLength(1);

    expect(await rig.read(intentId)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    await rig.expectLedgerVerifies();
  }, 400_000);
});
