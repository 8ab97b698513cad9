// Posting to the double-entry ledger (docs/ledger.md "Posting"): the account names, the four transaction shapes,
// the checks every transaction passes, and the queued append of one balanced transaction inside the caller's tenant
// transaction. The engine posts through here; the ledger service (src/services/ledger-service.ts) reads the tip and
// signs checkpoints, and the verifier applies the same checks to what is stored.
import { ledgerEventKinds, type LedgerEventKind } from '../contracts/ledger.ts';
import { queueLedgerPost } from '../db/ledger-repository.ts';
import { ledgerAccountLengthMax, ledgerTransactionEntriesMax } from '../limits.ts';
import type { Queryable } from '../infra/database.ts';
import { transactionObserverOf } from './observer.ts';
import { encodeLedgerRowBodyAroundSeq, formatRfc3339MillisecondsUtc, isCanonicalUuidText, ledgerSides } from '../signing/index.ts';

// The kinds are declared with the API's contract (a ledger line's `event_kind`); the engine posts exactly those.
export { ledgerEventKinds, type LedgerEventKind };
export type LedgerSideName = keyof typeof ledgerSides;

/** The accounts money moves between. Names embed ids and DIDs verbatim; docs/ledger.md lists them. */
export const ledgerAccounts = {
  /** Where a rail's incoming money is booked from. */
  railFunding: (rail: string): string => `rail:${rail}:funding`,
  /** What an intent holds between fund and release or refund. */
  escrow: (intentId: string): string => `intent:${intentId}:escrow`,
  /** What the service owes a payee after a release. */
  payeePayable: (payeeDid: string): string => `payee:${payeeDid}:payable`,
  /** What the service owes a principal after a refund. */
  payerRefund: (principalDid: string): string => `payer:${principalDid}:refund`,
} as const;

const railFundingPattern = /^rail:.+:funding$/;
const payeePayablePattern = /^payee:.+:payable$/;
const payerRefundPattern = /^payer:.+:refund$/;
const currencyPattern = /^[a-z]{3}$/;

type AccountRule = (account: string, intentId: string) => boolean;
const isOwnEscrow: AccountRule = (account, intentId) => account === ledgerAccounts.escrow(intentId);

/** Which accounts each kind of transaction debits and credits: fund escrow ← rail, release and refund escrow →, split
 * escrow → payee and principal. */
const transactionShapes: Record<LedgerEventKind, { readonly debit: AccountRule; readonly credit: AccountRule; readonly text: string }> = {
  fund: { debit: isOwnEscrow, credit: (account) => railFundingPattern.test(account), text: 'debit intent:<intent_id>:escrow, credit rail:<rail>:funding' },
  release: { debit: (account) => payeePayablePattern.test(account), credit: isOwnEscrow, text: 'debit payee:<did>:payable, credit intent:<intent_id>:escrow' },
  refund: { debit: (account) => payerRefundPattern.test(account), credit: isOwnEscrow, text: 'debit payer:<did>:refund, credit intent:<intent_id>:escrow' },
  split: {
    debit: (account) => payeePayablePattern.test(account) || payerRefundPattern.test(account),
    credit: isOwnEscrow,
    text: 'debit payee:<did>:payable and payer:<did>:refund, credit intent:<intent_id>:escrow',
  },
};

export interface LedgerEntry {
  readonly account: string;
  readonly side: LedgerSideName;
  /** Positive; the side says which way it moves. */
  readonly amountCents: number;
}

export interface LedgerPosting {
  /** Canonical lowercase UUID, one per balanced transaction. */
  readonly transactionId: string;
  readonly intentId: string;
  readonly eventKind: LedgerEventKind;
  readonly currency: string;
  readonly entries: readonly LedgerEntry[];
  /** When the movement happened; defaults to now. Stored and encoded with milliseconds. */
  readonly recordedAtMs?: number;
}

const isLedgerEventKind = (value: string): value is LedgerEventKind => (ledgerEventKinds as readonly string[]).includes(value);

/**
 * Everything wrong with one transaction as the ledger defines it: 2 to ledgerTransactionEntriesMax entries of
 * positive safe-integer amounts on well-formed accounts, debits equal to credits, a known kind with its shape, a
 * lowercase ISO currency. Posting refuses a transaction with problems; the verifier reports them.
 */
