// The MPP rail: `WWW-Authenticate: Payment` syntax, credential parsing, challenge binding and sandbox outcomes.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mppChallengeLifetimeMs } from '../../src/limits.ts';
import { railAdapterFor, type IssuedChallenge, type PresentedCredential } from '../../src/rails/index.ts';
import { parseWwwAuthenticate, sandboxMppAuthorization } from '../../src/rails/mpp/wire.ts';
import { fundingContext, nowMs } from './fixtures.ts';

const adapter = await railAdapterFor('processor_mpp', { environment: 'sandbox', config: undefined, currency: 'usd' });
const context = fundingContext();
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');

const challengeHeader = (issued: IssuedChallenge) => issued.headers['WWW-Authenticate'] as string;

function credentialFor(headerValue: string): Extract<PresentedCredential, { kind: 'credential' }> {
  const credential = adapter.readCredential({ 'x-svc-payment-authorization': headerValue });
  if (credential.kind !== 'credential') throw new Error(`expected a credential, got ${JSON.stringify(credential)}`);
  return credential;
}

function decodedCredential(headerValue: string) {
  return JSON.parse(Buffer.from(headerValue.replace(/^Payment /, ''), 'base64url').toString('utf8'));
}

describe('MPP challenge', () => {
  it('is a Payment challenge whose params parse back and whose request is base64url of the JCS JSON', () => {
    const issued = adapter.issueChallenge(context);
    const header = challengeHeader(issued);
    expect(header).toMatch(/^Payment id="[A-Za-z0-9_-]+", realm="[^"]+", method="stripe", intent="charge", request="[A-Za-z0-9_-]+", expires="[^"]+"$/);
    const [challenge, ...others] = parseWwwAuthenticate(header);
    expect(others).toHaveLength(0);
    expect(challenge!.scheme).toBe('Payment');
    expect(challenge!.params).toEqual({
      id: issued.challengeId,
      realm: context.resourceUrl,
      method: 'stripe',
      intent: 'charge',
      request: expect.any(String),
      expires: new Date(nowMs + mppChallengeLifetimeMs).toISOString().replace('.000Z', 'Z'),
    });
    // base64url without padding, of exactly the JCS bytes.
    expect(challenge!.params['request']).not.toMatch(/=/);
    expect(Buffer.from(challenge!.params['request']!, 'base64url').toString('utf8')).toBe('{"amount":"1250","currency":"usd"}');
    expect(issued.funding).toMatchObject({ settlement_rail: 'processor_mpp', status: 'created', challenge_id: issued.challengeId, method: 'stripe', intent: 'charge' });
    expect(Object.keys(issued.headers)).toEqual(['WWW-Authenticate']);
  });

  it('names the configured profile as recipient, in JCS key order', () => {
    const issued = adapter.issueChallenge(fundingContext({
      config: { rails: ['processor_mpp'], settings: { processor_mpp: { mpp_profile_id: 'profile_test_abc', mpp_session_enabled: false, settlement_network_recipient: null, processor_destination: 'acct_1', mpp_processor_url: null } }, secretsSet: [] },
    }));
    const request = parseWwwAuthenticate(challengeHeader(issued))[0]!.params['request']!;
    expect(Buffer.from(request, 'base64url').toString('utf8')).toBe('{"amount":"1250","currency":"usd","recipient":"profile_test_abc"}');
  });

  it('gives every challenge a fresh id', () => {
    expect(adapter.issueChallenge(context).challengeId).not.toBe(adapter.issueChallenge(context).challengeId);
  });

  it('escapes quotes and backslashes in a realm, and parses them back', () => {
    const realm = 'https://svc.example.test/a"b\\c';
    const issued = adapter.issueChallenge(fundingContext({ resourceUrl: realm }));
    expect(parseWwwAuthenticate(challengeHeader(issued))[0]!.params['realm']).toBe(realm);
  });
});

