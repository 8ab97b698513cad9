// The x402 v2 rail: challenge encoding (read back with @x402/core), credential parsing, and every sandbox outcome.
import { createHash } from 'node:crypto';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { parsePaymentRequired } from '@x402/core/schemas';
import { describe, expect, it } from 'vitest';
import { railAdapterFor, type FundingContext, type IssuedChallenge, type PresentedCredential } from '../../src/rails/index.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { canonicalJson } from '../../src/signing/canonical-json.ts';
import { buildX402PaymentRequired, sandboxX402PayTo, usdcBaseUnits } from '../../src/rails/x402/protocol.ts';
import { X402SandboxAdapter } from '../../src/rails/x402/sandbox.ts';
import { x402ValidBeforeMarginSeconds } from '../../src/limits.ts';
import { fundingContext, intentId, liveConfig } from './fixtures.ts';

const adapter = await railAdapterFor('x402_usdc_base', { environment: 'sandbox', config: undefined, currency: 'usd' });
const payer = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64');

function challengeHeader(issued: IssuedChallenge): string {
  return issued.headers['PAYMENT-REQUIRED'] as string;
}

function credentialFor(headerValue: string): Extract<PresentedCredential, { kind: 'credential' }> {
  const credential = adapter.readCredential({ 'payment-signature': headerValue });
  if (credential.kind !== 'credential') throw new Error(`expected a credential, got ${JSON.stringify(credential)}`);
  return credential;
}

async function present(context: FundingContext, issued: IssuedChallenge, options: Parameters<typeof sandboxX402PaymentSignature>[1]) {
  // Signed at the context's clock, as a wallet signs at its own.
  const credential = credentialFor(sandboxX402PaymentSignature(challengeHeader(issued), { nowMs: context.nowMs, ...options }));
  const stored = credential.challengeId === issued.challengeId ? issued.stored : undefined;
  return { credential, outcome: await adapter.authorize(context, credential, stored) };
}

describe('x402 challenge', () => {
  it('is a v2 PaymentRequired that @x402/core decodes and validates', () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    const decoded = decodePaymentRequiredHeader(challengeHeader(issued));
    const parsed = parsePaymentRequired(decoded);
    expect(parsed.success).toBe(true);
    expect(decoded.x402Version).toBe(2);
    expect(decoded.resource.url).toBe(context.resourceUrl);
    expect(decoded.accepts).toHaveLength(1);
    const [requirement] = decoded.accepts;
    expect(requirement).toMatchObject({
      scheme: 'exact',
      network: 'eip155:84532',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      amount: '12500000',
      payTo: sandboxX402PayTo,
      maxTimeoutSeconds: 300,
      extra: { name: 'USDC', version: '2' },
    });
    // Standard base64 with padding, never base64url.
    expect(challengeHeader(issued)).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(issued.challengeId).toBe(createHash('sha256').update(canonicalJson(requirement)).digest('hex'));
    expect(issued.funding).toMatchObject({
      settlement_rail: 'x402_usdc_base',
      status: 'created',
      challenge_id: issued.challengeId,
      asset: requirement!.asset,
      network: 'eip155:84532',
    });
    expect(Object.keys(issued.headers)).toEqual(['PAYMENT-REQUIRED']);
  });

  it('pays to the configured x402_address, and uses Base mainnet and its USDC in live', () => {
    const sandbox = adapter.issueChallenge(fundingContext({ config: liveConfig }));
    const address = liveConfig.settings['x402_usdc_base']!['x402_address'];
    expect(decodePaymentRequiredHeader(challengeHeader(sandbox)).accepts[0]!.payTo).toBe(address);
    const { paymentRequired } = buildX402PaymentRequired(fundingContext({ environment: 'live', config: liveConfig }), 'n');
    expect(paymentRequired.accepts[0]).toMatchObject({
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      extra: { name: 'USD Coin', version: '2' },
      payTo: address,
    });
  });

  it('converts cents to USDC base units exactly, also past 2^53 base units', () => {
    expect(usdcBaseUnits(1)).toBe('10000');
    expect(usdcBaseUnits(Number.MAX_SAFE_INTEGER)).toBe('90071992547409910000');
    expect(() => usdcBaseUnits(0)).toThrow();
    expect(() => usdcBaseUnits(1.5)).toThrow();
  });

  it('gives every challenge its own id, even for equal intents', () => {
    const ids = new Set(Array.from({ length: 5 }, () => adapter.issueChallenge(fundingContext()).challengeId));
    expect(ids.size).toBe(5);
  });
});

