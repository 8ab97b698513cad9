// The engine's decisions (src/engine/decide/), branch by branch, with no database: what each command does for a
// given intent, input, loaded facts and time, or which refusal it answers. The HTTP tests pin the same rules end to
// end; these pin them fast, at their boundaries (a deadline equal to now, a lease just over, a foreign tenant hint).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CreateIntentBody } from '../../src/contracts/intents.ts';
import type { SandboxBootstrapBody } from '../../src/contracts/sandbox.ts';
import type { FundingAttempt } from '../../src/db/funding-attempt-repository.ts';
import type { IntentState, LockedIntent, NewIntent } from '../../src/db/intent-repository.ts';
import type { PolicyVersion } from '../../src/db/policy-repository.ts';
import {
  assertPrincipalKeyAccepted,
  bootstrapAnswer,
  challengeAnswer,
  checkFundingDeadline,
  decideBootstrap,
  decideCreate,
  decideEvidence,
  decideFundOutcome,
  decideFundPhase1,
  decideRailUnavailable,
  decideSandboxEvidence,
  decideSettlement,
  fundedAnswer,
  fundingCallOf,
  ruleLookupOf,
  sandboxEvidenceAnswer,
  type FundPhase1Facts,
  type RailCredential,
} from '../../src/engine/decide.ts';
import { decideReleaseGate, releaseGateDefault } from '../../src/engine/decide/release-gate.ts';
import { decideResolution } from '../../src/engine/decide/resolve.ts';
import { transitionOf } from '../../src/engine/lifecycle.ts';
import { ServiceError } from '../../src/errors/service-error.ts';
import { fundingClaimLeaseMs, sandboxIntentLifetimeMs, sandboxMetadataBytesMax } from '../../src/limits.ts';
import { paymentProblem, RailOutcomeUnknownError, RailUnavailableError, type CredentialOutcome } from '../../src/rails/index.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

const tenantId = 'acme';
const nowMs = Date.UTC(2026, 10, 25, 10, 0, 0);
const deadline = '2026-11-25T11:00:00Z';
const deadlineMs = Date.parse(deadline);
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

/** The catalogue error `run` throws; fails the test when it throws anything else or nothing. */
function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a refusal, the decision answered');
}

/** A row as the database holds it once inserted: `state`, locked at `nowMs`. */
function locked(row: NewIntent, state: IntentState, overrides: Partial<LockedIntent> = {}): LockedIntent {
  return {
    ...row,
    state,
    principalKeyRegistered: true,
    predicatePassed: null,
    fundingReference: null,
    createdAt: new Date(nowMs - 60_000),
    fundedAt: null,
    evidenceRecordedAt: null,
    settledAt: null,
    meteredCostCents: null,
    releasedCents: null,
    refundedCents: null,
    transactionTime: new Date(nowMs),
    ...overrides,
  };
}

const createBody = (options: Partial<Parameters<typeof signedCreateBody>[0]> = {}) =>
  signedCreateBody({ tenantId, principal, payee, deadline, ...options }) as unknown as CreateIntentBody;

/** A v6 envelope whose rule is `predicate_ref`, signed over the referenced version's predicate. */
const referencedBody = (predicateRef: string, predicate: Record<string, unknown>) => createBody({ predicateRef, predicate });

function policyVersion(versionSeq: number): PolicyVersion {
  return {
    templateId: 'search_release',
    versionSeq,
    parameters: {},
    materializedPredicate: { version: 1, root: { op: 'completion', path: ['status'], value: 'done' } },
    humanSummary: 'Releases when status is done.',
    contentDigest: Buffer.alloc(32, versionSeq),
    createdAt: new Date(nowMs - 86_400_000),
  };
}

