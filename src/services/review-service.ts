// Review holds (docs/release-gate.md): the release gate's probe the engine asks before a release, the gate's
// configuration, the review queue, reviewers' events, an operator's review status, the fraud metrics, and an
// operator's resolution of a held intent with its signed receipt.
import { randomUUID } from 'node:crypto';
import type {
  FraudMetrics,
  OperatorReviewStatus,
  ReleaseGateAnswer,
  ReleaseGateConfig as ReleaseGateConfigWire,
  ReleaseGateUpdate,
  ResolveBody,
  ReviewEventAnswer,
  ReviewEventBody,
  ReviewQueue,
  ReviewQueueQuery,
} from '../contracts/review.ts';
import type { Principal } from '../credentials/principal.ts';
import type { Intent } from '../db/intent-repository.ts';
import {
  findReleaseGate,
  findReviewHold,
  insertReviewEvent,
  intentExists,
  listOperatorReviewEvents,
  listOperatorSignals,
  listReviewHolds,
  operatorKnown,
  queueHoldResolution,
  releaseGateInputsStatement,
  reviewCounts,
  saveReleaseGate,
  signalsOfIntents,
  type FraudSignalRow,
  type HoldFilter,
  type ReleaseGateRow,
  type ReviewHoldRow,
  type ReviewOutcome,
} from '../db/review-repository.ts';
import { decideResolution } from '../engine/decide/resolve.ts';
import { releaseGateDefault, type ReleaseGateConfig } from '../engine/decide/release-gate.ts';
import type { EngineEffects, ReleaseGateProbe, TerminalEffect } from '../engine/effects.ts';
import { lockForCommand } from '../engine/pipeline.ts';
import { settleIntentFor, type Settlement } from '../engine/settle.ts';
import { recordIntentEvent } from '../engine/intent-events.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import {
  reviewQueueLimitDefault,
  reviewReliabilityMinLabeled,
  reviewReliabilityMinPrecisionBps,
  reviewReliabilityMinReviewed,
  reviewReliabilityMinSignalFamilyLabeled,
  reviewReliabilityStaleDays,
  reviewStatusEntriesMax,
} from '../limits.ts';
import { queueReceipts, signReceipt, type SignedReceipt } from '../receipts/receipt-signing.ts';
import { receiptVerifierId } from '../receipts/receipt-service.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { scoreVersionDefault, scoringModelOf } from './standing-service.ts';

/** The version of this service's signal set, as the client's answers name it. */
export const fraudSignalVersion = 'svc.release_gate_signals_v1';
const dayMs = 86_400_000;
const windowMs = { '24h': dayMs, '7d': 7 * dayMs, '30d': 30 * dayMs } as const;

const iso = (date: Date): string => date.toISOString();

const configOf = (row: ReleaseGateRow | undefined): ReleaseGateConfig =>
  row === undefined ? releaseGateDefault : { mode: row.mode, standingScoreMin: row.standingScoreMin, amountLimitCents: row.amountLimitCents, firstSettlement: row.firstSettlement };

const configWire = (config: ReleaseGateConfig): ReleaseGateConfigWire => ({
  mode: config.mode,
  standing_score_min: config.standingScoreMin,
  amount_limit_cents: config.amountLimitCents,
  first_settlement: config.firstSettlement,
});

/** The score versions the review routes answer with: the standing model's (400 standing.score_version_unsupported). */
function scoreVersionOf(requested: string | undefined): string {
  const version = requested ?? scoreVersionDefault;
  scoringModelOf(version);
  return version;
}

// ---- The engine's probe and the sweeper's effect ----

/** What the gate reads before a release, in the settling transaction: the tenant's gate, and its history with the
 * payee as the standing aggregates hold it, scored by the default standing model. */
export const releaseGateProbe: ReleaseGateProbe = async (tx, intent: Intent) => {
  const { gate, history } = await tx.run(releaseGateInputsStatement(intent.tenantId, intent.payeeDid));
  const score = scoringModelOf(scoreVersionDefault).score({
    released_count: history.releasedCount,
    refunded_count: history.refundedCount,
    expired_count: history.expiredCount,
  } as Parameters<ReturnType<typeof scoringModelOf>['score']>[0]);
  return {
    config: configOf(gate),
    facts: { amountCents: intent.amountCents, currency: intent.currency, payeeStandingScore: score, payeeReleasedCount: history.releasedCount },
  };
};

