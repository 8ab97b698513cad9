// The intent lifecycle as one declared table (docs/engine.md "The lifecycle table"): every state with what the engine
// must know of it, and for each command that changes an intent, its route (URL, roles, scope), its idempotency
// operation and recognition purpose, the states it moves from and to, the ledger transaction each transition posts,
// and the receipts a terminal transition issues (through the terminal effects, src/engine/effects.ts). The engine
// routes are registered from it (src/surfaces/harbor/engine-routes.ts); the services read their allowed states,
// posting shapes and per-state facts from here. Tests hold what TypeScript cannot see to it: the migrations' state
// CHECK, docs/engine.md's table and state diagram, docs/ledger.md, the Python SDK's types
// (test/engine/lifecycle-table.test.ts), and compile the code with a state added (test/engine/new-state.test.ts).
import type { EventType } from '../contracts/events.ts';
import type { Role } from '../credentials/roles.ts';
import { intentStates, type Intent, type IntentState } from '../db/intent-repository.ts';
import { recognitionPurposes } from '../signing/recognition.ts';
import { ledgerAccounts, ledgerEventKinds, type LedgerEntry, type LedgerEventKind } from './ledger-posting.ts';

export type { IntentState };

/** What the engine must know of a state. */
export interface StateDeclaration {
  /** Absorbing: no command moves an intent out of it, and entering it runs the terminal effects (receipts). */
  readonly terminal: boolean;
  /** Whether a capability token issued for the intent is live (docs/capabilities.md); in any other state it is
   * revoked. */
  readonly capabilityLive: boolean;
  /** The event a transition into this state records, in the transaction that makes it (docs/events.md): a state
   * added to the table declares its own (`intent.held`, `intent.resolved_split`, …), so it is never entered
   * silently. */
  readonly event: IntentEventType;
}

/** The event types an intent's transitions record. */
export type IntentEventType = Extract<EventType, `intent.${string}`>;

/**
 * Every state an intent can be in. Keyed by the API contract's states (src/contracts/intents.ts `intentStates`, which
 * the SDKs and the OpenAPI document read): a state added there does not compile until it is declared here, nor one
 * declared here that the contract lacks. Which transitions reach it, and so what the ledger holds in it, the
 * commands below say.
 */
export const states = {
  open: { terminal: false, capabilityLive: false, event: 'intent.created' },
  funded: { terminal: false, capabilityLive: true, event: 'intent.funded' },
  evidence_recorded: { terminal: false, capabilityLive: true, event: 'intent.evidence_recorded' },
  // Held for review (docs/release-gate.md): the release gate stopped a release; the escrow stays full until an operator
  // resolves the hold or the deadline refunds it. No tool call spends against it meanwhile.
  held: { terminal: false, capabilityLive: false, event: 'intent.held' },
  released: { terminal: true, capabilityLive: false, event: 'intent.released' },
  refunded: { terminal: true, capabilityLive: false, event: 'intent.refunded' },
  resolved_split: { terminal: true, capabilityLive: false, event: 'intent.resolved_split' },
} as const satisfies { readonly [State in IntentState]: StateDeclaration };

/** The states in the contract's order. */
export const lifecycleStates: readonly IntentState[] = intentStates;

export const isIntentState = (value: string): value is IntentState => (lifecycleStates as readonly string[]).includes(value);

/** The states whose declaration says terminal (`released`, `refunded`, `resolved_split` today). */
export type TerminalState = { [State in IntentState]: (typeof states)[State]['terminal'] extends true ? State : never }[IntentState];

export const isTerminalState = (state: IntentState): state is TerminalState => states[state].terminal;

export const terminalStates: readonly TerminalState[] = lifecycleStates.filter(isTerminalState);

/** `true` when `Listed` is exactly the terminal states, else what is wrong with it: for a list kept below the engine (a
 * repository's SQL) that must know every terminal state, `const check: ExactlyTerminalStates<Listed> = true` beside
 * its first user above the engine fails to compile while a terminal state is missing from it (the error names it), or
 * a state in it is not terminal. */