describe('decideCreate', () => {
  it('answers the row a signed v6 envelope inserts, with the canonical id and the normalized tools', () => {
    const body = createBody({ intentId: randomUUID().toUpperCase(), allowedTools: ['Search.Web '] });
    const row = decideCreate({ tenantId }, body, {}, nowMs);
    expect(row).toMatchObject({
      tenantId,
      intentId: body.intent_id.toLowerCase(),
      signingVersion: 6,
      principalDid: principal.did,
      payeeDid: payee.did,
      deadlineText: deadline,
      deadline: new Date(deadlineMs),
      predicateDsl: body.predicate_dsl,
      predicateRef: '',
      policyTemplateId: null,
      allowedTools: ['search.web'],
      completionPresetId: null,
    });
    expect(row.principalSignature!.equals(Buffer.from(body.principal_signature, 'base64'))).toBe(true);
  });

  it('refuses a deadline equal to now, and accepts one a millisecond later', () => {
    expect(refusal(() => decideCreate({ tenantId }, createBody(), {}, deadlineMs)).code).toBe('intent.deadline_invalid');
    expect(decideCreate({ tenantId }, createBody(), {}, deadlineMs - 1).deadline.getTime()).toBe(deadlineMs);
  });

  it('refuses a tenant hint naming another tenant, in either field, and accepts its own', () => {
    const body = createBody();
    for (const foreign of [{ ...body, tenant_id: 'globex' }, { ...body, org_id: 'globex' }, { ...body, tenant_id: tenantId, org_id: 'globex' }]) {
      expect(refusal(() => decideCreate({ tenantId }, foreign, {}, nowMs)).code).toBe('request.tenant_hint_mismatch');
    }
    expect(decideCreate({ tenantId }, { ...body, tenant_id: tenantId, org_id: tenantId }, {}, nowMs).tenantId).toBe(tenantId);
  });

  it('refuses an envelope signed for another tenant, or with another amount than signed', () => {
    const forged = refusal(() => decideCreate({ tenantId }, createBody({ signForTenantId: 'globex' }), {}, nowMs));
    expect(forged.code).toBe('signing.signature_invalid');
    expect(forged.details).toEqual({ field: 'principal_signature' });
    expect(refusal(() => decideCreate({ tenantId }, { ...createBody(), amount_cents: 501 }, {}, nowMs)).code).toBe('signing.signature_invalid');
  });

  it('refuses a pinned preset it does not know, before the signature', () => {
    const refused = refusal(() => decideCreate({ tenantId }, { ...createBody(), completion_preset_id: 'no_such_preset' }, {}, nowMs));
    expect(refused.code).toBe('request.invalid');
  });

  it('v6: refuses a policy binding, a missing rule, and a predicate_ref naming no version', () => {
    const body = createBody();
    expect(refusal(() => decideCreate({ tenantId }, { ...body, policy_binding: { template_id: 'x', version_seq: 1 } }, {}, nowMs)).code).toBe('request.invalid');
    const { predicate_dsl: _inline, ...ruleless } = body;
    expect(refusal(() => decideCreate({ tenantId }, ruleless, {}, nowMs)).code).toBe('intent.predicate_missing');
    const missing = refusal(() => decideCreate({ tenantId }, { ...ruleless, predicate_ref: 'search_release@3' }, { referenced: undefined }, nowMs));
    expect(missing.code).toBe('intent.predicate_missing');
    expect(missing.details).toEqual({ predicate_ref: 'search_release@3' });
  });

  it('v6: takes the rule of the version predicate_ref names', () => {
    const version = policyVersion(3);
    const body = referencedBody('search_release@3', version.materializedPredicate);
    const row = decideCreate({ tenantId }, body, { referenced: version }, nowMs);
    expect(row).toMatchObject({ predicateDsl: version.materializedPredicate, predicateRef: 'search_release@3', policyTemplateId: null });
  });

  it('v6: takes predicate_dsl beside predicate_ref only as the same rule, and records the reference', () => {
    const version = policyVersion(3);
    const sameRule = { root: version.materializedPredicate['root'], version: 1 };
    const both = createBody({ predicateRef: 'search_release@3', predicate: sameRule, inlineBesideRef: true });
    expect(both.predicate_dsl).toEqual(sameRule);
    const row = decideCreate({ tenantId }, both, { referenced: version }, nowMs);
    expect(row).toMatchObject({ predicateDsl: version.materializedPredicate, predicateRef: 'search_release@3' });

    const otherRule = { version: 1, root: { op: 'true' } };
    const conflicting = createBody({ predicateRef: 'search_release@3', predicate: otherRule, inlineBesideRef: true });
    const refused = refusal(() => decideCreate({ tenantId }, conflicting, { referenced: version }, nowMs));
    expect(refused.code).toBe('intent.predicate_conflict');
    expect(refused.details).toEqual({ predicate_ref: 'search_release@3' });
    expect(refusal(() => decideCreate({ tenantId }, both, { referenced: undefined }, nowMs)).code).toBe('intent.predicate_missing');
    // An inline rule is still checked first, whatever the reference names.
    const malformed = createBody({ predicateRef: 'search_release@3', predicate: { version: 2, root: { op: 'true' } }, inlineBesideRef: true });
    expect(() => decideCreate({ tenantId }, malformed, { referenced: version }, nowMs)).toThrow(expect.objectContaining({ code: 'predicate.version_unsupported' }));
  });

  it('v7: binds the head, and refuses a binding that is not the head, a missing binding or an inline rule', () => {
    const head = policyVersion(2);
    const policy = { templateId: head.templateId, versionSeq: 2, contentDigestHex: head.contentDigest.toString('hex'), materializedPredicate: head.materializedPredicate };
    const body = createBody({ policy });
    const row = decideCreate({ tenantId }, body, { bound: { headSeq: 2, version: head } }, nowMs);
    expect(row).toMatchObject({ signingVersion: 7, policyTemplateId: 'search_release', policyVersionSeq: 2, predicateDsl: head.materializedPredicate });
    expect(row.policyContentDigest!.equals(head.contentDigest)).toBe(true);

    const stale = refusal(() => decideCreate({ tenantId }, body, { bound: { headSeq: 3, version: undefined } }, nowMs));
    expect(stale.code).toBe('intent.policy_binding_invalid');
    expect(stale.details).toEqual({ template_id: 'search_release', version_seq: 2, current_head_seq: 3 });
    const unknown = refusal(() => decideCreate({ tenantId }, body, { bound: { headSeq: null, version: undefined } }, nowMs));
    expect(unknown.details).toMatchObject({ current_head_seq: null });
    expect(refusal(() => decideCreate({ tenantId }, { ...body, policy_binding: null }, {}, nowMs)).code).toBe('intent.policy_binding_invalid');
    expect(refusal(() => decideCreate({ tenantId }, { ...body, predicate_dsl: head.materializedPredicate }, {}, nowMs)).code).toBe('request.invalid');
  });

  it('asks for a look-up only where the rule is judged by one', () => {
    expect(ruleLookupOf(createBody())).toEqual({ kind: 'none' });
    const { predicate_dsl: _inline, ...ruleless } = createBody();
    expect(ruleLookupOf({ ...ruleless, predicate_ref: 'search_release@3' })).toEqual({ kind: 'version', templateId: 'search_release', versionSeq: 3 });
    expect(ruleLookupOf({ ...ruleless, predicate_ref: 'Search Release@0' })).toEqual({ kind: 'none' });
    // Beside an inline rule, the reference is read too: the two must agree.
    expect(ruleLookupOf({ ...createBody(), predicate_ref: 'search_release@3' })).toEqual({ kind: 'version', templateId: 'search_release', versionSeq: 3 });
    const bound = createBody({ policy: { templateId: 'search_release', versionSeq: 2, contentDigestHex: '00'.repeat(32), materializedPredicate: {} } });
    expect(ruleLookupOf(bound)).toEqual({ kind: 'head', templateId: 'search_release', versionSeq: 2 });
  });

  it('keeps an unregistered principal key in sandbox only', () => {
    expect(refusal(() => assertPrincipalKeyAccepted('live', { principalKeyRegistered: false })).code).toBe('intent.principal_key_unregistered');
    expect(() => assertPrincipalKeyAccepted('live', { principalKeyRegistered: true })).not.toThrow();
    expect(() => assertPrincipalKeyAccepted('sandbox', { principalKeyRegistered: false })).not.toThrow();
  });
});

