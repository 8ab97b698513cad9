// An operator's resolution of a held intent, pure (docs/release-gate.md#resolving-a-hold): what `release`, `refund`
// or `split` means for the intent as locked at a given time, as the one settlement decision every settlement goes
// through (settlement.ts `decideSettlementOf`) under the `resolve` command's transitions. Past the deadline only a
// refund is accepted: the money goes back as the sweeper would send it, and no release is made late.
// src/services/review-service.ts writes it.
import type { Intent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { checkReleasedCents, decideSettlementOf, type SettlementDecision } from './settlement.ts';

export type ReviewResolution = 'release' | 'refund' | 'split';

export interface ResolutionRequest {
  readonly resolution: ReviewResolution;
  /** The payee's part: required for a split (strictly between 0 and the amount), refused otherwise. */
  readonly releasedCents?: number | undefined;
}

export function decideResolution(intent: Pick<Intent, 'state' | 'amountCents' | 'deadline'>, request: ResolutionRequest, nowMs: number): SettlementDecision {
  const { resolution } = request;
  if (resolution !== 'refund' && intent.deadline.getTime() <= nowMs) {
    throw new ServiceError('review.deadline_passed', { details: { deadline: intent.deadline.toISOString(), allowed_resolutions: ['refund'] } });
  }
  if (resolution !== 'split' && request.releasedCents !== undefined) {
    throw new ServiceError('settlement.released_amount_invalid', {
      message: `released_cents is given only with the split resolution; a ${resolution} releases ${resolution === 'release' ? 'the whole amount' : 'nothing'}.`,
      details: { released_cents: request.releasedCents, amount_cents: intent.amountCents, resolution },
    });
  }
  const releasedCents = resolution === 'release' ? intent.amountCents : resolution === 'refund' ? 0 : checkReleasedCents(intent, request.releasedCents);
  if (resolution === 'split' && (releasedCents === 0 || releasedCents === intent.amountCents)) {
    // A split of nothing or of everything is a refund or a release: say which rather than settle it under another name.
    throw new ServiceError('settlement.released_amount_invalid', {
      message: 'A split releases more than 0 and less than the amount; resolve as refund or release instead.',
      details: { released_cents: releasedCents, amount_cents: intent.amountCents, resolution },
    });
  }
  return decideSettlementOf(intent, 'resolve', { releasedCents, reason: 'review_resolved' });
}
