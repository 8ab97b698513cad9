// Review holds (docs/release-gate.md, migrations/0031_review_holds.sql): the tenant's release gate, the signals found
// at releases, the holds and their resolutions, and the reviewers' events; and the counts the fraud metrics read.
import type { Queryable, Statement } from '../infra/database.ts';

export type ReleaseGateModeRow = 'review_only' | 'critical_hold';
export type HoldResolution = 'release' | 'refund' | 'split' | 'expired';
export type ReviewEventType = 'review_open_requested' | 'appeal_requested' | 'replay_requested' | 'review_outcome_recorded';
export type ReviewOutcome = 'confirmed_risk' | 'false_positive' | 'needs_more_evidence';

export interface ReleaseGateRow {
  readonly mode: ReleaseGateModeRow;
  readonly standingScoreMin: number | null;
  readonly amountLimitCents: number | null;
  readonly firstSettlement: boolean;
  readonly updatedAt: Date;
}

/** What the tenant has settled with a payee, summed over currencies (the standing aggregates). */
export interface PayeeHistory {
  readonly releasedCount: number;
  readonly refundedCount: number;
  readonly expiredCount: number;
}

/** The tenant's gate (undefined when never set) and its history with the payee, in one round trip. */
export function releaseGateInputsStatement(tenantId: string, payeeDid: string): Statement<{ gate: ReleaseGateRow | undefined; history: PayeeHistory }> {
  return {
    text: `SELECT g.mode, g.standing_score_min, g.amount_limit_cents::text AS amount_limit_cents, g.first_settlement, g.updated_at,
             (SELECT coalesce(sum(released_count), 0)::text FROM standing_operator_totals WHERE tenant_id = $1 AND operator_did = $2) AS released,
             (SELECT coalesce(sum(refunded_count), 0)::text FROM standing_operator_totals WHERE tenant_id = $1 AND operator_did = $2) AS refunded,
             (SELECT coalesce(sum(expired_count), 0)::text FROM standing_operator_totals WHERE tenant_id = $1 AND operator_did = $2) AS expired
           FROM (SELECT 1) AS one LEFT JOIN release_gate_configs g ON g.tenant_id = $1`,
    values: [tenantId, payeeDid],
    read: ({ rows }) => {
      const row = rows[0] as Record<string, unknown>;
      return {
        gate: row.mode === null ? undefined : gateOf(row),
        history: { releasedCount: Number(row.released), refundedCount: Number(row.refunded), expiredCount: Number(row.expired) },
      };
    },
  };
}

const gateOf = (row: Record<string, unknown>): ReleaseGateRow => ({
  mode: row.mode as ReleaseGateModeRow,
  standingScoreMin: row.standing_score_min === null ? null : Number(row.standing_score_min),
  amountLimitCents: row.amount_limit_cents === null ? null : Number(row.amount_limit_cents),
  firstSettlement: row.first_settlement as boolean,
  updatedAt: row.updated_at as Date,
});

export async function findReleaseGate(tx: Queryable, tenantId: string): Promise<ReleaseGateRow | undefined> {
  const { rows } = await tx.query(
    `SELECT mode, standing_score_min, amount_limit_cents::text AS amount_limit_cents, first_settlement, updated_at FROM release_gate_configs WHERE tenant_id = $1`,
    [tenantId],
  );
  return rows[0] ? gateOf(rows[0] as Record<string, unknown>) : undefined;
}

export async function saveReleaseGate(tx: Queryable, tenantId: string, gate: Omit<ReleaseGateRow, 'updatedAt'>): Promise<ReleaseGateRow> {
  const { rows } = await tx.query(
    `INSERT INTO release_gate_configs (tenant_id, mode, standing_score_min, amount_limit_cents, first_settlement)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id) DO UPDATE SET mode = excluded.mode, standing_score_min = excluded.standing_score_min,
       amount_limit_cents = excluded.amount_limit_cents, first_settlement = excluded.first_settlement, updated_at = now()
     RETURNING mode, standing_score_min, amount_limit_cents::text AS amount_limit_cents, first_settlement, updated_at`,
    [tenantId, gate.mode, gate.standingScoreMin, gate.amountLimitCents, gate.firstSettlement],
  );
  return gateOf(rows[0] as Record<string, unknown>);
}