// ---- funding ----

const sandboxRow = (body: SandboxBootstrapBody = { operation: 'search.web', requested_spend_cents: 500 }) =>
  decideBootstrap(tenantId, body, nowMs, { intentId: randomUUID(), fundingReference: 'sim_1' });
const openIntent = locked(sandboxRow().intent, 'open');
const digest = Buffer.alloc(32, 1);
const credential: RailCredential = { kind: 'credential', challengeId: 'ch_1', digest, data: { payload: 'signed' } };

function attempt(overrides: Partial<FundingAttempt> = {}): FundingAttempt {
  return {
    attemptId: 'att_1',
    intentId: openIntent.intentId,
    rail: 'x402_usdc_base',
    challengeId: 'ch_1',
    challenge: { requirements: 'stored' },
    status: 'challenged',
    credentialDigest: null,
    reference: null,
    polls: 0,
    claimedAt: null,
    credential: null,
    railDetails: null,
    live: false,
    idempotencyKey: null,
    ...overrides,
  };
}

const phase1 = (facts: Partial<FundPhase1Facts>) =>
  decideFundPhase1({
    intent: openIntent, environment: 'sandbox', credential, attempt: undefined, claimed: undefined, railResolves: false, idempotencyKey: undefined, keyed: undefined, ...facts,
  });

describe('checkFundingDeadline', () => {
  it('refuses funding at the deadline, and allows it a millisecond before', () => {
    const at = openIntent.deadline.getTime();
    expect(refusal(() => checkFundingDeadline(openIntent, at)).code).toBe('intent.deadline_passed');
    expect(() => checkFundingDeadline(openIntent, at - 1)).not.toThrow();
  });
});

