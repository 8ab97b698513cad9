// Standing read by people rather than verifiers (docs/standing.md#summary-and-explanation): the portfolio summary
// aggregated over a tenant's operators, and why one operator has its score. Unsigned; the signed artifacts of the
// same numbers are the operator receipt and the portfolio snapshot (standing-service.ts).
import type { OperatorExplanation, PortfolioSummary } from '../contracts/standing.ts';
import { countOperatorsUnderReview } from '../db/review-repository.ts';
import { readStandingSummary } from '../db/standing-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database } from '../infra/database.ts';
import { standingSummaryOperatorsMax } from '../limits.ts';
import { operatorMetrics, readSnapshot, scoringModelOf } from './standing-service.ts';

/** The mean of integer scores to two decimals, rounded half up, in integer arithmetic so every reader agrees. */
function averageOf(scores: readonly number[]): number | null {
  if (scores.length === 0) return null;
  const sum = scores.reduce((total, score) => total + BigInt(score), 0n);
  const count = BigInt(scores.length);
  const hundredths = (sum * 200n + count) / (2n * count);
  return Number(hundredths) / 100;
}

/** `GET /signal/v1/portfolio/summary`: the tenant's operators scored with `scoreVersion`, and their settled volume. */
export async function portfolioSummary(database: Database, tenantId: string, scoreVersion: string): Promise<PortfolioSummary> {
  const model = scoringModelOf(scoreVersion);
  const { snapshot, underReview } = await database.tenant(tenantId, async (tx) => ({
    snapshot: await readStandingSummary(tx, tenantId, standingSummaryOperatorsMax),
    underReview: await countOperatorsUnderReview(tx, tenantId),
  }), { isolation: 'repeatable read' });
  if (snapshot.operators.length > standingSummaryOperatorsMax) {
    throw new ServiceError('standing.summary_too_large', { details: { operators_max: standingSummaryOperatorsMax } });
  }
  const scores = snapshot.operators.map((operator) =>
    model.score({ released_count: operator.releasedCount, refunded_count: operator.refundedCount, expired_count: operator.expiredCount }));
  const volume = snapshot.currencies.reduce((total, row) => total + row.volumeCents, 0n);
  return {
    schema_version: 1,
    object: 'portfolio_summary',
    tenant_id: tenantId,
    issued_at: snapshot.issuedAt,
    score_model_version: scoreVersion,
    scoring_model: model.name,
    checkpoint_last_ledger_seq: snapshot.ledgerSeq,
    operator_count: snapshot.operators.length,
    average_score: averageOf(scores),
    total_terminal_intents: snapshot.currencies.reduce((total, row) => total + row.terminalIntents, 0),
    total_receipted_volume_cents: volume <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(volume) : null,
    volume_by_currency: snapshot.currencies.map((row) => ({
      currency: row.currency,
      terminal_intents: row.terminalIntents,
      receipted_volume_cents: row.volumeCents.toString(),
    })),
    operators_under_review: underReview,
  };
}

/** `GET /signal/v1/operators/{operator_did}/explanation`: the score of one operator, its inputs and its formula, from
 * the same snapshot a receipt is computed from; 404 `standing.operator_unknown` as the receipt. */
export async function operatorExplanation(database: Database, tenantId: string, operatorDid: string, scoreVersion: string): Promise<OperatorExplanation> {
  const model = scoringModelOf(scoreVersion);
  const snapshot = await readSnapshot(database, tenantId, operatorDid);
  if (!snapshot.rows.some((row) => row.day === null)) throw new ServiceError('standing.operator_unknown');
  // Read after the snapshot, in a transaction of its own: a hold placed or resolved in between shows here first.
  const underReview = (await database.tenant(tenantId, (tx) => countOperatorsUnderReview(tx, tenantId, operatorDid))) > 0;
  const metrics = operatorMetrics(snapshot.rows, snapshot.asOfDay);
  const { released_count: released, refunded_count: refunded, expired_count: expired } = metrics.all_time;
  const score = model.score(metrics.all_time);
  return {
    schema_version: 1,
    object: 'operator_explanation',
    tenant_id: tenantId,
    operator_did: operatorDid,
    issued_at: snapshot.issuedAt,
    checkpoint_last_ledger_seq: snapshot.ledgerSeq,
    score_version: scoreVersion,
    scoring_model: model.name,
    score,
    score_max: model.scoreMax,
    formula: model.formula,
    factors: [...model.factors(metrics.all_time)],
    summary: `Score ${score} of ${model.scoreMax} from ${released} released, ${refunded} refunded after failed evidence and ${expired} expired intents with this tenant.`,
    metrics,
    under_review: underReview,
  };
}
