// Settlement (docs/engine.md#settlement--post-harborintentsidsettlementconfirm): confirm carries out what the stored
// evaluation implies — passed → release to the payee, failed → refund to the principal — and a funded intent past its
// deadline without evidence is refunded. The ledger transaction and the state change commit together.
import { randomUUID } from 'node:crypto';
import { runTerminalEffects, type AnswerFields, type EngineEffects, type ToolCall } from '../engine/effects.ts';
import { queueSettledTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { lockIntentIn } from './evidence-service.ts';
import { ledgerAccounts, queueLedgerTransaction } from './ledger-service.ts';

export type SettlementAction = 'release' | 'refund';
export type SettlementReason = 'predicate_passed' | 'predicate_failed' | 'deadline_passed';

export interface Settlement {
  readonly intent: Intent;
  readonly action: SettlementAction;
  readonly reason: SettlementReason;
  /** The ledger transaction that moves the escrow; its rows land with the commit. */
  readonly transactionId: string;
  /** What the terminal effects (receipts, standing) add to the answer. */
  readonly answerFields: AnswerFields;
}

/** What settling this intent means now, or 409 when it has nothing to settle yet. */
export function settlementFor(intent: Intent, nowMs: number): { action: SettlementAction; reason: SettlementReason } {
  if (intent.state === 'evidence_recorded') {
    return intent.predicatePassed ? { action: 'release', reason: 'predicate_passed' } : { action: 'refund', reason: 'predicate_failed' };
  }
  if (intent.state === 'funded' && intent.deadline.getTime() <= nowMs) return { action: 'refund', reason: 'deadline_passed' };
  throw new ServiceError('intent.invalid_state', {
    message: intent.state === 'funded' ? 'The intent has no evidence yet and its deadline has not passed.' : undefined,
    details: { state: intent.state, allowed_states: ['evidence_recorded', 'funded (past its deadline)'] },
  });
}

/** Moves the escrow of a locked intent to the payee or back to the principal, records the new state, and runs the
 * terminal effects in the same transaction. */
export async function settleIntent(tx: Queryable, intent: LockedIntent, effects: EngineEffects, nowMs = Date.now(), toolCall?: ToolCall): Promise<Settlement> {
  const { action, reason } = settlementFor(intent, nowMs);
  const transactionId = randomUUID();
  const counterparty = action === 'release' ? ledgerAccounts.payeePayable(intent.payeeDid) : ledgerAccounts.payerRefund(intent.principalDid);
  const settled = queueSettledTransition(tx, intent, action === 'release' ? 'released' : 'refunded');
  queueLedgerTransaction(tx, intent.tenantId, {
    transactionId,
    intentId: intent.intentId,
    eventKind: action,
    currency: intent.currency,
    entries: [
      { account: counterparty, side: 'debit', amountCents: intent.amountCents },
      { account: ledgerAccounts.escrow(intent.intentId), side: 'credit', amountCents: intent.amountCents },
    ],
  });
  const answerFields = await runTerminalEffects(tx, { intent: settled, action, reason, transactionId, nowMs, ...(toolCall ? { toolCall } : {}) }, effects);
  return { intent: settled, action, reason, transactionId, answerFields };
}

export async function confirmSettlement(tx: Queryable, tenantId: string, intentId: string, effects: EngineEffects): Promise<Settlement> {
  const intent = await lockIntentIn(tx, tenantId, intentId, ['funded', 'evidence_recorded']);
  return settleIntent(tx, intent, effects);
}