describe('decideFundPhase1', () => {
  it('challenges a request without a credential, even while another call holds the claim', () => {
    const claimed = attempt({ attemptId: 'att_0', claimedAt: new Date(nowMs), credentialDigest: Buffer.alloc(32, 9) });
    expect(phase1({ credential: { kind: 'absent' }, claimed })).toEqual({ kind: 'challenge', funding: { status: 'created' } });
  });

  it('challenges a malformed credential with the problem saying why', () => {
    expect(phase1({ credential: { kind: 'malformed', reason: 'not base64' } })).toEqual({
      kind: 'challenge',
      funding: { status: 'credential_rejected' },
      problem: paymentProblem('malformed-credential', 'not base64'),
    });
  });

  it('refuses another credential while a claim stands, and the same one until its lease is over', () => {
    const claimedAt = new Date(nowMs - fundingClaimLeaseMs + 1);
    const other = attempt({ status: 'challenged', claimedAt, credentialDigest: Buffer.alloc(32, 9) });
    expect(refusal(() => phase1({ attempt: other, claimed: other })).code).toBe('idempotency.request_in_progress');
    const mine = attempt({ claimedAt, credentialDigest: digest });
    expect(refusal(() => phase1({ attempt: mine, claimed: mine, railResolves: true })).code).toBe('idempotency.request_in_progress');
    // A claim on another attempt than the one the credential names is another call, whatever its lease.
    const elsewhere = attempt({ attemptId: 'att_0', claimedAt: new Date(0), credentialDigest: digest });
    expect(refusal(() => phase1({ attempt: attempt(), claimed: elsewhere })).code).toBe('idempotency.request_in_progress');
  });

  it('takes a dead claim over once its lease is over: resolve when the rail can tell, else authorize again', () => {
    const dead = attempt({ claimedAt: new Date(nowMs - fundingClaimLeaseMs), credentialDigest: digest, reference: 'ref_9' });
    const resolved = phase1({ attempt: dead, claimed: dead, railResolves: true, environment: 'live' });
    expect(resolved).toMatchObject({
      kind: 'resolve',
      attempt: dead,
      claim: { attemptId: 'att_1', credentialDigest: digest, credential: credential.data, live: true },
      claimed: { challenge: dead.challenge, credential: credential.data, digest, reference: 'ref_9' },
    });
    expect(phase1({ attempt: dead, claimed: dead, railResolves: false })).toMatchObject({ kind: 'authorize', attempt: dead, challenge: dead.challenge });
  });

  it('continues the attempt a retry\'s key claimed, with the credential first presented, whatever it presents now', () => {
    const firstDigest = Buffer.alloc(32, 5);
    const first = { payload: 'first' };
    const claimedBy = (claimedAt: Date) => attempt({ attemptId: 'att_0', claimedAt, credentialDigest: firstDigest, credential: first, idempotencyKey: 'key_1' });
    // Another credential (a fresh challenge answered), or none, under the same key: still this request, in progress.
    const running = claimedBy(new Date(nowMs - fundingClaimLeaseMs + 1));
    for (const presented of [credential, { kind: 'absent' } as const]) {
      expect(refusal(() => phase1({ credential: presented, attempt: attempt(), claimed: running, keyed: running, idempotencyKey: 'key_1' })).code)
        .toBe('idempotency.request_in_progress');
    }
    // Its lease over: taken over, the rail asked about the first credential; the new one is never used.
    const dead = claimedBy(new Date(nowMs - fundingClaimLeaseMs));
    const takenOver = phase1({ credential, attempt: attempt(), claimed: dead, keyed: dead, idempotencyKey: 'key_1', railResolves: true, environment: 'live' });
    expect(takenOver).toMatchObject({
      kind: 'resolve',
      attempt: dead,
      credential: { digest: firstDigest, data: first, challengeId: dead.challengeId },
      claim: { attemptId: 'att_0', credentialDigest: firstDigest, credential: first, live: true, idempotencyKey: 'key_1' },
      claimed: { credential: first, digest: firstDigest },
    });
    expect(phase1({ credential: { kind: 'absent' }, claimed: dead, keyed: dead, idempotencyKey: 'key_1' })).toMatchObject({ kind: 'authorize', attempt: dead });
    // Pending: polled with its own credential, whatever the retry presents.
    const pending = attempt({ attemptId: 'att_0', status: 'pending', reference: 'ref_0', credentialDigest: firstDigest, credential: first, idempotencyKey: 'key_1' });
    expect(phase1({ credential: { kind: 'absent' }, keyed: pending, idempotencyKey: 'key_1' })).toMatchObject({
      kind: 'poll', attempt: pending, pending: { reference: 'ref_0', credential: first }, claim: { credentialDigest: firstDigest },
    });
    // An attempt that kept no credential cannot be continued: the request is judged as it is.
    const bare = attempt({ attemptId: 'att_0', claimedAt: dead.claimedAt, credentialDigest: firstDigest, credential: null });
    expect(refusal(() => phase1({ credential, attempt: attempt(), claimed: bare, keyed: bare, idempotencyKey: 'key_1' })).code).toBe('idempotency.request_in_progress');
  });

  it('records the request\'s key with its claim', () => {
    expect(phase1({ attempt: attempt(), idempotencyKey: 'key_2' })).toMatchObject({ kind: 'authorize', claim: { idempotencyKey: 'key_2' } });
  });

  it('polls a pending attempt with its own credential, and challenges another credential for it', () => {
    const pending = attempt({ status: 'pending', credentialDigest: digest, reference: 'ref_1' });
    expect(phase1({ attempt: pending })).toMatchObject({
      kind: 'poll',
      attempt: pending,
      claim: { attemptId: 'att_1', live: false },
      pending: { reference: 'ref_1', stored: pending.challenge, credential: credential.data },
    });
    const another = phase1({ attempt: attempt({ status: 'pending', credentialDigest: Buffer.alloc(32, 7) }) });
    expect(another).toMatchObject({ kind: 'challenge', funding: { status: 'credential_rejected' }, problem: { type: expect.stringContaining('invalid-challenge') } });
  });

  it('authorizes against a live challenge, claiming it; a spent or unknown challenge is judged as none, unclaimed', () => {
    const live = attempt();
    expect(phase1({ attempt: live })).toEqual({
      kind: 'authorize',
      credential,
      attempt: live,
      claim: { attemptId: 'att_1', credentialDigest: digest, credential: credential.data, live: false, authorizationKey: null },
      challenge: live.challenge,
    });
    for (const spent of [attempt({ status: 'declined' }), undefined]) {
      expect(phase1({ attempt: spent })).toEqual({ kind: 'authorize', credential, attempt: undefined, claim: undefined, challenge: undefined });
    }
  });

  it('claims the payment authorization with the attempt, and refuses one another attempt holds', () => {
    const keyed: RailCredential = { ...credential, authorizationKey: 'eip155:84532/0xusdc/0xpayer/0xnonce' };
    const live = attempt();
    expect(phase1({ credential: keyed, attempt: live })).toMatchObject({ kind: 'authorize', claim: { authorizationKey: keyed.authorizationKey } });
    // Held by this very attempt (a retry after the rail could not be reached, a takeover): not a reuse.
    expect(phase1({ credential: keyed, attempt: live, authorizationHolder: live.attemptId })).toMatchObject({ kind: 'authorize' });
    expect(phase1({ credential: keyed, attempt: live, authorizationHolder: 'att_other' })).toEqual({ kind: 'authorization_reused' });
    // A credential naming no live challenge of the intent is refused as that, whoever holds its authorization.
    expect(phase1({ credential: keyed, attempt: undefined, authorizationHolder: 'att_other' })).toMatchObject({ kind: 'authorize', claim: undefined });
    // A takeover hands the rail the time of the claim.
    const dead = attempt({ claimedAt: new Date(nowMs - fundingClaimLeaseMs), credentialDigest: digest });
    expect(phase1({ credential: keyed, attempt: dead, claimed: dead, railResolves: true, authorizationHolder: dead.attemptId })).toMatchObject({
      kind: 'resolve', claimed: { claimedAt: dead.claimedAt },
    });
  });
});

