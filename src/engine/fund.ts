// Funding an open intent through its rail's 402 handshake (spec: Errors 402;
// docs/engine.md#funding--post-harborintentsidfund, docs/rails.md).
//
// No credential: 402 with the rail's challenge. A credential: the rail judges it against the challenge it names,
// called between two transactions with no lock held: the first claims the attempt, the second records the outcome
// (docs/engine.md "Funding in two phases"). Success moves the money (ledger) and funds the intent, once: the
// second phase re-checks under the intent's row lock, and a unique index allows one successful attempt per intent. Pending answers 202; the same
// request re-sent is a poll. A decline or a refused credential answers 402 with a fresh challenge and moves
// nothing.
import { randomUUID } from 'node:crypto';
import {
  findAttemptByChallengeStatement,
  findAttemptStatement,
  findClaimedAttemptStatement,
  queueAttemptClaim,
  queueAttemptUpdate,
  queueChallengeRecord,
  queueClaimRelease,
  type FundingAttempt,
} from '../db/funding-attempt-repository.ts';
import { lockIntentStatement, queueFundedTransition, queueStateGuard, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { findSettlementConfigStatement, openRailSecrets, type StoredSettlementConfig } from '../db/settlement-config-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Principal } from '../credentials/principal.ts';
import { jwtAudiences, signGatewayJwt } from '../credentials/gateway-jwt.ts';
import { capabilityTokenLifetimeMaxSeconds, fundingClaimLeaseMs, railCallTimeoutMsDefault } from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { CommittedFailure, type CallOutside, type EngineAnswer, type ResponseHeaders } from './answer.ts';
import { crashPoint } from './crash-points.ts';
import {
  credentialReaders,
  paymentProblem,
  railAdapterFor,
  railNames,
  RailOutcomeUnknownError,
  RailUnavailableError,
  type CredentialOutcome,
  type LiveAccess,
  type RailRuntime,
  type FundingContext,
  type PaymentProblem,
  type PresentedCredential,
  type RailAdapter,
  type RailName,
} from '../rails/index.ts';
import { checkIntentState } from './pipeline.ts';
import { queueLedgerTransaction } from './ledger-posting.ts';
import { fromStates, postingEntries, transitionOf } from './lifecycle.ts';

export interface FundRequest {
  readonly principal: Principal;
  readonly intentId: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly resourceUrl: string;
  readonly keyring: GatewayKeyring;
  /** The secrets key and rail call deadline (live rails); default: no key, the default deadline. */
  readonly railRuntime?: RailRuntime;
}

const noRailRuntime: RailRuntime = { secretBox: undefined, callTimeoutMs: railCallTimeoutMsDefault };

/** What a live adapter needs of the tenant: its secrets, opened with the deployment's key. A secret stored while
 * the deployment has no key (or another one) is the operator's to fix: 503, never a call without it. */
function liveAccess(environment: 'sandbox' | 'live', tenantId: string, config: StoredSettlementConfig | undefined, runtime: RailRuntime): LiveAccess | undefined {
  if (environment !== 'live') return undefined;
  let secrets;
  try {
    secrets = openRailSecrets(runtime.secretBox, tenantId, config);
  } catch (error) {
    throw new ServiceError('settlement_config.secrets_key_missing', { cause: error });
  }
  return { secrets, callTimeoutMs: runtime.callTimeoutMs };
}

/** The fields every fund answer carries (docs/engine.md#funding--post-harborintentsidfund), 200, 202 and 402 alike. */
function fundBody(intent: Intent, funding: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    tenant: intent.tenantId,
    tenant_id: intent.tenantId,
    intent_id: intent.intentId,
    state: intent.state,
    settlement_rail: intent.settlementRail,
    currency: intent.currency,
    amount_cents: intent.amountCents,
    funded: intent.state !== 'open',
    funding: { settlement_rail: intent.settlementRail, ...funding },
    ...extra,
  };
}

/**
 * The first phase of a fund request, under the intent's row lock (and the idempotency lock, when keyed): answers
 * what needs no rail (a challenge, a refusal), or claims the attempt the credential names and hands on the rail
 * call, which runs after this transaction commits, with no lock held (docs/engine.md "Funding in two phases").
 */