/** A held intent the sweeper refunds at its deadline closes its hold as `expired` (an intent that was never held has
 * no hold, and the statement changes nothing). */
export const reviewHoldTerminalEffect: TerminalEffect = async (tx, transition) => {
  if (transition.reason !== 'deadline_passed') return;
  tx.beforeCommit({
    text: `UPDATE review_holds SET resolution = 'expired', released_cents = 0, resolved_at = now()
           WHERE tenant_id = $1 AND intent_id = $2 AND resolution IS NULL`,
    values: [transition.intent.tenantId, transition.intent.intentId],
  });
};

// ---- The gate ----

interface Reliability {
  readonly reliable: boolean;
  readonly stale: boolean;
  readonly sparse: boolean;
  readonly reviewed_count: number;
  readonly labeled_outcome_count: number;
  readonly review_precision_bps: number;
  readonly min_reviewed_count: number;
  readonly min_labeled_outcome_count: number;
  readonly min_signal_family_labeled_outcome_count: number;
  readonly min_review_precision_bps: number;
  readonly last_labeled_at?: string;
  readonly reasons: string[];
  readonly summary: string;
}

const bps = (part: number, whole: number): number => (whole === 0 ? 0 : Math.floor((10_000 * part) / whole));

/** How far the tenant's review history over the last 30 days supports its signals. Reported to the client; a hold
 * is placed by the configured signals whatever this says. */
async function reliabilityOf(tx: Queryable, tenantId: string, now: Date): Promise<Reliability> {
  const counts = await reviewCounts(tx, tenantId, new Date(now.getTime() - windowMs['30d']), now);
  const { rows } = await tx.query<{ last: Date | null }>('SELECT max(recorded_at) AS last FROM review_events WHERE tenant_id = $1 AND review_outcome IS NOT NULL', [tenantId]);
  const last = rows[0]?.last ?? null;
  const reviewed = counts.holdsResolved.release + counts.holdsResolved.refund + counts.holdsResolved.split;
  const labeled = counts.outcomes.confirmed_risk + counts.outcomes.false_positive + counts.outcomes.needs_more_evidence;
  const precision = bps(counts.outcomes.confirmed_risk, counts.outcomes.confirmed_risk + counts.outcomes.false_positive);
  const reasons: string[] = [];
  if (reviewed < reviewReliabilityMinReviewed) reasons.push('reviewed_count_below_minimum');
  if (labeled < reviewReliabilityMinLabeled) reasons.push('labeled_outcome_count_below_minimum');
  if (labeled > 0 && precision < reviewReliabilityMinPrecisionBps) reasons.push('review_precision_below_minimum');
  const stale = last === null || now.getTime() - last.getTime() > reviewReliabilityStaleDays * dayMs;
  if (stale) reasons.push('labels_stale');
  const sparse = reviewed < reviewReliabilityMinReviewed || labeled < reviewReliabilityMinLabeled;
  const reliable = reasons.length === 0;
  return {
    reliable,
    stale,
    sparse,
    reviewed_count: reviewed,
    labeled_outcome_count: labeled,
    review_precision_bps: precision,
    min_reviewed_count: reviewReliabilityMinReviewed,
    min_labeled_outcome_count: reviewReliabilityMinLabeled,
    min_signal_family_labeled_outcome_count: reviewReliabilityMinSignalFamilyLabeled,
    min_review_precision_bps: reviewReliabilityMinPrecisionBps,
    ...(last === null ? {} : { last_labeled_at: iso(last) }),
    reasons,
    summary: reliable
      ? 'Enough holds were reviewed and labelled over the last 30 days.'
      : 'Too few holds were reviewed or labelled over the last 30 days for the signals\' precision to be known; holds are placed by the configured signals regardless.',
  };
}