describe('decideFundOutcome', () => {
  const claimedAttempt = attempt({ claimedAt: new Date(nowMs), credentialDigest: digest });
  const call = { attempt: claimedAttempt, credentialDigest: digest, poll: false };
  const funding = { status: 'settled', transaction: '0xabc' };

  it('releases the claim of a refused credential and challenges again with the problem', () => {
    const problem = paymentProblem('invalid-challenge', 'names no challenge');
    const refused: CredentialOutcome = { status: 'rejected', problem, funding: { status: 'credential_rejected' } };
    expect(decideFundOutcome(openIntent, call, refused)).toEqual({
      kind: 'refused', release: { attemptId: 'att_1', credentialDigest: digest }, funding: { status: 'credential_rejected' }, problem,
    });
    expect(decideFundOutcome(openIntent, { ...call, attempt: undefined }, refused)).toMatchObject({ kind: 'refused', release: undefined });
  });

  it('records a decline without a reference, and challenges again with its headers', () => {
    const decision = decideFundOutcome(openIntent, call, { status: 'declined', reason: 'insufficient funds', funding: { status: 'declined' }, headers: { 'payment-response': 'x' } });
    expect(decision).toEqual({
      kind: 'declined',
      update: { attemptId: 'att_1', status: 'declined', credentialDigest: digest, reference: null, poll: false, details: undefined },
      funding: { status: 'declined' },
      headers: { 'payment-response': 'x' },
    });
  });

  it('answers a pending payment 202, uncached, and counts a poll', () => {
    const decision = decideFundOutcome(openIntent, { ...call, poll: true }, { status: 'pending', reference: 'ref_1', funding: { status: 'pending' }, details: { payer: '0x1' } });
    expect(decision).toMatchObject({ kind: 'pending', update: { status: 'pending', reference: 'ref_1', poll: true, details: { payer: '0x1' } } });
    if (decision.kind !== 'pending') throw new Error('pending expected');
    expect(decision.answer.status).toBe(202);
    expect(decision.answer.headers).toEqual({ 'cache-control': 'no-store' });
    expect(decision.answer.body).toMatchObject({ intent_id: openIntent.intentId, state: 'open', funded: false, funding: { settlement_rail: 'x402_usdc_base', status: 'pending' } });
  });

  it('funds a settled payment, answering 200 with the token, private and uncached', () => {
    const decision = decideFundOutcome(openIntent, call, { status: 'succeeded', reference: 'ref_2', funding, headers: { 'payment-response': 'ok' }, details: { payer: '0x1' } });
    if (decision.kind !== 'funded') throw new Error('funded expected');
    expect(decision).toMatchObject({ reference: 'ref_2', update: { status: 'succeeded', reference: 'ref_2' } });
    const answer = fundedAnswer({ ...openIntent, state: 'funded' }, decision, 'token');
    expect(answer.status).toBe(200);
    expect(answer.headers).toEqual({ 'payment-response': 'ok', 'cache-control': 'private, no-store' });
    expect(answer.body).toMatchObject({ state: 'funded', funded: true, capability_token: 'token', funding: { settlement_rail: 'x402_usdc_base', ...funding } });
  });

  it('treats a judged credential with no recorded challenge as a programmer error, not an answer', () => {
    expect(() => decideFundOutcome(openIntent, { ...call, attempt: undefined }, { status: 'succeeded', reference: 'r', funding })).toThrow(/without a recorded challenge/);
  });

  it('answers an unreachable rail 503, releasing the claim only when the rail cannot have acted', () => {
    const unreachable = decideRailUnavailable(openIntent, call, new RailUnavailableError('x402_usdc_base', 'timeout', 7));
    expect(unreachable.release).toEqual({ attemptId: 'att_1', credentialDigest: digest });
    expect(unreachable.failure.code).toBe('rail.unavailable');
    expect(unreachable.failure.details).toEqual({ settlement_rail: 'x402_usdc_base', reason: 'timeout', retry_after_seconds: 7, outcome_unknown: false });
    const unknown = decideRailUnavailable(openIntent, call, new RailOutcomeUnknownError('x402_usdc_base', 'no answer'));
    expect(unknown.release).toBeUndefined();
    expect(unknown.failure.details).toMatchObject({ outcome_unknown: true });
    expect(decideRailUnavailable(openIntent, { ...call, attempt: undefined }, new RailUnavailableError('x402_usdc_base', 'down')).release).toBeUndefined();
  });

  it('records on the attempt the first phase claimed, counting polls only', () => {
    const pending = attempt({ status: 'pending', credentialDigest: digest });
    const poll = phase1({ attempt: pending });
    if (poll.kind === 'challenge' || poll.kind === 'authorization_reused') throw new Error('a rail call expected');
    expect(fundingCallOf(poll)).toEqual({ attempt: pending, credentialDigest: digest, poll: true });
  });
});

