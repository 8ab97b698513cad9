// Standing (docs/standing.md): an operator's settled history in one tenant, as signed receipts and a signed
// portfolio snapshot. Reads come from the incremental aggregates, which the terminal effect below adds to in the
// settling transaction; `rebuildStanding` recomputes them from the intents and must agree.
import type { TerminalEffect } from '../engine/effects.ts';
import type { ExactlyTerminalStates } from '../engine/lifecycle.ts';
import {
  durationBucketLowerBoundsSeconds,
  queueStandingSettlement,
  readStandingSnapshot,
  rebuildStandingAggregates,
  type StandingAggregateRow,
  type StandingOutcome,
  type StandingSettledState,
  type StandingSnapshot,
} from '../db/standing-repository.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { BoundedCache } from '../credentials/bounded-cache.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database } from '../infra/database.ts';
import type { GatewayKey } from '../infra/gateway-keys.ts';
import {
  standingExportOperatorsMax,
  standingRebuildAttemptsMax,
  standingRebuildRetryPauseMs,
  standingRebuildStatementTimeoutMs,
  standingReceiptCacheEntriesMax,
  standingReceiptCacheTtlMs,
  standingReceiptInvalidationsMax,
} from '../limits.ts';
import { operatorReceiptKind, portfolioSnapshotKind, signStandingArtifact } from '../signing/standing-artifacts.ts';

// ---- The terminal effect ----

// The rebuild classifies settled intents by their terminal state (src/db/standing-repository.ts): a terminal state
// the lifecycle table adds does not compile here until the rebuild classifies it.
const rebuildClassifiesEveryTerminalState: ExactlyTerminalStates<StandingSettledState> = true;

/** What a terminal transition means for the operator (the intent's payee): released, split (delivered at a metered
 * cost below the amount), refunded after evidence (failed, or held for review and then refunded), or expired
 * (refunded because the deadline passed without evidence). Decided by whether evidence was recorded, as the rebuild
 * decides it from the intent's row. */
export function standingOutcomeOf(action: 'release' | 'refund' | 'split', evidenceRecorded: boolean): StandingOutcome {
  // Every action is handled: one added does not compile here until its outcome is decided.
  switch (action) {
    case 'release':
      return 'released';
    case 'split':
      return 'split';
    case 'refund':
      return evidenceRecorded ? 'refunded' : 'expired';
  }
}

/** Adds the settled intent to its operator's aggregates; the statement travels with COMMIT, so the aggregates, the
 * state change and the ledger rows commit together or not at all. */
export const standingTerminalEffect: TerminalEffect = async (tx, transition) => {
  const { tenantId, payeeDid } = transition.intent;
  queueStandingSettlement(tx, transition.intent, standingOutcomeOf(transition.action, transition.intent.predicatePassed !== null));
  // Now, so that no receipt read from here on is stored as current, and again once committed, so that none read
  // between this point and COMMIT (which still saw the old aggregates) is either.
  receiptCache.invalidate(tenantId, payeeDid);
  tx.afterCommit(() => receiptCache.invalidate(tenantId, payeeDid));
};

// ---- The receipt cache ----

/**
 * Signed receipts this process answered lately, by tenant, operator, score version and signing key, kept
 * standingReceiptCacheTtlMs (docs/standing.md#caching). Invalidation is by stamp, so it costs one map write whatever
 * the number of score versions cached: every invalidation of an operator takes the next stamp; a receipt is stored
 * with the stamp current when its read began, and served only while no invalidation of its operator came after.
 */
export class StandingReceiptCache {
  readonly #receipts: BoundedCache<string, { stamp: number; answer: Record<string, unknown> }>;
  /** The stamp of each operator's last invalidation, oldest first; bounded, see #forgottenBelow. */
  readonly #invalidatedAt = new Map<string, number>();
  #stamp = 0;
  /** Receipts read before this stamp may have missed an invalidation this process no longer remembers. */
  #forgottenBelow = 0;

  constructor(entriesMax = standingReceiptCacheEntriesMax, ttlMs = standingReceiptCacheTtlMs, readonly invalidationsMax = standingReceiptInvalidationsMax) {
    this.#receipts = new BoundedCache(entriesMax, ttlMs);
  }

  /** The stamp a read takes before it opens its transaction. */
  stamp(): number {
    return this.#stamp;
  }

  get(tenantId: string, operatorDid: string, variant: string): Record<string, unknown> | undefined {
    const entry = this.#receipts.get(receiptKey(tenantId, operatorDid, variant));
    return entry && this.#current(tenantId, operatorDid, entry.stamp) ? entry.answer : undefined;
  }