async function gateAnswer(tx: Queryable, tenantId: string, row: ReleaseGateRow | undefined, scoreVersion: string): Promise<ReleaseGateAnswer> {
  const now = new Date();
  return {
    schema_version: 1,
    tenant_id: tenantId,
    score_model_version: scoreVersion,
    fraud_signal_version: fraudSignalVersion,
    generated_at: iso(now),
    config: configWire(configOf(row)),
    metrics_reliability: await reliabilityOf(tx, tenantId, now),
    updated_at: row === undefined ? null : iso(row.updatedAt),
  };
}

/** `GET /signal/v1/fraud/release-gate`. */
export async function readReleaseGate(tx: Queryable, tenantId: string, scoreVersion: string | undefined): Promise<ReleaseGateAnswer> {
  const version = scoreVersionOf(scoreVersion);
  return gateAnswer(tx, tenantId, await findReleaseGate(tx, tenantId), version);
}

/** `PUT /signal/v1/fraud/release-gate`: the mode, and any signal setting sent; the others keep their value. */
export async function updateReleaseGate(tx: Queryable, tenantId: string, update: ReleaseGateUpdate): Promise<ReleaseGateAnswer> {
  const current = configOf(await findReleaseGate(tx, tenantId));
  const saved = await saveReleaseGate(tx, tenantId, {
    mode: update.mode,
    standingScoreMin: update.standing_score_min === undefined ? current.standingScoreMin : update.standing_score_min,
    amountLimitCents: update.amount_limit_cents === undefined ? current.amountLimitCents : update.amount_limit_cents,
    firstSettlement: update.first_settlement ?? current.firstSettlement,
  });
  return gateAnswer(tx, tenantId, saved, scoreVersionDefault);
}

// ---- Signals, holds and assessments as the client reads them ----

const signalCategory: Readonly<Record<string, string>> = {
  payee_standing_below_threshold: 'standing',
  first_settlement_with_payee: 'counterparty',
  amount_over_limit: 'amount',
};

/** Signal rows folded by code, in the client's signal shape. */
function clientSignals(rows: readonly FraudSignalRow[], window: string): OperatorReviewStatus['fraud_signals'] {
  const byCode = new Map<string, FraudSignalRow[]>();
  for (const row of rows) byCode.set(row.code, [...(byCode.get(row.code) ?? []), row]);
  return [...byCode].map(([code, found]) => {
    const times = found.map((row) => row.observedAt.getTime());
    return {
      code: code as OperatorReviewStatus['fraud_signals'][number]['code'],
      severity: found[0]!.severity as 'critical',
      category: signalCategory[code] ?? 'other',
      window,
      evidence_count: found.length,
      summary: found[0]!.summary,
      affects_score: false as const,
      signal_source: 'release_gate',
      first_seen_at: iso(new Date(Math.min(...times))),
      last_seen_at: iso(new Date(Math.max(...times))),
      intent_refs: [...new Set(found.map((row) => row.intentId))],
    };
  });
}

function assessmentOf(signals: OperatorReviewStatus['fraud_signals']): OperatorReviewStatus['fraud_assessment'] {
  const severe = signals.filter((signal) => signal.severity === 'critical' || signal.severity === 'high');
  const highest = signals.some((signal) => signal.severity === 'critical') ? 'critical' : severe.length > 0 ? 'high' : signals.length > 0 ? 'elevated' : 'none';
  return {
    fraud_signal_version: fraudSignalVersion,
    level: highest,
    highest_severity: highest,
    review_priority: highest === 'critical' ? 'urgent' : highest === 'high' ? 'high' : highest === 'elevated' ? 'elevated' : 'normal',
    signal_count: signals.length,
    severe_signal_count: severe.length,
    summary: signals.length === 0 ? 'No signal found.' : `${signals.length} signal(s) found at releases: ${signals.map((signal) => signal.code).join(', ')}.`,
  };
}