describe('MPP credential parsing', () => {
  const issued = adapter.issueChallenge(context);

  it('reads the credential with or without the Payment scheme name', () => {
    const header = sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success');
    expect(header).toMatch(/^Payment [A-Za-z0-9_-]+$/);
    for (const value of [header, header.slice('Payment '.length), `payment ${header.slice('Payment '.length)}`]) {
      const credential = adapter.readCredential({ 'x-svc-payment-authorization': value });
      expect(credential).toMatchObject({ kind: 'credential', challengeId: issued.challengeId });
      expect((credential as { digest: Buffer }).digest.equals(createHash('sha256').update(value).digest())).toBe(true);
    }
  });

  it('reports no header as absent', () => {
    expect(adapter.readCredential({ authorization: 'Bearer svc_sk_x' })).toEqual({ kind: 'absent' });
  });

  it('reads the credential after the Bearer key in Authorization, as it reads x-svc-payment-authorization', () => {
    const header = sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success');
    const credential = adapter.readCredential({ authorization: `Bearer svc_sk_x, ${header}` });
    expect(credential).toMatchObject({ kind: 'credential', challengeId: issued.challengeId });
    expect(credential).toEqual(adapter.readCredential({ 'x-svc-payment-authorization': header }));
    // The same credential in both headers is one credential, whether or not x-svc-payment-authorization names the scheme.
    for (const value of [header, header.slice('Payment '.length)]) {
      expect(adapter.readCredential({ authorization: `Bearer svc_sk_x, ${header}`, 'x-svc-payment-authorization': value })).toMatchObject({ kind: 'credential' });
    }
  });

  it('refuses two different credentials, one in Authorization and one in x-svc-payment-authorization', () => {
    const first = sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success');
    const second = sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_decline');
    expect(() => adapter.readCredential({ authorization: `Bearer svc_sk_x, ${first}`, 'x-svc-payment-authorization': second }))
      .toThrow(expect.objectContaining({ code: 'funding.credential_conflict' }));
  });

  it('judges a malformed credential in Authorization as malformed', () => {
    const notJson = `Payment ${b64url('{nope')}`;
    expect(adapter.readCredential({ authorization: `Bearer svc_sk_x, ${notJson}` }).kind).toBe('malformed');
  });

  it.each([
    ['another scheme', 'Bearer abc'],
    ['not base64url', 'Payment abc+/def'],
    ['not JSON', `Payment ${b64url('{nope')}`],
    ['not an object', `Payment ${b64url([1])}`],
    ['without a challenge', `Payment ${b64url({ payload: { token: 'tok_sandbox_success' } })}`],
    ['without a challenge id', `Payment ${b64url({ challenge: { realm: 'x' }, payload: { token: 'tok_sandbox_success' } })}`],
    ['without a payload', `Payment ${b64url({ challenge: { id: 'x' } })}`],
    ['without a token', `Payment ${b64url({ challenge: { id: 'x' }, payload: {} })}`],
    ['with two credentials', 'Payment abc def'],
    ['empty', ''],
  ])('calls a credential %s malformed', (_name, value) => {
    expect(adapter.readCredential({ 'x-svc-payment-authorization': value }).kind).toBe('malformed');
  });
});