describe('challengeAnswer', () => {
  const issued = { headers: { 'payment-required': 'abc' }, funding: { challenge_id: 'ch_2', status: 'issued' } };

  it('answers 402 with the challenge, the decision\'s funding status over the issued one, uncached', () => {
    const answer = challengeAnswer(openIntent, issued, { status: 'created' });
    expect(answer).toEqual({
      status: 402,
      headers: { 'payment-required': 'abc', 'cache-control': 'no-store' },
      body: expect.objectContaining({ funded: false, funding: { settlement_rail: 'x402_usdc_base', challenge_id: 'ch_2', status: 'created' } }),
    });
  });

  it('answers a refused credential as a problem document, the problem first', () => {
    const problem = paymentProblem('malformed-credential', 'not base64');
    const answer = challengeAnswer(openIntent, issued, { status: 'credential_rejected' }, problem);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store' });
    expect(Object.keys(answer.body as object).slice(0, 4)).toEqual(['type', 'title', 'detail', 'status']);
    expect(answer.body).toMatchObject({ ...problem, status: 402, intent_id: openIntent.intentId });
  });
});

// ---- sandbox ----

describe('decideBootstrap', () => {
  it('creates an unsigned intent on the simulator, due in whole seconds, funded by the table\'s transition', () => {
    const ids = { intentId: randomUUID(), fundingReference: 'sim_7' };
    const decision = decideBootstrap(tenantId, { operation: ' Search.Web ', requested_spend_cents: 250, currency: 'USD', metadata: { run: 'r-1' } }, nowMs + 999, ids);
    expect(decision.intent).toMatchObject({
      tenantId,
      intentId: ids.intentId,
      signingVersion: 0,
      principalPubkey: null,
      payeePubkey: null,
      currency: 'usd',
      amountCents: 250,
      budget: { max: 250, metadata: { run: 'r-1' } },
      deadline: new Date(nowMs + sandboxIntentLifetimeMs),
      settlementRail: 'x402_usdc_base',
      allowedTools: ['search.web'],
      completionPresetId: null,
    });
    expect(decision.transition).toBe(transitionOf('sandboxBootstrap', null, 'funded'));
    expect(decision.transition.posting).toEqual(transitionOf('fund', 'open', 'funded').posting);
    expect(decision.completion).toMatchObject({ source: 'default', templateId: 'completion_v1' });

    const funded = locked(decision.intent, 'funded');
    const answer = bootstrapAnswer(decision, funded, 'token');
    expect(answer).toMatchObject({
      intent_id: ids.intentId, capability_token: 'token', operation: 'search.web', sandbox_lifecycle_status: 'funded', currency: 'usd',
      simulator_event: { type: 'funding.simulated', reference: 'sim_7', amount_cents: 250, currency: 'usd' }, metadata: { run: 'r-1' },
    });
  });

  it('takes a preset alone, and refuses it beside a template, parameters or a schema', () => {
    const preset = decideBootstrap(tenantId, { operation: 'x', requested_spend_cents: 1, completion_preset: 'cost_and_completion' }, nowMs, { intentId: randomUUID(), fundingReference: 's' });
    expect(preset.completion).toMatchObject({ source: 'preset', presetId: 'cost_and_completion' });
    const conflict = refusal(() => sandboxRow({ operation: 'x', requested_spend_cents: 1, completion_preset: 'cost_and_completion', template_id: 'completion_v1' }));
    expect(conflict.code).toBe('sandbox.completion_conflict');
    expect(conflict.details).toEqual({ conflicting_fields: ['completion_preset', 'template_id'] });
    expect(refusal(() => sandboxRow({ operation: 'x', requested_spend_cents: 1, completion_preset: 'nope' })).code).toBe('sandbox.preset_unknown');
  });

  it('refuses parameters without a template, and metadata past its limit', () => {
    expect(refusal(() => sandboxRow({ operation: 'x', requested_spend_cents: 1, parameters: { expected_status: 'ok' } })).details).toEqual({
      missing_fields: ['template_id'], given_fields: ['parameters'],
    });
    const metadata = { blob: 'x'.repeat(sandboxMetadataBytesMax) };
    expect(refusal(() => sandboxRow({ operation: 'x', requested_spend_cents: 1, metadata })).code).toBe('sandbox.metadata_too_large');
  });
});

