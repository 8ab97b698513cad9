// Standing aggregates (migrations/0015_standing.sql, docs/standing.md): per (tenant, operator, currency) all-time
// rows and per-UTC-day rows, added to in the settling transaction and recomputed from the intents by a rebuild.
import type { IntentState } from '../contracts/intents.ts';
import type { Queryable } from '../infra/database.ts';
import { standingRowsLock } from './commit-locks.ts';

/** A split counts as a delivery (`released_count`, and `split_count` among them), its parts added to the released
 * and refunded sums. */
export type StandingOutcome = 'released' | 'split' | 'refunded' | 'expired';

/** Buckets of the funding-to-terminal histogram, by lower bound in seconds; the SQL function
 * standing_duration_bucket holds the same bounds. */
export const durationBucketLowerBoundsSeconds = [0, 1, 5, 15, 60, 300, 900, 3600, 14400, 86400, 259200, 604800, 2592000] as const;

export interface StandingAggregateRow {
  readonly operatorDid: string;
  readonly currency: string;
  /** `YYYY-MM-DD` for a day row; null for an all-time row. */
  readonly day: string | null;
  readonly releasedCount: number;
  readonly refundedCount: number;
  readonly expiredCount: number;
  readonly releasedCents: bigint;
  readonly refundedCents: bigint;
  readonly expiredCents: bigint;
  /** Count per bucket of durationBucketLowerBoundsSeconds. */
  readonly durationHistogram: readonly number[];
  /** RFC 3339 seconds, UTC, truncated; all-time rows only. */
  readonly firstFundedAt: string | null;
  readonly lastSettledAt: string | null;
}

export interface StandingSnapshot {
  /** The reading transaction's time, RFC 3339 seconds UTC, and its UTC day. */
  readonly issuedAt: string;
  readonly asOfDay: string;
  readonly ledgerSeq: number;
  readonly ledgerRowHashHex: string;
  readonly rows: readonly StandingAggregateRow[];
}

const secondsUtc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
/** An aggregate row's columns, with its day (text, or NULL for an all-time row). */
const aggregateColumns = (day: string) => `operator_did, currency, ${day} AS day, released_count, refunded_count, expired_count,
  released_cents::text, refunded_cents::text, expired_cents::text, duration_histogram::text[]`;

function toRow(row: Record<string, unknown>): StandingAggregateRow {
  return {
    operatorDid: row.operator_did as string,
    currency: row.currency as string,
    day: (row.day as string | null) ?? null,
    releasedCount: Number(row.released_count),
    refundedCount: Number(row.refunded_count),
    expiredCount: Number(row.expired_count),
    releasedCents: BigInt(row.released_cents as string),
    refundedCents: BigInt(row.refunded_cents as string),
    expiredCents: BigInt(row.expired_cents as string),
    durationHistogram: (row.duration_histogram as string[]).map(Number),
    firstFundedAt: (row.first_funded_at as string | null) ?? null,
    lastSettledAt: (row.last_settled_at as string | null) ?? null,
  };
}

/** Queues one settled intent's contribution to travel with COMMIT, after the transition and the ledger posting. */
export function queueStandingSettlement(
  tx: Queryable,
  intent: { readonly tenantId: string; readonly intentId: string; readonly payeeDid: string; readonly currency: string },
  outcome: StandingOutcome,
): void {
  tx.beforeCommit({ text: 'SELECT standing_record_settlement($1, $2, $3)', values: [intent.tenantId, intent.intentId, outcome] }, standingRowsLock(intent.payeeDid, intent.currency));
}

/**
 * The all-time rows of one operator (or of every operator when `operatorDid` is null), the day rows of the last
 * `recentDays` UTC days (today included), the ledger head and the clock. Run it in a REPEATABLE READ transaction: a
 * settlement commits its aggregates and its ledger rows together, so in one snapshot the head read here is the
 * checkpoint the aggregates stand at. The head travels with the transaction's opening; the aggregates follow as a
 * statement of their own, so that each connection plans it once (it is prepared), not at every read.
 */