describe('MPP sandbox outcomes', () => {
  it('succeeds for tok_sandbox_success, with a Payment-Receipt', async () => {
    const issued = adapter.issueChallenge(context);
    const outcome = await adapter.authorize(context, credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success')), issued.stored);
    expect(outcome).toMatchObject({ status: 'succeeded', funding: { status: 'payment_succeeded', settlement_rail: 'processor_mpp', method: 'stripe', intent: 'charge' } });
    if (outcome.status !== 'succeeded') return;
    expect(outcome.reference).toMatch(/^pi_sandbox_[0-9a-f]{24}$/);
    const receipt = JSON.parse(Buffer.from(outcome.headers!['Payment-Receipt']!, 'base64url').toString('utf8'));
    expect(receipt).toEqual({ status: 'success', method: 'stripe', timestamp: '2026-11-22T12:00:00Z', reference: outcome.reference });
  });

  it('declines tok_sandbox_decline without a receipt', async () => {
    const issued = adapter.issueChallenge(context);
    const outcome = await adapter.authorize(context, credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_decline')), issued.stored);
    expect(outcome).toMatchObject({ status: 'declined', reason: 'card_declined', funding: { status: 'payment_failed' } });
    expect((outcome as { headers?: unknown }).headers).toBeUndefined();
    expect(outcome.funding).not.toHaveProperty('challenge_id');
  });

  it('keeps tok_sandbox_pending pending, and settles it on the next poll', async () => {
    const issued = adapter.issueChallenge(context);
    const outcome = await adapter.authorize(context, credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_pending')), issued.stored);
    expect(outcome).toMatchObject({ status: 'pending', funding: { status: 'payment_pending' } });
    if (outcome.status !== 'pending') return;
    const polled = await adapter.poll(fundingContext({ nowMs: nowMs + 2_000 }), { reference: outcome.reference, stored: issued.stored });
    expect(polled).toMatchObject({ status: 'succeeded', reference: outcome.reference, funding: { status: 'payment_succeeded' } });
  });

  it('refuses any other token as verification-failed', async () => {
    const issued = adapter.issueChallenge(context);
    const outcome = await adapter.authorize(context, credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_visa')), issued.stored);
    expect(outcome).toMatchObject({
      status: 'rejected',
      problem: { type: 'https://paymentauth.org/problems/verification-failed', title: 'Verification Failed' },
      funding: { status: 'credential_rejected' },
    });
    expect(outcome.funding).not.toHaveProperty('challenge_id');
  });
});

describe('MPP challenge binding', () => {
  const invalidChallenge = { status: 'rejected', problem: { type: 'https://paymentauth.org/problems/invalid-challenge' }, funding: { status: 'credential_rejected' } };

  it('refuses a credential for a challenge the engine does not know', async () => {
    const issued = adapter.issueChallenge(context);
    const credential = credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    expect(await adapter.authorize(context, credential, undefined)).toMatchObject(invalidChallenge);
  });

  it.each([
    ['a changed request', (challenge: Record<string, string>) => ({ ...challenge, request: b64url('{"amount":"1","currency":"usd"}') })],
    ['a changed expiry', (challenge: Record<string, string>) => ({ ...challenge, expires: '2099-01-01T00:00:00Z' })],
    ['an added field', (challenge: Record<string, string>) => ({ ...challenge, opaque: 'x' })],
    ['a missing field', ({ realm: _realm, ...challenge }: Record<string, string>) => challenge],
  ])('refuses an echoed challenge with %s', async (_name, alter) => {
    const issued = adapter.issueChallenge(context);
    const decoded = decodedCredential(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    decoded.challenge = alter(decoded.challenge);
    const outcome = await adapter.authorize(context, credentialFor(`Payment ${b64url(decoded)}`), issued.stored);
    expect(outcome).toMatchObject(invalidChallenge);
  });

  it('fills what an echo leaves out of the optional params from the issued challenge (the client drops expires)', async () => {
    const issued = adapter.issueChallenge(context);
    const decoded = decodedCredential(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    delete decoded.challenge.expires;
    const credential = credentialFor(`Payment ${b64url(decoded)}`);
    expect((await adapter.authorize(context, credential, issued.stored)).status).toBe('succeeded');
    // Still bound to the challenge: the id must name one issued for this intent, and it must not have expired.
    expect(await adapter.authorize(context, credential, undefined)).toMatchObject(invalidChallenge);
    const expired = await adapter.authorize(fundingContext({ nowMs: nowMs + mppChallengeLifetimeMs }), credential, issued.stored);
    expect(expired).toMatchObject(invalidChallenge);
    expect((expired as { problem: { detail: string } }).problem.detail).toMatch(/expired/);
  });

  it.each([
    ['a changed request', (challenge: Record<string, string>) => ({ ...challenge, request: b64url('{"amount":"1","currency":"usd"}') })],
    ['a missing required field', ({ realm: _realm, ...challenge }: Record<string, string>) => challenge],
    ['an added optional field', (challenge: Record<string, string>) => ({ ...challenge, description: 'x' })],
  ])('still refuses an echo without expires that has %s', async (_name, alter) => {
    const issued = adapter.issueChallenge(context);
    const decoded = decodedCredential(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    const { expires: _expires, ...withoutExpires } = decoded.challenge as Record<string, string>;
    decoded.challenge = alter(withoutExpires);
    const outcome = await adapter.authorize(context, credentialFor(`Payment ${b64url(decoded)}`), issued.stored);
    expect(outcome).toMatchObject(invalidChallenge);
  });

  it('refuses an expired challenge, and accepts it until then', async () => {
    const issued = adapter.issueChallenge(context);
    const credential = credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    const lastMoment = fundingContext({ nowMs: nowMs + mppChallengeLifetimeMs - 1 });
    expect((await adapter.authorize(lastMoment, credential, issued.stored)).status).toBe('succeeded');
    const expired = await adapter.authorize(fundingContext({ nowMs: nowMs + mppChallengeLifetimeMs }), credential, issued.stored);
    expect(expired).toMatchObject(invalidChallenge);
    expect((expired as { problem: { detail: string } }).problem.detail).toMatch(/expired/);
  });

  it("refuses another intent's challenge", async () => {
    const issued = adapter.issueChallenge(context);
    const credential = credentialFor(sandboxMppAuthorization(challengeHeader(issued), 'tok_sandbox_success'));
    const other = fundingContext({ intentId: '8d0f6a3e-2c1b-4f5a-8e9d-7c6b5a4f3e2d' });
    expect(await adapter.authorize(other, credential, issued.stored)).toMatchObject(invalidChallenge);
  });
});
