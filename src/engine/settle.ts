// Settlement (docs/engine.md#settlement--post-harborintentsidsettlementconfirm), shared by the commands that settle
// (confirm, expire, sandbox evidence): what the stored evaluation implies, decided (src/engine/decide.ts) — passed →
// release to the payee, failed → refund to the principal, a funded intent past its deadline refunded — then the
// transition, the ledger posting and the terminal effects written, to commit together.
import { randomUUID } from 'node:crypto';
import { runTerminalEffects, type AnswerFields, type EngineEffects, type ToolCall } from './effects.ts';
import { queueHeldTransition, queueSettledTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { queueFraudSignals, queueReviewHold } from '../db/review-repository.ts';
import { queueSettlementInstruction } from '../db/rail-instruction-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { lockForCommand } from './pipeline.ts';
import { queueLedgerTransaction } from './ledger-posting.ts';
import { decideSettlement, type SettlementAction, type SettlementReason, type SettlingCommand } from './decide.ts';
import { decideReleaseGate, holdTransitionOf, type FraudSignalFinding, type ReleaseGateMode } from './decide/release-gate.ts';
import { postingEntries, type TerminalState, type Transition } from './lifecycle.ts';

export type { SettlementAction, SettlementReason, SettlingCommand };

export interface Settlement {
  readonly intent: Intent;
  readonly action: SettlementAction;
  readonly reason: SettlementReason;
  /** The ledger transaction that moves the escrow; its rows land with the commit. */
  readonly transactionId: string;
  /** What the terminal effects (receipts, standing) add to the answer. */
  readonly answerFields: AnswerFields;
}

/** What a live rail is instructed to do for each settlement action. */
const instructionKinds = { release: 'payout', refund: 'refund' } as const satisfies Record<SettlementAction, 'payout' | 'refund'>;

/** Moves the escrow of a locked intent to the payee or back to the principal, records the new state, and runs the
 * terminal effects in the same transaction, as `command`'s transition in the lifecycle table says. */
export async function settleIntent(
  tx: Queryable,
  intent: LockedIntent,
  effects: EngineEffects,
  options: { command: SettlingCommand; nowMs?: number; toolCall?: ToolCall; expectedAction?: SettlementAction | undefined },
): Promise<Settlement> {
  const { command, nowMs = Date.now(), toolCall } = options;
  const decision = decideSettlement(intent, nowMs, command);
  assertExpectedAction(decision.action, options.expectedAction);
  return writeSettlement(tx, intent, effects, { ...decision, nowMs, ...(toolCall ? { toolCall } : {}) });
}

function assertExpectedAction(action: SettlementAction, expected: SettlementAction | undefined): void {
  if (expected !== undefined && expected !== action) {
    // Refused before anything is written: confirm's guard against settling the other way.
    throw new ServiceError('intent.invalid_state', {
      message: `The release rule implies ${action}, not ${expected}.`,
      details: { implied_action: action },
    });
  }
}

/** What a settlement writes, decided before: the transition to a terminal state, the ledger posting, the live rail's
 * instruction and the terminal effects, queued to commit together. Also the write of an operator's resolution of a
 * held intent (src/services/review-service.ts). */
export async function writeSettlement(
  tx: Queryable,
  intent: LockedIntent,
  effects: EngineEffects,
  decided: { action: SettlementAction; reason: SettlementReason; to: TerminalState; transition: Transition; nowMs: number; toolCall?: ToolCall },
): Promise<Settlement> {
  const { action, reason, to, transition, nowMs, toolCall } = decided;
  const posting = transition.posting!;
  const transactionId = randomUUID();
  const settled = queueSettledTransition(tx, intent, to);
  queueLedgerTransaction(tx, intent.tenantId, {
    transactionId,
    intentId: intent.intentId,
    eventKind: posting.eventKind,
    currency: intent.currency,
    entries: postingEntries(posting, intent, intent.settlementRail),
  });
  // A live rail's funding holds the money outside this service: the payout or refund is instructed to that rail,
  // recorded here with the posting, carried out by the sweeper (docs/rails.md#live-rails).
  queueSettlementInstruction(tx, intent.tenantId, intent.intentId, instructionKinds[action], intent.amountCents, intent.currency);
  const answerFields = await runTerminalEffects(tx, { intent: settled, action, reason, transactionId, nowMs, ...(toolCall ? { toolCall } : {}) }, effects);
  return { intent: settled, action, reason, transactionId, answerFields };
}

/** A release the release gate stopped: the intent is held for review (docs/release-gate.md). */
export interface Hold {
  readonly intent: Intent;
  readonly hold: true;
  readonly gateMode: ReleaseGateMode;
  readonly signals: readonly FraudSignalFinding[];
}

export const isHold = (outcome: Settlement | Hold): outcome is Hold => 'hold' in outcome;

/**
 * Settles an intent as `settleIntent` does, but a release first meets the release gate (when the effects have one):
 * the signals it finds are recorded with what happens, and in `critical_hold` a critical one holds the intent
 * (state `held`, its escrow still full, no receipt yet) instead of releasing it. For the commands whose release an
 * operator may have to review: confirm and sandbox evidence (the lifecycle table's transitions to `held`).
 */
export async function settleOrHold(
  tx: Queryable,
  intent: LockedIntent,
  effects: EngineEffects,
  options: { command: 'confirm' | 'sandboxEvidence'; nowMs?: number; toolCall?: ToolCall; expectedAction?: SettlementAction | undefined },
): Promise<Settlement | Hold> {
  const { command, nowMs = Date.now(), toolCall } = options;
  const decision = decideSettlement(intent, nowMs, command);
  assertExpectedAction(decision.action, options.expectedAction);
  if (decision.action === 'release' && effects.releaseGate !== undefined) {
    const { config, facts } = await effects.releaseGate(tx, intent);
    const gate = decideReleaseGate(config, facts);
    queueFraudSignals(tx, intent.tenantId, gate.signals.map((signal) => ({
      signalId: randomUUID(),
      intentId: intent.intentId,
      operatorDid: intent.payeeDid,
      code: signal.code,
      severity: signal.severity,
      gateMode: gate.mode,
      held: gate.hold,
      summary: signal.summary,
    })));
    if (gate.hold) {
      holdTransitionOf(command); // the table has the transition, or this is a programmer error
      const held = queueHeldTransition(tx, intent);
      queueReviewHold(tx, intent.tenantId, { intentId: intent.intentId, operatorDid: intent.payeeDid, signalCodes: gate.signals.map((signal) => signal.code) });
      return { intent: held, hold: true, gateMode: gate.mode, signals: gate.signals };
    }
  }
  return writeSettlement(tx, intent, effects, { ...decision, nowMs, ...(toolCall ? { toolCall } : {}) });
}

/** The `confirm` command: `expectedAction`, when given, refuses (409, nothing moved) if the rule implies the other. A
 * release the release gate stops answers the hold. */
export async function confirmSettlement(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  effects: EngineEffects,
  expectedAction?: SettlementAction,
): Promise<Settlement | Hold> {
  const intent = await lockForCommand(tx, tenantId, intentId, 'confirm');
  return settleOrHold(tx, intent, effects, { command: 'confirm', expectedAction });
}
