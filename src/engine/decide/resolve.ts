// An operator's resolution of a held intent, pure (docs/release-gate.md#resolving-a-hold): what `release` or `refund`
// means for the intent as locked at a given time, with the lifecycle table's transition for it. Past the deadline
// only a refund is accepted: the money goes back as the sweeper would send it, and no release is made late.
// src/services/review-service.ts writes it.
import type { Intent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { transitionOf, type TerminalState, type Transition } from '../lifecycle.ts';
import type { SettlementAction } from './settlement.ts';

export type ReviewResolution = 'release' | 'refund';

export interface ResolutionDecision {
  readonly action: SettlementAction;
  readonly reason: 'review_resolved';
  readonly to: TerminalState;
  readonly transition: Transition;
  readonly releasedCents: number;
  readonly refundedCents: number;
}

const resolvedStates = { release: 'released', refund: 'refunded' } as const satisfies Record<ReviewResolution, TerminalState>;

export function decideResolution(intent: Intent, resolution: ReviewResolution, nowMs: number): ResolutionDecision {
  if (resolution !== 'refund' && intent.deadline.getTime() <= nowMs) {
    throw new ServiceError('review.deadline_passed', { details: { deadline: intent.deadline.toISOString(), allowed_resolutions: ['refund'] } });
  }
  const to = resolvedStates[resolution];
  const releasedCents = resolution === 'release' ? intent.amountCents : 0;
  return {
    action: resolution,
    reason: 'review_resolved',
    to,
    transition: transitionOf('resolve', 'held', to),
    releasedCents,
    refundedCents: intent.amountCents - releasedCents,
  };
}