export async function readStandingSnapshot(tx: Queryable, tenantId: string, operatorDid: string | null, recentDays: number): Promise<StandingSnapshot> {
  const { rows: [header] } = await tx.query(
    `SELECT ${secondsUtc('transaction_timestamp()')} AS issued_at, (transaction_timestamp() AT TIME ZONE 'UTC')::date::text AS as_of_day,
       h.last_ledger_seq::text AS ledger_seq, encode(h.last_row_hash, 'hex') AS row_hash_hex
     FROM (SELECT 1) AS one LEFT JOIN ledger_heads h ON h.tenant_id = $1`,
    [tenantId],
  );
  // Two texts rather than one with "operator_did = $2 OR $2 IS NULL", which a prepared (generic) plan could not
  // answer from the primary key.
  const operatorFilter = operatorDid === null ? '' : 'AND operator_did = $3';
  const { rows } = await tx.query(
    `SELECT ${aggregateColumns('NULL')}, ${secondsUtc('first_funded_at')} AS first_funded_at, ${secondsUtc('last_settled_at')} AS last_settled_at
     FROM standing_operator_totals WHERE tenant_id = $1 ${operatorFilter}
     UNION ALL
     SELECT ${aggregateColumns('day::text')}, NULL, NULL
     FROM standing_operator_days
     WHERE tenant_id = $1 ${operatorFilter} AND day > (transaction_timestamp() AT TIME ZONE 'UTC')::date - $2::integer`,
    operatorDid === null ? [tenantId, recentDays] : [tenantId, recentDays, operatorDid],
  );
  return {
    issuedAt: header!.issued_at as string,
    asOfDay: header!.as_of_day as string,
    ledgerSeq: Number(header!.ledger_seq ?? 0),
    ledgerRowHashHex: (header!.row_hash_hex as string | null) ?? '0'.repeat(64),
    rows: rows.map(toRow),
  };
}

const bucketCounts = durationBucketLowerBoundsSeconds.map((_, index) => `count(*) FILTER (WHERE bucket = ${index + 1})`).join(', ');
// In the tables' column order: the counts (a split counted as released), then the sums of the parts each outcome
// moved (a split's released part to released, its refunded part to refunded).
const sums = [
  `count(*) FILTER (WHERE outcome IN ('released', 'split'))`,
  `count(*) FILTER (WHERE outcome = 'refunded')`,
  `count(*) FILTER (WHERE outcome = 'expired')`,
  `coalesce(sum(released_cents) FILTER (WHERE outcome IN ('released', 'split')), 0)`,
  `coalesce(sum(refunded_cents) FILTER (WHERE outcome IN ('refunded', 'split')), 0)`,
  `coalesce(sum(amount_cents) FILTER (WHERE outcome = 'expired'), 0)`,
].join(', ');
const splitCount = `count(*) FILTER (WHERE outcome = 'split')`;
/**
 * The outcome of an intent in each terminal state, as an SQL expression over its row, classified as the settling
 * transaction classified it: a release; a refund after evidence (predicate_passed false); a refund without
 * evidence, i.e. for the deadline (predicate_passed null). Keyed by every terminal state of the lifecycle table:
 * src/services/standing-service.ts does not compile while one is missing.
 */
export const standingOutcomeSqlByState = {
  released: `'released'`,
  refunded: `CASE WHEN predicate_passed IS NULL THEN 'expired' ELSE 'refunded' END`,
  resolved_split: `'split'`,
} as const satisfies Partial<Record<IntentState, string>>;
export type StandingSettledState = keyof typeof standingOutcomeSqlByState;

const standingOutcomeSql = `CASE state ${Object.entries(standingOutcomeSqlByState).map(([state, outcome]) => `WHEN '${state}' THEN ${outcome}`).join(' ')} END`;
const standingSettledStatesSql = Object.keys(standingOutcomeSqlByState).map((state) => `'${state}'`).join(', ');
// Each terminal intent once, with its outcome.
const settledIntents = `WITH settled AS (
  SELECT payee_did, currency, amount_cents, released_cents, refunded_cents, coalesce(funded_at, settled_at) AS funded_at, settled_at,
    ${standingOutcomeSql} AS outcome,
    standing_duration_bucket(extract(epoch FROM settled_at - coalesce(funded_at, settled_at))) AS bucket
  FROM intents WHERE tenant_id = $1 AND state IN (${standingSettledStatesSql}))`;

