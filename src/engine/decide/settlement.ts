// The settlement decision, pure: what settling an intent means under a command at a given time (release, refund,
// or nothing to settle yet), with the lifecycle table's transition for it. src/engine/settle.ts writes it.
import type { Intent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { transitionOf, unhandledState, type CommandName, type TerminalState, type Transition } from '../lifecycle.ts';

export type SettlementAction = 'release' | 'refund';
export type SettlementReason = 'predicate_passed' | 'predicate_failed' | 'deadline_passed' | 'review_resolved';

/** The commands that settle an intent. */
export type SettlingCommand = Extract<CommandName, 'confirm' | 'expire' | 'sandboxEvidence'>;

export interface SettlementDecision {
  readonly action: SettlementAction;
  readonly reason: SettlementReason;
  readonly to: TerminalState;
  /** The lifecycle table's transition: its posting shape and the receipts it issues. */
  readonly transition: Transition;
}

/** The state each settlement action ends in. */
const settledStates = { release: 'released', refund: 'refunded' } as const satisfies Record<SettlementAction, TerminalState>;

/** What settling `intent` means at `nowMs` under `command`, or 409 when it has nothing to settle yet. The sandbox
 * evidence command records the evidence and settles in one step, so its transitions start at funded. */
export function decideSettlement(intent: Intent, nowMs: number, command: SettlingCommand): SettlementDecision {
  const decided = settlementOf(intent, nowMs);
  if (decided === undefined) {
    throw new ServiceError('intent.invalid_state', {
      message: intent.state === 'funded' ? 'The intent has no evidence yet and its deadline has not passed.'
        : intent.state === 'held' ? 'The intent is held for review: an operator resolves it.' : undefined,
      details: { state: intent.state, allowed_states: ['evidence_recorded', 'funded (past its deadline)'] },
    });
  }
  const to = settledStates[decided.action];
  const transition = transitionOf(command, command === 'sandboxEvidence' ? 'funded' : intent.state, to);
  return { ...decided, to, transition };
}

/** The settlement `intent`'s state implies at `nowMs`, or undefined when there is none (yet). Every state is
 * handled: one the lifecycle table adds does not compile here until settling it is decided. */
function settlementOf(intent: Intent, nowMs: number): { action: SettlementAction; reason: SettlementReason } | undefined {
  switch (intent.state) {
    case 'evidence_recorded':
      return intent.predicatePassed ? { action: 'release', reason: 'predicate_passed' } : { action: 'refund', reason: 'predicate_failed' };
    case 'funded':
      return intent.deadline.getTime() <= nowMs ? { action: 'refund', reason: 'deadline_passed' } : undefined;
    // Held for review: an operator resolves it (src/engine/decide/resolve.ts); only its deadline settles it here.
    case 'held':
      return intent.deadline.getTime() <= nowMs ? { action: 'refund', reason: 'deadline_passed' } : undefined;
    // Not funded yet, or settled already; the lock refuses these before any decision (the table's from-states).
    case 'open':
    case 'released':
    case 'refunded':
      return undefined;
    default:
      return unhandledState(intent.state);
  }
}