export async function fundIntent(tx: Queryable, request: FundRequest): Promise<EngineAnswer | CallOutside> {
  const { principal } = request;
  const intentId = request.intentId.toLowerCase();
  // Which rail applies is known only from the intent, but each rail's credential can be read without it: the
  // attempt a credential names then travels in the first round trip with the intent (locked first, as before),
  // the tenant's rail configuration and any claim on the intent. A request presenting both rails' headers costs
  // a second look-up, never a different answer.
  const presented = presentedCredentials(request.headers);
  const [found, config, claimed, ...attempts] = await tx.batch([
    lockIntentStatement(principal.tenantId, intentId),
    findSettlementConfigStatement(principal.tenantId),
    findClaimedAttemptStatement(principal.tenantId, intentId),
    ...presented.map(({ rail, credential }) => findAttemptByChallengeStatement(principal.tenantId, intentId, rail, credential.challengeId)),
  ]);
  const intent = checkIntentState(found, fromStates('fund'));
  if (intent.deadline.getTime() <= Date.now()) throw new ServiceError('intent.deadline_passed');
  const adapter = railAdapterFor(
    intent.settlementRail,
    { environment: principal.environment, config, currency: intent.currency },
    liveAccess(principal.environment, principal.tenantId, config, request.railRuntime ?? noRailRuntime),
  );
  const context: FundingContext = {
    tenantId: principal.tenantId,
    environment: principal.environment,
    intentId: intent.intentId,
    amountCents: intent.amountCents,
    currency: intent.currency,
    resourceUrl: request.resourceUrl,
    config,
    nowMs: Date.now(),
  };
  // Read once above when well formed; an absent or malformed credential is read (cheaply) again to say which.
  const presentedIndex = presented.findIndex(({ rail }) => rail === adapter.rail);
  const credential = presentedIndex === -1 ? adapter.readCredential(request.headers) : presented[presentedIndex]!.credential;
  if (credential.kind === 'absent') return challenge(tx, adapter, context, intent, { status: 'created' });
  if (credential.kind === 'malformed') {
    return challenge(tx, adapter, context, intent, { status: 'credential_rejected' }, paymentProblem('malformed-credential', credential.reason));
  }
  const attempt = attempts[presentedIndex];
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
  let poll = false;
  let live: FundingAttempt | undefined;
  if (attempt?.status === 'pending') {
    if (!attempt.credentialDigest?.equals(credential.digest)) {
      const problem = paymentProblem('invalid-challenge', 'Another credential for this challenge is being processed; poll with that one.');
      return challenge(tx, adapter, context, intent, { status: 'credential_rejected' }, problem);
    }
    poll = true;
  } else if (attempt?.status === 'challenged') {
    // A declined challenge is spent; a credential naming it is judged as naming no challenge.
    live = attempt;
  }
  const claimedAttempt = poll || live ? attempt : undefined;
  if (claimedAttempt) {
    queueAttemptClaim(tx, principal.tenantId, claimedAttempt.attemptId, {
      credentialDigest: credential.digest,
      credential: credential.data,
      live: principal.environment === 'live',
    });
  }
  return {
    outside: async () => {
      crashPoint('fund.after_phase1');
      let outcome: CredentialOutcome;
      try {
        // Taking over a dead claim, the rail may already have acted on this credential: it is asked what became of
        // it (resolve, which completes it if it had not), never judged afresh (a used authorization would fail).
        outcome = poll
          ? await adapter.poll(context, { reference: attempt!.reference ?? '', stored: attempt!.challenge, credential: credential.data })
          : claimed && live && adapter.resolve
            ? await adapter.resolve(context, { challenge: live.challenge, credential: credential.data, digest: credential.digest, reference: live.reference })
            : await adapter.authorize(context, credential, live?.challenge);
      } catch (error) {
        if (!(error instanceof RailUnavailableError)) throw error;
        return railUnavailable(error, intent, claimedAttempt, credential.digest);
      }
      // Test-only: the rail has acted, our outcome is not committed (docs/engine.md "Funding in two phases").
      crashPoint('fund.after_rail_call');
      return async (tx2) => {
        // Phase 2 reads nothing: what it writes is guarded (the intent still open, the claim still this
        // credential's) and travels with COMMIT; a guard that misses fails the message, and the command starts
        // over from phase 1 (runIdempotentPhases).
        queueStateGuard(tx2, intent, 'open');
        return settleOutcome(tx2, request, { adapter, context, intent, attempt: claimedAttempt, outcome, credentialDigest: credential.digest, poll });
      };
    },
  };
}

/**
 * The rail could not be reached (or its outcome is unknown): 503 `rail.unavailable` with Retry-After. When the
 * rail cannot have acted, the claim is released in the second phase (committed before the 503), so the same
 * request retried continues at once; when it may have acted, the claim stays: after its lease, the retry with the
 * same credential or the sweeper asks the rail again (resolve), which never charges twice.
 */
