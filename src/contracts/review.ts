// Review holds (docs/release-gate.md): the release gate (`GET|PUT /signal/v1/fraud/release-gate`), the review queue
// (`GET /signal/v1/review-queue`), review events and an operator's review status
// (`/signal/v1/operators/{operator_did}/review-events|review-status`), the fraud metrics (`GET
// /signal/v1/fraud/metrics`) in the public client's shapes, and the resolution of a held intent (`POST
// /harbor/intents/{id}/review/resolve`). Answers carry the client's fields and, after them, this service's own
// (`held_intents`, `holds_*`); the client's types allow more fields than they name.
import Type, { type Static } from 'typebox';
import { didLengthMax } from '../limits.ts';
import { Intent } from './intents.ts';
import { Nullable, Uuid } from './common.ts';
import { SignedArtifact } from './protocol.ts';

export { releaseGateModes, ReleaseGateMode, fraudSignalCodes, FraudSignalCode, ReviewHoldFacts } from './review-hold.ts';
import { ReleaseGateMode, FraudSignalCode, Severity } from './review-hold.ts';

/** The gate of a tenant: the client's `mode`, and the settings of this service's signals (null: the signal is off). */
export const ReleaseGateConfig = Type.Object(
  {
    mode: ReleaseGateMode,
    standing_score_min: Nullable(Type.Integer({ minimum: 1, maximum: 1000, description: 'Hold when the payee\'s standing score (model 1) is under this.' })),
    amount_limit_cents: Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Hold when the intent\'s amount is over this.' })),
    first_settlement: Type.Boolean({ description: 'Hold the first release of this tenant to a payee.' }),
  },
  { additionalProperties: false },
);
export type ReleaseGateConfig = Static<typeof ReleaseGateConfig>;

/** `PUT /signal/v1/fraud/release-gate`: the client sends `{mode}`; the signal settings are optional and keep their
 * value when left out. */
