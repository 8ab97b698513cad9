// Funding an open intent through its rail's 402 handshake (spec: Errors 402;
// docs/engine.md#funding--post-harborintentsidfund, docs/rails.md).
//
// No credential: 402 with the rail's challenge. A credential: the rail judges it against the challenge it names,
// called between two transactions with no lock held: the first claims the attempt, the second records the outcome
// (docs/engine.md "Funding in two phases"). Success moves the money (ledger) and funds the intent, once: the
// second phase's writes are guarded (the intent still open, the claim still this credential's), and a unique index
// allows one successful attempt per intent. Pending answers 202; the same request re-sent is a poll. A decline or a
// refused credential answers 402 with a fresh challenge and moves nothing. Each phase's choice is made by a pure
// decision (src/engine/decide/fund.ts); this file loads, calls the rail, issues challenges and writes.
import { recordIntentEvent, recordIntentTransition } from './intent-events.ts';
import { randomUUID } from 'node:crypto';
import {
  findAttemptByChallengeStatement,
  findAttemptStatement,
  findAuthorizationHolderStatements,
  findClaimedAttemptStatement,
  findKeyedAttemptStatement,
  queueAttemptClaim,
  queueAttemptUpdate,
  queueChallengeRecord,
  queueClaimRelease,
  type FundingAttempt,
} from '../db/funding-attempt-repository.ts';
import { queueAnswerOfBoundKey } from '../db/idempotency-record-repository.ts';
import { lockIntentStatement, queueFundedTransition, queueStateGuard, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { findSettlementConfigStatement, openRailSecrets, type StoredSettlementConfig } from '../db/settlement-config-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Principal } from '../credentials/principal.ts';
import { jwtAudiences, signGatewayJwt } from '../credentials/gateway-jwt.ts';
import { capabilityTokenLifetimeMaxSeconds, fundingClaimLeaseMs, railCallTimeoutMsDefault } from '../limits.ts';
import type { Database, Queryable, Statement } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { CommittedFailure, type CallOutside, type EngineAnswer } from './answer.ts';
import { crashPoint } from './crash-points.ts';
import {
  railAdapterFor,
  registeredRails,
  RailUnavailableError,
  type CredentialOutcome,
  type LiveAccess,
  type RailRuntime,
  type FundingContext,
  type PaymentProblem,
  type RailAdapter,
  type RailName,
} from '../rails/index.ts';
import {
  challengeAnswer,
  checkFundingDeadline,
  decideFundOutcome,
  decideFundPhase1,
  decideRailUnavailable,
  fundedAnswer,
  fundingCallOf,
  type FundOutcomeDecision,
  type RailCallDecision,
  type RailCredential,
} from './decide.ts';
import { checkIntentState, idempotencyLockId } from './pipeline.ts';
import { queueLedgerTransaction } from './ledger-posting.ts';
import { fromStates, lifecycle, postingEntries, transitionOf, type LifecycleOperation, type Transition } from './lifecycle.ts';

/** The idempotency scope of fund requests, under which the sweeper answers a claim it resolved. */
const fundOperation: LifecycleOperation = lifecycle.fund.idempotencyOperation!;

export interface FundRequest {
  readonly principal: Principal;
  readonly intentId: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly resourceUrl: string;
  readonly keyring: GatewayKeyring;
  /** The secrets key and rail call deadline (live rails); default: no key, the default deadline. */
  readonly railRuntime?: RailRuntime;
  /** The request's idempotency key, if any: a retry under it continues the attempt it claimed. */
  readonly idempotencyKey?: string | undefined;
}

const noRailRuntime: RailRuntime = { secretBox: undefined, callTimeoutMs: railCallTimeoutMsDefault };

/** Stands in the first round trip for the keyed look-up of a request without a key. */
const noAttemptStatement: Statement<FundingAttempt | undefined> = { text: 'SELECT NULL', read: () => undefined };

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

/**
 * The first phase of a fund request, under the intent's row lock (and the idempotency lock, when keyed): answers
 * what needs no rail (a challenge, a refusal), or claims the attempt the credential names and hands on the rail
 * call, which runs after this transaction commits, with no lock held (docs/engine.md "Funding in two phases").
 * What to do is decided by decideFundPhase1 (src/engine/decide/fund.ts); this loads, issues and writes.
 */
export async function fundIntent(tx: Queryable, request: FundRequest, nowMs = Date.now()): Promise<EngineAnswer | CallOutside> {
  const { principal } = request;
  const intentId = request.intentId.toLowerCase();
  // Which rail applies is known only from the intent, but each rail's credential can be read without it: the
  // attempt a credential names then travels in the first round trip with the intent (locked first, as before),
  // the tenant's rail configuration, any claim on the intent and the attempt this request's key claimed. A
  // request presenting both rails' headers costs a second look-up, never a different answer.
  const presented = presentedCredentials(request.headers);
  // The holder of each presented payment authorization, looked up under that authorization's lock, last (after the
  // intent's): two statements per authorization, the lock and the look-up.
  const authorized = presented.filter(({ credential }) => credential.authorizationKey !== undefined);
  const { idempotencyKey } = request;
  const [found, config, claimed, keyed, ...rest] = await tx.batch([
    lockIntentStatement(principal.tenantId, intentId),
    findSettlementConfigStatement(principal.tenantId),
    findClaimedAttemptStatement(principal.tenantId, intentId),
    idempotencyKey === undefined ? noAttemptStatement : findKeyedAttemptStatement(principal.tenantId, intentId, idempotencyKey),
    ...presented.map(({ rail, credential }) => findAttemptByChallengeStatement(principal.tenantId, intentId, rail, credential.challengeId)),
    ...authorized.flatMap(({ rail, credential }) => findAuthorizationHolderStatements(principal.tenantId, rail, credential.authorizationKey!)),
  ]);
  const attempts = rest.slice(0, presented.length) as Array<FundingAttempt | undefined>;
  const holders = new Map(authorized.map(({ rail }, index) => [rail, rest[presented.length + 2 * index + 1] as string | undefined]));
  const intent = checkIntentState(found, fromStates('fund'));
  checkFundingDeadline(intent, nowMs);
  const adapter = await railAdapterFor(
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
    nowMs,
    intentDeadlineMs: intent.deadline.getTime(),
  };
  // Read once above when well formed; an absent or malformed credential is read (cheaply) again to say which.
  const presentedIndex = presented.findIndex(({ rail }) => rail === adapter.rail);
  const decision = decideFundPhase1({
    intent,
    environment: principal.environment,
    credential: presentedIndex === -1 ? adapter.readCredential(request.headers) : presented[presentedIndex]!.credential,
    attempt: attempts[presentedIndex],
    claimed,
    railResolves: adapter.resolve !== undefined,
    authorizationHolder: holders.get(adapter.rail),
    idempotencyKey,
    keyed,
  });
  if (decision.kind === 'challenge') return challenge(tx, adapter, context, intent, decision.funding, decision.problem);
  if (decision.kind === 'authorization_reused') {
    if (!adapter.refuseReusedAuthorization) throw new Error(`rail ${adapter.rail} reads authorization keys but has no refusal for a reused one`);
    const refused = adapter.refuseReusedAuthorization(context);
    return challenge(tx, adapter, context, intent, refused.funding, refused.problem);
  }
  if (decision.claim) queueAttemptClaim(tx, principal.tenantId, decision.claim.attemptId, decision.claim);
  return { outside: () => callRail(request, adapter, context, intent, decision) };
}

/** The rail call, with no transaction open and no lock held, then the second phase that records its outcome. */
async function callRail(
  request: FundRequest,
  adapter: RailAdapter,
  context: FundingContext,
  intent: LockedIntent,
  decision: RailCallDecision,
): Promise<(tx: Queryable) => Promise<EngineAnswer | CommittedFailure>> {
  crashPoint('fund.after_phase1');
  const call = fundingCallOf(decision);
  let outcome: CredentialOutcome;
  try {
    outcome = await askRail(adapter, context, decision);
  } catch (error) {
    if (!(error instanceof RailUnavailableError)) throw error;
    const { release, failure } = decideRailUnavailable(intent, call, error);
    return async (tx2) => {
      if (release) queueClaimRelease(tx2, context.tenantId, release.attemptId, release.credentialDigest);
      return new CommittedFailure(failure);
    };
  }
  // Test-only: the rail has acted, our outcome is not committed (docs/engine.md "Funding in two phases").
  crashPoint('fund.after_rail_call');
  return async (tx2) => {
    // Phase 2 reads nothing: what it writes is guarded (the intent still open, the claim still this
    // credential's) and travels with COMMIT; a guard that misses fails the message, and the command starts
    // over from phase 1 (runCommand).
    queueStateGuard(tx2, intent, 'open');
    return recordOutcome(tx2, request.keyring, adapter, context, intent, decideFundOutcome(intent, call, outcome), call.poll);
  };
}

/** The rail call the first phase decided on: a poll, a resolution, or a judgement of the credential. */
function askRail(adapter: RailAdapter, context: FundingContext, decision: RailCallDecision): Promise<CredentialOutcome> {
  switch (decision.kind) {
    case 'poll':
      return adapter.poll(context, decision.pending);
    case 'resolve':
      return adapter.resolve!(context, decision.claimed);
    case 'authorize':
      return adapter.authorize(context, decision.credential, decision.challenge);
  }
}

/** The second phase's writes and answer for the rail's outcome, as decided. */
async function recordOutcome(
  tx: Queryable,
  keyring: GatewayKeyring,
  adapter: RailAdapter,
  context: FundingContext,
  intent: LockedIntent,
  decision: FundOutcomeDecision,
  poll: boolean,
): Promise<EngineAnswer> {
  if (decision.kind === 'refused') {
    if (decision.release) queueClaimRelease(tx, context.tenantId, decision.release.attemptId, decision.release.credentialDigest);
    return challenge(tx, adapter, context, intent, decision.funding, decision.problem);
  }
  queueAttemptUpdate(tx, context.tenantId, decision.update.attemptId, decision.update);
  recordFundingOutcome(tx, intent, decision.kind, poll);
  switch (decision.kind) {
    case 'declined':
      return challenge(tx, adapter, context, intent, decision.funding, undefined, decision.headers);
    case 'pending':
      return decision.answer;
    case 'funded': {
      const capabilityToken = await issueCapabilityToken(keyring, intent);
      return fundedAnswer(recordFunding(tx, intent, adapter.rail, decision.reference), decision, capabilityToken);
    }
  }
}

/** A well-formed credential a fund request presents, and the rail whose header carried it. */
interface PresentedRailCredential {
  readonly rail: RailName;
  readonly credential: RailCredential;
}

/** The well-formed credentials the request presents (malformed ones are judged once the rail is known). */
function presentedCredentials(headers: FundRequest['headers']): PresentedRailCredential[] {
  const presented: PresentedRailCredential[] = [];
  for (const rail of registeredRails()) {
    const credential = rail.readCredential(headers);
    if (credential.kind === 'credential') presented.push({ rail: rail.name, credential });
  }
  return presented;
}

/** The money arrived: the intent marked funded and the ledger transaction of `transition` (the table's `fund`
 * posting: escrow debited, the rail's funding account credited, landing with the commit), in the caller's
 * transaction. The rail handshake, the sweeper and the sandbox simulator all end here. */
export function recordFunding(
  tx: Queryable,
  intent: LockedIntent,
  rail: string,
  reference: string,
  transition: Transition = transitionOf('fund', 'open', 'funded'),
): LockedIntent {
  const funded = queueFundedTransition(tx, intent, reference);
  const posting = transition.posting!;
  const transactionId = randomUUID();
  recordIntentTransition(tx, funded, { ledgerTransactionId: transactionId });
  queueLedgerTransaction(tx, intent.tenantId, {
    transactionId,
    intentId: intent.intentId,
    eventKind: posting.eventKind,
    currency: intent.currency,
    entries: postingEntries(posting, intent, rail),
  });
  return funded;
}

/** Issues a fresh challenge, records it (to travel with COMMIT), and answers 402 with it. */
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
  return challengeAnswer(intent, issued, funding, problem, extraHeaders);
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

/** The event of a funding attempt's outcome that moves no state: a decline, or the rail's answer that the payment
 * is pending (once per attempt: not again for each poll that finds it still pending). A funding records its
 * transition's event (recordFunding). */
function recordFundingOutcome(tx: Queryable, intent: Intent, outcome: FundOutcomeDecision['kind'], poll: boolean): void {
  if (outcome === 'declined') recordIntentEvent(tx, intent, 'intent.funding_declined');
  else if (outcome === 'pending' && !poll) recordIntentEvent(tx, intent, 'intent.funding_pending');
}

/** What the sweeper made of one stale claim. */
export type ClaimResolution = 'funded' | 'pending' | 'declined' | 'released' | 'skipped';

/**
 * A claim whose lease ran out (its process died between the phases, or its rail's outcome was unknown), resolved
 * by the sweeper as the retry would: the rail is asked what became of the credential (the adapter's `resolve`,
 * which never charges twice), with no lock held, and the outcome recorded in a second, guarded transaction: the
 * funding and its ledger posting, a pending or declined attempt, or the claim released. A funding is answered under
 * the claiming request's idempotency key, as its own second phase would have, so that its retry gets the answer
 * (with the capability token) rather than a 409. A rail that cannot tell now leaves the claim for the next pass (or
 * the client's retry).
 */
export async function resolveStaleClaim(
  database: Database,
  runtime: RailRuntime,
  keyring: GatewayKeyring,
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
    adapter = await railAdapterFor(intent.settlementRail, { environment, config, currency: intent.currency }, liveAccess(environment, tenantId, config, runtime));
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
    intentDeadlineMs: intent.deadline.getTime(),
  };
  let outcome: CredentialOutcome;
  try {
    outcome = await adapter.resolve(context, { challenge: attempt.challenge, credential: attempt.credential, digest, reference: attempt.reference, claimedAt: attempt.claimedAt ?? undefined });
  } catch (error) {
    if (error instanceof RailUnavailableError) return 'skipped';
    throw error;
  }
  try {
    return await database.tenant(tenantId, (tx) => recordStaleClaimOutcome(tx, keyring, adapter.rail, tenantId, attempt, outcome));
  } catch (error) {
    // The claim was taken over or its outcome recorded meanwhile (a retry won): nothing to do.
    const code = (error as { code?: unknown }).code;
    if (code === '21000' || code === '23505') return 'skipped';
    throw error;
  }
}

