// The MPP live adapter on its own, against the test processor (test/helpers/mpp-processor.ts): challenges a public
// mppx client can answer, each scripted outcome, the processor's Idempotency-Key keeping one charge per credential,
// resolve after a lost answer, the dry call, and payout/refund instructions carried out once.
import { Challenge, Credential, Receipt } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MppLiveAdapter } from '../../src/rails/mpp/live.ts';
import { readMppCredential } from '../../src/rails/mpp/protocol.ts';
import { RailOutcomeUnknownError, RailUnavailableError, type FundingContext, type IssuedChallenge, type RailSettings, type SettlementConfig } from '../../src/rails/index.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';

let processor: MppProcessor;
const destination = 'acct_1LivePayee';

beforeAll(async () => {
  processor = await startMppProcessor({ accounts: [destination], hangMs: 1_500 });
});
afterAll(async () => {
  await processor.close();
});

/** The MPP rail's values of a live configuration, with `overrides`. */
function liveSettings(overrides: RailSettings = {}): RailSettings {
  return {
    mpp_profile_id: 'profile_live123',
    mpp_session_enabled: false,
    settlement_network_recipient: null,
    processor_destination: destination,
    mpp_processor_url: processor.url,
    ...overrides,
  };
}

function liveConfig(): SettlementConfig {
  return { rails: ['processor_mpp'], settings: { processor_mpp: liveSettings() }, secretsSet: ['mpp_processor_secret_key'] };
}

function adapterFor(options: { settings?: RailSettings; secretKey?: string | null; callTimeoutMs?: number } = {}): MppLiveAdapter {
  return new MppLiveAdapter({
    settlementRail: 'processor_mpp',
    settings: liveSettings(options.settings),
    secrets: { mpp_processor_secret_key: options.secretKey === undefined ? processor.secretKey : options.secretKey },
    callTimeoutMs: options.callTimeoutMs ?? 500,
  });
}

function contextFor(adapter: MppLiveAdapter, intentId = `int_${Math.random().toString(16).slice(2)}`): FundingContext {
  return {
    tenantId: 'tenant-1',
    environment: 'live',
    intentId,
    amountCents: 1250,
    currency: 'usd',
    resourceUrl: `http://svc.test/surfaces/harbor/intents/${intentId}/fund`,
    config: liveConfig(),
    nowMs: Date.now(),
  };
}

/** What a public mppx client sends for a challenge: the credential serialized by mppx itself. */
function credentialFor(issued: IssuedChallenge, spt: string) {
  const challenge = Challenge.deserialize(issued.headers['WWW-Authenticate'] as string);
  const credential = readMppCredential({ 'x-svc-payment-authorization': Credential.serialize({ challenge, payload: { spt } }) });
  if (credential.kind !== 'credential') throw new Error(`unreadable credential: ${JSON.stringify(credential)}`);
  return credential;
}

