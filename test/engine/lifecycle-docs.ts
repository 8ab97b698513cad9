// Renders the lifecycle table (src/engine/lifecycle.ts) as docs/engine.md shows it: the command table and the
// state diagram. test/engine/lifecycle-table.test.ts compares these with the document.
import { lifecycle, type AccountRole, type LifecycleCommand, type PostingShape, type Transition } from '../../src/engine/lifecycle.ts';

const accountText: Record<AccountRole, string> = {
  escrow: '`intent:<id>:escrow`',
  railFunding: '`rail:<rail>:funding`',
  payeePayable: '`payee:<did>:payable`',
  payerRefund: '`payer:<did>:refund`',
};

const none = '—';
const code = (text: string | null): string => (text === null ? none : `\`${text}\``);
const postingText = (posting: PostingShape | null): string =>
  posting === null ? none : `${posting.eventKind}: debit ${accountText[posting.debit]}, credit ${accountText[posting.credit]}`;

export const commandTableHeader = '| Command | Route | Roles | Idempotency operation | Recognition purpose | From | To | When | Ledger | Receipts |';

export function commandTableRows(): string[] {
  const rows: string[] = [];
  for (const [name, command] of Object.entries(lifecycle) as Array<[string, LifecycleCommand]>) {
    for (const transition of command.transitions as readonly Transition[]) {
      rows.push(`| ${[
        name,
        command.route ? `\`${command.route.method} ${command.route.url}\`` : 'maintenance sweeper',
        command.roles ? command.roles.join(', ') : none,
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
  for (const [name, command] of Object.entries(lifecycle) as Array<[string, LifecycleCommand]>) {
    for (const transition of command.transitions as readonly Transition[]) {
      for (const from of transition.from.length === 0 ? ['[*]'] : transition.from) edges.add(`${from} --> ${transition.to} : ${name}`);
    }
  }
  return [...edges];
}
