// The intent lifecycle tested against a model (docs/engine.md is what the model encodes): fast-check draws random
// sequences of commands — create (an inline rule, or bound to a metered policy whose evidence costs nothing, part or
// all of the amount), fund (success, decline, pending, poll), evidence (passing, failing), confirm (release, refund
// or split), resolve (an operator's resolution of a review hold: release, refund, or split with a part named, valid
// or not, before or after the deadline), expire (a short deadline, then confirm or the maintenance sweeper), replays
// with the same idempotency key and the same key with another body, concurrent duplicates, another tenant's key —
// and runs each against the real server over HTTP and against the small model below. The tenant's release gate is
// set at the start of each run to `critical_hold` with an amount limit most generated amounts exceed (not all), so a
// release or split of a larger intent is held for review (state `held`, docs/release-gate.md) instead: confirm and
// evidence are refused on it, resolve settles it, the sweeper refunds it past its deadline. After every step:
//   - every intent's state, as the API lists it, is the model's, and each answer has the model's class (status and
//     error code);
//   - every ledger transaction is balanced, and an intent's money moved into escrow at most once and out of it at
//     most once, exactly as its state implies (a held intent's escrow still full), its escrow emptied by at most its
//     funded amount, and the payee paid exactly the part the intent records (released_cents + refunded_cents =
//     amount_cents once settled);
//   - each intent's events walk the lifecycle to its state, and a resolved hold has one `intent.review_resolved`;
//   - a terminal state never changes again;
// and after each run the ledger verifier (`svc ledger verify`'s function) finds nothing wrong.
// Only the HTTP API drives the engine (the sweeper and the verifier are the service's own functions, handed in), so
// the test does not depend on how the engine is built inside. test/engine/model.test.ts runs a few hundred steps;
// `npm run soak` (test/model/soak.ts) runs tens of thousands and prints the seed and path to replay a failure.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { party, signedCreateBody, signedEvidenceBody, type Party } from '../helpers/intents.ts';

// ---- the real system, as the commands see it ----

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The exact body bytes (JSON text), or none. */
  readonly payload?: string;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: string;
}

/** What a run needs from outside: an HTTP transport to the server, two tenants' admin keys, the maintenance
 * sweeper and the ledger verifier. */
export interface System {
  send(request: HttpRequest): Promise<HttpAnswer>;
  /** One maintenance pass; answers how many intents it refunded. */
  sweep(): Promise<number>;
  /** The ledger verifier's problems for a tenant ([] when the ledger is sound). */
  verifyLedger(tenantId: string): Promise<string[]>;
  newTenant(): Promise<{ tenantId: string; adminKey: string }>;
}

type Rail = 'x402_usdc_base' | 'processor_mpp';
type State = 'open' | 'funded' | 'evidence_recorded' | 'held' | 'released' | 'refunded' | 'resolved_split';
type FundOutcome = 'success' | 'decline' | 'pending';
type Action = 'release' | 'refund' | 'split';
/** How an intent's passing evidence settles: the whole amount (an inline rule), or metered by a policy version at a
 * cost of nothing, part or all of the amount. */
type Metering = 'full' | 'zero' | 'part' | 'all';
type Resolution = 'release' | 'refund' | 'split';
/** The `released_cents` a resolution names: none, a part inside the amount, nothing, all of it, more than it, or a
 * negative number (refused by the body's schema). */
type ReleasedChoice = 'omit' | 'inside' | 'zero' | 'whole' | 'over' | 'negative';

/** The acme tenant's release gate, set once per run (docs/release-gate.md): `critical_hold` with only the amount
 * signal on, at a limit that most of the generated amounts (1–100 000 cents) exceed and the rest do not. A release or
 * split of an intent over it is held for review instead; a refund never is. */
const gateAmountLimitCents = 30_000;

const isTerminal = (state: State): boolean => state === 'released' || state === 'refunded' || state === 'resolved_split';
const settledStates: Record<Action, State> = { release: 'released', refund: 'refunded', split: 'resolved_split' };

// ---- the model ----

interface ModelIntent {
  readonly intentId: string;
  readonly rail: Rail;
  readonly amountCents: number;
  /** Epoch ms of the deadline (whole seconds). */
  readonly deadlineMs: number;
  state: State;
  /** Under a metered policy, the cost its passing evidence carries (the part a pass releases); undefined: full. */
  readonly meteredCostCents?: number;
  predicatePassed?: boolean;
  /** Once settled: the part paid to the payee (the rest went back to the principal). */
  releasedCents?: number;
  /** Settled by an operator's resolution of its hold (so it has one `intent.review_resolved` event). */
  resolved?: boolean;
  /** The credential of the latest pending attempt, re-sent to poll. */
  pendingPoll?: HttpRequest;
}

/** A request whose final answer the service stored under its idempotency key. */
interface StoredAnswer {
  readonly request: HttpRequest;
  readonly answer: HttpAnswer;
  /** What another body under the same key looks like (for idempotency.key_reused). */
  readonly otherBody: string;
}

export interface Model {
  readonly intents: ModelIntent[];
  readonly stored: StoredAnswer[];
  /** The other tenant's keys (each with its operation) and the request each is bound to: a key is bound by its first
   * execution whatever it answered, a 404 included, so the same key on another request of that operation is refused. */
  readonly otherTenantKeys: Map<string, string>;
}

/** One run's live objects beside the model: tenants, parties, what the ledger showed so far. */
export interface Real {
  readonly system: System;
  readonly acme: { tenantId: string; adminKey: string };
  readonly globex: { tenantId: string; adminKey: string };
  readonly principal: Party;
  readonly payee: Party;
  /** The acme tenant's policy head: completion_budget_v1 with release_mode metered. */
  readonly meteredPolicy: { templateId: string; versionSeq: number; contentDigestHex: string; materializedPredicate: Record<string, unknown> };
  /** Ledger rows read so far (after_seq of the next page) and what they add up to, per intent. */
  ledgerSeq: number;
  readonly transactions: Map<string, { intentId: string; kind: string; debits: bigint; credits: bigint; entries: number }>;
  readonly movements: Map<string, Movement>;
  /** The last state the API showed for each intent (for "terminal states are absorbing"). */
  readonly seen: Map<string, State>;
  /** The event log read so far (its newest event's id), and the states each intent's transition events entered, in
   * order. */
  lastEventId: string | undefined;
  readonly eventPaths: Map<string, State[]>;
  /** How many `intent.review_resolved` events each intent has. */
  readonly reviewResolvedEvents: Map<string, number>;
  /** Steps run, and how many of each command, for the runners' summaries. */
  steps: number;
  readonly counts: Map<string, number>;
}

export type Context = { model: Model; real: Real };

/** What the ledger moved for one intent: transactions by kind, the escrow's balance, what left the escrow in total,
 * and what the payee was paid. */
