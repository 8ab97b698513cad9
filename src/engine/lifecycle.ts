// The intent lifecycle as one declared table (docs/engine.md "The lifecycle table"): for each command that changes
// an intent, its route and roles, its idempotency operation and recognition purpose, the states it moves from and
// to, the ledger transaction each transition posts, and the receipts a terminal transition issues (through the
// terminal effects, src/engine/effects.ts). The services read their allowed states and posting shapes from here;
// tests hold the migrations' state CHECK, docs/engine.md's table and state diagram, and every engine route's
// `config.access.roles` to it (test/engine/lifecycle-table.test.ts).
import type { Role } from '../credentials/roles.ts';
import type { Intent, IntentState } from '../db/intent-repository.ts';
import { recognitionPurposes } from '../signing/recognition.ts';
import { ledgerAccounts, type LedgerEntry, type LedgerEventKind } from './ledger-posting.ts';

/** Every state an intent can be in; `released` and `refunded` are terminal (absorbing). */
export const lifecycleStates = ['open', 'funded', 'evidence_recorded', 'released', 'refunded'] as const satisfies readonly IntentState[];
export const terminalStates = ['released', 'refunded'] as const satisfies readonly IntentState[];

/** The accounts a posting names, by the role they play (src/engine/ledger-posting.ts builds the names). */
export type AccountRole = 'escrow' | 'railFunding' | 'payeePayable' | 'payerRefund';

export interface PostingShape {
  readonly eventKind: LedgerEventKind;
  /** The account debited and the account credited, each with the intent's whole amount. */
  readonly debit: AccountRole;
  readonly credit: AccountRole;
}

/** The receipts a transition issues, built by the terminal effects (composed in src/app.ts). */
export type ReceiptName = 'settlement_receipt' | 'agent_receipt_terminal' | 'agent_receipt_action';

export interface Transition {
  /** The states the intent may be in; empty for a command that creates the intent. */
  readonly from: readonly IntentState[];
  readonly to: IntentState;
  /** When this transition, rather than another of the same command, applies. */
  readonly when: string;
  readonly posting: PostingShape | null;
  readonly receipts: readonly ReceiptName[];
}

export interface LifecycleCommand {
  /** The route that runs it, or null for the maintenance sweeper. */
  readonly route: { readonly method: 'POST'; readonly url: string } | null;
  /** Who may run it (docs/roles.md); null when no credential does (the sweeper). */
  readonly roles: readonly Role[] | null;
  /** The idempotency operation its keys are scoped to; null when it takes none. */
  readonly idempotencyOperation: LifecycleOperation | null;
  /** The recognition-proof purpose (docs/signing.md#recognition-proofs); null when it takes no proof. */
  readonly recognitionPurpose: string | null;
  readonly transitions: readonly Transition[];
}

export const lifecycleOperations = [
  'intent.create', 'intent.fund', 'intent.evidence', 'intent.settlement_confirm', 'sandbox.bootstrap', 'sandbox.evidence',
] as const;
export type LifecycleOperation = (typeof lifecycleOperations)[number];

/** Roles that may move money through the engine; confirm is kept from agents. */
export const intentWriterRoles = ['admin', 'operator', 'agent'] as const satisfies readonly Role[];
const settlerRoles = ['admin', 'operator'] as const satisfies readonly Role[];

const fundPosting: PostingShape = { eventKind: 'fund', debit: 'escrow', credit: 'railFunding' };
const releasePosting: PostingShape = { eventKind: 'release', debit: 'payeePayable', credit: 'escrow' };
const refundPosting: PostingShape = { eventKind: 'refund', debit: 'payerRefund', credit: 'escrow' };
const terminalReceipts: readonly ReceiptName[] = ['settlement_receipt', 'agent_receipt_terminal'];