describe('decideSandboxEvidence', () => {
  const fundedIntent = locked(sandboxRow().intent, 'funded');

  it('refuses evidence at the deadline, and takes it a millisecond before', () => {
    const at = fundedIntent.deadline.getTime();
    expect(refusal(() => decideSandboxEvidence(fundedIntent, { payload: { status: 'completed' } }, at)).code).toBe('intent.deadline_passed');
    expect(decideSandboxEvidence(fundedIntent, { payload: { status: 'completed' } }, at - 1).evaluation.passed).toBe(true);
  });

  it('refuses an operation the intent was not bootstrapped for', () => {
    const refused = refusal(() => decideSandboxEvidence(fundedIntent, { operation: 'send.mail' }, nowMs));
    expect(refused.code).toBe('sandbox.operation_mismatch');
    expect(refused.details).toEqual({ allowed_tools: ['search.web'] });
  });

  it('records unsigned evidence, a failed rule included, with the tool call it reports', () => {
    const decision = decideSandboxEvidence(fundedIntent, { operation: 'SEARCH.WEB', payload: { status: 'failed' }, metadata: { tool_call_id: 't1' } }, nowMs);
    expect(decision.evaluation.passed).toBe(false);
    expect(decision.record).toMatchObject({ intentId: fundedIntent.intentId, payeeSignature: null, submittedAt: '2026-11-25T10:00:00Z', predicatePassed: false, artifacts: [] });
    expect(decision.toolCall).toMatchObject({ operation: 'search.web', metadata: { tool_call_id: 't1' }, predicatePassed: false });
    const answer = sandboxEvidenceAnswer(
      { tenantId, intentId: fundedIntent.intentId, body: {} },
      fundedIntent,
      decision,
      { intent: { state: 'refunded' }, action: 'refund', reason: 'predicate_failed', releasedCents: 0, refundedCents: 500, transactionId: 'tx_1', answerFields: { agent_receipt: 'r' } },
    );
    expect(answer).toMatchObject({
      operation: 'search.web', requested_spend_cents: 500, sandbox_lifecycle_status: 'refunded', predicate_passed: false,
      payload_digest: decision.toolCall.payloadDigestHex, simulator_event: { type: 'refund.simulated', transaction_id: 'tx_1', reason: 'predicate_failed' },
      agent_receipt: 'r',
    });
  });
});

// ---- evidence and settlement (decided in src/engine/decide/evidence.ts and settlement.ts) ----

describe('decideEvidence', () => {
  const row = decideCreate({ tenantId }, createBody(), {}, nowMs);
  const funded = locked(row, 'funded');
  const evidence = (payload: unknown, options: { tenantId?: string } = {}) =>
    signedEvidenceBody({ tenantId: options.tenantId ?? tenantId, intentId: row.intentId, payee, payload, submittedAt: '2026-11-25T10:00:00Z' }) as never;

  it('records the evaluation of payee-signed evidence, passed or not', () => {
    expect(decideEvidence(funded, tenantId, evidence({ status: 'completed' }), nowMs)).toMatchObject({ to: 'evidence_recorded', evaluation: { passed: true } });
    expect(decideEvidence(funded, tenantId, evidence({ status: 'failed' }), nowMs).record.predicatePassed).toBe(false);
  });

  it('refuses evidence at the deadline, from another payee, signed for another tenant, or not an object', () => {
    expect(refusal(() => decideEvidence(funded, tenantId, evidence({ status: 'completed' }), deadlineMs)).code).toBe('intent.deadline_passed');
    const stranger = party('did:payee:stranger');
    const foreign = signedEvidenceBody({ tenantId, intentId: row.intentId, payee: stranger, payload: {} }) as never;
    expect(refusal(() => decideEvidence(funded, tenantId, foreign, nowMs)).code).toBe('evidence.payee_mismatch');
    expect(refusal(() => decideEvidence(funded, tenantId, evidence({ status: 'completed' }, { tenantId: 'globex' }), nowMs)).code).toBe('signing.signature_invalid');
    expect(refusal(() => decideEvidence(funded, tenantId, evidence(['completed']), nowMs)).code).toBe('evidence.payload_not_object');
  });
});