export interface NewFraudSignal {
  readonly signalId: string;
  readonly intentId: string;
  readonly operatorDid: string;
  readonly code: string;
  readonly severity: string;
  readonly gateMode: ReleaseGateModeRow;
  readonly held: boolean;
  readonly summary: string;
}

/** Queues the signals found at one release, to travel with COMMIT (with the release or the hold they came with). */
export function queueFraudSignals(tx: Queryable, tenantId: string, signals: readonly NewFraudSignal[]): void {
  if (signals.length === 0) return;
  tx.beforeCommit({
    text: `INSERT INTO fraud_signals (tenant_id, signal_id, intent_id, operator_did, code, severity, gate_mode, held, summary)
           SELECT $1, s.signal_id, s.intent_id, s.operator_did, s.code, s.severity, s.gate_mode, s.held, s.summary
           FROM json_to_recordset($2::json) AS s(signal_id uuid, intent_id uuid, operator_did text, code text, severity text, gate_mode text, held boolean, summary text)`,
    values: [tenantId, JSON.stringify(signals.map((signal) => ({
      signal_id: signal.signalId,
      intent_id: signal.intentId,
      operator_did: signal.operatorDid,
      code: signal.code,
      severity: signal.severity,
      gate_mode: signal.gateMode,
      held: signal.held,
      summary: signal.summary,
    })))],
  });
}

export function queueReviewHold(tx: Queryable, tenantId: string, hold: { intentId: string; operatorDid: string; signalCodes: readonly string[] }): void {
  tx.beforeCommit({
    text: 'INSERT INTO review_holds (tenant_id, intent_id, operator_did, signal_codes) VALUES ($1, $2, $3, $4)',
    values: [tenantId, hold.intentId, hold.operatorDid, hold.signalCodes],
  });
}

/** Queues the end of an intent's open hold (one row, or the transaction fails: the hold was resolved meanwhile). */
export function queueHoldResolution(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  resolution: { kind: HoldResolution; releasedCents: number; resolvedBy: string | null; note: string | null },
): void {
  tx.beforeCommit({
    text: `WITH ended AS (UPDATE review_holds SET resolution = $3, released_cents = $4, resolved_by = $5, resolution_note = $6, resolved_at = now()
             WHERE tenant_id = $1 AND intent_id = $2 AND resolution IS NULL RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM ended), 'review hold open')`,
    values: [tenantId, intentId, resolution.kind, resolution.releasedCents, resolution.resolvedBy, resolution.note],
  });
}

export interface ReviewHoldRow {
  readonly intentId: string;
  readonly operatorDid: string;
  readonly signalCodes: readonly string[];
  readonly heldAt: Date;
  readonly resolution: HoldResolution | null;
  readonly releasedCents: number | null;
  readonly resolvedBy: string | null;
  readonly resolutionNote: string | null;
  readonly resolvedAt: Date | null;
  readonly amountCents: number;
  readonly currency: string;
  readonly intentState: string;
  readonly deadline: Date;
  /** Review events recorded about this intent. */
  readonly reviewEventCount: number;
  readonly lastReviewOutcome: ReviewOutcome | null;
  readonly lastReviewedAt: Date | null;
}

const holdColumns = `h.intent_id, h.operator_did, h.signal_codes, h.held_at, h.resolution, h.released_cents::text AS released_cents, h.resolved_by,
  h.resolution_note, h.resolved_at, i.amount_cents::text AS amount_cents, i.currency, i.state, i.deadline,
  (SELECT count(*) FROM review_events e WHERE e.tenant_id = h.tenant_id AND e.intent_id = h.intent_id)::int AS review_event_count,
  (SELECT e.review_outcome FROM review_events e WHERE e.tenant_id = h.tenant_id AND e.intent_id = h.intent_id AND e.review_outcome IS NOT NULL
     ORDER BY e.recorded_at DESC LIMIT 1) AS last_review_outcome,
  (SELECT max(e.recorded_at) FROM review_events e WHERE e.tenant_id = h.tenant_id AND e.intent_id = h.intent_id) AS last_reviewed_at`;