describe('MPP live adapter', () => {
  it('issues a challenge mppx parses and verifies: the amount in cents, the profile as networkId', () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    const challenge = Challenge.deserialize(issued.headers['WWW-Authenticate'] as string);
    expect(challenge.id).toBe(issued.challengeId);
    expect(challenge).toMatchObject({ method: 'stripe', intent: 'charge', realm: context.resourceUrl });
    expect(challenge.request).toMatchObject({
      amount: '1250', currency: 'usd', recipient: 'profile_live123',
      methodDetails: { networkId: 'profile_live123', paymentMethodTypes: ['card'], metadata: { svc_intent_id: context.intentId } },
    });
    // The id is bound to the params by the per-challenge key kept server side.
    expect(Challenge.verify(challenge, { secretKey: issued.stored['binding_key'] as string })).toBe(true);
    expect(Challenge.verify({ ...challenge, request: { ...challenge.request, amount: '1' } }, { secretKey: issued.stored['binding_key'] as string })).toBe(false);
    expect(JSON.stringify(issued.headers)).not.toContain(issued.stored['binding_key'] as string);
    expect(issued.funding).toMatchObject({ status: 'created', challenge_id: issued.challengeId, method: 'stripe', intent: 'charge' });
  });

  it('charges once through mppx and answers the receipt; the same credential again is the same payment', async () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    const credential = credentialFor(issued, 'spt_success_adapter');
    const outcome = await adapter.authorize(context, credential, issued.stored);
    expect(outcome.status).toBe('succeeded');
    if (outcome.status !== 'succeeded') return;
    const receipt = Receipt.deserialize(outcome.headers!['Payment-Receipt']!);
    expect(receipt).toMatchObject({ method: 'stripe', status: 'success', reference: outcome.reference });
    const payment = processor.payments.get(outcome.reference)!;
    expect(payment).toMatchObject({ amount: 1250, currency: 'usd', status: 'succeeded' });
    expect(payment.metadata).toMatchObject({ mpp_challenge_id: issued.challengeId, svc_intent_id: context.intentId });
    expect(outcome.details).toEqual({ payment_intent: payment.id, charge: payment.latest_charge });
    // Presented again (a retry whose first answer was lost): the processor replays its answer, no second charge.
    const again = await adapter.authorize(context, credential, issued.stored);
    expect(again).toMatchObject({ status: 'succeeded', reference: outcome.reference });
    expect(processor.paymentsFor('spt_success_adapter')).toHaveLength(1);
    const creates = processor.requests.filter((request) => request.path === '/v1/payment_intents' && request.idempotencyKey?.includes('spt_success_adapter'));
    expect(creates.map((request) => request.idempotencyKey)).toEqual([`mpp_${issued.challengeId}_spt_success_adapter`, `mpp_${issued.challengeId}_spt_success_adapter`]);
  });

  it('declines a declined card, and refuses a token the processor does not know, a tampered challenge and a sandbox token', async () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    expect(await adapter.authorize(context, credentialFor(issued, 'spt_decline_adapter'), issued.stored)).toMatchObject({
      status: 'declined', reason: 'generic_decline', funding: { status: 'payment_failed' },
    });
    const second = adapter.issueChallenge(context);
    expect(await adapter.authorize(context, credentialFor(second, 'spt_unknown'), second.stored)).toMatchObject({
      status: 'rejected', problem: { type: 'https://paymentauth.org/problems/verification-failed' },
    });
    const third = adapter.issueChallenge(context);
    const tampered = Challenge.deserialize(third.headers['WWW-Authenticate'] as string);
    const forged = readMppCredential({
      'x-svc-payment-authorization': Credential.serialize({ challenge: { ...tampered, request: { ...tampered.request, amount: '1' } }, payload: { spt: 'spt_success_x' } }),
    });
    if (forged.kind !== 'credential') throw new Error('unreadable');
    expect(await adapter.authorize(context, forged, third.stored)).toMatchObject({ status: 'rejected', problem: { type: 'https://paymentauth.org/problems/invalid-challenge' } });
    const sandboxToken = readMppCredential({
      'x-svc-payment-authorization': Credential.serialize({ challenge: tampered, payload: { token: 'tok_sandbox_success' } } as never),
    });
    if (sandboxToken.kind !== 'credential') throw new Error('unreadable');
    expect(await adapter.authorize(context, sandboxToken, third.stored)).toMatchObject({ status: 'rejected', problem: { type: 'https://paymentauth.org/problems/malformed-credential' } });
    expect(processor.paymentsFor('spt_success_x')).toHaveLength(0);
  });

  it('answers pending while the payment processes, and the poll finds it succeeded', async () => {
    for (const token of ['spt_processing_adapter', 'spt_action_adapter']) {
      const adapter = adapterFor();
      const context = contextFor(adapter);
      const issued = adapter.issueChallenge(context);
      const outcome = await adapter.authorize(context, credentialFor(issued, token), issued.stored);
      expect(outcome).toMatchObject({ status: 'pending', funding: { status: 'payment_pending' } });
      if (outcome.status !== 'pending') return;
      const polled = await adapter.poll(context, { reference: outcome.reference, stored: issued.stored });
      expect(polled).toMatchObject({ status: 'succeeded', reference: outcome.reference });
      expect(processor.chargesFor(token)).toBe(1);
    }
  });

  it('a 5xx or an unreachable processor is RailUnavailableError, and names no secret', async () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    const error = await adapter.authorize(context, credentialFor(issued, 'spt_error_adapter'), issued.stored).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RailUnavailableError);
    expect(error).not.toBeInstanceOf(RailOutcomeUnknownError);
    const unreachable = adapterFor({ settings: { mpp_processor_url: 'http://127.0.0.1:9' } });
    const refused = await unreachable.authorize(context, credentialFor(issued, 'spt_success_unreached'), issued.stored).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(RailUnavailableError);
    expect(refused).not.toBeInstanceOf(RailOutcomeUnknownError);
    for (const failure of [error, refused]) expect(JSON.stringify({ message: (failure as Error).message, reason: (failure as RailUnavailableError).reason })).not.toContain(processor.secretKey);
  });

  it('a charge whose answer times out is looked up before answering: one charge', async () => {
    const adapter = adapterFor({ callTimeoutMs: 300 });
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    const outcome = await adapter.authorize(context, credentialFor(issued, 'spt_timeout_adapter'), issued.stored);
    expect(outcome).toMatchObject({ status: 'succeeded' });
    expect(processor.paymentsFor('spt_timeout_adapter')).toHaveLength(1);
  });

  it('resolve finds the payment a lost answer made, or presents the credential again under the same key', async () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const issued = adapter.issueChallenge(context);
    const credential = credentialFor(issued, 'spt_success_resolve');
    const first = await adapter.authorize(context, credential, issued.stored);
    expect(first.status).toBe('succeeded');
    // As if the process died before recording it: no reference known.
    expect(await adapter.resolve(context, { challenge: issued.stored, credential: credential.data, digest: credential.digest, reference: null })).toMatchObject({
      status: 'succeeded', reference: (first as { reference: string }).reference,
    });
    // A claim whose call never reached the processor: the same credential is presented once, under its key.
    const unsent = adapter.issueChallenge(context);
    const unsentCredential = credentialFor(unsent, 'spt_success_unsent');
    expect(await adapter.resolve(context, { challenge: unsent.stored, credential: unsentCredential.data, digest: unsentCredential.digest, reference: null })).toMatchObject({ status: 'succeeded' });
    expect(await adapter.resolve(context, { challenge: unsent.stored, credential: unsentCredential.data, digest: unsentCredential.digest, reference: null })).toMatchObject({ status: 'succeeded' });
    expect(processor.paymentsFor('spt_success_unsent')).toHaveLength(1);
    // A processor that cannot answer: the outcome stays unknown (the claim stays).
    const down = adapterFor({ settings: { mpp_processor_url: 'http://127.0.0.1:9' } });
    await expect(down.resolve(context, { challenge: issued.stored, credential: credential.data, digest: credential.digest, reference: null })).rejects.toBeInstanceOf(RailOutcomeUnknownError);
  });

  it('probes the processor: the key, the URL and the payout account', async () => {
    expect(await adapterFor().probe()).toEqual({ ok: true });
    // A refusal is not transient (400); an unreachable processor is (503).
    expect(await adapterFor({ secretKey: 'sk_test_wrong' }).probe()).toMatchObject({ ok: false, field: 'mpp_processor_secret_key', transient: false });
    expect(await adapterFor({ secretKey: null }).probe()).toMatchObject({ ok: false, field: 'mpp_processor_secret_key', transient: false });
    expect(await adapterFor({ settings: { mpp_processor_url: 'http://127.0.0.1:9' } }).probe()).toMatchObject({ ok: false, field: 'mpp_processor_url', transient: true });
    expect(await adapterFor({ settings: { processor_destination: 'acct_unknown' } }).probe()).toMatchObject({ ok: false, field: 'processor_destination', transient: false });
    const wrong = await adapterFor({ secretKey: 'sk_test_wrong_and_secret' }).probe();
    expect(JSON.stringify(wrong)).not.toContain('sk_test_wrong_and_secret');
  });

  it('pays out by transfer and refunds by refund, each once however often the sweeper asks', async () => {
    const adapter = adapterFor();
    const context = contextFor(adapter);
    const paid = adapter.issueChallenge(context);
    const funded = await adapter.authorize(context, credentialFor(paid, 'spt_success_payout'), paid.stored);
    if (funded.status !== 'succeeded') throw new Error('not funded');
    const payout = { instructionId: 'ins_payout_1', tenantId: 'tenant-1', intentId: context.intentId, kind: 'payout' as const, amountCents: 1250,
      currency: 'usd', fundingReference: funded.reference, fundingDetails: funded.details ?? {}, attempts: 0 };
    const transferred = await adapter.instruct(payout);
    expect(transferred).toMatchObject({ status: 'succeeded' });
    expect(await adapter.instruct({ ...payout, attempts: 1 })).toEqual(transferred);
    const transfers = processor.transfers.filter((transfer) => transfer.metadata['svc_instruction_id'] === 'ins_payout_1');
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: 1250, destination, source_transaction: funded.details?.['charge'] });

    const other = contextFor(adapter);
    const refundedChallenge = adapter.issueChallenge(other);
    const toRefund = await adapter.authorize(other, credentialFor(refundedChallenge, 'spt_success_refund'), refundedChallenge.stored);
    if (toRefund.status !== 'succeeded') throw new Error('not funded');
    const refund = { ...payout, instructionId: 'ins_refund_1', intentId: other.intentId, kind: 'refund' as const, fundingReference: toRefund.reference, fundingDetails: {} };
    const refunded = await adapter.instruct(refund);
    expect(refunded).toMatchObject({ status: 'succeeded' });
    expect(await adapter.instruct({ ...refund, attempts: 1 })).toEqual(refunded);
    expect(processor.refunds.filter((entry) => entry.payment_intent === toRefund.reference)).toHaveLength(1);

    // Refused by the processor: final. Unreachable: thrown, for the sweeper to retry.
    expect(await adapter.instruct({ ...refund, instructionId: 'ins_refund_2' })).toMatchObject({ status: 'failed' });
    const down = adapterFor({ settings: { mpp_processor_url: 'http://127.0.0.1:9' } });
    await expect(down.instruct({ ...refund, instructionId: 'ins_refund_3' })).rejects.toBeInstanceOf(RailUnavailableError);
  });
});