interface Movement { fund: number; release: number; refund: number; split: number; escrow: bigint; escrowOut: bigint; paid: bigint }
const noMovement = (): Movement => ({ fund: 0, release: 0, refund: 0, split: 0, escrow: 0n, escrowOut: 0n, paid: 0n });

// ---- time: short deadlines without races ----

/** Deadlines of "short" intents are this far ahead (rounded up to a whole second). */
const shortDeadlineMs = 2_000;
/** A request is sent only when its intent's deadline is clearly ahead (by this much) or clearly behind. */
const deadlineGuardBeforeMs = 1_200;
const deadlineGuardAfterMs = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Waits out any of `intents` whose deadline is too close to call, so the model and the server agree on "passed". */
async function clearOfDeadlines(intents: readonly ModelIntent[]): Promise<void> {
  const now = Date.now();
  const until = Math.max(0, ...intents.filter((intent) => now > intent.deadlineMs - deadlineGuardBeforeMs && now < intent.deadlineMs + deadlineGuardAfterMs).map((intent) => intent.deadlineMs + deadlineGuardAfterMs));
  if (until > now) await sleep(until - now);
}

const deadlinePassed = (intent: ModelIntent): boolean => Date.now() >= intent.deadlineMs;

// ---- answers ----

function parse(body: string): any {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The class of an answer: its status, and the error code of an error envelope. */
export function classOf(answer: HttpAnswer): string {
  const code = parse(answer.body)?.error?.code;
  return typeof code === 'string' ? `${answer.status} ${code}` : String(answer.status);
}

const header = (answer: HttpAnswer, name: string): string => {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : String(value ?? '');
};

class ModelMismatch extends Error {}

function expectClass(step: string, answer: HttpAnswer, expected: string): void {
  const actual = classOf(answer);
  if (actual !== expected) throw new ModelMismatch(`${step}: answered ${actual}, the model expects ${expected} (body ${answer.body.slice(0, 400)})`);
}

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new ModelMismatch(message());
}

const post = (tenant: { adminKey: string }, url: string, payload: string, headers: Record<string, string> = {}): HttpRequest => ({
  method: 'POST',
  url,
  headers: { authorization: `Bearer ${tenant.adminKey}`, 'content-type': 'application/json', ...headers },
  payload,
});

const withKey = (request: HttpRequest, key: string | undefined): HttpRequest =>
  key === undefined ? request : { ...request, headers: { ...request.headers, 'idempotency-key': key } };

const newKey = () => `model-${randomUUID()}`;

/** The model's answer to a keyed request whose key already holds a stored answer, or undefined when none does. */
function storedFor(model: Model, request: HttpRequest): { replay: StoredAnswer } | { reused: true } | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  const stored = model.stored.find((entry) => entry.request.headers['idempotency-key'] === key && entry.request.headers.authorization === request.headers.authorization);
  if (!stored) return undefined;
  return stored.request.url === request.url && stored.request.payload === request.payload ? { replay: stored } : { reused: true };
}

function expectReplay(step: string, answer: HttpAnswer, stored: StoredAnswer): void {
  check(answer.status === stored.answer.status && answer.body === stored.answer.body, () => `${step}: a replay answered ${answer.status} ${answer.body.slice(0, 200)}, not the stored ${stored.answer.status} ${stored.answer.body.slice(0, 200)}`);
  check(header(answer, 'idempotent-replayed') === 'true', () => `${step}: a replay lacks idempotent-replayed: true`);
}

/** Sends a request that may carry an idempotency key: a stored key is answered by replay or key_reused, whatever
 * the model would otherwise say; otherwise `expected` is checked and a final answer stored. Returns the answer, or
 * undefined when it was a replay or a refusal of the key (the model does not move). */
async function sendKeyed(context: Context, step: string, request: HttpRequest, expected: string, otherBody: string): Promise<HttpAnswer | undefined> {
  const prior = storedFor(context.model, request);
  const answer = await context.real.system.send(request);
  if (prior && 'replay' in prior) {
    expectReplay(step, answer, prior.replay);
    return undefined;
  }
  if (prior) {
    expectClass(step, answer, '409 idempotency.key_reused');
    return undefined;
  }
  expectClass(step, answer, expected);
  const final = answer.status >= 200 && answer.status < 300 && answer.status !== 202;
  if (final && request.headers['idempotency-key'] !== undefined) context.model.stored.push({ request, answer, otherBody });
  return answer;
}

// ---- what the model expects of each engine command ----

function expectedFund(intent: ModelIntent): string {
  if (intent.state !== 'open') return '409 intent.invalid_state';
  if (deadlinePassed(intent)) return '409 intent.deadline_passed';
  return '402';
}

function expectedEvidence(intent: ModelIntent): string {
  if (intent.state !== 'funded') return '409 intent.invalid_state';
  if (deadlinePassed(intent)) return '409 intent.deadline_passed';
  return '200';
}

/** The part a passing evidence releases: the amount, or the metered cost. */
const releasedOnPass = (intent: ModelIntent): number => intent.meteredCostCents ?? intent.amountCents;

function impliedAction(intent: ModelIntent): Action | undefined {
  if (intent.state === 'evidence_recorded') {
    if (!intent.predicatePassed) return 'refund';
    const released = releasedOnPass(intent);
    return released === intent.amountCents ? 'release' : released === 0 ? 'refund' : 'split';
  }
  if (intent.state === 'funded' && deadlinePassed(intent)) return 'refund';
  return undefined;
}

function expectedConfirm(intent: ModelIntent, expectedAction: Action | undefined): string {
  const action = impliedAction(intent);
  if (action === undefined) return '409 intent.invalid_state';
  if (expectedAction !== undefined && expectedAction !== action) return '409 intent.invalid_state';
  return '200';
}

/** Whether the release gate holds what confirm would do now: a release or a split (never a refund) of an intent over
 * the gate's amount limit. */
const gateHolds = (intent: ModelIntent): boolean => {
  const action = impliedAction(intent);
  return action !== undefined && action !== 'refund' && intent.amountCents > gateAmountLimitCents;
};

/** Counts what happened beside the commands (lower case, so the runners can tell them from command names). */
const tally = (real: Real, what: string): void => {
  real.counts.set(what, (real.counts.get(what) ?? 0) + 1);
};

const settleAs = (intent: ModelIntent, action: Action, releasedCents: number): void => {
  intent.state = settledStates[action];
  intent.releasedCents = releasedCents;
};

/** Confirm (or a confirm at the deadline) did what the rule implies: settled, or held by the gate. */
const settle = (intent: ModelIntent, real: Real): void => {
  if (gateHolds(intent)) {
    intent.state = 'held';
    tally(real, 'holds placed');
    return;
  }
  const action = impliedAction(intent)!;
  settleAs(intent, action, action === 'refund' ? 0 : releasedOnPass(intent));
};