export const ReleaseGateUpdate = Type.Object(
  {
    mode: ReleaseGateMode,
    standing_score_min: Type.Optional(ReleaseGateConfig.properties.standing_score_min),
    amount_limit_cents: Type.Optional(ReleaseGateConfig.properties.amount_limit_cents),
    first_settlement: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ReleaseGateUpdate = Static<typeof ReleaseGateUpdate>;

export const MetricsReliability = Type.Object(
  {
    reliable: Type.Boolean(),
    stale: Type.Boolean(),
    sparse: Type.Boolean(),
    reviewed_count: Type.Integer({ minimum: 0 }),
    labeled_outcome_count: Type.Integer({ minimum: 0 }),
    review_precision_bps: Type.Integer({ minimum: 0, maximum: 10000 }),
    min_reviewed_count: Type.Integer(),
    min_labeled_outcome_count: Type.Integer(),
    min_signal_family_labeled_outcome_count: Type.Integer(),
    min_review_precision_bps: Type.Integer(),
    last_labeled_at: Type.Optional(Type.String()),
    reasons: Type.Array(Type.String()),
    summary: Type.String(),
  },
  { additionalProperties: false },
);

export const ReleaseGateAnswer = Type.Object(
  {
    schema_version: Type.Literal(1),
    tenant_id: Type.String(),
    score_model_version: Type.String(),
    fraud_signal_version: Type.String(),
    generated_at: Type.String(),
    config: ReleaseGateConfig,
    metrics_reliability: MetricsReliability,
    /** Null until the tenant sets its gate (the defaults apply). */
    updated_at: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type ReleaseGateAnswer = Static<typeof ReleaseGateAnswer>;

export const FraudSignal = Type.Object(
  {
    code: FraudSignalCode,
    severity: Severity,
    category: Type.String(),
    window: Type.String(),
    evidence_count: Type.Integer({ minimum: 0 }),
    summary: Type.String(),
    affects_score: Type.Literal(false),
    signal_source: Type.String(),
    first_seen_at: Type.String(),
    last_seen_at: Type.String(),
    intent_refs: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

const FraudAssessment = Type.Object(
  {
    fraud_signal_version: Type.String(),
    level: Type.String(),
    highest_severity: Type.String(),
    review_priority: Type.String(),
    signal_count: Type.Integer({ minimum: 0 }),
    severe_signal_count: Type.Integer({ minimum: 0 }),
    summary: Type.String(),
  },
  { additionalProperties: false },
);

const ReleaseGateDecision = Type.Object(
  {
    mode: ReleaseGateMode,
    enforcement_enabled: Type.Boolean(),
    metrics_reliable: Type.Boolean(),
    release_allowed: Type.Boolean(),
    hold_required: Type.Boolean(),
    critical_signal_count: Type.Integer({ minimum: 0 }),
    critical_signal_codes: Type.Array(Type.String()),
    reasons: Type.Array(Type.String()),
    summary: Type.String(),
  },
  { additionalProperties: false },
);

/** A hold as this service reports it beside the client's fields. */
export const HeldIntent = Type.Object(
  {
    intent_id: Uuid,
    intent_state: Type.String(),
    amount_cents: Type.Integer(),
    currency: Type.String(),
    deadline: Type.String(),
    signal_codes: Type.Array(Type.String()),
    held_at: Type.String(),
    /** release, refund or split (an operator), expired (the deadline refunded it); null while held. */
    resolution: Nullable(Type.String()),
    released_cents: Nullable(Type.Integer()),
    resolved_by: Nullable(Type.String()),
    resolved_at: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const ReviewQueueItem = Type.Object(
  {
    operator_did: Type.String(),
    review_state: Type.Enum(['open', 'in_review', 'closed'] as const),
    review_outcome: Type.String(),
    review_reasons: Type.Array(Type.String()),
    anomaly_flagged: Type.Boolean(),
    opened_at: Type.String(),
    reviewed_at: Type.String(),
    updated_at: Type.String(),
    last_receipt_message_digest_hex: Type.String(),
    fraud_signals: Type.Array(FraudSignal),
    fraud_assessment: FraudAssessment,
    release_gate: ReleaseGateDecision,
    ...HeldIntent.properties,
  },
  { additionalProperties: false },
);

export const ReviewQueueQuery = Type.Object(
  {
    /** none, open, in_review, closed, all; left out: the holds awaiting a resolution (open and in_review). */
    state: Type.Optional(Type.Enum(['none', 'open', 'in_review', 'closed', 'all'] as const)),
    fraud_severity: Type.Optional(Severity),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    score_version: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ReviewQueueQuery = Static<typeof ReviewQueueQuery>;

export const ReviewQueue = Type.Object(
  { schema_version: Type.Literal(1), tenant_id: Type.String(), score_model_version: Type.String(), items: Type.Array(ReviewQueueItem) },
  { additionalProperties: false },
);
export type ReviewQueue = Static<typeof ReviewQueue>;

export const reviewEventTypes = ['review_open_requested', 'appeal_requested', 'replay_requested', 'review_outcome_recorded'] as const;
export const reviewOutcomes = ['confirmed_risk', 'false_positive', 'needs_more_evidence'] as const;
const ReviewOutcome = Type.Enum(reviewOutcomes);

/** The client sends an outcome either as `review_outcome` with `review_outcome_recorded`, or as the event type itself. */
export const ReviewEventBody = Type.Object(
  {
    event_type: Type.Enum([...reviewEventTypes, ...reviewOutcomes]),
    review_outcome: Type.Optional(ReviewOutcome),
    signal_code: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    intent_id: Type.Optional(Uuid),
    provider_event_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    summary: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type ReviewEventBody = Static<typeof ReviewEventBody>;

export const ReviewEventAnswer = Type.Object(
  {
    schema_version: Type.Literal(1),
    tenant_id: Type.String(),
    operator_did: Type.String(),
    score_model_version: Type.String(),
    requested_event_type: Type.String(),
    recorded_event_type: Type.Enum(reviewEventTypes),
    review_outcome: Type.Optional(ReviewOutcome),
    signal_code: Type.Optional(Type.String()),
    intent_id: Type.Optional(Uuid),
    provider_event_id: Type.Optional(Type.String()),
    accepted: Type.Literal(true),
    event_id: Uuid,
    recorded_at: Type.String(),
  },
  { additionalProperties: false },
);
export type ReviewEventAnswer = Static<typeof ReviewEventAnswer>;

export const OperatorReviewParams = Type.Object({ operator_did: Type.String({ minLength: 1, maxLength: didLengthMax }) });
export const ScoreVersionOnly = Type.Object({ score_version: Type.Optional(Type.String()) }, { additionalProperties: false });

const ReviewEventSummary = Type.Object(
  {
    event_id: Uuid,
    event_type: Type.String(),
    review_outcome: Nullable(Type.String()),
    signal_code: Nullable(Type.String()),
    intent_id: Nullable(Uuid),
    summary: Type.String(),
    recorded_by: Type.String(),
    recorded_at: Type.String(),
  },
  { additionalProperties: false },
);

export const OperatorReviewStatus = Type.Object(
  {
    schema_version: Type.Literal(1),
    tenant_id: Type.String(),
    operator_did: Type.String(),
    score_model_version: Type.String(),
    review_state: Type.Enum(['none', 'open', 'in_review', 'closed'] as const),
    review_outcome: Type.String(),
    review_reasons: Type.Array(Type.String()),
    fraud_signals: Type.Array(FraudSignal),
    fraud_assessment: FraudAssessment,
    release_gate: ReleaseGateDecision,
    held_intents: Type.Array(HeldIntent),
    review_events: Type.Array(ReviewEventSummary),
  },
  { additionalProperties: false },
);
export type OperatorReviewStatus = Static<typeof OperatorReviewStatus>;

export const fraudMetricsWindows = ['24h', '7d', '30d'] as const;
export const FraudMetricsQuery = Type.Object(
  { window: Type.Optional(Type.Enum(fraudMetricsWindows)), score_version: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export type FraudMetricsQuery = Static<typeof FraudMetricsQuery>;

const Count = Type.Integer({ minimum: 0 });
const Bps = Type.Integer({ minimum: 0, maximum: 10000 });

export const FraudMetrics = Type.Object(
  {
    schema_version: Type.Literal(1),
    tenant_id: Type.String(),
    score_model_version: Type.String(),
    fraud_signal_version: Type.String(),
    window: Type.Enum(fraudMetricsWindows),
    window_started_at: Type.String(),
    window_ended_at: Type.String(),
    generated_at: Type.String(),
    flagged_operator_count: Count,
    critical_signal_count: Count,
    high_signal_count: Count,
    elevated_signal_count: Count,
    review_open_count: Count,
    review_load_count: Count,
    reviewed_count: Count,
    labeled_outcome_count: Count,
    confirmed_risk_count: Count,
    false_positive_count: Count,
    needs_more_evidence_count: Count,
    review_precision_bps: Bps,
    false_positive_rate_bps: Bps,
    confirmed_risk_rate_bps: Bps,
    labeled_coverage_bps: Bps,
    median_time_to_review_seconds: Count,
    refund_burst_count: Count,
    dispute_cluster_count: Count,
    replay_appeal_abuse_count: Count,
    critical_signal_hold_candidate_count: Count,
    provider_signal_count: Count,
    stale_label_gap_seconds: Count,
    stale_signal_family_label_gap_count: Count,
    backtest_summary: Type.String(),
    release_gate_config: ReleaseGateConfig,
    release_gate_metrics_reliability: MetricsReliability,
    // This service's own counts.
    holds_placed_count: Count,
    holds_resolved: Type.Object({ release: Count, refund: Count, split: Count, expired: Count }, { additionalProperties: false }),
    signal_counts_by_code: Type.Record(Type.String(), Count),
  },
  { additionalProperties: false },
);
export type FraudMetrics = Static<typeof FraudMetrics>;

export const reviewResolutions = ['release', 'refund', 'split'] as const;
export const ResolveBody = Type.Object(
  {
    resolution: Type.Enum(reviewResolutions),
    /** With `split` only: the payee's part, more than 0 and less than the intent's amount; the rest is refunded. */
    released_cents: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Why, in the reviewer's words: kept with the hold and signed into the resolution receipt. */
    note: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  },
  { additionalProperties: false },
);
export type ResolveBody = Static<typeof ResolveBody>;

export const ResolveAnswer = Type.Object(
  {
    ...Intent.properties,
    settlement: Type.Object({
      action: Type.String(),
      reason: Type.String(),
      transaction_id: Type.String(),
      released_cents: Type.Integer({ minimum: 0, description: 'The part paid to the payee.' }),
      refunded_cents: Type.Integer({ minimum: 0, description: 'The part returned to the principal.' }),
    }),
    resolution: Type.Object(
      {
        resolution: Type.Enum(reviewResolutions),
        released_cents: Type.Integer({ minimum: 0 }),
        refunded_cents: Type.Integer({ minimum: 0 }),
        resolved_by: Type.String(),
        resolved_at: Type.String(),
        receipt: SignedArtifact,
      },
      { additionalProperties: false },
    ),
  },
  { description: 'A held intent resolved by an operator, with the signed receipt of the resolution.' },
);
export type ResolveAnswer = Static<typeof ResolveAnswer>;