function gateDecisionOf(config: ReleaseGateConfig, signals: OperatorReviewStatus['fraud_signals'], held: boolean, reliable: boolean): OperatorReviewStatus['release_gate'] {
  const critical = signals.filter((signal) => signal.severity === 'critical').map((signal) => signal.code);
  const enforcing = config.mode === 'critical_hold';
  return {
    mode: config.mode,
    enforcement_enabled: enforcing,
    metrics_reliable: reliable,
    release_allowed: !held,
    hold_required: held,
    critical_signal_count: critical.length,
    critical_signal_codes: critical,
    reasons: held ? critical : [],
    summary: held
      ? 'A release was held for review: an operator resolves it as a release, a refund or a split.'
      : enforcing ? 'No release is held.' : 'review_only: signals are recorded, no release is held.',
  };
}

const heldIntentOf = (hold: ReviewHoldRow) => ({
  intent_id: hold.intentId,
  intent_state: hold.intentState,
  amount_cents: hold.amountCents,
  currency: hold.currency,
  deadline: iso(hold.deadline),
  signal_codes: [...hold.signalCodes],
  held_at: iso(hold.heldAt),
  resolution: hold.resolution,
  released_cents: hold.releasedCents,
  resolved_by: hold.resolvedBy,
  resolved_at: hold.resolvedAt === null ? null : iso(hold.resolvedAt),
});

const reviewStateOf = (hold: ReviewHoldRow): 'open' | 'in_review' | 'closed' =>
  hold.resolution !== null ? 'closed' : hold.reviewEventCount > 0 ? 'in_review' : 'open';

/** `GET /signal/v1/review-queue`: one item per hold, newest first; by default the holds awaiting a resolution. */
export async function reviewQueue(tx: Queryable, tenantId: string, query: ReviewQueueQuery): Promise<ReviewQueue> {
  const version = scoreVersionOf(query.score_version);
  // `none` asks for operators with no review: a queue of holds has none of them.
  const filter: HoldFilter | undefined = query.state === undefined ? 'pending' : query.state === 'none' ? undefined : query.state;
  const holds = filter === undefined ? [] : await listReviewHolds(tx, tenantId, filter, query.limit ?? reviewQueueLimitDefault);
  const [signals, config, receiptDigests] = [
    await signalsOfIntents(tx, tenantId, holds.map((hold) => hold.intentId)),
    configOf(await findReleaseGate(tx, tenantId)),
    await resolutionDigests(tx, tenantId, holds.filter((hold) => hold.resolution !== null).map((hold) => hold.intentId)),
  ];
  const items = holds
    .map((hold) => {
      const found = clientSignals((signals.get(hold.intentId) ?? []).filter((row) => row.held), 'at_release');
      const state = reviewStateOf(hold);
      return {
        operator_did: hold.operatorDid,
        review_state: state,
        review_outcome: hold.lastReviewOutcome ?? 'none',
        review_reasons: [...hold.signalCodes],
        anomaly_flagged: true,
        opened_at: iso(hold.heldAt),
        reviewed_at: hold.lastReviewedAt === null ? '' : iso(hold.lastReviewedAt),
        updated_at: iso(hold.resolvedAt ?? hold.lastReviewedAt ?? hold.heldAt),
        last_receipt_message_digest_hex: receiptDigests.get(hold.intentId) ?? '',
        fraud_signals: found,
        fraud_assessment: assessmentOf(found),
        release_gate: gateDecisionOf(config, found, state !== 'closed', false),
        ...heldIntentOf(hold),
      };
    })
    .filter((item) => query.fraud_severity === undefined || item.fraud_signals.some((signal) => signal.severity === query.fraud_severity));
  return { schema_version: 1, tenant_id: tenantId, score_model_version: version, items };
}

/** The message digests of the resolution receipts of these intents. */
async function resolutionDigests(tx: Queryable, tenantId: string, intentIds: readonly string[]): Promise<Map<string, string>> {
  if (intentIds.length === 0) return new Map();
  const { rows } = await tx.query<{ intent_id: string; digest: string }>(
    `SELECT intent_id, wire->>'message_digest_sha256_hex' AS digest FROM protocol_receipts
     WHERE tenant_id = $1 AND family = 'protocol' AND receipt_id = ANY($2::text[])`,
    [tenantId, intentIds.map(resolutionReceiptId)],
  );
  return new Map(rows.map((row) => [row.intent_id, row.digest]));
}