function railUnavailable(
  error: RailUnavailableError,
  intent: Intent,
  claimedAttempt: FundingAttempt | undefined,
  credentialDigest: Buffer,
): (tx: Queryable) => Promise<CommittedFailure> {
  const outcomeUnknown = error instanceof RailOutcomeUnknownError;
  const failure = new ServiceError('rail.unavailable', {
    message: `The ${intent.settlementRail} rail is unavailable: ${error.reason}.`,
    details: { settlement_rail: intent.settlementRail, reason: error.reason, retry_after_seconds: error.retryAfterSeconds, outcome_unknown: outcomeUnknown },
    cause: error,
  });
  return async (tx) => {
    if (claimedAttempt && !outcomeUnknown) queueClaimRelease(tx, intent.tenantId, claimedAttempt.attemptId, credentialDigest);
    return new CommittedFailure(failure);
  };
}

/** A well-formed credential a fund request presents, and the rail whose header carried it. */
interface RailCredential {
  readonly rail: RailName;
  readonly credential: Extract<PresentedCredential, { kind: 'credential' }>;
}

/** The well-formed credentials the request presents (malformed ones are judged once the rail is known). */
function presentedCredentials(headers: FundRequest['headers']): RailCredential[] {
  const presented: RailCredential[] = [];
  for (const rail of railNames) {
    const credential = credentialReaders[rail](headers);
    if (credential.kind === 'credential') presented.push({ rail, credential });
  }
  return presented;
}

async function settleOutcome(
  tx: Queryable,
  request: FundRequest,
  step: {
    adapter: RailAdapter;
    context: FundingContext;
    intent: LockedIntent;
    attempt: FundingAttempt | undefined;
    outcome: CredentialOutcome;
    credentialDigest: Buffer;
    poll: boolean;
  },
): Promise<EngineAnswer> {
  const { adapter, context, intent, attempt, outcome } = step;
  if (outcome.status === 'rejected') {
    if (attempt) queueClaimRelease(tx, context.tenantId, attempt.attemptId, step.credentialDigest);
    return challenge(tx, adapter, context, intent, outcome.funding, outcome.problem);
  }
  // Every judged credential names a recorded challenge: the rail rejects one that names none.
  if (!attempt) throw new Error(`rail ${adapter.rail} judged a credential without a recorded challenge as ${outcome.status}`);
  const reference = outcome.status === 'declined' ? null : outcome.reference;
  queueAttemptUpdate(tx, context.tenantId, attempt.attemptId, {
    status: outcome.status,
    credentialDigest: step.credentialDigest,
    reference,
    poll: step.poll,
    details: outcome.status === 'declined' ? undefined : outcome.details,
  });
  if (outcome.status === 'declined') return challenge(tx, adapter, context, intent, outcome.funding, undefined, outcome.headers);
  if (outcome.status === 'pending') {
    return { status: 202, body: fundBody(intent, outcome.funding), headers: { 'cache-control': 'no-store', ...outcome.headers } };
  }
  const capabilityToken = await issueCapabilityToken(request.keyring, intent);
  const funded = recordFunding(tx, intent, adapter.rail, outcome.reference);
  // The answer carries a capability token: never cached. `private` is what MPP requires beside a Payment-Receipt.
  return {
    status: 200,
    body: fundBody(funded, outcome.funding, { capability_token: capabilityToken }),
    headers: { ...outcome.headers, 'cache-control': 'private, no-store' },
  };
}

/** The money arrived: the intent marked funded and the `fund` ledger transaction (escrow debited, the rail's funding
 * account credited, landing with the commit), in the caller's transaction. The rail handshake and the sandbox
 * simulator both end here. */
export function recordFunding(tx: Queryable, intent: LockedIntent, rail: string, reference: string): LockedIntent {
  const funded = queueFundedTransition(tx, intent, reference);
  const posting = transitionOf('fund', 'open', 'funded').posting!;
  queueLedgerTransaction(tx, intent.tenantId, {
    transactionId: randomUUID(),
    intentId: intent.intentId,
    eventKind: posting.eventKind,
    currency: intent.currency,
    entries: postingEntries(posting, intent, rail),
  });
  return funded;
}

/** A 402 carrying a challenge; with a problem, as `application/problem+json` (MPP's form for refused credentials). */
async function challenge(
  tx: Queryable,
  adapter: RailAdapter,
  context: FundingContext,
  intent: Intent,
  funding: Record<string, unknown>,
  problem?: PaymentProblem,
  extraHeaders: Record<string, string> = {},
): Promise<EngineAnswer> {
  const issued = adapter.issueChallenge(context);
  queueChallengeRecord(tx, context.tenantId, { intentId: intent.intentId, rail: adapter.rail, challengeId: issued.challengeId, stored: issued.stored });
  const headers: ResponseHeaders = { ...issued.headers, ...extraHeaders, 'cache-control': 'no-store' };
  const body = fundBody(intent, { ...issued.funding, ...funding });
  if (!problem) return { status: 402, body, headers };
  return {
    status: 402,
    body: { ...problem, status: 402, ...body },
    headers: { ...headers, 'content-type': 'application/problem+json; charset=utf-8' },
  };
}

