// The fund handshake, capability verification and spend completion against scripted answers: the 402 loop with
// its callback, polls on 202 (also under fake timers), typed funding failures, verify's deny, and guard.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FundingFailedError,
  FundingPendingError,
  generateKey,
  SvcArgumentError,
  SvcCapabilityError,
  SvcClient,
  TenantBindingError,
  type FundChallenge,
} from '../../src/sdk/index.ts';
import { sandboxMppTokens as railMppTokens } from '../../src/rails/mpp/wire.ts';
import { sandboxX402Payers as railX402Payers } from '../../src/rails/x402/wire.ts';
import { sandboxMppTokens, sandboxX402Payers } from '../../src/sdk/index.ts';
import { decodeRecognitionProofHeader } from '../../src/signing/index.ts';
import { intentIdFixture, json, openScriptedClient, principalAnswer, startScriptedServer, type ScriptedAnswer, type ScriptedServer } from './support.ts';

let server: ScriptedServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

const fundPath = `/harbor/intents/${intentIdFixture}/fund`;
const fundBody = (state: string, funded: boolean, funding: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  tenant: 'acme', tenant_id: 'acme', intent_id: intentIdFixture, state, settlement_rail: 'x402_usdc_base', currency: 'usd', amount_cents: 500, funded,
  funding: { settlement_rail: 'x402_usdc_base', ...funding }, ...extra,
});
const challenge402 = (): ScriptedAnswer =>
  json(402, fundBody('open', false, { status: 'created', challenge_id: 'c1' }), { 'payment-required': 'eyJ4NDAyVmVyc2lvbiI6Mn0=', 'cache-control': 'no-store' });
const pending202 = (): ScriptedAnswer => json(202, fundBody('open', false, { status: 'authorization_pending' }));
const funded200 = (): ScriptedAnswer => json(200, fundBody('funded', true, { status: 'authorization_succeeded' }, { capability_token: 'cap.token.1' }), { 'payment-response': 'cmVzcG9uc2U=' });
const declined402 = (): ScriptedAnswer => json(402, fundBody('open', false, { status: 'authorization_failed', error_reason: 'insufficient_funds' }), { 'payment-required': 'bmV3' });
const sequence = (...answers: ScriptedAnswer[]) => (_request: unknown, index: number) => answers[Math.min(index, answers.length - 1)]!;