describe('x402 credential parsing', () => {
  const issued = adapter.issueChallenge(fundingContext());

  it('reads a well-formed payment-signature and names the challenge it answers', () => {
    const header = sandboxX402PaymentSignature(challengeHeader(issued), { from: payer });
    const credential = adapter.readCredential({ 'payment-signature': header });
    expect(credential).toMatchObject({ kind: 'credential', challengeId: issued.challengeId });
    expect((credential as { digest: Buffer }).digest.equals(createHash('sha256').update(header).digest())).toBe(true);
  });

  it('reports no header as absent', () => {
    expect(adapter.readCredential({})).toEqual({ kind: 'absent' });
  });

  it.each([
    ['not base64', '%%%not-base64%%%'],
    // `-` where standard base64 has `+`: the JSON inside would be fine, the alphabet is not.
    ['base64url instead of base64', Buffer.from(JSON.stringify({ x402Version: 2, note: '~~~' })).toString('base64url')],
    ['not JSON', b64('{not json')],
    ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')],
    ['schema-invalid (no accepted)', b64({ x402Version: 2, payload: {} })],
    ['schema-invalid (accepted without amount)', b64({ x402Version: 2, accepted: { scheme: 'exact', network: 'eip155:84532' }, payload: {} })],
    ['an x402 v1 payload', b64({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: {} })],
    ['a JSON array', b64([1, 2])],
    ['prototype poisoning', b64('{"x402Version":2,"__proto__":{"polluted":true}}')],
    ['empty', '  '],
    ['oversized', 'A'.repeat(16 * 1024 + 4)],
  ])('calls %s malformed', (_name, header) => {
    expect(adapter.readCredential({ 'payment-signature': header }).kind).toBe('malformed');
  });

  it('calls repeated headers malformed', () => {
    const header = sandboxX402PaymentSignature(challengeHeader(issued), { from: payer });
    expect(adapter.readCredential({ 'payment-signature': [header, header] })).toMatchObject({ kind: 'malformed' });
  });
});

describe('x402 sandbox outcomes', () => {
  it('succeeds for an ordinary payer, with a PAYMENT-RESPONSE that @x402/core decodes', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    for (const from of [payer, sandboxX402Payers.success]) {
      const { outcome } = await present(context, issued, { from });
      expect(outcome.status).toBe('succeeded');
      if (outcome.status !== 'succeeded') return;
      expect(outcome.reference).toMatch(/^0x[0-9a-f]{64}$/);
      const response = decodePaymentResponseHeader(outcome.headers!['PAYMENT-RESPONSE']!);
      expect(response).toMatchObject({ success: true, transaction: outcome.reference, network: 'eip155:84532', payer: from });
      expect(outcome.funding).toMatchObject({ settlement_rail: 'x402_usdc_base', status: 'authorization_succeeded', challenge_id: issued.challengeId });
    }
  });

  it('gives the same credential the same reference (a retry is not a second payment)', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    const header = sandboxX402PaymentSignature(challengeHeader(issued), { from: payer, nowMs: context.nowMs });
    const first = await adapter.authorize(context, credentialFor(header), issued.stored);
    const second = await adapter.authorize(context, credentialFor(header), issued.stored);
    expect(first).toEqual(second);
  });

  it('declines payer 0x…0002, with a failed PAYMENT-RESPONSE', async () => {
    const context = fundingContext();
    const { outcome } = await present(context, adapter.issueChallenge(context), { from: sandboxX402Payers.decline });
    expect(outcome).toMatchObject({ status: 'declined', reason: 'insufficient_funds', funding: { status: 'authorization_failed' } });
    const response = decodePaymentResponseHeader((outcome as { headers: Record<string, string> }).headers['PAYMENT-RESPONSE']!);
    expect(response).toEqual({ success: false, errorReason: 'insufficient_funds', transaction: '', network: 'eip155:84532', payer: sandboxX402Payers.decline });
    // A decline ends in a fresh challenge, whose id the fund route puts in funding: the outcome names none.
    expect(outcome.funding).not.toHaveProperty('challenge_id');
  });

  it('keeps payer 0x…0003 pending, and settles it on the next poll with the same reference', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    const { outcome } = await present(context, issued, { from: sandboxX402Payers.pending });
    expect(outcome).toMatchObject({ status: 'pending', funding: { status: 'authorization_pending' } });
    if (outcome.status !== 'pending') return;
    const polled = await adapter.poll(context, { reference: outcome.reference, stored: issued.stored });
    expect(polled).toMatchObject({ status: 'succeeded', reference: outcome.reference, funding: { status: 'authorization_succeeded' } });
    expect(decodePaymentResponseHeader((polled as { headers: Record<string, string> }).headers['PAYMENT-RESPONSE']!)).toMatchObject({
      success: true,
      transaction: outcome.reference,
    });
  });

  it('accepts the payTo in any letter case, and the amount with leading zeros', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    expect((await present(context, issued, { from: payer, to: sandboxX402PayTo.toUpperCase().replace('0X', '0x') })).outcome.status).toBe('succeeded');
    expect((await present(context, issued, { from: payer, value: '0012500000' })).outcome.status).toBe('succeeded');
  });

  it('records what was paid: the accepted base units are the amount, on success and pending alike', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    const { outcome } = await present(context, issued, { from: payer });
    expect(outcome.funding).toMatchObject({ accepted_cumulative_base_units: '12500000' });
    const { outcome: pending } = await present(context, adapter.issueChallenge(context), { from: sandboxX402Payers.pending });
    expect(pending.funding).toMatchObject({ pending_cumulative_base_units: '12500000' });
  });

  it('resolves a claim as authorize would have at the time of the claim', async () => {
    const context = fundingContext();
    const issued = adapter.issueChallenge(context);
    const { credential } = await present(context, issued, { from: payer });
    const claimed = { challenge: issued.stored, credential: credential.data, digest: credential.digest, reference: null };
    const muchLater = fundingContext({ nowMs: context.nowMs + 3_600_000 });
    // Valid when claimed, expired now: it was good when the payer sent it.
    expect(await adapter.resolve!(muchLater, { ...claimed, claimedAt: new Date(context.nowMs) })).toMatchObject({ status: 'succeeded' });
    expect(await adapter.resolve!(muchLater, claimed)).toMatchObject({ status: 'rejected', funding: { error_reason: 'invalid_exact_evm_payload_authorization_valid_before' } });
  });
});