describe('decideSettlement', () => {
  const row = sandboxRow().intent;

  it('releases on a passed rule, refunds on a failed one or past the deadline, and refuses otherwise', () => {
    expect(decideSettlement(locked(row, 'evidence_recorded', { predicatePassed: true }), nowMs, 'confirm')).toMatchObject({ action: 'release', to: 'released' });
    expect(decideSettlement(locked(row, 'evidence_recorded', { predicatePassed: false }), nowMs, 'confirm')).toMatchObject({ action: 'refund', reason: 'predicate_failed' });
    const funded = locked(row, 'funded');
    expect(decideSettlement(funded, funded.deadline.getTime(), 'expire')).toMatchObject({ action: 'refund', reason: 'deadline_passed' });
    expect(refusal(() => decideSettlement(funded, funded.deadline.getTime() - 1, 'confirm')).code).toBe('intent.invalid_state');
  });

  it('settles a held intent only at its deadline (the sweeper), never before', () => {
    const held = locked(row, 'held', { predicatePassed: true });
    expect(decideSettlement(held, held.deadline.getTime(), 'expire')).toMatchObject({ action: 'refund', reason: 'deadline_passed', to: 'refunded' });
    expect(refusal(() => decideSettlement(held, held.deadline.getTime() - 1, 'expire')).message).toMatch(/held for review/);
  });
});

describe('decideReleaseGate', () => {
  const facts = { amountCents: 500, currency: 'usd', payeeStandingScore: 400, payeeReleasedCount: 3 };
  const all = { mode: 'critical_hold', standingScoreMin: 500, amountLimitCents: 499, firstSettlement: true } as const;

  it('finds each configured signal at its threshold, and holds only in critical_hold', () => {
    expect(decideReleaseGate(all, facts)).toMatchObject({ hold: true, signals: [{ code: 'payee_standing_below_threshold', severity: 'critical' }, { code: 'amount_over_limit' }] });
    expect(decideReleaseGate(all, { ...facts, payeeReleasedCount: 0 }).signals.map((signal) => signal.code)).toEqual(['payee_standing_below_threshold', 'first_settlement_with_payee', 'amount_over_limit']);
    // At the threshold is not under it, and an amount at the limit is not over it.
    expect(decideReleaseGate({ ...all, standingScoreMin: 400, amountLimitCents: 500 }, facts)).toEqual({ mode: 'critical_hold', signals: [], hold: false });
    expect(decideReleaseGate({ ...all, mode: 'review_only' }, facts)).toMatchObject({ hold: false, signals: [{}, {}] });
    expect(decideReleaseGate(releaseGateDefault, { ...facts, payeeReleasedCount: 0 })).toMatchObject({ mode: 'review_only', hold: false, signals: [{ code: 'first_settlement_with_payee' }] });
    expect(decideReleaseGate({ mode: 'critical_hold', standingScoreMin: null, amountLimitCents: null, firstSettlement: false }, { ...facts, payeeReleasedCount: 0, payeeStandingScore: 0 }).signals).toEqual([]);
  });
});

describe('decideResolution', () => {
  const held = locked(sandboxRow().intent, 'held', { predicatePassed: true });

  it('releases or refunds the whole amount through the table\'s resolve transition; past the deadline, refund only', () => {
    expect(decideResolution(held, { resolution: 'release' }, nowMs)).toMatchObject({ action: 'release', to: 'released', reason: 'review_resolved', releasedCents: held.amountCents, refundedCents: 0 });
    expect(decideResolution(held, { resolution: 'release' }, nowMs).transition).toBe(transitionOf('resolve', 'held', 'released'));
    expect(decideResolution(held, { resolution: 'refund' }, nowMs)).toMatchObject({ action: 'refund', to: 'refunded', releasedCents: 0, refundedCents: held.amountCents });
    const late = held.deadline.getTime();
    expect(refusal(() => decideResolution(held, { resolution: 'release' }, late))).toMatchObject({ code: 'review.deadline_passed', details: { allowed_resolutions: ['refund'] } });
    expect(refusal(() => decideResolution(held, { resolution: 'split', releasedCents: 1 }, late))).toMatchObject({ code: 'review.deadline_passed' });
    expect(decideResolution(held, { resolution: 'refund' }, late)).toMatchObject({ action: 'refund' });
  });

  it('splits at the part the operator names, strictly between nothing and everything; a part is named with split alone', () => {
    const part = held.amountCents - 1;
    expect(decideResolution(held, { resolution: 'split', releasedCents: part }, nowMs)).toMatchObject({ action: 'split', to: 'resolved_split', reason: 'review_resolved', releasedCents: part, refundedCents: 1 });
    expect(decideResolution(held, { resolution: 'split', releasedCents: part }, nowMs).transition).toBe(transitionOf('resolve', 'held', 'resolved_split'));
    for (const releasedCents of [undefined, 0, held.amountCents, held.amountCents + 1, -1, 1.5]) {
      expect(refusal(() => decideResolution(held, { resolution: 'split', releasedCents }, nowMs))).toMatchObject({ code: 'settlement.released_amount_invalid' });
    }
    expect(refusal(() => decideResolution(held, { resolution: 'release', releasedCents: 1 }, nowMs))).toMatchObject({ code: 'settlement.released_amount_invalid' });
  });
});