describe('fund', () => {
  it('answers the 402 through the callback, polls the 202, and returns the capability token', async () => {
    server = await startScriptedServer(sequence(challenge402(), pending202(), funded200()));
    const { key } = generateKey();
    const { client, clock } = await openScriptedClient(server, { agent: { keyId: 'agent-1', key } });
    const challenges: FundChallenge[] = [];
    const result = await client.intents.fund(intentIdFixture, {
      credential: (challenge) => (challenges.push(challenge), { 'payment-signature': 'c2lnbmVk' }),
    });
    expect(result).toMatchObject({ capabilityToken: 'cap.token.1', requests: 3, replayed: false, paymentResponse: 'cmVzcG9uc2U=' });
    expect(challenges).toHaveLength(1);
    expect(challenges[0]).toMatchObject({ intentId: intentIdFixture, rail: 'x402_usdc_base', paymentRequired: 'eyJ4NDAyVmVyc2lvbiI6Mn0=', body: { funding: { challenge_id: 'c1' } } });
    expect(clock.delays).toEqual([2000]);

    const requests = server.to(fundPath);
    expect(requests.map((request) => request.headers['payment-signature'])).toEqual([undefined, 'c2lnbmVk', 'c2lnbmVk']);
    // One idempotency key for the whole handshake, the same body, and a fresh proof for each step.
    expect(new Set(requests.map((request) => request.headers['idempotency-key'])).size).toBe(1);
    expect(requests.every((request) => request.body.toString() === '{}')).toBe(true);
    const nonces = requests.map((request) => (decodeRecognitionProofHeader(request.headers['x-svc-agent-recognition-proof'] as string) as { nonce: string }).nonce);
    expect(new Set(nonces).size).toBe(3);
  });

  it('returns a replayed 200 without asking for a credential', async () => {
    server = await startScriptedServer(() => ({ ...funded200(), headers: { 'idempotent-replayed': 'true' } }));
    const { client } = await openScriptedClient(server);
    const result = await client.intents.fund(intentIdFixture, { idempotencyKey: 'fund-1', credential: () => { throw new Error('not asked'); } });
    expect(result).toMatchObject({ replayed: true, requests: 1 });
    expect(server.to(fundPath)[0]!.headers['idempotency-key']).toBe('fund-1');
  });

  it('throws FundingFailedError when the credential is declined', async () => {
    server = await startScriptedServer(sequence(challenge402(), declined402()));
    const { client } = await openScriptedClient(server);
    const error = await client.intents.fund(intentIdFixture, { credential: () => ({ 'payment-signature': 'x' }) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FundingFailedError);
    expect(error).toMatchObject({ intentId: intentIdFixture, attempts: 2, lastResult: { funding: { status: 'authorization_failed' } } });
  });

  it('throws FundingPendingError after pollsMax polls', async () => {
    server = await startScriptedServer(sequence(challenge402(), pending202()));
    const { client, clock } = await openScriptedClient(server);
    const error = await client.intents.fund(intentIdFixture, { credential: () => ({ 'payment-signature': 'x' }), pollsMax: 3, pollIntervalMs: 10 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FundingPendingError);
    expect(error).toMatchObject({ attempts: 5 });
    expect(clock.delays).toEqual([10, 10, 10]);
  });

  it('prefixes an MPP credential with "Payment " and refuses headers that belong to the SDK', async () => {
    server = await startScriptedServer(sequence(challenge402(), funded200()));
    const { client } = await openScriptedClient(server);
    await client.intents.fund(intentIdFixture, { credential: () => ({ 'X-Svc-Payment-Authorization': 'eyJjIjoxfQ' }) });
    expect(server.to(fundPath)[1]!.headers['x-svc-payment-authorization']).toBe('Payment eyJjIjoxfQ');

    server.script = sequence(challenge402());
    await expect(client.intents.fund(intentIdFixture, { credential: () => ({ authorization: 'Bearer other' }) })).rejects.toThrow(SvcArgumentError);
    await expect(client.intents.fund(intentIdFixture, { credential: () => ({}) })).rejects.toThrow(SvcArgumentError);
    const before = server.to(fundPath).length;
    await expect(client.intents.fund(intentIdFixture, { credential: () => ({ 'payment-signature': 'not latin-1: \u20ac' }) })).rejects.toThrow(SvcArgumentError);
    expect(server.to(fundPath)).toHaveLength(before + 1);
    await expect(client.intents.fund('not-a-uuid', { credential: () => ({}) })).rejects.toThrow(SvcArgumentError);
  });

  it('polls on the default 2 s timer, driven by fake timers', async () => {
    vi.useFakeTimers();
    const answers = [challenge402(), pending202(), pending202(), funded200()];
    let calls = 0;
    const scriptedFetch = async (input: string) => {
      if (input.endsWith('/v1/auth/principal')) return new Response(JSON.stringify(principalAnswer));
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      return new Response(JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
    };
    const client = await SvcClient.open({ apiKey: 'k', fetch: scriptedFetch });
    const funding = client.intents.fund(intentIdFixture, { credential: () => ({ 'payment-signature': 'x' }) });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(3);
    await vi.advanceTimersByTimeAsync(2_000);
    await expect(funding).resolves.toMatchObject({ capabilityToken: 'cap.token.1', requests: 4 });
  });
});

describe('sandbox helpers', () => {
  it('name the same test payers and tokens as the simulators', () => {
    expect(sandboxX402Payers).toEqual(railX402Payers);
    expect(sandboxMppTokens).toEqual(railMppTokens);
  });
});

describe('capabilities and spend', () => {
  const verifyAnswer = (allow: boolean, extra: Record<string, unknown> = {}) =>
    json(200, {
      allow, tenant: 'acme', tenant_id: 'acme', intent_id: intentIdFixture, audit_id: '0b6c1c9e-5a4f-4b7e-9d1a-2f3e4d5c6b7a',
      code: allow ? null : 'capability.operation_not_allowed', message: allow ? 'Allowed' : 'The operation is not allowed.',
      reason_codes: allow ? [] : ['capability.operation_not_allowed'], remaining_cents: 400, operation: 'search.web', requested_spend_cents: 100,
      ...(allow ? { decision_id: '2d9f3c6a-1b7e-4c3a-9e5f-7a8b9c0d1e2f' } : {}), ...extra,
    });
  const completed = (status: string) => json(200, { decision_id: '2d9f3c6a-1b7e-4c3a-9e5f-7a8b9c0d1e2f', intent_id: intentIdFixture, status, requested_spend_cents: 100, completed_at: '2030-01-01T00:00:00.000Z', agent_receipt: {} });
  const params = { intentId: intentIdFixture, token: 'cap.token.1', operation: 'search.web', requestedSpendCents: 100, toolCallId: '  call-1  ', configHashHex: 'ABCD' };

  it('verifies with the idempotency key in header and body, and throws SvcCapabilityError with the reason on deny', async () => {
    server = await startScriptedServer(sequence(verifyAnswer(true), verifyAnswer(false), verifyAnswer(false)));
    const { client } = await openScriptedClient(server);
    const allowed = await client.capabilities.verify(params);
    expect(allowed).toMatchObject({ allow: true, decision_id: expect.any(String), remaining_cents: 400 });
    const [request] = server.to('/verify');
    const body = JSON.parse(request!.body.toString());
    expect(body).toMatchObject({ intent_id: intentIdFixture, token: 'cap.token.1', operation: 'search.web', requested_spend_cents: 100, tool_call_id: 'call-1', config_hash_hex: 'abcd' });
    expect(body.idempotency_key).toBe(request!.headers['idempotency-key']);
    expect(request!.headers['x-tenant-id']).toBe('acme');

    const denied = await client.capabilities.verify(params).catch((caught: unknown) => caught);
    expect(denied).toBeInstanceOf(SvcCapabilityError);
    expect(denied).toMatchObject({ code: 'capability.operation_not_allowed', reason_codes: ['capability.operation_not_allowed'], result: { allow: false } });
    expect((await client.capabilities.verify(params, { throwOnDeny: false })).allow).toBe(false);
  });

  it('refuses a verify answer about another tenant', async () => {
    server = await startScriptedServer(() => verifyAnswer(true, { tenant: 'globex' }));
    const { client } = await openScriptedClient(server);
    await expect(client.capabilities.verify(params)).rejects.toThrow(TenantBindingError);
  });

  it('guard completes the decision as consumed after the tool, and released when the tool throws', async () => {
    const completePath = '/v1/spend/decisions/2d9f3c6a-1b7e-4c3a-9e5f-7a8b9c0d1e2f/complete';
    server = await startScriptedServer((request) => (request.path === '/verify' ? verifyAnswer(true) : completed(JSON.parse(request.body.toString()).outcome)));
    const { client } = await openScriptedClient(server);
    expect(await client.capabilities.guard(params, async () => 'tool result')).toBe('tool result');
    await expect(client.capabilities.guard(params, async () => { throw new Error('vendor down'); })).rejects.toThrow('vendor down');
    expect(server.to(completePath).map((request) => JSON.parse(request.body.toString()).outcome)).toEqual(['consumed', 'released']);
    expect((await client.spend.complete('2d9f3c6a-1b7e-4c3a-9e5f-7a8b9c0d1e2f', 'consumed')).status).toBe('consumed');
    await expect(client.spend.complete('nope', 'consumed')).rejects.toThrow(SvcArgumentError);
  });
});