describe('x402 authorization terms the sandbox checks as a facilitator would', () => {
  const context = fundingContext();
  const issued = adapter.issueChallenge(context);
  const nowSeconds = Math.floor(context.nowMs / 1000);

  /** A credential whose authorization has `changes` applied, presented at the context's time. */
  async function withAuthorization(changes: Record<string, unknown>) {
    const decoded = JSON.parse(Buffer.from(sandboxX402PaymentSignature(challengeHeader(issued), { from: payer, nowMs: context.nowMs }), 'base64').toString());
    Object.assign(decoded.payload.authorization, changes);
    return adapter.authorize(context, credentialFor(b64(decoded)), issued.stored);
  }

  it.each([
    ['validBefore in the past', { validBefore: String(nowSeconds - 1) }, 'invalid_exact_evm_payload_authorization_valid_before'],
    ['validBefore too close to settle in', { validBefore: String(nowSeconds + x402ValidBeforeMarginSeconds - 1) }, 'invalid_exact_evm_payload_authorization_valid_before'],
    ['validAfter in the future', { validAfter: String(nowSeconds + 1) }, 'invalid_exact_evm_payload_authorization_valid_after'],
    ['a value above the amount', { value: '12500001' }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ['a value above uint256', { value: ((1n << 256n) + 12_500_000n).toString() }, 'invalid_payload'],
    ['a validBefore above uint256', { validBefore: (1n << 256n).toString() }, 'invalid_payload'],
    ['a validAfter that is no number', { validAfter: 'soon' }, 'invalid_payload'],
    ['a validBefore written in hex', { validBefore: '0x7fffffff' }, 'invalid_payload'],
    ['a nonce that is no bytes32', { nonce: '0x1234' }, 'invalid_payload'],
    ['no nonce', { nonce: undefined }, 'invalid_payload'],
  ])('refuses %s', async (_name, changes, errorReason) => {
    expect(await withAuthorization(changes)).toMatchObject({
      status: 'rejected',
      problem: { type: 'https://paymentauth.org/problems/verification-failed' },
      funding: { status: 'authorization_failed', error_reason: errorReason },
    });
  });

  it('takes the edges of the window: validAfter now, validBefore with exactly the margin left', async () => {
    expect(await withAuthorization({ validAfter: String(nowSeconds), validBefore: String(nowSeconds + x402ValidBeforeMarginSeconds) })).toMatchObject({ status: 'succeeded' });
  });

  it('reads the authorization\'s payer and nonce as the key it spends, per token and payer whatever the case', () => {
    const header = sandboxX402PaymentSignature(challengeHeader(issued), { from: payer, nowMs: context.nowMs, nonce: `0x${'AB'.repeat(32)}` });
    const key = credentialFor(header).authorizationKey;
    expect(key).toBe(`eip155:84532/0x036cbd53842c5426634e7929541ec2318f3dcf7e/${payer.toLowerCase()}/0x${'ab'.repeat(32)}`);
    // Another challenge (another intent, another payTo) with the same payer and nonce spends the same authorization.
    const other = adapter.issueChallenge(fundingContext({ intentId: '8d0f6a3e-2c1b-4f5a-8e9d-7c6b5a4f3e2d' }));
    expect(credentialFor(sandboxX402PaymentSignature(challengeHeader(other), { from: payer.toLowerCase(), nonce: `0x${'ab'.repeat(32)}` })).authorizationKey).toBe(key);
    expect(adapter.refuseReusedAuthorization!(context)).toMatchObject({
      status: 'rejected', funding: { status: 'authorization_failed', error_reason: 'invalid_exact_evm_nonce_already_used' },
    });
  });
});

describe('x402 credentials the sandbox refuses', () => {
  const context = fundingContext();
  const issued = adapter.issueChallenge(context);

  it('refuses a credential whose accepted was altered: it names no challenge that was issued', async () => {
    const decoded = JSON.parse(Buffer.from(sandboxX402PaymentSignature(challengeHeader(issued), { from: payer, nowMs: context.nowMs }), 'base64').toString());
    decoded.accepted.amount = '1';
    const credential = credentialFor(b64(decoded));
    expect(credential.challengeId).not.toBe(issued.challengeId);
    const unknown = await adapter.authorize(context, credential, undefined);
    expect(unknown).toMatchObject({ status: 'rejected', problem: { type: 'https://paymentauth.org/problems/invalid-challenge' } });
    // Even if a caller looked up the wrong challenge, the requirement must equal what was offered.
    const mismatched = await adapter.authorize(context, credential, issued.stored);
    expect(mismatched).toMatchObject({ status: 'rejected', funding: { error_reason: 'invalid_payment_requirements' } });
  });

  it('refuses an authorization to another address than payTo', async () => {
    const { outcome } = await present(context, issued, { from: payer, to: '0x1111111111111111111111111111111111111111' });
    expect(outcome).toMatchObject({
      status: 'rejected',
      problem: { type: 'https://paymentauth.org/problems/verification-failed', title: 'Verification Failed' },
      funding: { status: 'authorization_failed', error_reason: 'invalid_exact_evm_payload_recipient_mismatch' },
    });
    expect(outcome.funding).not.toHaveProperty('challenge_id');
  });

  it('refuses a value below the amount', async () => {
    const { outcome } = await present(context, issued, { from: payer, value: '12499999' });
    expect(outcome).toMatchObject({
      status: 'rejected',
      problem: { type: 'https://paymentauth.org/problems/payment-insufficient' },
      funding: { error_reason: 'invalid_exact_evm_payload_authorization_value_mismatch' },
    });
  });

  it('refuses a payer that is not an address, and a payload without an authorization', async () => {
    expect((await present(context, issued, { from: 'alice' })).outcome.status).toBe('rejected');
    const decoded = JSON.parse(Buffer.from(sandboxX402PaymentSignature(challengeHeader(issued), { from: payer, nowMs: context.nowMs }), 'base64').toString());
    decoded.payload = { signature: '0x00' };
    const outcome = await adapter.authorize(context, credentialFor(b64(decoded)), issued.stored);
    expect(outcome).toMatchObject({ status: 'rejected', funding: { error_reason: 'invalid_payload' } });
  });

  it("refuses another intent's challenge", async () => {
    const other = fundingContext({ intentId: '8d0f6a3e-2c1b-4f5a-8e9d-7c6b5a4f3e2d' });
    const { credential } = await present(context, issued, { from: payer });
    expect(await adapter.authorize(other, credential, issued.stored)).toMatchObject({ status: 'rejected' });
    expect(intentId).not.toBe(other.intentId);
  });

  it('echoes the rail name the intent carries', () => {
    expect(new X402SandboxAdapter().issueChallenge(context).funding['settlement_rail']).toBe('x402_usdc_base');
  });
});
