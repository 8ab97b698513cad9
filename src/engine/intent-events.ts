// The event an intent's transition records (docs/events.md), in the transaction that makes the transition: its type
// is the one the lifecycle table declares for the state entered (src/engine/lifecycle.ts), and its object the intent
// as it will be once the transaction commits.
import type { Intent } from '../db/intent-repository.ts';
import { recordEvent } from '../db/event-repository.ts';
import type { Queryable } from '../infra/database.ts';
import { presentIntent, presentRailInstruction } from './intent-view.ts';
import type { RailInstruction } from '../db/rail-instruction-repository.ts';
import { states, type IntentEventType } from './lifecycle.ts';

export interface IntentEventRefs {
  /** The ledger transaction the transition posted. */
  readonly ledgerTransactionId?: string | undefined;
  /** The receipts it issued. */
  readonly receiptIds?: readonly string[] | undefined;
}

/** Queues the event of the transition that brought `intent` (as it will be) into its state. */
export function recordIntentTransition(tx: Queryable, intent: Intent, refs: IntentEventRefs = {}): string {
  return recordIntentEvent(tx, intent, states[intent.state].event, refs);
}

/** Queues an intent event of `type` that moves no state (a funding attempt's outcome). */
export function recordIntentEvent(tx: Queryable, intent: Intent, type: IntentEventType, refs: IntentEventRefs = {}): string {
  return recordEvent(tx, intent.tenantId, {
    type,
    object: presentIntent(intent),
    ledgerTransactionId: refs.ledgerTransactionId,
    receiptIds: refs.receiptIds,
  });
}

/** Queues the event of a payout or refund a live rail (or the operator) finished: `payout.succeeded`,
 * `refund.failed`, …; nothing while it is still pending. */
export function recordInstructionOutcomeEvent(tx: Queryable, instruction: RailInstruction): void {
  if (instruction.status === 'pending') return;
  recordEvent(tx, instruction.tenantId, { type: `${instruction.kind}.${instruction.status}`, object: { object: 'rail_instruction', intent_id: instruction.intentId, ...presentRailInstruction(instruction) } });
}
