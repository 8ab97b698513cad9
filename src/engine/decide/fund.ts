// The fund decisions, pure (docs/engine.md "Funding in two phases"): what the first phase does with the request's
// credential (a challenge, a refusal, or a rail call with the claim to queue for it), what the second phase writes
// and answers for the rail's outcome, and the answers' bodies. src/engine/fund.ts loads, calls the rail, issues
// challenges and writes; the maintenance sweeper records a stale claim's outcome through the same decision.
import type { FundingAttempt } from '../../db/funding-attempt-repository.ts';
import type { Intent, LockedIntent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { fundingClaimLeaseMs } from '../../limits.ts';
import {
  paymentProblem,
  RailOutcomeUnknownError,
  type ClaimedAttempt,
  type CredentialOutcome,
  type IssuedChallenge,
  type PaymentProblem,
  type PresentedCredential,
  type RailUnavailableError,
} from '../../rails/index.ts';
import type { EngineAnswer, ResponseHeaders } from '../answer.ts';
import { fundingSettledIn } from '../lifecycle.ts';

/** A well-formed credential, as a rail read it from the request. */
export type RailCredential = Extract<PresentedCredential, { kind: 'credential' }>;

/** 409 `intent.deadline_passed` at or after the deadline: an open intent is funded before it or not at all. Checked
 * before the rail's adapter is built, whose refusals (422 `funding.*`, 503) come after this one. */
export function checkFundingDeadline(intent: Pick<Intent, 'deadline'>, nowMs: number): void {
  if (intent.deadline.getTime() <= nowMs) throw new ServiceError('intent.deadline_passed');
}

/** What the first phase knows, all read in its first round trip under the intent's row lock. */
export interface FundPhase1Facts {
  /** The intent, locked, open and before its deadline. */
  readonly intent: LockedIntent;
  readonly environment: 'sandbox' | 'live';
  /** The credential the request presents for the intent's rail. */
  readonly credential: PresentedCredential;
  /** The attempt (a recorded challenge of this intent) the credential names, if any. */
  readonly attempt: FundingAttempt | undefined;
  /** The attempt of the intent whose rail call is under way, or whose process died during it, if any. */
  readonly claimed: FundingAttempt | undefined;
  /** Whether the rail can be asked what became of a credential it may have acted on (the adapter's `resolve`). */
  readonly railResolves: boolean;
  /** The attempt that holds the payment authorization the credential spends (its `authorizationKey`), if any. */
  readonly authorizationHolder?: string | undefined;
  /** The request's idempotency key, if it carries one (recorded with a claim). */
  readonly idempotencyKey: string | undefined;
  /** The attempt an earlier request under the same idempotency key claimed, still claimed or pending, if any. */
  readonly keyed: FundingAttempt | undefined;
}

/** The claim of an attempt for one credential's rail call, queued to commit with the first phase. */
export interface AttemptClaim {
  readonly attemptId: string;
  readonly credentialDigest: Buffer;
  readonly credential: unknown;
  readonly live: boolean;
  /** The payment authorization the credential spends, held by this attempt from its claim on. */
  readonly authorizationKey: string | null;
  readonly idempotencyKey: string | undefined;
}

/** A challenge to answer with (402), and the `funding` fields it adds; with a problem for a refused credential. */
export interface ChallengeDecision {
  readonly kind: 'challenge';
  readonly funding: { readonly status: 'created' | 'credential_rejected' };
  readonly problem?: PaymentProblem;
}

/** A rail call the first phase hands on: `attempt` is the claimed attempt its outcome is recorded on (none when the
 * credential names no live challenge, which the rail then refuses), `claim` what phase 1 queues for it. */
export type RailCallDecision =
  | { readonly kind: 'poll'; readonly credential: RailCredential; readonly attempt: FundingAttempt; readonly claim: AttemptClaim;
      readonly pending: { readonly reference: string; readonly stored: Record<string, unknown>; readonly credential: unknown } }
  | { readonly kind: 'resolve'; readonly credential: RailCredential; readonly attempt: FundingAttempt; readonly claim: AttemptClaim; readonly claimed: ClaimedAttempt }
  | { readonly kind: 'authorize'; readonly credential: RailCredential; readonly attempt: FundingAttempt | undefined; readonly claim: AttemptClaim | undefined;
      readonly challenge: Record<string, unknown> | undefined };

/** The credential's payment authorization is held by another attempt (spent, pending, or under way): refused with
 * the rail's own refusal and a fresh challenge, nothing claimed and the rail not called. */
export interface ReusedAuthorizationDecision {
  readonly kind: 'authorization_reused';
}

export type FundPhase1Decision = ChallengeDecision | ReusedAuthorizationDecision | RailCallDecision;

/**
 * The first phase of a fund request: a challenge when the request carries no usable credential (or another
 * credential than the pending one), 409 `idempotency.request_in_progress` while another call holds the intent's
 * claim, else the rail call: a poll of a pending attempt, the resolution of a claim taken over after its lease, or
 * the credential judged against the challenge it names. A retry of a request whose key claimed an attempt acts on
 * that attempt, with the credential first presented (retriedRequest).
 */
export function decideFundPhase1(facts: FundPhase1Facts): FundPhase1Decision {
  const { intent, claimed } = facts;
  const retried = retriedRequest(facts);
  const { credential, attempt } = retried ?? facts;
  if (credential.kind === 'absent') return { kind: 'challenge', funding: { status: 'created' } };
  if (credential.kind === 'malformed') {
    return { kind: 'challenge', funding: { status: 'credential_rejected' }, problem: paymentProblem('malformed-credential', credential.reason) };
  }
  if (claimed) {
    // A rail call for this intent is under way, or its process died between the phases. Only the same credential
    // may take a claim over, and only once its lease has run out: another credential reaching its rail now could
    // charge the principal twice for one funding.
    const sameCall = attempt?.attemptId === claimed.attemptId && claimed.credentialDigest?.equals(credential.digest) === true;
    const leaseOver = claimed.claimedAt!.getTime() + fundingClaimLeaseMs <= intent.transactionTime.getTime();
    if (!sameCall || !leaseOver) {
      throw new ServiceError('idempotency.request_in_progress', {
        message: 'A funding credential for this intent is being processed by its rail; retry shortly with the same request.',
      });
    }
  }
  const claimOf = (claimedAttempt: FundingAttempt): AttemptClaim => ({
    attemptId: claimedAttempt.attemptId,
    credentialDigest: credential.digest,
    credential: credential.data,
    live: facts.environment === 'live',
    authorizationKey: credential.authorizationKey ?? null,
    idempotencyKey: facts.idempotencyKey,
  });
  if (attempt?.status === 'pending') {
    if (!attempt.credentialDigest?.equals(credential.digest)) {
      const problem = paymentProblem('invalid-challenge', 'Another credential for this challenge is being processed; poll with that one.');
      return { kind: 'challenge', funding: { status: 'credential_rejected' }, problem };
    }
    const pending = { reference: attempt.reference ?? '', stored: attempt.challenge, credential: credential.data };
    return { kind: 'poll', credential, attempt, claim: claimOf(attempt), pending };
  }
  // A declined challenge is spent; a credential naming it is judged as naming no challenge.
  if (attempt?.status !== 'challenged') return { kind: 'authorize', credential, attempt: undefined, claim: undefined, challenge: undefined };
  // A payment authorization is good once: one another attempt holds (for this intent or another) cannot pay here. A
  // retry that continues its key's attempt spends that attempt's own authorization, whatever the request presents.
  if (!retried && facts.authorizationHolder !== undefined && facts.authorizationHolder !== attempt.attemptId) return { kind: 'authorization_reused' };
  if (claimed && facts.railResolves) {
    // Taking over a dead claim, the rail may already have acted on this credential: it is asked what became of it
    // (resolve, which completes it if it had not), never judged afresh (a used authorization would fail).
    const asked: ClaimedAttempt = {
      challenge: attempt.challenge, credential: credential.data, digest: credential.digest, reference: attempt.reference, claimedAt: claimed.claimedAt ?? undefined,
    };
    return { kind: 'resolve', credential, attempt, claim: claimOf(attempt), claimed: asked };
  }
  return { kind: 'authorize', credential, attempt, claim: claimOf(attempt), challenge: attempt.challenge };
}

/**
 * The same request retried: its idempotency key claimed an attempt that is still claimed (its process may have
 * died between the phases) or pending. The retry continues that attempt with the credential first presented,
 * whatever it presents now: a client that lost its answer may have asked for a fresh challenge and answered it with
 * a new credential, and that one reaching its rail could charge the principal a second time. So the claim is taken
 * over once its lease is over (the rail asked what became of the first credential), a pending attempt is polled,
 * and the new credential is never used. Undefined when there is no such attempt, or it kept no credential.
 */
function retriedRequest(facts: FundPhase1Facts): { credential: RailCredential; attempt: FundingAttempt } | undefined {
  const { keyed } = facts;
  if (!keyed?.credentialDigest || keyed.credential === null) return undefined;
  const credential: RailCredential = { kind: 'credential', challengeId: keyed.challengeId, digest: keyed.credentialDigest, data: keyed.credential };
  return { credential, attempt: keyed };
}

/** The rail call whose outcome the second phase records: the claimed attempt (if any), the credential it judged,
 * and whether it was a poll (counted on the attempt). */
export interface FundingCall {
  readonly attempt: FundingAttempt | undefined;
  readonly credentialDigest: Buffer;
  readonly poll: boolean;
}

export function fundingCallOf(decision: RailCallDecision): FundingCall {
  return { attempt: decision.attempt, credentialDigest: decision.credential.digest, poll: decision.kind === 'poll' };
}

/** A claim to release (the rail did not act on its credential), guarded by that credential's digest. */
export interface ClaimRelease {
  readonly attemptId: string;
  readonly credentialDigest: Buffer;
}

/** The recorded outcome of a claimed attempt's rail call; the claim ends with it. */
export interface AttemptUpdate {
  readonly attemptId: string;
  readonly status: 'succeeded' | 'pending' | 'declined';
  readonly credentialDigest: Buffer;
  readonly reference: string | null;
  readonly poll: boolean;
  readonly details: Record<string, unknown> | undefined;
}

/** What the second phase writes and answers, by the rail's outcome. */
export type FundOutcomeDecision =
  /** The rail refused the credential outright: the claim (if any) released, a fresh challenge with the problem. */
  | { readonly kind: 'refused'; readonly release: ClaimRelease | undefined; readonly funding: Record<string, unknown>; readonly problem: PaymentProblem }
  /** The rail declined the payment: the attempt recorded, a fresh challenge. */
  | { readonly kind: 'declined'; readonly update: AttemptUpdate; readonly funding: Record<string, unknown>; readonly headers: Record<string, string> }
  /** Not settled yet: the attempt recorded, 202 (the same request re-sent polls). */
  | { readonly kind: 'pending'; readonly update: AttemptUpdate; readonly answer: EngineAnswer }
  /** Settled: the attempt recorded, the intent funded with the `fund` posting, 200 with the capability token. */
  | { readonly kind: 'funded'; readonly update: AttemptUpdate; readonly reference: string; readonly funding: Record<string, unknown>; readonly headers: Record<string, string> };

/** What the rail's `outcome` of `call` means for `intent` (open, as the second phase's guard requires). */
export function decideFundOutcome(intent: Intent, call: FundingCall, outcome: CredentialOutcome): FundOutcomeDecision {
  const { attempt, credentialDigest } = call;
  if (outcome.status === 'rejected') {
    const release = attempt ? { attemptId: attempt.attemptId, credentialDigest } : undefined;
    return { kind: 'refused', release, funding: outcome.funding, problem: outcome.problem };
  }
  // Every judged credential names a recorded challenge: the rail rejects one that names none.
  if (!attempt) throw new Error(`rail ${intent.settlementRail} judged a credential without a recorded challenge as ${outcome.status}`);
  const declined = outcome.status === 'declined';
  const update: AttemptUpdate = {
    attemptId: attempt.attemptId,
    status: outcome.status,
    credentialDigest,
    reference: declined ? null : outcome.reference,
    poll: call.poll,
    details: declined ? undefined : outcome.details,
  };
  if (outcome.status === 'declined') return { kind: 'declined', update, funding: outcome.funding, headers: outcome.headers ?? {} };
  if (outcome.status === 'pending') {
    return { kind: 'pending', update, answer: { status: 202, body: fundAnswerBody(intent, outcome.funding), headers: { 'cache-control': 'no-store', ...outcome.headers } } };
  }
  return { kind: 'funded', update, reference: outcome.reference, funding: outcome.funding, headers: outcome.headers ?? {} };
}

/** The rail could not be reached, or its outcome is unknown: 503 `rail.unavailable` (Retry-After). When the rail
 * cannot have acted, the claim is released with it (committed before the 503), so the same request retried
 * continues at once; when it may have acted, the claim stays: after its lease, the retry with the same credential
 * or the sweeper asks the rail again (resolve), which never charges twice. */
export function decideRailUnavailable(intent: Intent, call: FundingCall, error: RailUnavailableError): { release: ClaimRelease | undefined; failure: ServiceError } {
  const outcomeUnknown = error instanceof RailOutcomeUnknownError;
  const failure = new ServiceError('rail.unavailable', {
    message: `The ${intent.settlementRail} rail is unavailable: ${error.reason}.`,
    details: { settlement_rail: intent.settlementRail, reason: error.reason, retry_after_seconds: error.retryAfterSeconds, outcome_unknown: outcomeUnknown },
    cause: error,
  });
  const release = call.attempt && !outcomeUnknown ? { attemptId: call.attempt.attemptId, credentialDigest: call.credentialDigest } : undefined;
  return { release, failure };
}

/** The fields every fund answer carries (docs/engine.md#funding--post-harborintentsidfund), 200, 202 and 402 alike. */
export function fundAnswerBody(intent: Intent, funding: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    tenant: intent.tenantId,
    tenant_id: intent.tenantId,
    intent_id: intent.intentId,
    state: intent.state,
    settlement_rail: intent.settlementRail,
    currency: intent.currency,
    amount_cents: intent.amountCents,
    funded: fundingSettledIn(intent.state),
    funding: { settlement_rail: intent.settlementRail, ...funding },
    ...extra,
  };
}