/** Checks a 200 confirm answer against what the model says it did (before the model moves). */
function checkConfirmAnswer(step: string, intent: ModelIntent, answer: HttpAnswer): void {
  const body = parse(answer.body);
  if (gateHolds(intent)) {
    check(
      body?.state === 'held' && body.settlement === undefined && body.review_hold?.held === true && body.review_hold.gate_mode === 'critical_hold' &&
        JSON.stringify(body.review_hold.signals?.map((signal: { code: string }) => signal.code)) === '["amount_over_limit"]',
      () => `${step}: the gate should hold ${intent.amountCents} cents over its limit of ${gateAmountLimitCents}; answered ${answer.body.slice(0, 400)}`,
    );
    return;
  }
  const action = impliedAction(intent);
  check(body?.settlement?.action === action && body.review_hold === undefined, () => `${step}: settled by ${body?.settlement?.action}, the model implies ${action} (body ${answer.body.slice(0, 300)})`);
}

/** The parts the model expects a settled intent to record. */
function expectedParts(intent: ModelIntent): { released: number; refunded: number } | null {
  if (!isTerminal(intent.state)) return null;
  return { released: intent.releasedCents!, refunded: intent.amountCents - intent.releasedCents! };
}

/** The `released_cents` a choice names for an intent (undefined: left out). */
function releasedOf(intent: ModelIntent, choice: ReleasedChoice): number | undefined {
  return { omit: undefined, inside: Math.max(1, Math.floor((intent.amountCents * 2) / 3)), zero: 0, whole: intent.amountCents, over: intent.amountCents + 1, negative: -1 }[choice];
}

/** What resolving a hold answers (docs/release-gate.md#resolving-a-hold), in the order the service checks: the
 * body's schema, the intent's state, the deadline (only a refund after it), then the part named. */
function expectedResolve(intent: ModelIntent, resolution: Resolution, releasedCents: number | undefined): string {
  if (releasedCents !== undefined && releasedCents < 0) return '400 request.invalid';
  if (intent.state !== 'held') return '409 intent.invalid_state';
  if (resolution !== 'refund' && deadlinePassed(intent)) return '409 review.deadline_passed';
  const valid = resolution === 'split' ? releasedCents !== undefined && releasedCents > 0 && releasedCents < intent.amountCents : releasedCents === undefined;
  return valid ? '200' : '422 settlement.released_amount_invalid';
}

/** The part a valid resolution releases. */
const resolvedPart = (intent: ModelIntent, resolution: Resolution, releasedCents: number | undefined): number =>
  resolution === 'release' ? intent.amountCents : resolution === 'refund' ? 0 : releasedCents!;

const resolveBody = (resolution: Resolution, releasedCents: number | undefined, note?: string): string =>
  JSON.stringify({ resolution, ...(releasedCents === undefined ? {} : { released_cents: releasedCents }), ...(note === undefined ? {} : { note }) });

/** Checks a 200 resolution against the model, then settles the model's intent as it says. */
function applyResolution(step: string, real: Real, intent: ModelIntent, resolution: Resolution, releasedCents: number | undefined, answer: HttpAnswer): void {
  const released = resolvedPart(intent, resolution, releasedCents);
  const action: Action = released === intent.amountCents ? 'release' : released === 0 ? 'refund' : 'split';
  const body = parse(answer.body);
  check(
    body?.state === settledStates[action] && body.settlement?.action === action && body.settlement.reason === 'review_resolved' && body.settlement.released_cents === released &&
      body.resolution?.resolution === resolution && body.resolution.released_cents === released && body.resolution.refunded_cents === intent.amountCents - released &&
      body.resolution.receipt?.kind === 'svc.review_resolution_receipt_v1',
    () => `${step}: resolving as ${resolution} (${released} of ${intent.amountCents}) answered ${answer.body.slice(0, 400)}`,
  );
  settleAs(intent, action, released);
  intent.resolved = true;
  tally(real, 'holds resolved');
}

const fundUrl = (intent: ModelIntent) => `/harbor/intents/${intent.intentId}/fund`;
const evidenceUrl = (intent: ModelIntent) => `/harbor/intents/${intent.intentId}/evidence`;
const confirmUrl = (intent: ModelIntent) => `/harbor/intents/${intent.intentId}/settlement/confirm`;
const resolveUrl = (intent: ModelIntent) => `/harbor/intents/${intent.intentId}/review/resolve`;
const confirmBody = (expectedAction: Action | undefined) => JSON.stringify(expectedAction === undefined ? {} : { expected_action: expectedAction });

function evidencePayload(context: Context, intent: ModelIntent, passing: boolean, tenantId = context.real.acme.tenantId): string {
  const { payee } = context.real;
  const cost = intent.meteredCostCents ?? Math.min(1, intent.amountCents);
  return JSON.stringify(signedEvidenceBody({ tenantId, intentId: intent.intentId, payee, payload: { status: passing ? 'completed' : 'failed', cost_cents: cost } }));
}

/** The rail credential answering a 402 challenge with the sandbox payer (x402) or token (MPP) that picks `outcome`. */
function credentialHeaders(intent: ModelIntent, challenge: HttpAnswer, outcome: FundOutcome): Record<string, string> {
  if (intent.rail === 'x402_usdc_base') {
    return { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers[outcome] }) };
  }
  return { 'x-svc-payment-authorization': sandboxMppAuthorization(header(challenge, 'www-authenticate'), sandboxMppTokens[outcome]) };
}

// ---- commands ----

abstract class Step implements fc.AsyncCommand<Model, Real> {
  abstract check(model: Readonly<Model>): boolean;
  abstract act(model: Model, context: Context): Promise<void>;
  abstract toString(): string;

  async run(model: Model, real: Real): Promise<void> {
    const context = { model, real };
    real.steps += 1;
    real.counts.set(this.constructor.name, (real.counts.get(this.constructor.name) ?? 0) + 1);
    await this.act(model, context);
    await checkInvariants(this.toString(), context);
  }
}

/** Commands that act on an intent name it by index, resolved against the intents the model holds at run time. */
abstract class IntentStep extends Step {
  constructor(readonly index: number) {
    super();
  }
  check(model: Readonly<Model>): boolean {
    return model.intents.length > 0;
  }
  intentOf(model: Model): ModelIntent {
    return model.intents[this.index % model.intents.length]!;
  }
}

/** An engine command that is `ready` picks among the intents in the state it moves on from, their deadline ahead
 * when it matters (any intent, when none is), so runs reach the later states — settlement, holds, resolutions — more
 * often than uniform picks would. */
abstract class EngineStep extends IntentStep {
  constructor(index: number, readonly ready: boolean, private readonly from: State) {
    super(index);
  }
  override intentOf(model: Model): ModelIntent {
    const candidates = this.ready ? model.intents.filter((intent) => intent.state === this.from && (this.from === 'evidence_recorded' || !deadlinePassed(intent))) : [];
    return candidates.length > 0 ? candidates[this.index % candidates.length]! : super.intentOf(model);
  }
  protected get readyMark(): string {
    return this.ready ? `, ${this.from}` : '';
  }
}

