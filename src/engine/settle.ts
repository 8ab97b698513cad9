// Settlement (docs/engine.md#settlement--post-harborintentsidsettlementconfirm), shared by the commands that settle
// (confirm, expire, sandbox evidence): what the stored evaluation implies, decided (src/engine/decide.ts) — passed →
// release to the payee, failed → refund to the principal, a funded intent past its deadline refunded — then the
// transition, the ledger posting and the terminal effects written, to commit together.
import { randomUUID } from 'node:crypto';
import { runTerminalEffects, type AnswerFields, type EngineEffects, type ToolCall } from './effects.ts';
import { queueSettledTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { queueSettlementInstruction } from '../db/rail-instruction-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { lockForCommand } from './pipeline.ts';
import { queueLedgerTransaction } from './ledger-posting.ts';
import { decideSettlement, type SettlementAction, type SettlementReason, type SettlingCommand } from './decide.ts';
import { postingEntries } from './lifecycle.ts';

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
  const { action, reason, to, transition } = decideSettlement(intent, nowMs, command);
  if (options.expectedAction !== undefined && options.expectedAction !== action) {
    // Refused before anything is written: confirm's guard against settling the other way.
    throw new ServiceError('intent.invalid_state', {
      message: `The release rule implies ${action}, not ${options.expectedAction}.`,
      details: { implied_action: action },
    });
  }
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

/** The `confirm` command: `expectedAction`, when given, refuses (409, nothing moved) if the rule implies the other. */
export async function confirmSettlement(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  effects: EngineEffects,
  expectedAction?: SettlementAction,
): Promise<Settlement> {
  const intent = await lockForCommand(tx, tenantId, intentId, 'confirm');
  return settleIntent(tx, intent, effects, { command: 'confirm', expectedAction });
}