export type ExactlyTerminalStates<Listed extends IntentState> = [Exclude<TerminalState, Listed> | Exclude<Listed, TerminalState>] extends [never]
  ? true
  : { readonly terminalStatesMissing: Exclude<TerminalState, Listed>; readonly statesNotTerminal: Exclude<Listed, TerminalState> };

/** For an exhaustive `switch` over states (or any union): the `default` that fails to compile while a member is
 * unhandled, and throws should a value the types rule out arrive anyway. */
export function unhandledState(state: never): never {
  throw new Error(`the lifecycle has no handling for state ${String(state)}`);
}

/** The accounts a posting names, by the role they play (src/engine/ledger-posting.ts builds the names). */
export type AccountRole = 'escrow' | 'railFunding' | 'payeePayable' | 'payerRefund';

export interface PostingShape {
  readonly eventKind: LedgerEventKind;
  /** The account debited and the account credited, each with the intent's whole amount; with a `remainder`, the debit
   * is the released part only. */
  readonly debit: AccountRole;
  readonly credit: AccountRole;
  /** A split's second debit: the account that takes the rest of the amount (the refunded part). */
  readonly remainder?: AccountRole;
}

/** The receipts a transition issues, built by the terminal effects (composed in src/app.ts). */
export type ReceiptName = 'settlement_receipt' | 'agent_receipt_terminal' | 'agent_receipt_action' | 'review_resolution_receipt';

export interface Transition {
  /** The states the intent may be in; empty for a command that creates the intent. */
  readonly from: readonly IntentState[];
  readonly to: IntentState;
  /** When this transition, rather than another of the same command, applies. */
  readonly when: string;
  readonly posting: PostingShape | null;
  readonly receipts: readonly ReceiptName[];
}

/** The route of a command: where it is registered and who may call it (src/surfaces/harbor/engine-routes.ts registers
 * it with this access; docs/roles.md lists the same). */
export interface CommandRoute {
  readonly method: 'POST';
  /** The whole path, surface prefix included. */
  readonly url: string;
  /** Who may run it (docs/roles.md). */
  readonly roles: readonly Role[];
  /** The scope a restricted key must carry (src/credentials/mcp-scopes.ts). */
  readonly scope: string;
  /** Refuse any x-tenant-id header: for clients told to take the tenant from the credential alone. */
  readonly tenantHeader?: 'refused';
}

export interface LifecycleCommand {
  /** The route that runs it, or null for the maintenance sweeper (which no credential runs). */
  readonly route: CommandRoute | null;
  /** The idempotency operation its keys are scoped to; null when it takes none. */
  readonly idempotencyOperation: string | null;
  /** The recognition-proof purpose (docs/signing.md#recognition-proofs); null when it takes no proof. */
  readonly recognitionPurpose: string | null;
  readonly transitions: readonly Transition[];
}

/** Roles that may move money through the engine; confirm is kept from agents. */
export const intentWriterRoles = ['admin', 'operator', 'agent'] as const satisfies readonly Role[];
/** Roles that may settle an intent, and carry out what a settlement instructs. */
export const settlerRoles = ['admin', 'operator'] as const satisfies readonly Role[];

const fundPosting: PostingShape = { eventKind: 'fund', debit: 'escrow', credit: 'railFunding' };
const releasePosting: PostingShape = { eventKind: 'release', debit: 'payeePayable', credit: 'escrow' };
const refundPosting: PostingShape = { eventKind: 'refund', debit: 'payerRefund', credit: 'escrow' };
/** Part to the payee, the rest back to the principal, the escrow emptied: one balanced transaction of three entries. */
const splitPosting: PostingShape = { eventKind: 'split', debit: 'payeePayable', remainder: 'payerRefund', credit: 'escrow' };
const terminalReceipts: readonly ReceiptName[] = ['settlement_receipt', 'agent_receipt_terminal'];