class CreateIntent extends Step {
  constructor(readonly rail: Rail, readonly short: boolean, readonly amountCents: number, readonly keyed: boolean, readonly metering: Metering = 'full') {
    super();
  }
  check(model: Readonly<Model>): boolean {
    return model.intents.length < 40;
  }
  async act(model: Model, context: Context): Promise<void> {
    const { acme, principal, payee } = context.real;
    const deadlineMs = this.short ? Math.ceil((Date.now() + shortDeadlineMs) / 1000) * 1000 : Math.ceil((Date.now() + 3_600_000) / 1000) * 1000;
    // Metered: bound (v7) to the tenant's metered policy head, whose parameters the principal signs through its digest.
    const rule = this.metering === 'full' ? {} : { policy: context.real.meteredPolicy, signingVersion: 7 };
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, settlementRail: this.rail, amountCents: this.amountCents, deadline: rfc3339(deadlineMs), ...rule });
    const other = signedCreateBody({ tenantId: acme.tenantId, principal, payee, settlementRail: this.rail, amountCents: this.amountCents + 1, deadline: rfc3339(deadlineMs), ...rule });
    const request = withKey(post(acme, '/harbor/intents', JSON.stringify(body)), this.keyed ? newKey() : undefined);
    const answer = await sendKeyed(context, this.toString(), request, '201', JSON.stringify(other));
    const meteredCostCents = { full: undefined, zero: 0, part: Math.floor(this.amountCents / 3), all: this.amountCents }[this.metering];
    if (answer) model.intents.push({ intentId: body.intent_id as string, rail: this.rail, amountCents: this.amountCents, deadlineMs, state: 'open', ...(meteredCostCents === undefined ? {} : { meteredCostCents }) });
  }
  toString(): string {
    return `create(${this.rail}, ${this.short ? 'short deadline' : 'hour'}, ${this.amountCents}${this.metering === 'full' ? '' : `, metered ${this.metering}`}${this.keyed ? ', keyed' : ''})`;
  }
}

class Fund extends EngineStep {
  constructor(index: number, readonly outcome: FundOutcome, readonly keyed: boolean, ready = false) {
    super(index, ready, 'open');
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    const { acme } = context.real;
    const challenge = await context.real.system.send(post(acme, fundUrl(intent), '{}'));
    expectClass(`${this} challenge`, challenge, expectedFund(intent));
    if (challenge.status !== 402) return;
    const request = withKey(post(acme, fundUrl(intent), '{}', credentialHeaders(intent, challenge, this.outcome)), this.keyed ? newKey() : undefined);
    const expected = { success: '200', decline: '402', pending: '202' }[this.outcome];
    const answer = await sendKeyed(context, `${this} credential`, request, expected, '{"note":"another body"}');
    if (!answer) return;
    if (this.outcome === 'success') intent.state = 'funded';
    if (this.outcome === 'pending') intent.pendingPoll = request;
  }
  toString(): string {
    return `fund(#${this.index}${this.readyMark}, ${this.outcome}${this.keyed ? ', keyed' : ''})`;
  }
}

class Poll extends IntentStep {
  override check(model: Readonly<Model>): boolean {
    return model.intents.some((intent) => intent.pendingPoll);
  }
  override intentOf(model: Model): ModelIntent {
    const pending = model.intents.filter((intent) => intent.pendingPoll);
    return pending[this.index % pending.length]!;
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    // The pending simulator settles on the next poll.
    const expected = expectedFund(intent) === '402' ? '200' : expectedFund(intent);
    const answer = await sendKeyed(context, this.toString(), intent.pendingPoll!, expected, '{"note":"another body"}');
    if (answer && answer.status === 200) intent.state = 'funded';
  }
  toString(): string {
    return `poll(#${this.index})`;
  }
}

class Evidence extends EngineStep {
  constructor(index: number, readonly passing: boolean, readonly keyed: boolean, ready = false) {
    super(index, ready, 'funded');
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    const request = withKey(post(context.real.acme, evidenceUrl(intent), evidencePayload(context, intent, this.passing)), this.keyed ? newKey() : undefined);
    const answer = await sendKeyed(context, this.toString(), request, expectedEvidence(intent), evidencePayload(context, intent, !this.passing));
    if (answer && answer.status === 200) {
      check(parse(answer.body)?.predicate_passed === this.passing, () => `${this}: predicate_passed is ${parse(answer.body)?.predicate_passed}`);
      intent.state = 'evidence_recorded';
      intent.predicatePassed = this.passing;
    }
  }
  toString(): string {
    return `evidence(#${this.index}${this.readyMark}, ${this.passing ? 'passing' : 'failing'}${this.keyed ? ', keyed' : ''})`;
  }
}

class Confirm extends EngineStep {
  constructor(index: number, readonly expectedAction: Action | undefined, readonly keyed: boolean, ready = false) {
    super(index, ready, 'evidence_recorded');
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    const other = confirmBody(this.expectedAction === undefined ? 'release' : undefined);
    const request = withKey(post(context.real.acme, confirmUrl(intent), confirmBody(this.expectedAction)), this.keyed ? newKey() : undefined);
    const answer = await sendKeyed(context, this.toString(), request, expectedConfirm(intent, this.expectedAction), other);
    if (answer && answer.status === 200) {
      checkConfirmAnswer(this.toString(), intent, answer);
      settle(intent, context.real);
    }
  }
  toString(): string {
    return `confirm(#${this.index}${this.readyMark}${this.expectedAction ? `, expecting ${this.expectedAction}` : ''}${this.keyed ? ', keyed' : ''})`;
  }
}

/** An operator's resolution of a review hold (the tenant's admin key): release, refund, or split with a part named,
 * valid or not. Aimed at a held intent when there is one (unless `anyIntent`), since few intents are. */
class Resolve extends IntentStep {
  constructor(index: number, readonly resolution: Resolution, readonly released: ReleasedChoice, readonly keyed: boolean, readonly anyIntent: boolean) {
    super(index);
  }
  override intentOf(model: Model): ModelIntent {
    const held = model.intents.filter((intent) => intent.state === 'held');
    return this.anyIntent || held.length === 0 ? super.intentOf(model) : held[this.index % held.length]!;
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    const releasedCents = releasedOf(intent, this.released);
    const request = withKey(post(context.real.acme, resolveUrl(intent), resolveBody(this.resolution, releasedCents, 'model')), this.keyed ? newKey() : undefined);
    const expected = expectedResolve(intent, this.resolution, releasedCents);
    if (expected === '409 review.deadline_passed') tally(context.real, 'late resolutions');
    const answer = await sendKeyed(context, this.toString(), request, expected, resolveBody(this.resolution, releasedCents, 'another note'));
    if (answer && answer.status === 200) applyResolution(this.toString(), context.real, intent, this.resolution, releasedCents, answer);
  }
  toString(): string {
    return `resolve(#${this.index}${this.anyIntent ? ' of all' : ' of held'}, ${this.resolution}${this.released === 'omit' ? '' : `, released ${this.released}`}${this.keyed ? ', keyed' : ''})`;
  }
}