  /** Stores a receipt read from stamp `stamp` on, unless its operator was invalidated since. */
  set(tenantId: string, operatorDid: string, variant: string, stamp: number, answer: Record<string, unknown>): void {
    if (this.#current(tenantId, operatorDid, stamp)) this.#receipts.set(receiptKey(tenantId, operatorDid, variant), { stamp, answer });
  }

  invalidate(tenantId: string, operatorDid: string): void {
    const operator = operatorKey(tenantId, operatorDid);
    this.#stamp += 1;
    this.#invalidatedAt.delete(operator);
    this.#invalidatedAt.set(operator, this.#stamp);
    if (this.#invalidatedAt.size > this.invalidationsMax) {
      const [oldest, stamp] = this.#invalidatedAt.entries().next().value as [string, number];
      this.#invalidatedAt.delete(oldest);
      this.#forgottenBelow = stamp;
    }
  }

  #current(tenantId: string, operatorDid: string, stamp: number): boolean {
    return stamp >= this.#forgottenBelow && stamp >= (this.#invalidatedAt.get(operatorKey(tenantId, operatorDid)) ?? 0);
  }
}

const operatorKey = (tenantId: string, operatorDid: string) => `${tenantId}\u0000${operatorDid}`;
const receiptKey = (tenantId: string, operatorDid: string, variant: string) => `${operatorKey(tenantId, operatorDid)}\u0000${variant}`;

/** The process's receipt cache: the terminal effect invalidates it, the receipt read fills it. */
export const receiptCache = new StandingReceiptCache();

// ---- Metrics ----

/** Windows besides all time: the last N UTC days, the reading day included. */
export const standingWindowDays = { last_30_days: 30, last_7_days: 7 } as const;

export interface WindowMetrics {
  readonly from_day: string | null;
  readonly released_count: number;
  readonly refunded_count: number;
  readonly expired_count: number;
  /** The engine has no dispute state: always 0 (docs/standing.md). */
  readonly disputed_count: number;
  readonly predicate_evaluated_count: number;
  readonly predicate_passed_count: number;
  /** passed / evaluated in basis points, rounded down; null when nothing was evaluated. */
  readonly predicate_pass_rate_bps: number | null;
  /** The histogram bucket holding the lower median; null when the window is empty. */
  readonly funding_to_terminal_median_seconds: { at_least: number; below: number | null } | null;
  readonly amounts: readonly { currency: string; released_cents: string; refunded_cents: string; expired_cents: string }[];
}

export interface OperatorMetrics {
  readonly first_activity_at: string;
  readonly last_activity_at: string;
  readonly as_of_day: string;
  readonly all_time: WindowMetrics;
  readonly last_30_days: WindowMetrics;
  readonly last_7_days: WindowMetrics;
}

/** The UTC day `days - 1` days before `day` (YYYY-MM-DD): the first day of a window of `days` days. */
export function windowFromDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
}

function medianBucket(histogram: readonly number[]): WindowMetrics['funding_to_terminal_median_seconds'] {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.ceil(total / 2);
  let seen = 0;
  for (const [index, count] of histogram.entries()) {
    seen += count;
    if (seen >= rank) return { at_least: durationBucketLowerBoundsSeconds[index]!, below: durationBucketLowerBoundsSeconds[index + 1] ?? null };
  }
  throw new Error('standing: the median rank lies past the histogram');
}

export function windowMetrics(rows: readonly StandingAggregateRow[], fromDay: string | null): WindowMetrics {
  const histogram = durationBucketLowerBoundsSeconds.map(() => 0);
  const amounts = new Map<string, { released: bigint; refunded: bigint; expired: bigint }>();
  let released = 0;
  let refunded = 0;
  let expired = 0;
  for (const row of rows) {
    released += row.releasedCount;
    refunded += row.refundedCount;
    expired += row.expiredCount;
    row.durationHistogram.forEach((count, index) => (histogram[index]! += count));
    const sums = amounts.get(row.currency) ?? { released: 0n, refunded: 0n, expired: 0n };
    amounts.set(row.currency, { released: sums.released + row.releasedCents, refunded: sums.refunded + row.refundedCents, expired: sums.expired + row.expiredCents });
  }
  const evaluated = released + refunded;
  return {
    from_day: fromDay,
    released_count: released,
    refunded_count: refunded,
    expired_count: expired,
    disputed_count: 0,
    predicate_evaluated_count: evaluated,
    predicate_passed_count: released,
    predicate_pass_rate_bps: evaluated === 0 ? null : Number((BigInt(released) * 10_000n) / BigInt(evaluated)),
    funding_to_terminal_median_seconds: medianBucket(histogram),
    amounts: [...amounts.entries()]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([currency, sums]) => ({ currency, released_cents: sums.released.toString(), refunded_cents: sums.refunded.toString(), expired_cents: sums.expired.toString() })),
  };
}