export const lifecycle = {
  create: {
    route: { method: 'POST', url: '/harbor/intents', roles: intentWriterRoles, scope: 'mcp.spend:write' },
    idempotencyOperation: 'intent.create',
    recognitionPurpose: recognitionPurposes.intentCreate,
    transitions: [{ from: [], to: 'open', when: 'the principal signed the envelope', posting: null, receipts: [] }],
  },
  fund: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/fund', roles: intentWriterRoles, scope: 'mcp.settlement:write' },
    idempotencyOperation: 'intent.fund',
    recognitionPurpose: recognitionPurposes.intentFund,
    transitions: [{ from: ['open'], to: 'funded', when: 'the rail settles the credential', posting: fundPosting, receipts: [] }],
  },
  evidence: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/evidence', roles: intentWriterRoles, scope: 'mcp.evidence:write' },
    idempotencyOperation: 'intent.evidence',
    recognitionPurpose: recognitionPurposes.evidenceSubmit,
    transitions: [{ from: ['funded'], to: 'evidence_recorded', when: 'the payee signed it, before the deadline', posting: null, receipts: [] }],
  },
  confirm: {
    route: { method: 'POST', url: '/harbor/intents/:intent_id/settlement/confirm', roles: settlerRoles, scope: 'mcp.settlement:write' },
    idempotencyOperation: 'intent.settlement_confirm',
    recognitionPurpose: recognitionPurposes.settlementConfirm,
    transitions: [
      { from: ['evidence_recorded'], to: 'released', when: 'the rule passed', posting: releasePosting, receipts: terminalReceipts },
      { from: ['evidence_recorded'], to: 'refunded', when: 'the rule failed', posting: refundPosting, receipts: terminalReceipts },
      { from: ['evidence_recorded'], to: 'resolved_split', when: 'the rule passed, metered: the payee-signed cost is above 0 and below the amount', posting: splitPosting, receipts: terminalReceipts },
      { from: ['funded'], to: 'refunded', when: 'the deadline passed', posting: refundPosting, receipts: terminalReceipts },
      { from: ['evidence_recorded'], to: 'held', when: 'the rule passed, and the release gate (critical_hold) found a critical signal', posting: null, receipts: [] },
    ],
  },
  resolve: {
    // An operator's resolution of a held intent (docs/release-gate.md#resolving-a-hold).
    route: { method: 'POST', url: '/harbor/intents/:intent_id/review/resolve', roles: settlerRoles, scope: 'mcp.settlement:write' },
    idempotencyOperation: 'intent.review_resolve',
    recognitionPurpose: null,
    transitions: [
      { from: ['held'], to: 'released', when: 'an operator resolves the hold as a release', posting: releasePosting, receipts: [...terminalReceipts, 'review_resolution_receipt'] },
      { from: ['held'], to: 'refunded', when: 'an operator resolves the hold as a refund', posting: refundPosting, receipts: [...terminalReceipts, 'review_resolution_receipt'] },
      { from: ['held'], to: 'resolved_split', when: 'an operator resolves the hold as a split', posting: splitPosting, receipts: [...terminalReceipts, 'review_resolution_receipt'] },
    ],
  },
  expire: {
    route: null,
    idempotencyOperation: null,
    recognitionPurpose: null,
    transitions: [{ from: ['funded', 'held'], to: 'refunded', when: 'the maintenance sweeper finds the deadline passed', posting: refundPosting, receipts: terminalReceipts }],
  },
  sandboxBootstrap: {
    // The sandbox guardrails take the tenant from the credential alone, as their public client expects.
    route: { method: 'POST', url: '/v1/sandbox/guardrails/bootstrap', roles: intentWriterRoles, scope: 'mcp.sandbox:write', tenantHeader: 'refused' },
    idempotencyOperation: 'sandbox.bootstrap',
    recognitionPurpose: null,
    transitions: [{ from: [], to: 'funded', when: 'a sandbox key asks: created unsigned, funded by the simulator', posting: fundPosting, receipts: [] }],
  },
  sandboxEvidence: {
    route: { method: 'POST', url: '/v1/sandbox/guardrails/:intent_id/evidence', roles: intentWriterRoles, scope: 'mcp.sandbox:write', tenantHeader: 'refused' },
    idempotencyOperation: 'sandbox.evidence',
    recognitionPurpose: null,
    transitions: [
      { from: ['funded'], to: 'released', when: 'the rule passed (evidence recorded and settled at once)', posting: releasePosting, receipts: [...terminalReceipts, 'agent_receipt_action'] },
      { from: ['funded'], to: 'refunded', when: 'the rule failed (evidence recorded and settled at once)', posting: refundPosting, receipts: [...terminalReceipts, 'agent_receipt_action'] },
      { from: ['funded'], to: 'resolved_split', when: 'the rule passed, metered, at a cost between 0 and the amount (evidence recorded and settled at once)', posting: splitPosting, receipts: [...terminalReceipts, 'agent_receipt_action'] },
      { from: ['funded'], to: 'held', when: 'the rule passed, and the release gate (critical_hold) found a critical signal (evidence recorded, held at once)', posting: null, receipts: [] },
    ],
  },
} as const satisfies Record<string, LifecycleCommand>;