const holdOf = (row: Record<string, unknown>): ReviewHoldRow => ({
  intentId: row.intent_id as string,
  operatorDid: row.operator_did as string,
  signalCodes: row.signal_codes as string[],
  heldAt: row.held_at as Date,
  resolution: row.resolution as HoldResolution | null,
  releasedCents: row.released_cents === null ? null : Number(row.released_cents),
  resolvedBy: row.resolved_by as string | null,
  resolutionNote: row.resolution_note as string | null,
  resolvedAt: row.resolved_at as Date | null,
  amountCents: Number(row.amount_cents),
  currency: row.currency as string,
  intentState: row.state as string,
  deadline: row.deadline as Date,
  reviewEventCount: row.review_event_count as number,
  lastReviewOutcome: row.last_review_outcome as ReviewOutcome | null,
  lastReviewedAt: row.last_reviewed_at as Date | null,
});

export type HoldFilter = 'pending' | 'open' | 'in_review' | 'closed' | 'all';

/** The tenant's holds, newest first: `pending` (open or in review), `open` (no review event yet), `in_review`,
 * `closed` (resolved), `all`. */
export async function listReviewHolds(tx: Queryable, tenantId: string, filter: HoldFilter, limit: number, operatorDid?: string): Promise<ReviewHoldRow[]> {
  const reviewed = 'EXISTS (SELECT 1 FROM review_events e WHERE e.tenant_id = h.tenant_id AND e.intent_id = h.intent_id)';
  const where = {
    pending: 'h.resolution IS NULL',
    open: `h.resolution IS NULL AND NOT ${reviewed}`,
    in_review: `h.resolution IS NULL AND ${reviewed}`,
    closed: 'h.resolution IS NOT NULL',
    all: 'true',
  }[filter];
  const { rows } = await tx.query(
    `SELECT ${holdColumns} FROM review_holds h JOIN intents i ON i.tenant_id = h.tenant_id AND i.intent_id = h.intent_id
     WHERE h.tenant_id = $1 AND ${where} AND ($3::text IS NULL OR h.operator_did = $3)
     ORDER BY h.held_at DESC, h.intent_id LIMIT $2`,
    [tenantId, limit, operatorDid ?? null],
  );
  return rows.map((row) => holdOf(row as Record<string, unknown>));
}

export async function findReviewHold(tx: Queryable, tenantId: string, intentId: string): Promise<ReviewHoldRow | undefined> {
  const { rows } = await tx.query(
    `SELECT ${holdColumns} FROM review_holds h JOIN intents i ON i.tenant_id = h.tenant_id AND i.intent_id = h.intent_id
     WHERE h.tenant_id = $1 AND h.intent_id = $2`,
    [tenantId, intentId],
  );
  return rows[0] ? holdOf(rows[0] as Record<string, unknown>) : undefined;
}

export interface FraudSignalRow {
  readonly intentId: string;
  readonly code: string;
  readonly severity: string;
  readonly held: boolean;
  readonly summary: string;
  readonly observedAt: Date;
}

/** The signals found for an operator (a payee), newest first. */
export async function listOperatorSignals(tx: Queryable, tenantId: string, operatorDid: string, limit: number): Promise<FraudSignalRow[]> {
  const { rows } = await tx.query(
    `SELECT intent_id, code, severity, held, summary, observed_at FROM fraud_signals
     WHERE tenant_id = $1 AND operator_did = $2 ORDER BY observed_at DESC, signal_id LIMIT $3`,
    [tenantId, operatorDid, limit],
  );
  return rows.map((row) => ({
    intentId: row.intent_id as string,
    code: row.code as string,
    severity: row.severity as string,
    held: row.held as boolean,
    summary: row.summary as string,
    observedAt: row.observed_at as Date,
  }));
}