/** One operator's metrics from its all-time rows and its recent day rows. */
export function operatorMetrics(rows: readonly StandingAggregateRow[], asOfDay: string): OperatorMetrics {
  const totals = rows.filter((row) => row.day === null);
  const first = totals.map((row) => row.firstFundedAt!).sort()[0];
  const last = totals.map((row) => row.lastSettledAt!).sort().at(-1);
  if (first === undefined || last === undefined) throw new Error('standing: metrics of an operator without history');
  const recent = (days: number) => {
    const fromDay = windowFromDay(asOfDay, days);
    return windowMetrics(rows.filter((row) => row.day !== null && row.day >= fromDay), fromDay);
  };
  return {
    first_activity_at: first,
    last_activity_at: last,
    as_of_day: asOfDay,
    all_time: windowMetrics(totals, null),
    last_30_days: recent(standingWindowDays.last_30_days),
    last_7_days: recent(standingWindowDays.last_7_days),
  };
}

// ---- Scoring ----

/** What a scoring model reads: an operator's all-time outcome counts, every currency added. */
export type OutcomeCounts = Pick<WindowMetrics, 'released_count' | 'refunded_count' | 'expired_count'>;

/** One input of a score, as the explanation route shows it (docs/standing.md#scoring). */
export interface ScoreFactor {
  readonly factor: string;
  readonly count: number;
  readonly weight: number;
  readonly effect: 'raises' | 'lowers';
  readonly description: string;
}

export interface ScoringModel {
  readonly name: string;
  /** The formula as a person reads it, and the score it stays below. */
  readonly formula: string;
  readonly scoreMax: number;
  score(counts: OutcomeCounts): number;
  /** The inputs of the score, with how much each counts. */
  factors(counts: OutcomeCounts): readonly ScoreFactor[];
}

/**
 * Scoring models by version. A version's formula never changes once published; a new formula is a new version, and
 * old versions stay readable (docs/standing.md#scoring). Integers only, so every reader gets the same score.
 */
export const scoringModels: Readonly<Record<string, ScoringModel>> = {
  '1': {
    name: 'svc.standing.smoothed_release_ratio_v1',
    formula: 'floor(1000 × (R + 1) / (R + F + 2E + 2)), over all time: R released, F refunded after failed evidence, E expired',
    scoreMax: 1000,
    // An expiry (money locked until the deadline, no evidence at all) weighs twice a failed predicate.
    score: ({ released_count: released, refunded_count: refunded, expired_count: expired }) =>
      Number((1000n * BigInt(released + 1)) / BigInt(released + refunded + 2 * expired + 2)),
    factors: ({ released_count: released, refunded_count: refunded, expired_count: expired }) => [
      { factor: 'released', count: released, weight: 1, effect: 'raises', description: 'Intents released: the evidence passed the release rule.' },
      { factor: 'refunded', count: refunded, weight: 1, effect: 'lowers', description: 'Intents refunded after evidence that failed the release rule.' },
      { factor: 'expired', count: expired, weight: 2, effect: 'lowers', description: 'Intents refunded because the deadline passed without evidence; each counts twice.' },
      { factor: 'prior', count: 1, weight: 1, effect: 'raises', description: 'One release and one failure assumed before any history, so that a single outcome gives neither 0 nor 1000.' },
    ],
  },
};
export const scoreVersionDefault = '1';

export function scoringModelOf(version: string): ScoringModel {
  const model = Object.hasOwn(scoringModels, version) ? scoringModels[version] : undefined;
  if (!model) {
    throw new ServiceError('standing.score_version_unsupported', { details: { score_version: version, supported_versions: Object.keys(scoringModels) } });
  }
  return model;
}

// ---- Signed answers ----

/** One snapshot of the aggregates and the ledger head (see readStandingSnapshot). */
export function readSnapshot(database: Database, tenantId: string, operatorDid: string | null): Promise<StandingSnapshot> {
  return database.tenant(tenantId, (tx) => readStandingSnapshot(tx, tenantId, operatorDid, standingWindowDays.last_30_days), { isolation: 'repeatable read' });
}