export function ledgerTransactionProblems(transaction: {
  readonly intentId: string;
  readonly eventKind: string;
  readonly currency: string;
  readonly entries: readonly LedgerEntry[];
}): string[] {
  const problems: string[] = [];
  const { entries, intentId, eventKind } = transaction;
  if (entries.length < 2 || entries.length > ledgerTransactionEntriesMax) {
    problems.push(`has ${entries.length} entries; a transaction has 2 to ${ledgerTransactionEntriesMax}`);
  }
  if (!currencyPattern.test(transaction.currency)) problems.push(`has currency "${transaction.currency}", not a lowercase ISO 4217 code`);
  const shape = isLedgerEventKind(eventKind) ? transactionShapes[eventKind] : undefined;
  if (!shape) problems.push(`has event_kind "${eventKind}"; known kinds are ${ledgerEventKinds.join(', ')}`);
  const totals = { debit: 0n, credit: 0n };
  entries.forEach((entry, index) => {
    if (entry.side !== 'debit' && entry.side !== 'credit') {
      problems.push(`entry ${index} has side "${String(entry.side)}"`);
      return;
    }
    if (!Number.isSafeInteger(entry.amountCents) || entry.amountCents <= 0) {
      problems.push(`entry ${index} has amount ${entry.amountCents}; amounts are positive safe integers`);
    } else {
      totals[entry.side] += BigInt(entry.amountCents);
    }
    if (typeof entry.account !== 'string' || entry.account.length === 0 || entry.account.length > ledgerAccountLengthMax) {
      problems.push(`entry ${index} has an account name that is empty or longer than ${ledgerAccountLengthMax}`);
    } else if (shape && !shape[entry.side](entry.account, intentId)) {
      problems.push(`entry ${index} ${entry.side}s ${entry.account}; a ${eventKind} must ${shape.text}`);
    }
  });
  if (totals.debit !== totals.credit) problems.push(`is unbalanced: debits ${totals.debit}, credits ${totals.credit}`);
  if (eventKind === 'split') {
    // A split is one payee part, one principal part and the escrow emptied: both parts present, each once.
    const debited = (pattern: RegExp) => entries.filter((entry) => entry.side === 'debit' && pattern.test(entry.account)).length;
    if (entries.length !== 3 || debited(payeePayablePattern) !== 1 || debited(payerRefundPattern) !== 1) {
      problems.push('is a split without exactly one payee debit, one payer debit and one escrow credit');
    }
  }
  return problems;
}

/** A posting the engine should never build is a programmer error: thrown as Error, never a 4xx. */
function assertPostable(tenantId: string, posting: LedgerPosting): void {
  const problems = ledgerTransactionProblems(posting);
  if (!isCanonicalUuidText(posting.transactionId)) problems.push('has a transaction_id that is not a canonical lowercase UUID');
  if (!isCanonicalUuidText(posting.intentId)) problems.push('has an intent_id that is not a canonical lowercase UUID');
  const recordedAtMs = posting.recordedAtMs;
  if (recordedAtMs !== undefined && (!Number.isSafeInteger(recordedAtMs) || recordedAtMs < 0)) {
    problems.push(`has recordedAtMs ${recordedAtMs}, not a time`);
  }
  if (problems.length > 0) {
    throw new Error(`ledger: refusing ${posting.eventKind} transaction ${posting.transactionId} of tenant ${tenantId}: it ${problems.join('; ')}`);
  }
}

/**
 * Queues one balanced transaction to append to the tenant's chain when the caller's transaction commits, so the
 * ledger and the state change it records commit together or not at all. The rows travel in the message that
 * carries COMMIT and Postgres appends them (ledger_post): the head lock that serializes the tenant's postings is
 * held while Postgres appends and commits, never across a round trip to the service (docs/performance.md). A
 * refused posting fails the commit, and the caller's transaction with it.
 */
export function queueLedgerTransaction(tx: Queryable, tenantId: string, posting: LedgerPosting): void {
  assertPostable(tenantId, posting);
  // Counted once committed (a rolled-back posting appended nothing), by the engine's observer if it has one.
  const observer = transactionObserverOf(tx);
  if (observer !== undefined) tx.afterCommit(() => observer.ledgerRowsAppended(posting.eventKind, posting.entries.length));
  const recordedAt = formatRfc3339MillisecondsUtc(posting.recordedAtMs ?? Date.now());
  queueLedgerPost(tx, tenantId, {
    transactionId: posting.transactionId,
    intentId: posting.intentId,
    currency: posting.currency,
    eventKind: posting.eventKind,
    recordedAt,
    entries: posting.entries.map((entry, entryIndex) => {
      const side = ledgerSides[entry.side];
      const body = encodeLedgerRowBodyAroundSeq({
        tenant_id: tenantId,
        transaction_id: posting.transactionId,
        intent_id: posting.intentId,
        entry_index: entryIndex,
        account: entry.account,
        side,
        amount_cents: entry.amountCents,
        currency: posting.currency,
        event_kind: posting.eventKind,
        recorded_at: recordedAt,
      });
      return { account: entry.account, side, amountCents: entry.amountCents, bodyHead: body.head, bodyTail: body.tail };
    }),
  });
}