/** The signals found at the intents of a set, by intent. */
export async function signalsOfIntents(tx: Queryable, tenantId: string, intentIds: readonly string[]): Promise<Map<string, FraudSignalRow[]>> {
  const found = new Map<string, FraudSignalRow[]>();
  if (intentIds.length === 0) return found;
  const { rows } = await tx.query(
    `SELECT intent_id, code, severity, held, summary, observed_at FROM fraud_signals
     WHERE tenant_id = $1 AND intent_id = ANY($2::uuid[]) ORDER BY observed_at, code`,
    [tenantId, intentIds],
  );
  for (const row of rows) {
    const signal: FraudSignalRow = {
      intentId: row.intent_id as string,
      code: row.code as string,
      severity: row.severity as string,
      held: row.held as boolean,
      summary: row.summary as string,
      observedAt: row.observed_at as Date,
    };
    found.set(signal.intentId, [...(found.get(signal.intentId) ?? []), signal]);
  }
  return found;
}

export interface NewReviewEvent {
  readonly eventId: string;
  readonly operatorDid: string;
  readonly eventType: ReviewEventType;
  readonly reviewOutcome: ReviewOutcome | null;
  readonly signalCode: string | null;
  readonly intentId: string | null;
  readonly providerEventId: string | null;
  readonly summary: string;
  readonly recordedBy: string;
}

export interface ReviewEventRow extends NewReviewEvent {
  readonly recordedAt: Date;
}

export async function insertReviewEvent(tx: Queryable, tenantId: string, event: NewReviewEvent): Promise<ReviewEventRow> {
  const { rows } = await tx.query<{ recorded_at: Date }>(
    `INSERT INTO review_events (tenant_id, event_id, operator_did, event_type, review_outcome, signal_code, intent_id, provider_event_id, summary, recorded_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING recorded_at`,
    [tenantId, event.eventId, event.operatorDid, event.eventType, event.reviewOutcome, event.signalCode, event.intentId, event.providerEventId, event.summary, event.recordedBy],
  );
  return { ...event, recordedAt: rows[0]!.recorded_at };
}

export async function listOperatorReviewEvents(tx: Queryable, tenantId: string, operatorDid: string, limit: number): Promise<ReviewEventRow[]> {
  const { rows } = await tx.query(
    `SELECT event_id, operator_did, event_type, review_outcome, signal_code, intent_id, provider_event_id, summary, recorded_by, recorded_at
     FROM review_events WHERE tenant_id = $1 AND operator_did = $2 ORDER BY recorded_at DESC, event_id LIMIT $3`,
    [tenantId, operatorDid, limit],
  );
  return rows.map((row) => ({
    eventId: row.event_id as string,
    operatorDid: row.operator_did as string,
    eventType: row.event_type as ReviewEventType,
    reviewOutcome: row.review_outcome as ReviewOutcome | null,
    signalCode: row.signal_code as string | null,
    intentId: row.intent_id as string | null,
    providerEventId: row.provider_event_id as string | null,
    summary: row.summary as string,
    recordedBy: row.recorded_by as string,
    recordedAt: row.recorded_at as Date,
  }));
}

/** Whether the tenant has an intent by this id (review events may name one). */
export async function intentExists(tx: Queryable, tenantId: string, intentId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM intents WHERE tenant_id = $1 AND intent_id = $2', [tenantId, intentId]);
  return rowCount === 1;
}