/** `GET /reputation/{operator_did}`: the signed receipt of one operator, or 404 `standing.operator_unknown`. */
export async function operatorReceipt(database: Database, key: GatewayKey, tenantId: string, operatorDid: string, scoreVersion: string): Promise<Record<string, unknown>> {
  const model = scoringModelOf(scoreVersion);
  // The signing key is part of the key: after a rotation no receipt signed by the old key is answered.
  const variant = `${scoreVersion}\u0000${key.publicKeyHex}`;
  const cached = receiptCache.get(tenantId, operatorDid, variant);
  if (cached) return cached;
  const stamp = receiptCache.stamp();
  const snapshot = await readSnapshot(database, tenantId, operatorDid);
  if (!snapshot.rows.some((row) => row.day === null)) throw new ServiceError('standing.operator_unknown');
  const metrics = operatorMetrics(snapshot.rows, snapshot.asOfDay);
  const receipt = signStandingArtifact(
    {
      schema_version: 1,
      receipt_version: '1',
      kind: operatorReceiptKind,
      tenant_id: tenantId,
      operator_did: operatorDid,
      issued_at: snapshot.issuedAt,
      checkpoint_last_ledger_seq: snapshot.ledgerSeq,
      score_version: scoreVersion,
      scoring_model: model.name,
      metrics,
      score: model.score(metrics.all_time),
    },
    key.signer,
  );
  const answer = { schema_version: 1, updated_at: metrics.last_activity_at, receipt };
  receiptCache.set(tenantId, operatorDid, variant, stamp, answer);
  return answer;
}

/** `GET /signal/v1/portfolio/signed-export`: every operator of the tenant, bound to the ledger head read in the same
 * snapshot. Past standingExportOperatorsMax operators → 422 `standing.export_too_large`. */
export async function portfolioSnapshot(database: Database, key: GatewayKey, tenantId: string): Promise<Record<string, unknown>> {
  const model = scoringModelOf(scoreVersionDefault);
  const snapshot = await readSnapshot(database, tenantId, null);
  const byOperator = new Map<string, StandingAggregateRow[]>();
  for (const row of snapshot.rows) {
    const rows = byOperator.get(row.operatorDid);
    if (rows) rows.push(row);
    else byOperator.set(row.operatorDid, [row]);
  }
  const operatorDids = [...byOperator.keys()].filter((did) => byOperator.get(did)!.some((row) => row.day === null)).sort();
  if (operatorDids.length > standingExportOperatorsMax) {
    throw new ServiceError('standing.export_too_large', { details: { operators: operatorDids.length, operators_max: standingExportOperatorsMax } });
  }
  return signStandingArtifact(
    {
      schema_version: 1,
      artifact_version: '1',
      kind: portfolioSnapshotKind,
      tenant_id: tenantId,
      issued_at: snapshot.issuedAt,
      score_model_version: scoreVersionDefault,
      scoring_model: model.name,
      checkpoint_last_ledger_seq: snapshot.ledgerSeq,
      checkpoint_row_hash_hex: snapshot.ledgerRowHashHex,
      operators: operatorDids.map((operatorDid) => {
        const metrics = operatorMetrics(byOperator.get(operatorDid)!, snapshot.asOfDay);
        return { operator_did: operatorDid, metrics, score: model.score(metrics.all_time) };
      }),
    },
    key.signer,
  );
}

// ---- Rebuild ----

const retryableSqlStates = new Set(['40001', '40P01', '23505']);

/** `svc standing rebuild`: recomputes a tenant's aggregates from its intents in one REPEATABLE READ snapshot,
 * retrying when a settlement commits meanwhile (it then conflicts with the rows the rebuild writes). */
export async function rebuildStanding(database: Database, tenantId: string): Promise<{ operators: number; dayRows: number }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await database.system(
        async (tx) => {
          if (!(await findTenant(tx, tenantId))) throw new ServiceError('tenant.not_found', { details: { tenant_id: tenantId } });
          await tx.query(`SET LOCAL statement_timeout = ${standingRebuildStatementTimeoutMs}`);
          return rebuildStandingAggregates(tx, tenantId);
        },
        { isolation: 'repeatable read' },
      );
    } catch (error) {
      const sqlState = (error as { code?: unknown }).code;
      if (attempt >= standingRebuildAttemptsMax || typeof sqlState !== 'string' || !retryableSqlStates.has(sqlState)) throw error;
      // Settlements keep committing; a random pause keeps the next attempt from meeting the same one.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * standingRebuildRetryPauseMs * attempt));
    }
  }
}