/** `GET /signal/v1/operators/{did}/review-status`: what the gate found for the operator's releases, its holds and the
 * reviewers' events; 404 `review.operator_unknown` for an operator the tenant never paid nor reviewed. */
export async function operatorReviewStatus(tx: Queryable, tenantId: string, operatorDid: string, scoreVersion: string | undefined): Promise<OperatorReviewStatus> {
  const version = scoreVersionOf(scoreVersion);
  if (!(await operatorKnown(tx, tenantId, operatorDid))) throw new ServiceError('review.operator_unknown');
  const signalRows = await listOperatorSignals(tx, tenantId, operatorDid, reviewStatusEntriesMax);
  const holds = await listReviewHolds(tx, tenantId, 'all', reviewStatusEntriesMax, operatorDid);
  const events = await listOperatorReviewEvents(tx, tenantId, operatorDid, reviewStatusEntriesMax);
  const config = configOf(await findReleaseGate(tx, tenantId));
  const signals = clientSignals(signalRows, 'all_time');
  const pending = holds.filter((hold) => hold.resolution === null);
  const latestOutcome = events.find((event) => event.reviewOutcome !== null)?.reviewOutcome ?? 'none';
  const opened = events.some((event) => event.eventType === 'review_open_requested' || event.eventType === 'appeal_requested');
  const state = pending.some((hold) => hold.reviewEventCount > 0) ? 'in_review'
    : pending.length > 0 ? 'open'
      : holds.length > 0 || events.length > 0 ? (opened && latestOutcome === 'none' ? 'open' : 'closed') : 'none';
  return {
    schema_version: 1,
    tenant_id: tenantId,
    operator_did: operatorDid,
    score_model_version: version,
    review_state: state,
    review_outcome: latestOutcome,
    review_reasons: [...new Set(pending.flatMap((hold) => hold.signalCodes))],
    fraud_signals: signals,
    fraud_assessment: assessmentOf(signals),
    release_gate: gateDecisionOf(config, signals, pending.length > 0, false),
    held_intents: holds.map(heldIntentOf),
    review_events: events.map((event) => ({
      event_id: event.eventId,
      event_type: event.eventType,
      review_outcome: event.reviewOutcome,
      signal_code: event.signalCode,
      intent_id: event.intentId,
      summary: event.summary,
      recorded_by: event.recordedBy,
      recorded_at: iso(event.recordedAt),
    })),
  };
}

/** Who did it, as a hold and its receipt name them: the credential's kind and the caller's id in the tenant. */
export const actorOf = (principal: Principal): string => `${principal.credential.type}:${principal.subject}`;

/** `POST /signal/v1/operators/{did}/review-events`: a reviewer's finding about an operator, optionally about one of
 * its intents (which must be this tenant's and paid to that operator). An outcome sent as the event type is recorded
 * as `review_outcome_recorded` with that outcome, as the client does it itself. */