/** Lets a short deadline pass, then settles by confirm or by the maintenance sweeper. */
class Expire extends IntentStep {
  /** `nearHold`: prefer a short intent that is held, or would be confirmed (and so perhaps held) at its deadline. */
  constructor(index: number, readonly by: 'confirm' | 'sweeper', readonly nearHold = false) {
    super(index);
  }
  override check(model: Readonly<Model>): boolean {
    return model.intents.some((intent) => intent.deadlineMs - Date.now() < shortDeadlineMs + 1_000);
  }
  override intentOf(model: Model): ModelIntent {
    const short = model.intents.filter((intent) => intent.deadlineMs - Date.now() < shortDeadlineMs + 1_000);
    const near = this.nearHold ? short.filter((intent) => intent.state === 'held' || intent.state === 'evidence_recorded') : [];
    const candidates = near.length > 0 ? near : short;
    return candidates[this.index % candidates.length] ?? model.intents[0]!;
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    const wait = intent.deadlineMs + deadlineGuardAfterMs - Date.now();
    if (wait > 0 && wait < shortDeadlineMs + 2_000) await sleep(wait);
    if (this.by === 'confirm') {
      await clearOfDeadlines([intent]);
      const answer = await context.real.system.send(post(context.real.acme, confirmUrl(intent), '{}'));
      expectClass(this.toString(), answer, expectedConfirm(intent, undefined));
      if (answer.status === 200) {
        checkConfirmAnswer(this.toString(), intent, answer);
        settle(intent, context.real);
      }
      return;
    }
    await sweep(model, context);
  }
  toString(): string {
    return `expire(#${this.index}${this.nearHold ? ' near a hold' : ''}, by ${this.by})`;
  }
}

/** One maintenance pass (repeated while it works at capacity: other runs' tenants may share the database). */
async function sweep(model: Model, context: Context): Promise<void> {
  await clearOfDeadlines(model.intents);
  for (let pass = 0; pass < 50; pass += 1) {
    if ((await context.real.system.sweep()) < 200) break;
  }
  // The sweeper refunds a funded intent past its deadline, and a held one (closing its hold as expired).
  for (const intent of model.intents) {
    if ((intent.state === 'funded' || intent.state === 'held') && deadlinePassed(intent)) {
      if (intent.state === 'held') tally(context.real, 'holds expired');
      settleAs(intent, 'refund', 0);
    }
  }
}

class Sweep extends Step {
  check(): boolean {
    return true;
  }
  async act(model: Model, context: Context): Promise<void> {
    await sweep(model, context);
  }
  toString(): string {
    return 'sweep';
  }
}

/** Re-sends a request whose answer was stored: the identical answer, marked replayed, whatever happened since. */
class Replay extends Step {
  constructor(readonly index: number, readonly otherBody: boolean) {
    super();
  }
  check(model: Readonly<Model>): boolean {
    return model.stored.length > 0;
  }
  async act(model: Model, context: Context): Promise<void> {
    const stored = model.stored[this.index % model.stored.length]!;
    const request = this.otherBody ? { ...stored.request, payload: stored.otherBody } : stored.request;
    const answer = await context.real.system.send(request);
    if (this.otherBody) expectClass(this.toString(), answer, '409 idempotency.key_reused');
    else expectReplay(this.toString(), answer, stored);
  }
  toString(): string {
    return `replay(stored #${this.index}${this.otherBody ? ', another body' : ''})`;
  }
}

/** Another tenant's admin key on this tenant's intent, on every engine route (and with a key this tenant stored): 404. */
class OtherTenant extends IntentStep {
  constructor(index: number, readonly route: 'read' | 'fund' | 'evidence' | 'confirm' | 'resolve', readonly stealKey: boolean) {
    super(index);
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    const { globex } = context.real;
    const key = this.stealKey && model.stored.length > 0 ? model.stored[this.index % model.stored.length]!.request.headers['idempotency-key'] : undefined;
    const request: HttpRequest =
      this.route === 'read'
        ? { method: 'GET', url: `/harbor/intents/${intent.intentId}`, headers: { authorization: `Bearer ${globex.adminKey}` } }
        : this.route === 'fund'
          ? post(globex, fundUrl(intent), '{}')
          : this.route === 'evidence'
            ? post(globex, evidenceUrl(intent), evidencePayload(context, intent, true, globex.tenantId))
            : this.route === 'confirm'
              ? post(globex, confirmUrl(intent), '{}')
              : post(globex, resolveUrl(intent), resolveBody('refund', undefined));
    const answer = await context.real.system.send(withKey(request, key));
    const binding = key === undefined || this.route === 'read' ? undefined : `${this.route}\u0000${key}`;
    const fingerprint = `${request.url}\u0000${request.payload ?? ''}`;
    const boundTo = binding === undefined ? undefined : model.otherTenantKeys.get(binding);
    if (binding !== undefined && boundTo === undefined) model.otherTenantKeys.set(binding, fingerprint);
    expectClass(this.toString(), answer, boundTo !== undefined && boundTo !== fingerprint ? '409 idempotency.key_reused' : '404 intent.not_found');
  }
  toString(): string {
    return `other-tenant(#${this.index}, ${this.route}${this.stealKey ? ', with a stored key' : ''})`;
  }
}