/** Replaces a tenant's aggregates with ones recomputed from its intents. Run in a REPEATABLE READ system
 * transaction: a settlement committing meanwhile makes it fail with a serialization error, to be retried. */
export async function rebuildStandingAggregates(tx: Queryable, tenantId: string): Promise<{ operators: number; dayRows: number }> {
  await tx.query('DELETE FROM standing_operator_totals WHERE tenant_id = $1', [tenantId]);
  await tx.query('DELETE FROM standing_operator_days WHERE tenant_id = $1', [tenantId]);
  await tx.query(
    `${settledIntents}
     INSERT INTO standing_operator_totals
     SELECT $1, payee_did, currency, ${sums}, ARRAY[${bucketCounts}]::bigint[], min(funded_at), max(settled_at), ${splitCount}
     FROM settled GROUP BY payee_did, currency`,
    [tenantId],
  );
  const dayRows = await tx.query(
    `${settledIntents}
     INSERT INTO standing_operator_days
     SELECT $1, payee_did, (settled_at AT TIME ZONE 'UTC')::date, currency, ${sums}, ARRAY[${bucketCounts}]::bigint[], ${splitCount}
     FROM settled GROUP BY payee_did, (settled_at AT TIME ZONE 'UTC')::date, currency`,
    [tenantId],
  );
  const { rows } = await tx.query<{ operators: string }>('SELECT count(DISTINCT operator_did)::text AS operators FROM standing_operator_totals WHERE tenant_id = $1', [tenantId]);
  return { operators: Number(rows[0]!.operators), dayRows: dayRows.rowCount ?? 0 };
}

/** One operator's all-time outcome counts, every currency added. */
export interface OperatorOutcomeCounts {
  readonly operatorDid: string;
  readonly releasedCount: number;
  readonly refundedCount: number;
  readonly expiredCount: number;
}

export interface StandingSummarySnapshot {
  readonly issuedAt: string;
  readonly ledgerSeq: number;
  /** At most `operatorsMax + 1` operators, so that the caller can tell there were more. */
  readonly operators: readonly OperatorOutcomeCounts[];
  /** Per currency: settled intents and the sum of their amounts (exact). */
  readonly currencies: readonly { currency: string; terminalIntents: number; volumeCents: bigint }[];
}

/**
 * What a portfolio summary aggregates, from the all-time rows alone: the counts per operator (the scores need each
 * operator's own), the volumes per currency, and the ledger head, in one snapshot. Run it in a REPEATABLE READ
 * transaction, as readStandingSnapshot.
 */
export async function readStandingSummary(tx: Queryable, tenantId: string, operatorsMax: number): Promise<StandingSummarySnapshot> {
  const { rows: [header] } = await tx.query(
    `SELECT ${secondsUtc('transaction_timestamp()')} AS issued_at, h.last_ledger_seq::text AS ledger_seq
     FROM (SELECT 1) AS one LEFT JOIN ledger_heads h ON h.tenant_id = $1`,
    [tenantId],
  );
  const { rows: operators } = await tx.query<{ operator_did: string; released: string; refunded: string; expired: string }>(
    `SELECT operator_did, sum(released_count)::text AS released, sum(refunded_count)::text AS refunded, sum(expired_count)::text AS expired
     FROM standing_operator_totals WHERE tenant_id = $1
     GROUP BY operator_did ORDER BY operator_did LIMIT $2`,
    [tenantId, operatorsMax + 1],
  );
  const { rows: currencies } = await tx.query<{ currency: string; intents: string; volume: string }>(
    `SELECT currency, sum(released_count + refunded_count + expired_count)::text AS intents,
       sum(released_cents + refunded_cents + expired_cents)::text AS volume
     FROM standing_operator_totals WHERE tenant_id = $1 GROUP BY currency ORDER BY currency`,
    [tenantId],
  );
  return {
    issuedAt: header!.issued_at as string,
    ledgerSeq: Number(header!.ledger_seq ?? 0),
    operators: operators.map((row) => ({
      operatorDid: row.operator_did,
      releasedCount: Number(row.released),
      refundedCount: Number(row.refunded),
      expiredCount: Number(row.expired),
    })),
    currencies: currencies.map((row) => ({ currency: row.currency, terminalIntents: Number(row.intents), volumeCents: BigInt(row.volume) })),
  };
}