/** Whether the operator appears in the tenant's review data or as the payee of one of its intents. */
export async function operatorKnown(tx: Queryable, tenantId: string, operatorDid: string): Promise<boolean> {
  const { rows } = await tx.query<{ known: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM intents WHERE tenant_id = $1 AND payee_did = $2)
         OR EXISTS (SELECT 1 FROM review_events WHERE tenant_id = $1 AND operator_did = $2) AS known`,
    [tenantId, operatorDid],
  );
  return rows[0]!.known;
}

/** The operators with a hold still waiting for a resolution: how many, or (given one) whether that one is. */
export async function countOperatorsUnderReview(tx: Queryable, tenantId: string, operatorDid?: string): Promise<number> {
  const { rows } = await tx.query<{ operators: number }>(
    `SELECT count(DISTINCT operator_did)::int AS operators FROM review_holds
      WHERE tenant_id = $1 AND resolution IS NULL AND ($2::text IS NULL OR operator_did = $2)`,
    [tenantId, operatorDid ?? null],
  );
  return rows[0]!.operators;
}

export interface ReviewCounts {
  readonly flaggedOperators: number;
  readonly signalsBySeverity: Readonly<Record<'critical' | 'high' | 'elevated', number>>;
  readonly signalsByCode: Readonly<Record<string, number>>;
  readonly holdsPlaced: number;
  readonly holdsOpen: number;
  readonly holdsResolved: Readonly<Record<HoldResolution, number>>;
  readonly reviewEvents: number;
  readonly outcomes: Readonly<Record<ReviewOutcome, number>>;
  readonly appeals: number;
  /** Median seconds from a hold to its resolution, over the holds resolved in the window (0 when none). */
  readonly medianSecondsToResolution: number;
}

/** The counts of the fraud metrics over [from, to): signals found, holds placed and resolved, review events. */
export async function reviewCounts(tx: Queryable, tenantId: string, from: Date, to: Date): Promise<ReviewCounts> {
  const [signals, holds, events] = await tx.batch([
    {
      text: `SELECT count(DISTINCT operator_did)::int AS operators,
               count(*) FILTER (WHERE severity = 'critical')::int AS critical, count(*) FILTER (WHERE severity = 'high')::int AS high,
               count(*) FILTER (WHERE severity = 'elevated')::int AS elevated,
               (SELECT coalesce(json_object_agg(code, n), '{}'::json) FROM
                  (SELECT code, count(*)::int AS n FROM fraud_signals WHERE tenant_id = $1 AND observed_at >= $2 AND observed_at < $3 GROUP BY code) c) AS by_code
             FROM fraud_signals WHERE tenant_id = $1 AND observed_at >= $2 AND observed_at < $3`,
      values: [tenantId, from, to],
      read: ({ rows }: { rows: Record<string, unknown>[] }) => rows[0]!,
    },
    {
      text: `SELECT count(*) FILTER (WHERE held_at >= $2 AND held_at < $3)::int AS placed,
               count(*) FILTER (WHERE resolution IS NULL)::int AS open,
               count(*) FILTER (WHERE resolution = 'release' AND resolved_at >= $2 AND resolved_at < $3)::int AS release,
               count(*) FILTER (WHERE resolution = 'refund' AND resolved_at >= $2 AND resolved_at < $3)::int AS refund,
               count(*) FILTER (WHERE resolution = 'split' AND resolved_at >= $2 AND resolved_at < $3)::int AS split,
               count(*) FILTER (WHERE resolution = 'expired' AND resolved_at >= $2 AND resolved_at < $3)::int AS expired,
               coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM resolved_at - held_at))
                 FILTER (WHERE resolved_at >= $2 AND resolved_at < $3), 0)::float8 AS median_seconds
             FROM review_holds WHERE tenant_id = $1`,
      values: [tenantId, from, to],
      read: ({ rows }: { rows: Record<string, unknown>[] }) => rows[0]!,
    },
    {
      text: `SELECT count(*)::int AS events,
               count(*) FILTER (WHERE review_outcome = 'confirmed_risk')::int AS confirmed_risk,
               count(*) FILTER (WHERE review_outcome = 'false_positive')::int AS false_positive,
               count(*) FILTER (WHERE review_outcome = 'needs_more_evidence')::int AS needs_more_evidence,
               count(*) FILTER (WHERE event_type = 'appeal_requested')::int AS appeals
             FROM review_events WHERE tenant_id = $1 AND recorded_at >= $2 AND recorded_at < $3`,
      values: [tenantId, from, to],
      read: ({ rows }: { rows: Record<string, unknown>[] }) => rows[0]!,
    },
  ] as const);
  return {
    flaggedOperators: signals.operators as number,
    signalsBySeverity: { critical: signals.critical as number, high: signals.high as number, elevated: signals.elevated as number },
    signalsByCode: signals.by_code as Record<string, number>,
    holdsPlaced: holds.placed as number,
    holdsOpen: holds.open as number,
    holdsResolved: { release: holds.release as number, refund: holds.refund as number, split: holds.split as number, expired: holds.expired as number },
    reviewEvents: events.events as number,
    outcomes: {
      confirmed_risk: events.confirmed_risk as number,
      false_positive: events.false_positive as number,
      needs_more_evidence: events.needs_more_evidence as number,
    },
    appeals: events.appeals as number,
    medianSecondsToResolution: Math.round(holds.median_seconds as number),
  };
}