/** A 402 carrying the challenge `issued`; with a problem, as `application/problem+json` (MPP's form for refused
 * credentials). Never cached. */
export function challengeAnswer(
  intent: Intent,
  issued: Pick<IssuedChallenge, 'headers' | 'funding'>,
  funding: Record<string, unknown>,
  problem?: PaymentProblem,
  extraHeaders: Record<string, string> = {},
): EngineAnswer {
  const headers: ResponseHeaders = { ...issued.headers, ...extraHeaders, 'cache-control': 'no-store' };
  const body = fundAnswerBody(intent, { ...issued.funding, ...funding });
  if (!problem) return { status: 402, body, headers };
  return {
    status: 402,
    body: { ...problem, status: 402, ...body },
    headers: { ...headers, 'content-type': 'application/problem+json; charset=utf-8' },
  };
}

/** 200 for the intent as funded, with its capability token. The answer carries a token: never cached, and
 * `private` is what MPP requires beside a Payment-Receipt. */
export function fundedAnswer(funded: Intent, decision: Extract<FundOutcomeDecision, { kind: 'funded' }>, capabilityToken: string): EngineAnswer {
  return {
    status: 200,
    body: fundAnswerBody(funded, decision.funding, { capability_token: capabilityToken }),
    headers: { ...decision.headers, 'cache-control': 'private, no-store' },
  };
}