export async function recordReviewEvent(tx: Queryable, principal: Principal, operatorDid: string, body: ReviewEventBody, scoreVersion: string | undefined): Promise<ReviewEventAnswer> {
  const version = scoreVersionOf(scoreVersion);
  const tenantId = principal.tenantId;
  const outcomeAsType = (['confirmed_risk', 'false_positive', 'needs_more_evidence'] as const).find((outcome) => outcome === body.event_type);
  const eventType = outcomeAsType === undefined ? (body.event_type as Exclude<ReviewEventBody['event_type'], ReviewOutcome>) : 'review_outcome_recorded';
  const outcome: ReviewOutcome | null = outcomeAsType ?? body.review_outcome ?? null;
  if (eventType === 'review_outcome_recorded' && outcome === null) {
    throw new ServiceError('request.invalid', { details: { fields: [{ location: 'body', path: '/review_outcome', message: 'review_outcome_recorded needs a review_outcome' }] } });
  }
  if (eventType !== 'review_outcome_recorded' && body.review_outcome !== undefined) {
    throw new ServiceError('request.invalid', { details: { fields: [{ location: 'body', path: '/review_outcome', message: `only review_outcome_recorded takes a review_outcome, not ${eventType}` }] } });
  }
  const intentId = body.intent_id?.toLowerCase();
  if (intentId !== undefined) {
    if (!(await intentExists(tx, tenantId, intentId))) throw new ServiceError('intent.not_found');
    const { rows } = await tx.query<{ payee_did: string }>('SELECT payee_did FROM intents WHERE tenant_id = $1 AND intent_id = $2', [tenantId, intentId]);
    if (rows[0]!.payee_did !== operatorDid) throw new ServiceError('review.intent_operator_mismatch', { details: { intent_id: intentId } });
  }
  const event = await insertReviewEvent(tx, tenantId, {
    eventId: randomUUID(),
    operatorDid,
    eventType,
    reviewOutcome: eventType === 'review_outcome_recorded' ? outcome : null,
    signalCode: body.signal_code ?? null,
    intentId: intentId ?? null,
    providerEventId: body.provider_event_id ?? null,
    summary: body.summary,
    recordedBy: actorOf(principal),
  });
  return {
    schema_version: 1,
    tenant_id: tenantId,
    operator_did: operatorDid,
    score_model_version: version,
    requested_event_type: body.event_type,
    recorded_event_type: eventType,
    ...(event.reviewOutcome === null ? {} : { review_outcome: event.reviewOutcome }),
    ...(event.signalCode === null ? {} : { signal_code: event.signalCode }),
    ...(event.intentId === null ? {} : { intent_id: event.intentId }),
    ...(event.providerEventId === null ? {} : { provider_event_id: event.providerEventId }),
    accepted: true,
    event_id: event.eventId,
    recorded_at: iso(event.recordedAt),
  };
}

/** `GET /signal/v1/fraud/metrics`: the counts over the window ending now (24h by default). */
export async function fraudMetrics(tx: Queryable, tenantId: string, window: '24h' | '7d' | '30d' = '24h', scoreVersion?: string): Promise<FraudMetrics> {
  const version = scoreVersionOf(scoreVersion);
  const now = new Date();
  const from = new Date(now.getTime() - windowMs[window]);
  const counts = await reviewCounts(tx, tenantId, from, now);
  const reliability = await reliabilityOf(tx, tenantId, now);
  const config = configOf(await findReleaseGate(tx, tenantId));
  const reviewed = counts.holdsResolved.release + counts.holdsResolved.refund + counts.holdsResolved.split;
  const labeled = counts.outcomes.confirmed_risk + counts.outcomes.false_positive + counts.outcomes.needs_more_evidence;
  const judged = counts.outcomes.confirmed_risk + counts.outcomes.false_positive;
  return {
    schema_version: 1,
    tenant_id: tenantId,
    score_model_version: version,
    fraud_signal_version: fraudSignalVersion,
    window,
    window_started_at: iso(from),
    window_ended_at: iso(now),
    generated_at: iso(now),
    flagged_operator_count: counts.flaggedOperators,
    critical_signal_count: counts.signalsBySeverity.critical,
    high_signal_count: counts.signalsBySeverity.high,
    elevated_signal_count: counts.signalsBySeverity.elevated,
    review_open_count: counts.holdsOpen,
    review_load_count: counts.holdsOpen + counts.reviewEvents,
    reviewed_count: reviewed,
    labeled_outcome_count: labeled,
    confirmed_risk_count: counts.outcomes.confirmed_risk,
    false_positive_count: counts.outcomes.false_positive,
    needs_more_evidence_count: counts.outcomes.needs_more_evidence,
    review_precision_bps: bps(counts.outcomes.confirmed_risk, judged),
    false_positive_rate_bps: bps(counts.outcomes.false_positive, judged),
    confirmed_risk_rate_bps: bps(counts.outcomes.confirmed_risk, labeled),
    labeled_coverage_bps: bps(Math.min(labeled, reviewed), reviewed),
    median_time_to_review_seconds: counts.medianSecondsToResolution,
    // Signal families this service does not compute (docs/release-gate.md#fraud-metrics): always 0.
    refund_burst_count: 0,
    dispute_cluster_count: 0,
    replay_appeal_abuse_count: 0,
    critical_signal_hold_candidate_count: counts.signalsBySeverity.critical,
    provider_signal_count: 0,
    stale_label_gap_seconds: reliability.last_labeled_at === undefined ? 0 : Math.max(0, Math.floor((now.getTime() - Date.parse(reliability.last_labeled_at)) / 1000)),
    stale_signal_family_label_gap_count: 0,
    backtest_summary: 'No backtest: holds are placed by the configured signals (docs/release-gate.md).',
    release_gate_config: configWire(config),
    release_gate_metrics_reliability: reliability,
    holds_placed_count: counts.holdsPlaced,
    holds_resolved: counts.holdsResolved,
    signal_counts_by_code: counts.signalsByCode,
  };
}