export type CommandName = keyof typeof lifecycle;

/** The commands a route runs (all but the sweeper's). */
export type RoutedCommandName = { [Name in CommandName]: (typeof lifecycle)[Name]['route'] extends null ? never : Name }[CommandName];

/** The idempotency operations of the commands, as the table names them. */
export type LifecycleOperation = NonNullable<(typeof lifecycle)[CommandName]['idempotencyOperation']>;

/** The states `command` may start from (the union over its transitions). */
export function fromStates(command: CommandName): IntentState[] {
  const found = new Set<IntentState>();
  for (const transition of lifecycle[command].transitions as readonly Transition[]) for (const state of transition.from) found.add(state);
  return lifecycleStates.filter((state) => found.has(state));
}

/** The one transition of `command` that moves `from` to `to`; a programmer error when the table has none. */
export function transitionOf(command: CommandName, from: IntentState | null, to: IntentState): Transition {
  const found = (lifecycle[command].transitions as readonly Transition[]).find(
    (transition) => transition.to === to && (from === null ? transition.from.length === 0 : transition.from.includes(from)),
  );
  if (!found) throw new Error(`the lifecycle has no ${command} transition from ${from ?? '(new)'} to ${to}`);
  return found;
}

const allTransitions: readonly Transition[] = Object.values(lifecycle).flatMap((command) => command.transitions as readonly Transition[]);

/** `state` and every state a chain of transitions leads to from it, in the contract's order. */
export function statesReachableFrom(state: IntentState): IntentState[] {
  const reached = new Set<IntentState>([state]);
  for (const pending = [state]; pending.length > 0; ) {
    const current = pending.pop()!;
    for (const transition of allTransitions) {
      if (transition.from.includes(current) && !reached.has(transition.to)) {
        reached.add(transition.to);
        pending.push(transition.to);
      }
    }
  }
  return lifecycleStates.filter((candidate) => reached.has(candidate));
}

/** The states in which an intent's capability token is live. */
export const capabilityLiveStates: readonly IntentState[] = lifecycleStates.filter((state) => states[state].capabilityLive);

/** What the ledger holds for an intent in a state: how many transactions of each kind it has posted, and whether its
 * escrow holds the intent's amount (or nothing). */
export interface LedgerActivity {
  readonly transactions: Readonly<Record<LedgerEventKind, number>>;
  readonly escrowHeld: boolean;
}

/**
 * Each state's ledger activity, derived from the transitions: what the postings on the way from the intent's
 * creation to the state add up to. The ledger verifier checks every intent against its state's
 * (src/services/ledger-verifier.ts). A table that reaches a state along two ways that post differently (or loops
 * through a posting), or declares a state no transition reaches, is a programmer error: the module refuses to load.
 */
export const ledgerActivityByState: Readonly<Record<IntentState, LedgerActivity>> = deriveLedgerActivity();

