// The settlement decision, pure: what settling an intent means under a command at a given time (docs/engine.md
// "The split rule"). A settlement is the part released to the payee, from 0 to the intent's amount, and the rest
// refunded: 0 is a refund (`refunded`), the whole amount a release (`released`), anything between a split
// (`resolved_split`), each with the lifecycle table's transition for it. src/engine/settle.ts writes it.
import type { Intent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import type { InstructionKind } from '../../rails/types.ts';
import { transitionOf, unhandledState, type CommandName, type TerminalState, type Transition } from '../lifecycle.ts';

export type SettlementAction = 'release' | 'refund' | 'split';
export type SettlementReason = 'predicate_passed' | 'predicate_failed' | 'deadline_passed' | 'review_resolved';

/** The commands that settle an intent. */
export type SettlingCommand = Extract<CommandName, 'confirm' | 'expire' | 'sandboxEvidence'>;

export interface SettlementDecision {
  readonly action: SettlementAction;
  readonly reason: SettlementReason;
  readonly to: TerminalState;
  /** The part paid to the payee and the part returned to the principal; their sum is the intent's amount. */
  readonly releasedCents: number;
  readonly refundedCents: number;
  /** The lifecycle table's transition: its posting shape and the receipts it issues. */
  readonly transition: Transition;
}

/** The state each settlement action ends in. */
export const settledStates = { release: 'released', refund: 'refunded', split: 'resolved_split' } as const satisfies Record<SettlementAction, TerminalState>;

/** The action that releasing `releasedCents` of `amountCents` is: 0 a refund, all a release, any part between a
 * split. A released part that is not an integer from 0 to the amount is a programmer error here: callers that take
 * it from a person check it first (`checkReleasedCents`). */
export function settlementActionFor(amountCents: number, releasedCents: number): SettlementAction {
  if (!Number.isSafeInteger(releasedCents) || releasedCents < 0 || releasedCents > amountCents) {
    throw new Error(`a settlement releases an integer from 0 to ${amountCents}, not ${releasedCents}`);
  }
  return releasedCents === 0 ? 'refund' : releasedCents === amountCents ? 'release' : 'split';
}

/** 422 `settlement.released_amount_invalid` unless `releasedCents` is an integer from 0 to the intent's amount: for an
 * amount a caller names (an operator's resolution, a rail's capture of part). */
export function checkReleasedCents(intent: Pick<Intent, 'amountCents'>, releasedCents: unknown): number {
  if (typeof releasedCents !== 'number' || !Number.isSafeInteger(releasedCents) || releasedCents < 0 || releasedCents > intent.amountCents) {
    throw new ServiceError('settlement.released_amount_invalid', { details: { released_cents: releasedCents ?? null, amount_cents: intent.amountCents } });
  }
  return releasedCents;
}

/**
 * Settling `intent` (in its current state, or `from` for a command that records and settles in one step) by
 * releasing `releasedCents` to the payee and refunding the rest, under `command`: the one entry every settlement
 * goes through, whatever decided the part (the release rule, an operator's resolution, a rail's capture of part).
 * The command's table must have a transition from the state to the state the part implies.
 */
export function decideSettlementOf(
  intent: Pick<Intent, 'state' | 'amountCents'>,
  command: CommandName,
  settlement: { readonly releasedCents: number; readonly reason: SettlementReason; readonly from?: Intent['state'] },
): SettlementDecision {
  const action = settlementActionFor(intent.amountCents, settlement.releasedCents);
  const to = settledStates[action];
  const transition = transitionOf(command, settlement.from ?? intent.state, to);
  return { action, reason: settlement.reason, to, releasedCents: settlement.releasedCents, refundedCents: intent.amountCents - settlement.releasedCents, transition };
}

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
  return decideSettlementOf(intent, command, { ...decided, ...(command === 'sandboxEvidence' ? { from: 'funded' as const } : {}) });
}

/** The part a passing rule releases: the whole amount, or under `metered` release the cost the payee signed
 * (recorded with the evidence, already bounded by the amount). */
export function releasedOnPass(intent: Pick<Intent, 'intentId' | 'amountCents' | 'releaseMode' | 'meteredCostCents'>): number {
  if (intent.releaseMode === 'full') return intent.amountCents;
  if (intent.meteredCostCents === null) throw new Error(`intent ${intent.intentId} passed its metered rule without a cost recorded`);
  return intent.meteredCostCents;
}

/** The settlement `intent`'s state implies at `nowMs`, or undefined when there is none (yet). Every state is
 * handled: one the lifecycle table adds does not compile here until settling it is decided. */
function settlementOf(intent: Intent, nowMs: number): { releasedCents: number; reason: SettlementReason } | undefined {
  switch (intent.state) {
    case 'evidence_recorded':
      return intent.predicatePassed ? { releasedCents: releasedOnPass(intent), reason: 'predicate_passed' } : { releasedCents: 0, reason: 'predicate_failed' };
    case 'funded':
      return intent.deadline.getTime() <= nowMs ? { releasedCents: 0, reason: 'deadline_passed' } : undefined;
    // Held for review: an operator resolves it (src/services/review-service.ts); only its deadline settles it here.
    case 'held':
      return intent.deadline.getTime() <= nowMs ? { releasedCents: 0, reason: 'deadline_passed' } : undefined;
    // Not funded yet, or settled already; the lock refuses these before any decision (the table's from-states).
    case 'open':
    case 'released':
    case 'refunded':
    case 'resolved_split':
      return undefined;
    default:
      return unhandledState(intent.state);
  }
}

/** What a live rail is instructed to do for a settlement: pay the payee's part and refund the rest, each when it is
 * not 0. The seam where a rail's settlement operations meet the engine (docs/rails.md#live-rails): a rail that holds
 * the escrow itself carries these parts out as its own operations. */
export function railInstructionsOf(decision: Pick<SettlementDecision, 'releasedCents' | 'refundedCents'>): { kind: InstructionKind; amountCents: number }[] {
  const instructions: { kind: InstructionKind; amountCents: number }[] = [];
  if (decision.releasedCents > 0) instructions.push({ kind: 'payout', amountCents: decision.releasedCents });
  if (decision.refundedCents > 0) instructions.push({ kind: 'refund', amountCents: decision.refundedCents });
  return instructions;
}