/** The same request sent several times at once, with one idempotency key or none: the money moves once. */
class Concurrent extends IntentStep {
  constructor(index: number, readonly operation: 'fund' | 'evidence' | 'confirm' | 'resolve', readonly copies: number, readonly keyed: boolean) {
    super(index);
  }
  async act(model: Model, context: Context): Promise<void> {
    const intent = this.intentOf(model);
    await clearOfDeadlines([intent]);
    const { acme, system } = context.real;
    let request: HttpRequest;
    let first: string;
    if (this.operation === 'fund') {
      const challenge = await system.send(post(acme, fundUrl(intent), '{}'));
      expectClass(`${this} challenge`, challenge, expectedFund(intent));
      if (challenge.status !== 402) return;
      request = post(acme, fundUrl(intent), '{}', credentialHeaders(intent, challenge, 'success'));
      first = '200';
    } else if (this.operation === 'evidence') {
      request = post(acme, evidenceUrl(intent), evidencePayload(context, intent, true));
      first = expectedEvidence(intent);
    } else if (this.operation === 'confirm') {
      request = post(acme, confirmUrl(intent), '{}');
      first = expectedConfirm(intent, undefined);
    } else {
      request = post(acme, resolveUrl(intent), resolveBody('release', undefined));
      first = expectedResolve(intent, 'release', undefined);
    }
    const key = this.keyed ? newKey() : undefined;
    request = withKey(request, key);
    const answers = await Promise.all(Array.from({ length: this.copies }, () => system.send(request)));
    const classes = answers.map(classOf);
    const moved = first === '200';
    // After the one that moves the intent, the state machine refuses the rest (unkeyed); keyed, they are replays or
    // told the first is still running.
    const after = moved ? '409 intent.invalid_state' : first;
    if (!moved) {
      check(classes.every((c) => c === first || (key !== undefined && c === '409 idempotency.request_in_progress')), () => `${this}: answered ${classes.join(', ')}, the model expects ${first}`);
      return;
    }
    const originals = answers.filter((answer) => answer.status === 200 && header(answer, 'idempotent-replayed') !== 'true');
    check(originals.length === 1, () => `${this}: ${originals.length} requests did the work (${classes.join(', ')})`);
    if (key === undefined) {
      // A fund request that finds another's rail call under way (the two-phase fund) is told to retry.
      const allowed = (c: string) => c === after || (this.operation === 'fund' && c === '409 idempotency.request_in_progress');
      check(classes.filter((c) => c !== '200').every(allowed), () => `${this}: the others answered ${classes.join(', ')}, the model expects ${after}`);
    } else {
      const original = originals[0]!;
      for (const answer of answers) {
        if (answer === original) continue;
        if (answer.status === 200) expectReplay(this.toString(), answer, { request, answer: original, otherBody: '' });
        else expectClass(this.toString(), answer, '409 idempotency.request_in_progress');
      }
      const otherBody = { fund: '{"note":"another body"}', evidence: evidencePayload(context, intent, false), confirm: confirmBody('release'), resolve: resolveBody('refund', undefined) }[this.operation];
      model.stored.push({ request, answer: original, otherBody });
    }
    const original = answers.find((answer) => answer.status === 200 && header(answer, 'idempotent-replayed') !== 'true')!;
    if (this.operation === 'fund') intent.state = 'funded';
    else if (this.operation === 'evidence') {
      intent.state = 'evidence_recorded';
      intent.predicatePassed = true;
    } else if (this.operation === 'confirm') {
      checkConfirmAnswer(this.toString(), intent, original);
      settle(intent, context.real);
    } else applyResolution(this.toString(), context.real, intent, 'release', undefined, original);
  }
  toString(): string {
    return `concurrent(#${this.index}, ${this.operation} x${this.copies}${this.keyed ? ', one key' : ''})`;
  }
}

// ---- invariants, after every step ----

async function getJson(context: Context, url: string): Promise<any> {
  const answer = await context.real.system.send({ method: 'GET', url, headers: { authorization: `Bearer ${context.real.acme.adminKey}` } });
  check(answer.status === 200, () => `GET ${url} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return parse(answer.body);
}

async function checkInvariants(step: string, context: Context): Promise<void> {
  const { model, real } = context;
  // States: the API's list (newest first, one page: a run holds at most 40 intents) against the model.
  const listed = await getJson(context, '/harbor/intents?limit=200');
  const states = new Map<string, State>(listed.data.map((intent: { intent_id: string; state: State }) => [intent.intent_id, intent.state]));
  const parts = new Map<string, { released: number | null; refunded: number | null }>(
    listed.data.map((intent: { intent_id: string; released_cents: number | null; refunded_cents: number | null }) => [intent.intent_id, { released: intent.released_cents, refunded: intent.refunded_cents }]),
  );
  check(states.size === model.intents.length, () => `after ${step}: the API lists ${states.size} intents, the model holds ${model.intents.length}`);
  for (const intent of model.intents) {
    const state = states.get(intent.intentId);
    check(state === intent.state, () => `after ${step}: intent ${intent.intentId} is ${state}, the model says ${intent.state}`);
    const before = real.seen.get(intent.intentId);
    check(!(before && isTerminal(before)) || before === state, () => `after ${step}: intent ${intent.intentId} left terminal state ${before} for ${state}`);
    real.seen.set(intent.intentId, state!);
    const recorded = parts.get(intent.intentId)!;
    const expectedPart = expectedParts(intent);
    check(
      (expectedPart === null && recorded.released === null && recorded.refunded === null) || (expectedPart !== null && recorded.released === expectedPart.released && recorded.refunded === expectedPart.refunded),
      () => `after ${step}: intent ${intent.intentId} (${intent.state}) records released ${recorded.released}, refunded ${recorded.refunded}; the model expects ${JSON.stringify(expectedPart)}`,
    );
  }

  // Events: every state change recorded exactly once, in the transaction that made it (docs/events.md). Each intent's
  // transition events, in order, enter the states of a walk of the lifecycle from `open` that ends where the intent
  // is: a missing event breaks the walk, a repeated one repeats a state (no transition does), a stray one ends
  // elsewhere.
  await readNewEvents(context);
  for (const intent of model.intents) {
    const path = real.eventPaths.get(intent.intentId) ?? [];
    check(path[0] === 'open', () => `after ${step}: intent ${intent.intentId}'s events start ${path[0] ?? 'nowhere'}, not at intent.created`);
    for (let i = 1; i < path.length; i += 1) {
      check(modelTransitions[path[i - 1]!].includes(path[i]!), () => `after ${step}: intent ${intent.intentId}'s events go ${path.join(' → ')}`);
    }
    check(path.at(-1) === intent.state, () => `after ${step}: intent ${intent.intentId}'s events end in ${path.at(-1)}, the model says ${intent.state}`);
    // A resolution records `intent.review_resolved` once, after the event of the state it settled in; nothing else does.
    const resolvedEvents = real.reviewResolvedEvents.get(intent.intentId) ?? 0;
    check(resolvedEvents === (intent.resolved ? 1 : 0), () => `after ${step}: intent ${intent.intentId} (${intent.state}${intent.resolved ? ', resolved' : ''}) has ${resolvedEvents} intent.review_resolved event(s)`);
  }

  // The ledger: new rows since the last step, each transaction balanced, each intent's money in once and out once.
  for (;;) {
    const page = await getJson(context, `/harbor/ledger/v1/events?after_seq=${real.ledgerSeq}&limit=256`);
    for (const event of page.events as Array<{ ledger_seq: number; transaction_id: string; intent_id: string; side: string; amount_cents: number; event_kind: string; account: string }>) {
      check(event.ledger_seq === real.ledgerSeq + 1, () => `after ${step}: ledger row ${event.ledger_seq} follows ${real.ledgerSeq}`);
      real.ledgerSeq = event.ledger_seq;
      const transaction = real.transactions.get(event.transaction_id) ?? { intentId: event.intent_id, kind: event.event_kind, debits: 0n, credits: 0n, entries: 0 };
      transaction.entries += 1;
      if (event.side === 'debit') transaction.debits += BigInt(event.amount_cents);
      else transaction.credits += BigInt(event.amount_cents);
      if (transaction.entries === 1) {
        const movement = real.movements.get(event.intent_id) ?? noMovement();
        movement[event.event_kind as 'fund' | 'release' | 'refund' | 'split'] += 1;
        real.movements.set(event.intent_id, movement);
      }
      const movement = real.movements.get(event.intent_id)!;
      if (event.account === `intent:${event.intent_id}:escrow`) {
        movement.escrow += event.side === 'debit' ? BigInt(event.amount_cents) : -BigInt(event.amount_cents);
        if (event.side === 'credit') movement.escrowOut += BigInt(event.amount_cents);
      }
      if (event.side === 'debit' && event.account.startsWith('payee:')) movement.paid += BigInt(event.amount_cents);
      real.transactions.set(event.transaction_id, transaction);
    }
    if (page.next_after_seq === null) break;
  }
  for (const [transactionId, transaction] of real.transactions) {
    check(transaction.entries >= 2 && transaction.debits === transaction.credits, () => `after ${step}: transaction ${transactionId} has ${transaction.entries} entries, debits ${transaction.debits}, credits ${transaction.credits}`);
  }
  for (const intent of model.intents) {
    const moved = real.movements.get(intent.intentId) ?? noMovement();
    check(moved.fund <= 1 && moved.release + moved.refund + moved.split <= 1, () => `after ${step}: intent ${intent.intentId} moved in ${moved.fund} times and out ${moved.release + moved.refund + moved.split} times`);
    // Escrow filled once, and emptied by at most what was funded.
    check(moved.escrowOut <= BigInt(intent.amountCents) * BigInt(moved.fund), () => `after ${step}: intent ${intent.intentId} took ${moved.escrowOut} out of an escrow funded ${moved.fund} time(s) with ${intent.amountCents}`);
    const expected = {
      fund: intent.state === 'open' ? 0 : 1,
      release: intent.state === 'released' ? 1 : 0,
      refund: intent.state === 'refunded' ? 1 : 0,
      split: intent.state === 'resolved_split' ? 1 : 0,
      // Held: nothing posted, the escrow still full.
      escrow: intent.state === 'funded' || intent.state === 'evidence_recorded' || intent.state === 'held' ? BigInt(intent.amountCents) : 0n,
      paid: BigInt(expectedParts(intent)?.released ?? 0),
    };
    const shown = (value: object) => JSON.stringify(value, (_key, member) => (typeof member === 'bigint' ? String(member) : member));
    check(
      moved.fund === expected.fund && moved.release === expected.release && moved.refund === expected.refund && moved.split === expected.split && moved.escrow === expected.escrow && moved.paid === expected.paid,
      () => `after ${step}: intent ${intent.intentId} (${intent.state}) has ledger ${shown(moved)}, the model expects ${shown(expected)}`,
    );
  }
}

