// `svc ledger verify`: re-derives a tenant's ledger from its rows (bodies, chain, sequence, head, balanced
// transactions) and checks each intent's escrow against its state. Reads in batches; memory grows with the number
// of accounts and intents (the report lists every balance), never with the number of rows held at once.
import { findLedgerHead, listIntentLedgerFacts, listLedgerRows, type IntentLedgerFacts, type LedgerHead, type LedgerRow } from '../db/ledger-repository.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { isIntentState, ledgerActivityByState } from '../engine/lifecycle.ts';
import { ServiceError } from '../errors/service-error.ts';
import { ledgerTransactionEntriesMax, ledgerVerifyBatchRows, ledgerVerifyProblemsMax } from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import { encodeLedgerRowBody, formatRfc3339MillisecondsUtc, ledgerGenesisRowHash, ledgerRowHash, type LedgerSide } from '../signing/index.ts';
import { ledgerAccounts, ledgerEventKinds, ledgerTransactionProblems, type LedgerEntry, type LedgerSideName } from './ledger-service.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';

export interface LedgerVerifyReport {
  readonly tenantId: string;
  /** True when `problems` is empty. */
  readonly ok: boolean;
  readonly rows: number;
  readonly transactions: number;
  /** The last row's ledger_seq and row_hash as stored (0 and the genesis hash for an empty ledger). */
  readonly tipSeq: number;
  readonly tipRowHashHex: string;
  /** One sentence per problem found, at most ledgerVerifyProblemsMax, then a count of the rest. */
  readonly problems: string[];
  /** Every account the ledger touches: debits − credits, in cents, by account name. Bigint because no limit bounds
   * a balance: a tenant's escrow or a rail's funding account can pass 2^53 cents (docs/ledger.md). */
  readonly balances: Record<string, bigint>;
}

const sideNames: Record<number, LedgerSideName> = { 0: 'debit', 1: 'credit' };
const isPayeeAccount = (account: string): boolean => account.startsWith('payee:') && account.endsWith(':payable');

interface OpenTransaction {
  readonly transactionId: string;
  readonly intentId: string;
  readonly eventKind: string;
  readonly currency: string;
  readonly firstSeq: number;
  lastSeq: number;
  entryCount: number;
  /** Kept up to the limit: a longer transaction is reported by its length alone. */
  readonly entries: LedgerEntry[];
  mixed: boolean;
}

interface IntentMove {
  readonly kind: string;
  readonly amountCents: bigint;
  /** What it debited to payee accounts: the part released. */
  readonly paidCents: bigint;
  readonly currency: string;
  readonly firstSeq: number;
}

/** The running state of one verification: fed rows in sequence order, then the head, then the intents. */
class LedgerCheck {
  readonly #tenantId: string;
  readonly #problems: string[] = [];
  #problemsUnlisted = 0;
  #rows = 0;
  #transactions = 0;
  #lastSeq = 0;
  #lastRowHash: Buffer = Buffer.from(ledgerGenesisRowHash);
  #open: OpenTransaction | undefined;
  readonly #balances = new Map<string, bigint>();
  readonly #moves = new Map<string, IntentMove[]>();

  constructor(tenantId: string) {
    this.#tenantId = tenantId;
  }