export const lifecycle = {
  create: {
    route: { method: 'POST', url: '/harbor/intents' },
    roles: intentWriterRoles,
    idempotencyOperation: 'intent.create',
    recognitionPurpose: recognitionPurposes.intentCreate,
    transitions: [{ from: [], to: 'open', when: 'the principal signed the envelope', posting: null, receipts: [] }],
  },
  fund: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/fund' },
    roles: intentWriterRoles,
    idempotencyOperation: 'intent.fund',
    recognitionPurpose: recognitionPurposes.intentFund,
    transitions: [{ from: ['open'], to: 'funded', when: 'the rail settles the credential', posting: fundPosting, receipts: [] }],
  },
  evidence: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/evidence' },
    roles: intentWriterRoles,
    idempotencyOperation: 'intent.evidence',
    recognitionPurpose: recognitionPurposes.evidenceSubmit,
    transitions: [{ from: ['funded'], to: 'evidence_recorded', when: 'the payee signed it, before the deadline', posting: null, receipts: [] }],
  },
  confirm: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/settlement/confirm' },
    roles: settlerRoles,
    idempotencyOperation: 'intent.settlement_confirm',
    recognitionPurpose: recognitionPurposes.settlementConfirm,
    transitions: [
      { from: ['evidence_recorded'], to: 'released', when: 'the rule passed', posting: releasePosting, receipts: terminalReceipts },
      { from: ['evidence_recorded'], to: 'refunded', when: 'the rule failed', posting: refundPosting, receipts: terminalReceipts },
      { from: ['funded'], to: 'refunded', when: 'the deadline passed', posting: refundPosting, receipts: terminalReceipts },
    ],
  },
  expire: {
    route: null,
    roles: null,
    idempotencyOperation: null,
    recognitionPurpose: null,
    transitions: [{ from: ['funded'], to: 'refunded', when: 'the maintenance sweeper finds the deadline passed', posting: refundPosting, receipts: terminalReceipts }],
  },
  sandboxBootstrap: {
    route: { method: 'POST', url: '/v1/sandbox/guardrails/bootstrap' },
    roles: intentWriterRoles,
    idempotencyOperation: 'sandbox.bootstrap',
    recognitionPurpose: null,
    transitions: [{ from: [], to: 'funded', when: 'a sandbox key asks: created unsigned, funded by the simulator', posting: fundPosting, receipts: [] }],
  },
  sandboxEvidence: {
    route: { method: 'POST', url: '/v1/sandbox/guardrails/:intent_id/evidence' },
    roles: intentWriterRoles,
    idempotencyOperation: 'sandbox.evidence',
    recognitionPurpose: null,
    transitions: [
      { from: ['funded'], to: 'released', when: 'the rule passed (evidence recorded and settled at once)', posting: releasePosting, receipts: [...terminalReceipts, 'agent_receipt_action'] },
      { from: ['funded'], to: 'refunded', when: 'the rule failed (evidence recorded and settled at once)', posting: refundPosting, receipts: [...terminalReceipts, 'agent_receipt_action'] },
    ],
  },
} as const satisfies Record<string, LifecycleCommand>;

export type CommandName = keyof typeof lifecycle;

/** The states `command` may start from (the union over its transitions). */
export function fromStates(command: CommandName): IntentState[] {
  const states = new Set<IntentState>();
  for (const transition of lifecycle[command].transitions as readonly Transition[]) for (const state of transition.from) states.add(state);
  return lifecycleStates.filter((state) => states.has(state));
}

/** The one transition of `command` that moves `from` to `to`; a programmer error when the table has none. */
export function transitionOf(command: CommandName, from: IntentState | null, to: IntentState): Transition {
  const found = (lifecycle[command].transitions as readonly Transition[]).find(
    (transition) => transition.to === to && (from === null ? transition.from.length === 0 : transition.from.includes(from)),
  );
  if (!found) throw new Error(`the lifecycle has no ${command} transition from ${from ?? '(new)'} to ${to}`);
  return found;
}

/** The ledger entries of a posting shape for `intent`: the whole amount, debited from one account, credited to the
 * other. `rail` names the rail's funding account (fund only). */
export function postingEntries(shape: PostingShape, intent: Pick<Intent, 'intentId' | 'payeeDid' | 'principalDid' | 'amountCents'>, rail: string): LedgerEntry[] {
  const account = (role: AccountRole): string => {
    switch (role) {
      case 'escrow': return ledgerAccounts.escrow(intent.intentId);
      case 'railFunding': return ledgerAccounts.railFunding(rail);
      case 'payeePayable': return ledgerAccounts.payeePayable(intent.payeeDid);
      case 'payerRefund': return ledgerAccounts.payerRefund(intent.principalDid);
    }
  };
  return [
    { account: account(shape.debit), side: 'debit', amountCents: intent.amountCents },
    { account: account(shape.credit), side: 'credit', amountCents: intent.amountCents },
  ];
}