/** The capability a funded intent hands its agent: tenant, intent, tools and amount, until the deadline. */
export async function issueCapabilityToken(keyring: GatewayKeyring, intent: Intent): Promise<string> {
  const secondsToDeadline = Math.floor((intent.deadline.getTime() - Date.now()) / 1000);
  return signGatewayJwt(
    keyring,
    { intent_id: intent.intentId, allowed_tools: intent.allowedTools, amount_cents: intent.amountCents, currency: intent.currency },
    {
      audience: jwtAudiences.capability,
      subject: intent.intentId,
      tenantId: intent.tenantId,
      expiresInSeconds: Math.max(1, Math.min(secondsToDeadline, capabilityTokenLifetimeMaxSeconds)),
    },
  );
}

/** What the sweeper made of one stale claim. */
export type ClaimResolution = 'funded' | 'pending' | 'declined' | 'released' | 'skipped';

/**
 * A claim whose lease ran out (its process died between the phases, or its rail's outcome was unknown), resolved
 * by the sweeper as the retry would: the rail is asked what became of the credential (the adapter's `resolve`,
 * which never charges twice), with no lock held, and the outcome recorded in a second, guarded transaction: the
 * funding and its ledger posting, a pending or declined attempt, or the claim released. A rail that cannot tell
 * now leaves the claim for the next pass (or the client's retry).
 */
export async function resolveStaleClaim(
  database: Database,
  runtime: RailRuntime,
  claim: { tenantId: string; intentId: string; attemptId: string },
): Promise<ClaimResolution> {
  const { tenantId, intentId, attemptId } = claim;
  const first = await database.tenant(tenantId, async (tx) => {
    const [intent, config, attempt] = await tx.batch([
      lockIntentStatement(tenantId, intentId),
      findSettlementConfigStatement(tenantId),
      findAttemptStatement(tenantId, attemptId),
    ]);
    if (!intent || !attempt?.claimedAt || !attempt.credentialDigest) return undefined;
    if (attempt.claimedAt.getTime() + fundingClaimLeaseMs > intent.transactionTime.getTime()) return undefined;
    return { intent, config, attempt };
  });
  if (!first) return 'skipped';
  const { intent, config, attempt } = first;
  const digest = attempt.credentialDigest!;
  if (intent.state !== 'open') {
    // The intent moved on (it cannot have been funded by another attempt while this claim stood): the claim ends.
    await database.tenant(tenantId, async (tx) => queueClaimRelease(tx, tenantId, attemptId, digest));
    return 'released';
  }
  const environment = attempt.live ? 'live' : 'sandbox';
  let adapter: RailAdapter;
  try {
    adapter = railAdapterFor(intent.settlementRail, { environment, config, currency: intent.currency }, liveAccess(environment, tenantId, config, runtime));
  } catch (error) {
    if (error instanceof ServiceError) return 'skipped';
    throw error;
  }
  if (!adapter.resolve) return 'skipped';
  const context: FundingContext = {
    tenantId,
    environment,
    intentId,
    amountCents: intent.amountCents,
    currency: intent.currency,
    resourceUrl: '',
    config,
    nowMs: Date.now(),
  };
  let outcome: CredentialOutcome;
  try {
    outcome = await adapter.resolve(context, { challenge: attempt.challenge, credential: attempt.credential, digest, reference: attempt.reference });
  } catch (error) {
    if (error instanceof RailUnavailableError) return 'skipped';
    throw error;
  }
  try {
    return await database.tenant(tenantId, async (tx): Promise<ClaimResolution> => {
      const relocked = await tx.run(lockIntentStatement(tenantId, intentId));
      if (!relocked || relocked.state !== 'open') return 'skipped';
      // Guarded like the fund route's second phase: the claim must still be this credential's.
      if (outcome.status === 'rejected') {
        queueClaimRelease(tx, tenantId, attemptId, digest);
        return 'released';
      }
      const reference = outcome.status === 'declined' ? null : outcome.reference;
      queueAttemptUpdate(tx, tenantId, attemptId, {
        status: outcome.status,
        credentialDigest: digest,
        reference,
        poll: false,
        details: outcome.status === 'declined' ? undefined : outcome.details,
      });
      if (outcome.status !== 'succeeded') return outcome.status;
      queueStateGuard(tx, relocked, 'open');
      recordFunding(tx, relocked, adapter.rail, outcome.reference);
      return 'funded';
    });
  } catch (error) {
    // The claim was taken over or its outcome recorded meanwhile (a retry won): nothing to do.
    const code = (error as { code?: unknown }).code;
    if (code === '21000' || code === '23505') return 'skipped';
    throw error;
  }
}