  problem(text: string): void {
    if (this.#problems.length < ledgerVerifyProblemsMax) this.#problems.push(text);
    else this.#problemsUnlisted += 1;
  }

  row(row: LedgerRow): void {
    const seq = row.ledgerSeq;
    this.#rows += 1;
    if (seq !== this.#lastSeq + 1) {
      this.problem(`row ${seq}: ledger_seq follows ${this.#lastSeq}, expected ${this.#lastSeq + 1} (rows missing)`);
    }
    if (!row.prevRowHash.equals(this.#lastRowHash)) {
      const previous = this.#lastSeq === 0 ? 'the genesis hash' : `the row_hash of row ${this.#lastSeq}`;
      this.problem(`row ${seq}: prev_row_hash is not ${previous} (chain broken)`);
    }
    if (!Buffer.from(ledgerRowHash(row.prevRowHash, row.body)).equals(row.rowHash)) {
      this.problem(`row ${seq}: row_hash is not SHA-256(prev_row_hash ‖ body)`);
    }
    this.#checkBody(row);
    // Later links are checked against what is stored, so one broken link is one problem, not one per later row.
    this.#lastSeq = seq;
    this.#lastRowHash = row.rowHash;
    const side = sideNames[row.side];
    if (side === undefined) {
      this.problem(`row ${seq}: side ${row.side} is neither debit (0) nor credit (1)`);
      return;
    }
    const delta = row.amountCents;
    this.#balances.set(row.account, (this.#balances.get(row.account) ?? 0n) + (side === 'debit' ? delta : -delta));
    // A stored amount past the safe integers becomes an unsafe number here, which ledgerTransactionProblems reports;
    // the balances above were summed from the exact value.
    this.#addToTransaction(row, { account: row.account, side, amountCents: Number(row.amountCents) });
  }

  #checkBody(row: LedgerRow): void {
    try {
      const expected = encodeLedgerRowBody({
        tenant_id: this.#tenantId,
        ledger_seq: row.ledgerSeq,
        transaction_id: row.transactionId,
        intent_id: row.intentId,
        entry_index: row.entryIndex,
        account: row.account,
        side: row.side as LedgerSide,
        amount_cents: row.amountCents,
        currency: row.currency,
        event_kind: row.eventKind,
        recorded_at: formatRfc3339MillisecondsUtc(row.recordedAt.getTime()),
      });
      if (!Buffer.from(expected).equals(row.body)) this.problem(`row ${row.ledgerSeq}: body does not match the row's columns`);
    } catch (thrown) {
      // The encoder's SigningError, in the catalogue's words as the report has always given them.
      const error = asServiceError(thrown);
      if (!(error instanceof ServiceError)) throw thrown;
      this.problem(`row ${row.ledgerSeq}: columns cannot be encoded as a body (${error.message})`);
    }
  }

  #addToTransaction(row: LedgerRow, entry: LedgerEntry): void {
    let open = this.#open;
    if (!open || open.transactionId !== row.transactionId) {
      this.#closeTransaction();
      open = this.#open = {
        transactionId: row.transactionId,
        intentId: row.intentId,
        eventKind: row.eventKind,
        currency: row.currency,
        firstSeq: row.ledgerSeq,
        lastSeq: row.ledgerSeq,
        entryCount: 0,
        entries: [],
        mixed: false,
      };
    }
    // With (transaction_id, entry_index) unique, a transaction whose rows are not contiguous shows up here too.
    if (row.entryIndex !== open.entryCount) {
      this.problem(`row ${row.ledgerSeq}: entry_index ${row.entryIndex} in transaction ${open.transactionId}, expected ${open.entryCount}`);
    }
    if (!open.mixed && (row.intentId !== open.intentId || row.currency !== open.currency || row.eventKind !== open.eventKind)) {
      open.mixed = true;
      this.problem(`transaction ${open.transactionId}: rows disagree on intent_id, currency or event_kind (row ${row.ledgerSeq})`);
    }
    open.entryCount += 1;
    open.lastSeq = row.ledgerSeq;
    if (open.entries.length < ledgerTransactionEntriesMax) open.entries.push(entry);
  }

  #closeTransaction(): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    this.#transactions += 1;
    const where = `transaction ${open.transactionId} (rows ${open.firstSeq}..${open.lastSeq}, ${open.eventKind})`;
    if (open.entryCount > ledgerTransactionEntriesMax) {
      // Its entries were not all kept, so only its length is reported; no posting can write such a transaction.
      this.problem(`${where} has ${open.entryCount} entries; a transaction has 2 to ${ledgerTransactionEntriesMax}`);
    } else {
      for (const problem of ledgerTransactionProblems(open)) this.problem(`${where} ${problem}`);
    }
    const moved = open.entries.reduce((sum, entry) => (entry.side === 'debit' ? sum + BigInt(entry.amountCents) : sum), 0n);
    const paid = open.entries.reduce((sum, entry) => (entry.side === 'debit' && isPayeeAccount(entry.account) ? sum + BigInt(entry.amountCents) : sum), 0n);
    const moves = this.#moves.get(open.intentId) ?? [];
    moves.push({ kind: open.eventKind, amountCents: moved, paidCents: paid, currency: open.currency, firstSeq: open.firstSeq });
    this.#moves.set(open.intentId, moves);
  }

  /** After the last row: the head must name the last row, or be absent (or at seq 0) for an empty ledger. */
  endOfRows(head: LedgerHead | undefined): void {
    this.#closeTransaction();
    const headSeq = head?.lastLedgerSeq ?? 0;
    const headHash = head?.lastRowHash ?? Buffer.from(ledgerGenesisRowHash);
    if (headSeq !== this.#lastSeq || !headHash.equals(this.#lastRowHash)) {
      this.problem(`ledger_heads names seq ${headSeq} (${headHash.toString('hex')}), but the last row is ${this.#lastSeq} (${this.#lastRowHash.toString('hex')})`);
    }
  }

  intent(intent: IntentLedgerFacts): void {
    const moves = this.#moves.get(intent.intentId) ?? [];
    this.#moves.delete(intent.intentId);
    const where = `intent ${intent.intentId} (${intent.state})`;
    // What the lifecycle's postings leave for an intent in its state (src/engine/lifecycle.ts).
    const expected = isIntentState(intent.state) ? ledgerActivityByState[intent.state] : undefined;
    if (!expected) {
      this.problem(`${where}: unknown state`);
      return;
    }
    for (const kind of ledgerEventKinds) {
      const count = moves.filter((move) => move.kind === kind).length;
      if (count !== expected.transactions[kind]) this.problem(`${where}: ${count} ${kind} transaction(s), expected ${expected.transactions[kind]}`);
    }
    const escrow = this.#balances.get(ledgerAccounts.escrow(intent.intentId)) ?? 0n;
    const escrowExpected = expected.escrowHeld ? intent.amountCents : 0n;
    if (escrow !== escrowExpected) this.problem(`${where}: escrow balance ${escrow}, expected ${escrowExpected}`);
    for (const move of moves) {
      if (move.amountCents !== intent.amountCents || move.currency !== intent.currency) {
        this.problem(`${where}: the ${move.kind} at row ${move.firstSeq} moves ${move.amountCents} ${move.currency}, the intent is ${intent.amountCents} ${intent.currency}`);
      }
    }
    // What the ledger paid the payee is the released part the intent records (0 before it settles).
    const paid = moves.reduce((sum, move) => sum + move.paidCents, 0n);
    if (paid !== (intent.releasedCents ?? 0n)) {
      this.problem(`${where}: the ledger paid the payee ${paid}, the intent records released_cents ${intent.releasedCents ?? 'null'}`);
    }
  }

  /** After the last intent: whatever the ledger moved for an intent that does not exist. */
  endOfIntents(): void {
    for (const [intentId, moves] of this.#moves) {
      this.problem(`intent ${intentId}: ${moves.length} ledger transaction(s), but no such intent`);
    }
    this.#moves.clear();
  }

  /** After the last row: every balanced transaction nets to zero, so the balances of all accounts must too. */
  endOfBalances(): void {
    let total = 0n;
    for (const balance of this.#balances.values()) total += balance;
    if (total !== 0n) this.problem(`the balances of all accounts sum to ${total}, not 0`);
  }

  report(): LedgerVerifyReport {
    const problems = [...this.#problems];
    if (this.#problemsUnlisted > 0) problems.push(`… and ${this.#problemsUnlisted} more problems`);
    const accounts = [...this.#balances.keys()].sort();
    return {
      tenantId: this.#tenantId,
      ok: problems.length === 0,
      rows: this.#rows,
      transactions: this.#transactions,
      tipSeq: this.#lastSeq,
      tipRowHashHex: this.#lastRowHash.toString('hex'),
      problems,
      balances: Object.fromEntries(accounts.map((account) => [account, this.#balances.get(account)!])),
    };
  }
}

export interface LedgerVerifyOptions {
  /** Called after each batch of rows (ledgerVerifyBatchRows) with the number of rows checked so far. */
  readonly onProgress?: (rowsChecked: number) => void;
}

/**
 * Verifies one tenant's ledger inside `tx`, which should be a system-role transaction with one snapshot for every
 * read (REPEATABLE READ: verifyTenantLedger), so postings committed meanwhile cannot look like a broken head.
 */
export async function verifyLedger(tx: Queryable, tenantId: string, options: LedgerVerifyOptions = {}): Promise<LedgerVerifyReport> {
  if (!(await findTenant(tx, tenantId))) throw new ServiceError('tenant.not_found', { details: { tenant_id: tenantId } });
  const check = new LedgerCheck(tenantId);
  for (let afterSeq = 0, rowsChecked = 0; ; ) {
    const rows = await listLedgerRows(tx, tenantId, afterSeq, ledgerVerifyBatchRows);
    for (const row of rows) check.row(row);
    rowsChecked += rows.length;
    options.onProgress?.(rowsChecked);
    if (rows.length < ledgerVerifyBatchRows) break;
    afterSeq = rows.at(-1)!.ledgerSeq;
  }
  check.endOfRows(await findLedgerHead(tx, tenantId));
  check.endOfBalances();
  for (let afterIntentId: string | undefined; ; ) {
    const intents = await listIntentLedgerFacts(tx, tenantId, afterIntentId, ledgerVerifyBatchRows);
    for (const intent of intents) check.intent(intent);
    if (intents.length < ledgerVerifyBatchRows) break;
    afterIntentId = intents.at(-1)!.intentId;
  }
  check.endOfIntents();
  return check.report();
}

/** verifyLedger as the system role in one REPEATABLE READ snapshot: what `svc ledger verify` runs. */
export function verifyTenantLedger(database: Database, tenantId: string, options: LedgerVerifyOptions = {}): Promise<LedgerVerifyReport> {
  return database.system((tx) => verifyLedger(tx, tenantId, options), { isolation: 'repeatable read' });
}
