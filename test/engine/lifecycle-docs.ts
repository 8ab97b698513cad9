// Renders the lifecycle table (src/engine/lifecycle.ts) as the documents show it: docs/engine.md's command table,
// state table and state diagram, and docs/ledger.md's table of what the verifier expects of each state.
// test/engine/lifecycle-table.test.ts compares these with the documents.
import {
  ledgerActivityByState,
  lifecycle,
  lifecycleStates,
  states,
  type AccountRole,
  type IntentState,
  type LedgerActivity,
  type LifecycleCommand,
  type PostingShape,
  type Transition,
} from '../../src/engine/lifecycle.ts';
import { ledgerEventKinds } from '../../src/engine/ledger-posting.ts';

const accountText: Record<AccountRole, string> = {
  escrow: '`intent:<id>:escrow`',
  railFunding: '`rail:<rail>:funding`',
  payeePayable: '`payee:<did>:payable`',
  payerRefund: '`payer:<did>:refund`',
};

const none = '—';
const code = (text: string | null): string => (text === null ? none : `\`${text}\``);
const postingText = (posting: PostingShape | null): string =>
  posting === null
    ? none
    : posting.remainder === undefined
      ? `${posting.eventKind}: debit ${accountText[posting.debit]}, credit ${accountText[posting.credit]}`
      : `${posting.eventKind}: debit ${accountText[posting.debit]} (released_cents) and ${accountText[posting.remainder]} (refunded_cents), credit ${accountText[posting.credit]}`;
const commands = () => Object.entries(lifecycle) as Array<[string, LifecycleCommand]>;

export const commandTableHeader = '| Command | Route | Roles | Scope | Idempotency operation | Recognition purpose | From | To | When | Ledger | Receipts |';

export function commandTableRows(): string[] {
  const rows: string[] = [];
  for (const [name, command] of commands()) {
    for (const transition of command.transitions as readonly Transition[]) {
      rows.push(`| ${[
        name,
        command.route ? `\`${command.route.method} ${command.route.url}\`` : 'maintenance sweeper',
        command.route ? command.route.roles.join(', ') : none,
        code(command.route?.scope ?? null),
        code(command.idempotencyOperation),
        code(command.recognitionPurpose),
        transition.from.length === 0 ? none : transition.from.join(', '),
        transition.to,
        transition.when,
        postingText(transition.posting),
        transition.receipts.length === 0 ? none : transition.receipts.map((receipt) => `\`${receipt}\``).join(', '),
      ].join(' | ')} |`);
    }
  }
  return rows;
}

/** The diagram's edges: `from --> to : command` (from `[*]` for a command that creates the intent). */
export function diagramEdges(): string[] {
  const edges = new Set<string>();
  for (const [name, command] of commands()) {
    for (const transition of command.transitions as readonly Transition[]) {
      for (const from of transition.from.length === 0 ? ['[*]'] : transition.from) edges.add(`${from} --> ${transition.to} : ${name}`);
    }
  }
  return [...edges];
}

const transactionsText = (activity: LedgerActivity): string =>
  ledgerEventKinds.filter((kind) => activity.transactions[kind] > 0).map((kind) => (activity.transactions[kind] === 1 ? kind : `${activity.transactions[kind]} × ${kind}`)).join(', ') || 'none';

export const stateTableHeader = '| State | Terminal | Capability token | Ledger transactions | Escrow holds |';

/** docs/engine.md's state table: one row per state, what its declaration says and what the ledger holds in it. */
export function stateTableRows(): string[] {
  return lifecycleStates.map((state) => {
    const activity = ledgerActivityByState[state];
    return `| \`${state}\` | ${states[state].terminal ? 'yes' : 'no'} | ${states[state].capabilityLive ? 'live' : 'not live'} | ${transactionsText(activity)} | ${activity.escrowHeld ? '`amount_cents`' : 'nothing'} |`;
  });
}

export const ledgerTableHeader = `| state | ${ledgerEventKinds.join(' | ')} | escrow balance |`;

/** docs/ledger.md's table of what the verifier expects: states with the same expectation share a row. */
export function ledgerTableRows(): string[] {
  const rows = new Map<string, IntentState[]>();
  for (const state of lifecycleStates) {
    const activity = ledgerActivityByState[state];
    const cells = `${ledgerEventKinds.map((kind) => activity.transactions[kind]).join(' | ')} | ${activity.escrowHeld ? '`amount_cents`' : '0'}`;
    rows.set(cells, [...(rows.get(cells) ?? []), state]);
  }
  return [...rows].map(([cells, sharing]) => `| ${sharing.map((state) => `\`${state}\``).join(', ')} | ${cells} |`);
}
