// `client.review`: the release gate and the review of held releases (docs/release-gate.md): read and set the gate,
// list the review queue, record a reviewer's finding, read an operator's review status and the fraud metrics, and
// resolve a held intent (an operator or admin key).
import { checkedAnswer } from './answers.ts';
import { checkIdempotencyKey, intentPath, type ClientCore } from './core.ts';
import { SvcArgumentError } from './errors.ts';
import { jsonObjectOf } from './transport.ts';
import { randomUUID } from 'node:crypto';
import type { FraudMetrics, OperatorReviewStatus, ReleaseGate, ReviewEventAnswer, ReviewQueue, ResolveAnswer } from './types.ts';

export interface SetReleaseGateParams {
  readonly mode: 'review_only' | 'critical_hold';
  /** Hold when the payee's standing score is under this (1–1000); null turns the signal off; left out, unchanged. */
  readonly standingScoreMin?: number | null;
  /** Hold when the amount is over this many cents; null turns the signal off; left out, unchanged. */
  readonly amountLimitCents?: number | null;
  /** Hold a tenant's first release to a payee; left out, unchanged. */
  readonly firstSettlement?: boolean;
}

export interface ReviewEventParams {
  readonly eventType: 'review_open_requested' | 'appeal_requested' | 'replay_requested' | 'review_outcome_recorded' | 'confirmed_risk' | 'false_positive' | 'needs_more_evidence';
  readonly reviewOutcome?: 'confirmed_risk' | 'false_positive' | 'needs_more_evidence';
  readonly intentId?: string;
  readonly signalCode?: string;
  readonly providerEventId?: string;
  readonly summary: string;
}

export interface ResolveParams {
  readonly resolution: 'release' | 'refund' | 'split';
  /** With `split` only: the payee's part (more than 0, less than the amount); the rest is refunded. */
  readonly releasedCents?: number;
  /** Why, in the reviewer's words: signed into the resolution receipt. */
  readonly note?: string;
  readonly idempotencyKey?: string;
}

const operatorPath = (operatorDid: string, suffix: string): string => {
  if (typeof operatorDid !== 'string' || operatorDid.length === 0) throw new SvcArgumentError('operatorDid is a non-empty DID.');
  return `/signal/v1/operators/${encodeURIComponent(operatorDid)}${suffix}`;
};

export class Review {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  async gate(): Promise<ReleaseGate> {
    const { body, response } = await this.#core.get('/signal/v1/fraud/release-gate');
    return checkedAnswer('ReleaseGateAnswer', body, response);
  }

  /** Sets the release gate (admin). Safe to retry: the same body sets the same gate. */
  async setGate(params: SetReleaseGateParams): Promise<ReleaseGate> {
    const body = {
      mode: params.mode,
      ...(params.standingScoreMin === undefined ? {} : { standing_score_min: params.standingScoreMin }),
      ...(params.amountLimitCents === undefined ? {} : { amount_limit_cents: params.amountLimitCents }),
      ...(params.firstSettlement === undefined ? {} : { first_settlement: params.firstSettlement }),
    };
    const response = await this.#core.transport.request({
      method: 'PUT', path: '/signal/v1/fraud/release-gate', bodyText: JSON.stringify(body), retrySafe: true, headers: { 'x-tenant-id': this.#core.tenantId },
    });
    return checkedAnswer('ReleaseGateAnswer', jsonObjectOf(response), response);
  }

  /** Held releases, newest first; by default those awaiting a resolution. */
  async queue(params: { state?: 'open' | 'in_review' | 'closed' | 'all'; severity?: 'elevated' | 'high' | 'critical'; limit?: number } = {}): Promise<ReviewQueue> {
    const { body, response } = await this.#core.get('/signal/v1/review-queue', { state: params.state, fraud_severity: params.severity, limit: params.limit });
    return checkedAnswer('ReviewQueue', body, response);
  }

  /** Records a reviewer's finding about an operator (a payee). Not retried on 5xx: each call records one event. */
  async recordEvent(operatorDid: string, params: ReviewEventParams): Promise<ReviewEventAnswer> {
    const body = {
      event_type: params.eventType,
      ...(params.reviewOutcome === undefined ? {} : { review_outcome: params.reviewOutcome }),
      ...(params.intentId === undefined ? {} : { intent_id: params.intentId }),
      ...(params.signalCode === undefined ? {} : { signal_code: params.signalCode }),
      ...(params.providerEventId === undefined ? {} : { provider_event_id: params.providerEventId }),
      summary: params.summary,
    };
    const { body: answer, response } = await this.#core.post(operatorPath(operatorDid, '/review-events'), body, { retrySafe: false });
    return checkedAnswer('ReviewEventAnswer', answer, response);
  }

  async status(operatorDid: string): Promise<OperatorReviewStatus> {
    const { body, response } = await this.#core.get(operatorPath(operatorDid, '/review-status'));
    return checkedAnswer('OperatorReviewStatus', body, response);
  }

  async metrics(window: '24h' | '7d' | '30d' = '24h'): Promise<FraudMetrics> {
    const { body, response } = await this.#core.get('/signal/v1/fraud/metrics', { window });
    return checkedAnswer('FraudMetrics', body, response);
  }

  /** Resolves a held intent as a release or a refund, with a signed resolution receipt. Idempotent: retried with the
   * same key, it answers the first resolution. */
  async resolve(intentId: string, params: ResolveParams): Promise<ResolveAnswer> {
    const body = { resolution: params.resolution, ...(params.releasedCents === undefined ? {} : { released_cents: params.releasedCents }), ...(params.note === undefined ? {} : { note: params.note }) };
    const response = await this.#core.transport.request({
      method: 'POST',
      path: intentPath(intentId, '/review/resolve'),
      bodyText: JSON.stringify(body),
      retrySafe: true,
      headers: { 'x-tenant-id': this.#core.tenantId, 'idempotency-key': checkIdempotencyKey(params.idempotencyKey ?? randomUUID()) },
    });
    return checkedAnswer('ResolveAnswer', jsonObjectOf(response), response);
  }
}
