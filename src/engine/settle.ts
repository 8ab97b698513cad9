// Settlement (docs/engine.md#settlement--post-harborintentsidsettlementconfirm), shared by the commands that settle
// (confirm, expire, sandbox evidence) and by any caller that settles for a part it names (an operator's resolution, a
// rail's capture of part): what the stored evaluation implies, or the part named, decided (src/engine/decide.ts) —
// the whole amount released to the payee, all refunded to the principal, or split between them — then the
// transition, the one ledger posting and the terminal effects written, to commit together.
import { randomUUID } from 'node:crypto';
import { runTerminalEffects, type AnswerFields, type EngineEffects, type ToolCall } from './effects.ts';
import { queueHeldTransition, queueSettledTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { queueFraudSignals, queueReviewHold } from '../db/review-repository.ts';
import { queueSettlementInstruction } from '../db/rail-instruction-repository.ts';
import { queueSpendReservationsClose } from '../db/spend-decision-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { lockForCommand } from './pipeline.ts';
import { queueLedgerTransaction } from './ledger-posting.ts';
import {
  decideSettlement,
  decideSettlementOf,
  railInstructionsOf,
  type SettlementAction,
  type SettlementDecision,
  type SettlementReason,
  type SettlingCommand,
} from './decide.ts';
import { postingEntries, type CommandName } from './lifecycle.ts';
import { recordIntentTransition } from './intent-events.ts';
import { decideReleaseGate, holdTransitionOf, type FraudSignalFinding, type ReleaseGateMode } from './decide/release-gate.ts';

export type { SettlementAction, SettlementReason, SettlingCommand };

export interface Settlement {
  readonly intent: Intent;
  readonly action: SettlementAction;
  readonly reason: SettlementReason;
  /** The part paid to the payee and the part returned to the principal. */
  readonly releasedCents: number;
  readonly refundedCents: number;
  /** The ledger transaction that moves the escrow; its rows land with the commit. */
  readonly transactionId: string;
  /** What the terminal effects (receipts, standing) add to the answer. */
  readonly answerFields: AnswerFields;
}

/** How a settlement's money leaves a live rail. The default records the rail instructions (a payout of the payee's
 * part, a refund of the rest) for the sweeper to carry out (docs/rails.md#live-rails); a rail that holds the escrow
 * itself (an authorization to capture) supplies its own, recorded in the same transaction. */
export type SettlementPayout = (tx: Queryable, intent: Intent, decision: SettlementDecision) => void;

export const instructRail: SettlementPayout = (tx, intent, decision) => {
  for (const instruction of railInstructionsOf(decision)) {
    queueSettlementInstruction(tx, intent.tenantId, intent.intentId, instruction.kind, instruction.amountCents, intent.currency);
  }
};

export interface SettleOptions {
  readonly nowMs?: number;
  readonly toolCall?: ToolCall;
  /** How the money leaves a live rail; default `instructRail`. */
  readonly payout?: SettlementPayout;
}

/** Moves the escrow of a locked intent to the payee, back to the principal, or part to each, as the stored evaluation
 * implies under `command`'s transitions; records the new state and runs the terminal effects in the same transaction. */
export async function settleIntent(
  tx: Queryable,
  intent: LockedIntent,
  effects: EngineEffects,
  options: SettleOptions & { command: SettlingCommand; expectedAction?: SettlementAction | undefined },
): Promise<Settlement> {
  const nowMs = options.nowMs ?? Date.now();
  const decision = decideSettlement(intent, nowMs, options.command);
  assertExpectedAction(decision.action, options.expectedAction);
  return writeSettlement(tx, intent, decision, effects, { ...options, nowMs });
}

/** Refused before anything is written: confirm's guard against settling another way than the rule implies. */
function assertExpectedAction(action: SettlementAction, expected: SettlementAction | undefined): void {
  if (expected !== undefined && expected !== action) {
    throw new ServiceError('intent.invalid_state', { message: `The release rule implies ${action}, not ${expected}.`, details: { implied_action: action } });
  }
}

/**
 * The engine's entry for a settlement whose released part someone else decided (an operator resolving a held intent,
 * a rail that captured part of its hold): releases `releasedCents` (checked by the caller: `checkReleasedCents`) to
 * the payee and refunds the rest, by `command`'s transition from the intent's state (or `from`) to `released`,
 * `refunded` or `resolved_split`. The intent is locked by the caller, in `tx`.
 */
export async function settleIntentFor(
  tx: Queryable,
  intent: LockedIntent,
  effects: EngineEffects,
  settlement: SettleOptions & { command: CommandName; releasedCents: number; reason: SettlementReason; from?: Intent['state'] },
): Promise<Settlement> {
  const decision = decideSettlementOf(intent, settlement.command, settlement);
  return writeSettlement(tx, intent, decision, effects, { ...settlement, nowMs: settlement.nowMs ?? Date.now() });
}

/** Writes a decided settlement: the state and its parts, the one balanced ledger transaction, how the money leaves a
 * live rail, and the terminal effects. */
async function writeSettlement(
  tx: Queryable,
  intent: LockedIntent,
  decision: SettlementDecision,
  effects: EngineEffects,
  options: SettleOptions & { nowMs: number },
): Promise<Settlement> {
  const { action, reason, releasedCents, refundedCents, to, transition } = decision;
  const posting = transition.posting!;
  const transactionId = randomUUID();
  // From the state the intent will be in when this runs: a command that records and settles in one step (sandbox
  // evidence) hands in the intent with its first move queued.
  const settled = queueSettledTransition(tx, intent, to, { releasedCents, refundedCents });
  queueLedgerTransaction(tx, intent.tenantId, {
    transactionId,
    intentId: intent.intentId,
    eventKind: posting.eventKind,
    currency: intent.currency,
    entries: postingEntries(posting, intent, intent.settlementRail, releasedCents),
  });
  // The capability can spend no more: its open reservations are consumed within the released part, or released back.
  queueSpendReservationsClose(tx, intent.tenantId, intent.intentId, releasedCents);
  // A live rail's funding holds the money outside this service: the payee's part and the rest leave through the
  // rail, recorded here with the posting (docs/rails.md#live-rails).
  (options.payout ?? instructRail)(tx, settled, decision);
  const { toolCall, nowMs } = options;
  const answerFields = await runTerminalEffects(tx, { intent: settled, action, reason, transactionId, nowMs, ...(toolCall ? { toolCall } : {}) }, effects);
  // The receipts a terminal transition issues (the settlement receipt and the agent's terminal receipt) carry the
  // intent's id as theirs (src/receipts/).
  recordIntentTransition(tx, settled, { ledgerTransactionId: transactionId, receiptIds: transition.receipts.length > 0 ? [settled.intentId] : [] });
  return { intent: settled, action, reason, releasedCents, refundedCents, transactionId, answerFields };
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
  // A release, whole or in part, meets the gate; a refund never does.
  if (decision.action !== 'refund' && effects.releaseGate !== undefined) {
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
      recordIntentTransition(tx, held);
      return { intent: held, hold: true, gateMode: gate.mode, signals: gate.signals };
    }
  }
  return writeSettlement(tx, intent, decision, effects, { nowMs, ...(toolCall ? { toolCall } : {}) });
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