/** The sweeper's second transaction for a stale claim: the rail's outcome recorded, decided and guarded as the fund
 * route's second phase, and a funding answered under the claiming request's key. */
async function recordStaleClaimOutcome(
  tx: Queryable,
  keyring: GatewayKeyring,
  rail: RailName,
  tenantId: string,
  attempt: FundingAttempt,
  outcome: CredentialOutcome,
): Promise<ClaimResolution> {
  const { intentId, attemptId, idempotencyKey } = attempt;
  const keyScope = idempotencyKey === null ? undefined : { tenantId, operation: fundOperation, key: idempotencyKey };
  // The key's lock first, then the intent's row: the order a fund request takes them in.
  if (keyScope) await tx.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLockId(tenantId, fundOperation, keyScope.key)]);
  const relocked = await tx.run(lockIntentStatement(tenantId, intentId));
  if (!relocked || relocked.state !== 'open') return 'skipped';
  // Guarded like the route's second phase: the claim must still be this credential's.
  const decision = decideFundOutcome(relocked, { attempt, credentialDigest: attempt.credentialDigest!, poll: false }, outcome);
  if (decision.kind === 'refused') {
    queueClaimRelease(tx, tenantId, attemptId, attempt.credentialDigest!);
    return 'released';
  }
  queueAttemptUpdate(tx, tenantId, attemptId, decision.update);
  recordFundingOutcome(tx, relocked, decision.kind, attempt.status === 'pending');
  if (decision.kind !== 'funded') return decision.kind;
  queueStateGuard(tx, relocked, 'open');
  const capabilityToken = await issueCapabilityToken(keyring, relocked);
  const answer = fundedAnswer(recordFunding(tx, relocked, rail, decision.reference), decision, capabilityToken);
  if (keyScope) queueAnswerOfBoundKey(tx, keyScope, { status: answer.status, headers: answer.headers ?? {}, body: JSON.stringify(answer.body) });
  return 'funded';
}