/** Whether the intent's funding has settled: its state's history holds a fund transaction (`funded` on the wire). */
export const fundingSettledIn = (state: IntentState): boolean => ledgerActivityByState[state].transactions.fund > 0;

function deriveLedgerActivity(): Record<IntentState, LedgerActivity> {
  // The escrow's balance in units of the intent's amount: a posting that debits the escrow adds one, a credit takes one.
  interface History { readonly transactions: Record<LedgerEventKind, number>; readonly escrowUnits: number }
  const after = (history: History, posting: PostingShape | null): History =>
    posting === null
      ? history
      : {
          transactions: { ...history.transactions, [posting.eventKind]: history.transactions[posting.eventKind] + 1 },
          escrowUnits: history.escrowUnits + (posting.debit === 'escrow' ? 1 : 0) - (posting.credit === 'escrow' ? 1 : 0),
        };
  const empty: History = { transactions: Object.fromEntries(ledgerEventKinds.map((kind) => [kind, 0])) as Record<LedgerEventKind, number>, escrowUnits: 0 };
  const described = (history: History) => JSON.stringify(history);
  const reached = new Map<IntentState, History>();
  const pending = allTransitions.filter((transition) => transition.from.length === 0).map((transition) => [transition.to, after(empty, transition.posting)] as const);
  while (pending.length > 0) {
    const [state, history] = pending.pop()!;
    const known = reached.get(state);
    if (known !== undefined) {
      if (described(known) !== described(history)) throw new Error(`the lifecycle reaches ${state} with two ledger histories: ${described(known)} and ${described(history)}`);
      continue;
    }
    reached.set(state, history);
    for (const transition of allTransitions) if (transition.from.includes(state)) pending.push([transition.to, after(history, transition.posting)]);
  }
  return Object.fromEntries(lifecycleStates.map((state) => {
    const history = reached.get(state);
    if (history === undefined) throw new Error(`no transition of the lifecycle reaches state ${state}`);
    if (history.escrowUnits !== 0 && history.escrowUnits !== 1) throw new Error(`the lifecycle leaves ${history.escrowUnits} times the amount in escrow in ${state}`);
    return [state, { transactions: history.transactions, escrowHeld: history.escrowUnits === 1 }];
  })) as Record<IntentState, LedgerActivity>;
}

/** The ledger entries of a posting shape for `intent`: the whole amount, debited from one account, credited to the
 * other; for a split, the escrow credited with the whole amount and debited to the payee (`releasedCents`) and the
 * principal (the rest). `rail` names the rail's funding account (fund only). */
export function postingEntries(
  shape: PostingShape,
  intent: Pick<Intent, 'intentId' | 'payeeDid' | 'principalDid' | 'amountCents'>,
  rail: string,
  releasedCents?: number,
): LedgerEntry[] {
  const account = (role: AccountRole): string => {
    switch (role) {
      case 'escrow': return ledgerAccounts.escrow(intent.intentId);
      case 'railFunding': return ledgerAccounts.railFunding(rail);
      case 'payeePayable': return ledgerAccounts.payeePayable(intent.payeeDid);
      case 'payerRefund': return ledgerAccounts.payerRefund(intent.principalDid);
    }
  };
  if (shape.remainder !== undefined) {
    if (releasedCents === undefined || !Number.isSafeInteger(releasedCents) || releasedCents <= 0 || releasedCents >= intent.amountCents) {
      throw new Error(`a ${shape.eventKind} posting needs a released part above 0 and below ${intent.amountCents}, not ${releasedCents}`);
    }
    return [
      { account: account(shape.debit), side: 'debit', amountCents: releasedCents },
      { account: account(shape.remainder), side: 'debit', amountCents: intent.amountCents - releasedCents },
      { account: account(shape.credit), side: 'credit', amountCents: intent.amountCents },
    ];
  }
  return [
    { account: account(shape.debit), side: 'debit', amountCents: intent.amountCents },
    { account: account(shape.credit), side: 'credit', amountCents: intent.amountCents },
  ];
}