/** The transitions the model allows, and the event type each state is entered with (docs/events.md). */
const modelTransitions: Record<State, readonly State[]> = {
  open: ['funded'],
  funded: ['evidence_recorded', 'refunded'],
  evidence_recorded: ['released', 'refunded', 'resolved_split', 'held'],
  // Resolved as a release, a refund or a split; refunded by the sweeper past the deadline.
  held: ['released', 'refunded', 'resolved_split'],
  released: [],
  refunded: [],
  resolved_split: [],
};
const eventTypeStates: Record<string, State> = {
  'intent.created': 'open',
  'intent.funded': 'funded',
  'intent.evidence_recorded': 'evidence_recorded',
  'intent.held': 'held',
  'intent.released': 'released',
  'intent.refunded': 'refunded',
  'intent.resolved_split': 'resolved_split',
};

/** Reads the events recorded since the last step (the list is newest first: pages back to the last one seen), and
 * appends each transition event's state to its intent's path; a transition event must show the intent in the state
 * its type names. */
async function readNewEvents(context: Context): Promise<void> {
  const { real } = context;
  const fresh: Array<{ id: string; type: string; data: { object: { intent_id?: string; state?: string } } }> = [];
  let cursor: string | undefined;
  reading: for (;;) {
    const page = await getJson(context, `/v1/events?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    for (const event of page.data) {
      if (event.id === real.lastEventId) break reading;
      fresh.push(event);
    }
    if (!page.has_more) break;
    cursor = page.next_cursor;
  }
  if (fresh.length > 0) real.lastEventId = fresh[0]!.id;
  for (const event of fresh.reverse()) {
    if (event.type === 'intent.review_resolved' && event.data.object.intent_id !== undefined) {
      // Not a transition: it follows the event of the state the resolution settled in, and shows the intent there.
      const intentId = event.data.object.intent_id;
      const settledIn = real.eventPaths.get(intentId)?.at(-1);
      check(settledIn !== undefined && isTerminal(settledIn) && event.data.object.state === settledIn, () => `event ${event.id} (intent.review_resolved) shows the intent ${event.data.object.state} after its events reached ${settledIn}`);
      real.reviewResolvedEvents.set(intentId, (real.reviewResolvedEvents.get(intentId) ?? 0) + 1);
      continue;
    }
    const state = eventTypeStates[event.type];
    if (state === undefined || event.data.object.intent_id === undefined) continue;
    check(event.data.object.state === state, () => `event ${event.id} (${event.type}) shows the intent ${event.data.object.state}`);
    const path = real.eventPaths.get(event.data.object.intent_id) ?? [];
    path.push(state);
    real.eventPaths.set(event.data.object.intent_id, path);
  }
}

// ---- runs ----

/** The command mix. Indices are resolved modulo what the model holds, so every sequence shrinks cleanly. */
export function lifecycleCommands(maxCommands: number, replayPath?: string): fc.Arbitrary<Iterable<fc.AsyncCommand<Model, Real>>> {
  const index = fc.nat({ max: 39 });
  const rail = fc.constantFrom<Rail>('x402_usdc_base', 'processor_mpp');
  // Repeated entries weigh a command more: the engine's own commands most, expiry (which waits) least.
  return fc.commands(
    [
      fc.record({ rail, short: fc.constantFrom(false, false, false, true), amount: fc.integer({ min: 1, max: 100_000 }), keyed: fc.boolean() }).map(({ rail, short, amount, keyed }) => new CreateIntent(rail, short, amount, keyed)),
      fc.record({ rail, short: fc.constantFrom(false, true), amount: fc.integer({ min: 1, max: 100_000 }), keyed: fc.boolean() }).map(({ rail, short, amount, keyed }) => new CreateIntent(rail, short, amount, keyed)),
      fc.record({ rail, amount: fc.integer({ min: 1, max: 100_000 }), keyed: fc.boolean(), metering: fc.constantFrom<Metering>('part', 'part', 'zero', 'all') })
        .map(({ rail, amount, keyed, metering }) => new CreateIntent(rail, false, amount, keyed, metering)),
      fc.tuple(index, fc.constantFrom<FundOutcome>('success', 'success', 'decline', 'pending'), fc.boolean()).map(([i, outcome, keyed]) => new Fund(i, outcome, keyed)),
      fc.tuple(index, fc.constantFrom<FundOutcome>('success', 'success', 'decline', 'pending'), fc.boolean()).map(([i, outcome, keyed]) => new Fund(i, outcome, keyed)),
      fc.tuple(index, fc.constantFrom<FundOutcome>('success', 'success', 'success', 'decline'), fc.boolean()).map(([i, outcome, keyed]) => new Fund(i, outcome, keyed, true)),
      fc.tuple(index, fc.constantFrom<FundOutcome>('success', 'success', 'success', 'pending'), fc.boolean()).map(([i, outcome, keyed]) => new Fund(i, outcome, keyed, true)),
      index.map((i) => new Poll(i)),
      fc.tuple(index, fc.boolean(), fc.boolean()).map(([i, passing, keyed]) => new Evidence(i, passing, keyed)),
      fc.tuple(index, fc.constantFrom(true, true, false), fc.boolean()).map(([i, passing, keyed]) => new Evidence(i, passing, keyed, true)),
      fc.tuple(index, fc.constantFrom(true, true, false), fc.boolean()).map(([i, passing, keyed]) => new Evidence(i, passing, keyed, true)),
      fc.tuple(index, fc.constantFrom<Action | undefined>(undefined, undefined, 'release', 'refund', 'split'), fc.boolean()).map(([i, expected, keyed]) => new Confirm(i, expected, keyed)),
      fc.tuple(index, fc.constantFrom<Action | undefined>(undefined, undefined, undefined, 'release', 'split'), fc.boolean()).map(([i, expected, keyed]) => new Confirm(i, expected, keyed, true)),
      fc.tuple(index, fc.constantFrom<Action | undefined>(undefined, undefined, undefined, 'release', 'split'), fc.boolean()).map(([i, expected, keyed]) => new Confirm(i, expected, keyed, true)),
      fc.tuple(index, fc.constantFrom<Resolution>('release', 'refund', 'split', 'split'), fc.constantFrom<ReleasedChoice>('omit', 'omit', 'inside', 'inside', 'zero', 'whole', 'over', 'negative'), fc.boolean(), fc.constantFrom(false, false, true))
        .map(([i, resolution, released, keyed, anyIntent]) => new Resolve(i, resolution, released, keyed, anyIntent)),
      // A well-formed resolution of a held intent: release, refund, or split of a part inside the amount.
      fc.tuple(index, fc.constantFrom<Resolution>('release', 'refund', 'split'), fc.boolean())
        .map(([i, resolution, keyed]) => new Resolve(i, resolution, resolution === 'split' ? 'inside' : 'omit', keyed, false)),
      fc.tuple(index, fc.constantFrom<Resolution>('release', 'refund', 'split'), fc.boolean())
        .map(([i, resolution, keyed]) => new Resolve(i, resolution, resolution === 'split' ? 'inside' : 'omit', keyed, false)),
      fc.tuple(index, fc.constantFrom<'confirm' | 'sweeper'>('confirm', 'sweeper'), fc.boolean()).map(([i, by, nearHold]) => new Expire(i, by, nearHold)),
      fc.constant(new Sweep()),
      fc.tuple(index, fc.boolean()).map(([i, otherBody]) => new Replay(i, otherBody)),
      fc.tuple(index, fc.boolean()).map(([i, otherBody]) => new Replay(i, otherBody)),
      fc.tuple(index, fc.constantFrom<'read' | 'fund' | 'evidence' | 'confirm' | 'resolve'>('read', 'fund', 'evidence', 'confirm', 'resolve'), fc.boolean()).map(([i, route, steal]) => new OtherTenant(i, route, steal)),
      fc.tuple(index, fc.constantFrom<'fund' | 'evidence' | 'confirm'>('fund', 'evidence', 'confirm'), fc.integer({ min: 2, max: 4 }), fc.boolean()).map(([i, operation, copies, keyed]) => new Concurrent(i, operation, copies, keyed)),
      fc.tuple(index, fc.constantFrom<'fund' | 'evidence' | 'confirm' | 'resolve'>('fund', 'evidence', 'confirm', 'resolve'), fc.integer({ min: 2, max: 4 }), fc.boolean()).map(([i, operation, copies, keyed]) => new Concurrent(i, operation, copies, keyed)),
    ],
    // 'max': sequences of any length up to maxCommands, not the short ones fast-check's default size prefers.
    { maxCommands, size: 'max', ...(replayPath ? { replayPath } : {}) },
  );
}

/** A fresh run: two new tenants (so each run's ledger starts empty), fresh parties, an empty model. */
export async function newRun(system: System): Promise<Context> {
  const [acme, globex] = [await system.newTenant(), await system.newTenant()];
  // The metered policy head the metered intents bind to (docs/engine.md#the-split-rule).
  const drafted = await system.send(post(acme, '/harbor/policy/v1/drafts', JSON.stringify({ template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' } })));
  const version = parse(drafted.body);
  check(drafted.status === 201, () => `drafting the metered policy answered ${drafted.status} ${drafted.body.slice(0, 300)}`);
  const rolled = await system.send(post(acme, '/harbor/policy/v1/rollout', JSON.stringify({ template_id: 'completion_budget_v1', version_seq: version.version_seq })));
  check(rolled.status === 200, () => `rolling the metered policy out answered ${rolled.status} ${rolled.body.slice(0, 300)}`);
  // The release gate: holds a release or split of an intent over the limit (and nothing else) for review.
  const gate = await system.send({ ...post(acme, '/signal/v1/fraud/release-gate', JSON.stringify({ mode: 'critical_hold', amount_limit_cents: gateAmountLimitCents, first_settlement: false, standing_score_min: null })), method: 'PUT' });
  check(gate.status === 200, () => `setting the release gate answered ${gate.status} ${gate.body.slice(0, 300)}`);
  const meteredPolicy = { templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate };
  return {
    model: { intents: [], stored: [], otherTenantKeys: new Map() },
    real: {
      system,
      acme,
      globex,
      principal: party(`did:principal:model-${randomUUID()}`),
      payee: party(`did:payee:model-${randomUUID()}`),
      meteredPolicy,
      ledgerSeq: 0,
      transactions: new Map(),
      movements: new Map(),
      seen: new Map(),
      lastEventId: undefined,
      eventPaths: new Map(),
      reviewResolvedEvents: new Map(),
      steps: 0,
      counts: new Map(),
    },
  };
}

/** The property one run checks: the commands agree with the model at every step, and the ledger verifies after. */
export function lifecycleProperty(system: System, maxCommands: number, onRun?: (context: Context) => void, replayPath?: string): fc.IAsyncPropertyWithHooks<[Iterable<fc.AsyncCommand<Model, Real>>]> {
  return fc.asyncProperty(lifecycleCommands(maxCommands, replayPath), async (commands) => {
    const context = await newRun(system);
    try {
      await fc.asyncModelRun(() => ({ model: context.model, real: context.real }), commands);
      const problems = await system.verifyLedger(context.real.acme.tenantId);
      check(problems.length === 0, () => `the ledger verifier found: ${problems.join('; ')}`);
    } finally {
      onRun?.(context);
    }
  });
}