// ---- Resolution ----

export const resolutionReceiptId = (intentId: string): string => `review-resolution:${intentId}`;

export interface Resolution {
  readonly settlement: Settlement;
  readonly resolution: ResolveBody['resolution'];
  readonly releasedCents: number;
  readonly refundedCents: number;
  readonly resolvedBy: string;
  readonly resolvedAt: string;
  readonly receipt: SignedReceipt;
}

/**
 * The `resolve` command: an operator's resolution of a held intent, settled as the lifecycle table's transition says,
 * with the terminal effects (settlement and agent receipts, standing) and the signed resolution receipt, all in the
 * command's transaction. 409 unless the intent is held; past its deadline only a refund (409 review.deadline_passed).
 */
export async function resolveHold(
  tx: Queryable,
  principal: Principal,
  intentId: string,
  body: ResolveBody,
  effects: EngineEffects,
  nowMs = Date.now(),
): Promise<Resolution> {
  const tenantId = principal.tenantId;
  const intent = await lockForCommand(tx, tenantId, intentId, 'resolve');
  const hold = await findReviewHold(tx, tenantId, intent.intentId);
  if (hold === undefined) throw new Error(`held intent ${intent.intentId} has no review hold`);
  const decision = decideResolution(intent, { resolution: body.resolution, releasedCents: body.released_cents }, nowMs);
  const settlement = await settleIntentFor(tx, intent, effects, { command: 'resolve', releasedCents: decision.releasedCents, reason: decision.reason, nowMs });
  const resolvedBy = actorOf(principal);
  queueHoldResolution(tx, tenantId, intent.intentId, { kind: body.resolution, releasedCents: decision.releasedCents, resolvedBy, note: body.note ?? null });
  const resolvedAt = formatRfc3339SecondsUtc(nowMs);
  const receipt = signReceipt('svc.review_resolution_receipt_v1', {
    receipt_id: resolutionReceiptId(intent.intentId),
    issued_at: resolvedAt,
    intent_id: intent.intentId,
    tenant_id: tenantId,
    verifier_id: receiptVerifierId,
    payee_did: intent.payeeDid,
    principal_did: intent.principalDid,
    currency: intent.currency,
    amount_cents: intent.amountCents,
    held_at: formatRfc3339SecondsUtc(hold.heldAt.getTime()),
    signal_codes: [...hold.signalCodes],
    resolution: body.resolution,
    resolved_by: resolvedBy,
    ...(body.note === undefined ? {} : { note: body.note }),
    released_cents: decision.releasedCents,
    refunded_cents: decision.refundedCents,
    harbor_state: settlement.intent.state,
    settlement_receipt_id: intent.intentId,
    ledger_transaction_id: settlement.transactionId,
    resolved_at: resolvedAt,
  }, effects.keyring);
  queueReceipts(tx, tenantId, [{ receipt, placement: { family: 'protocol', intentId: intent.intentId } }]);
  recordIntentEvent(tx, settlement.intent, 'intent.review_resolved', { ledgerTransactionId: settlement.transactionId, receiptIds: [resolutionReceiptId(intent.intentId)] });
  return { settlement, resolution: body.resolution, releasedCents: decision.releasedCents, refundedCents: decision.refundedCents, resolvedBy, resolvedAt, receipt };
}
