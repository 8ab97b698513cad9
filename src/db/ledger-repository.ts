// The ledger's SQL: posting (ledger_post locks the per-tenant head that allocates ledger_seq), the head, pages of rows, and
// the few intent columns the verifier cross-checks. Bigint columns arrive from pg as text and leave as checked numbers
// (safeIntegerOf), except amounts, which leave as bigint: the verifier must see what is stored, not a rounding.
import type { Queryable } from '../infra/database.ts';
import type { SqlText } from '../infra/sql-literals.ts';
import { safeIntegerOf } from './safe-integer.ts';
import { commitLocks } from './commit-locks.ts';

export interface LedgerHead {
  readonly lastLedgerSeq: number;
  readonly lastRowHash: Buffer;
}

/** One stored row, columns as Postgres holds them (ledger_seq converted to a number, amount_cents to a bigint). */
export interface LedgerRow {
  readonly ledgerSeq: number;
  readonly transactionId: string;
  readonly intentId: string;
  readonly entryIndex: number;
  readonly account: string;
  /** 0 debit, 1 credit (ledgerSides). */
  readonly side: number;
  /** Exactly as stored: postings keep it a positive safe integer, but only the verifier may conclude that it is. */
  readonly amountCents: bigint;
  readonly currency: string;
  readonly eventKind: string;
  readonly recordedAt: Date;
  readonly body: Buffer;
  readonly prevRowHash: Buffer;
  readonly rowHash: Buffer;
}

interface HeadRow {
  last_ledger_seq: string;
  last_row_hash: Buffer;
}

interface StoredRow {
  ledger_seq: string;
  transaction_id: string;
  intent_id: string;
  entry_index: number;
  account: string;
  side: number;
  amount_cents: string;
  currency: string;
  event_kind: string;
  recorded_at: Date;
  body: Buffer;
  prev_row_hash: Buffer;
  row_hash: Buffer;
}

const rowColumns =
  'ledger_seq, transaction_id, intent_id, entry_index, account, side, amount_cents, currency, event_kind, recorded_at, body, prev_row_hash, row_hash';

const safeNumber = (text: string, column: string): number => safeIntegerOf(text, `ledger: ${column}`);

const toHead = (row: HeadRow): LedgerHead => ({
  lastLedgerSeq: safeNumber(row.last_ledger_seq, 'last_ledger_seq'),
  lastRowHash: row.last_row_hash,
});

const toRow = (row: StoredRow): LedgerRow => ({
  ledgerSeq: safeNumber(row.ledger_seq, 'ledger_seq'),
  transactionId: row.transaction_id,
  intentId: row.intent_id,
  entryIndex: row.entry_index,
  account: row.account,
  side: row.side,
  amountCents: BigInt(row.amount_cents),
  currency: row.currency,
  eventKind: row.event_kind,
  recordedAt: row.recorded_at,
  body: row.body,
  prevRowHash: row.prev_row_hash,
  rowHash: row.row_hash,
});

/** One entry of a posting, its body encoded around the ledger_seq that ledger_post places. */
export interface NewLedgerEntry {
  readonly account: string;
  /** 0 debit, 1 credit (ledgerSides). */
  readonly side: number;
  readonly amountCents: number;
  readonly bodyHead: Uint8Array;
  readonly bodyTail: Uint8Array;
}

export interface NewLedgerTransaction {
  readonly transactionId: string;
  readonly intentId: string;
  readonly currency: string;
  readonly eventKind: string;
  /** The exact RFC 3339 text the bodies carry. */
  readonly recordedAt: string;
  readonly entries: readonly NewLedgerEntry[];
}

/**
 * Queues the posting to travel with COMMIT: ledger_post (migrations/0011_ledger_post.sql) locks the tenant's head,
 * appends the rows after it and moves it, all inside Postgres, so the lock is never held across a round trip.
 */
export function queueLedgerPost(tx: Queryable, tenantId: string, transaction: NewLedgerTransaction): void {
  tx.beforeCommitMerged(`ledger_post\u0000${tenantId}`, transaction, (transactions) => ledgerPostStatement(tenantId, transactions), commitLocks.ledgerHead);
}

/** One posting: ledger_post. Several (the postings of a group commit, docs/engine.md "Group commit"): one call of
 * ledger_post_group (migrations/0032_ledger_post_group.sql), which appends them in order under one lock of the
 * head, the rows exactly those ledger_post would have appended one posting after the other. */
function ledgerPostStatement(tenantId: string, transactions: readonly NewLedgerTransaction[]): SqlText {
  if (transactions.length === 1) {
    const [transaction] = transactions as [NewLedgerTransaction];
    const { entries } = transaction;
    return {
      text: 'SELECT ledger_post($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      values: [
        tenantId, transaction.transactionId, transaction.intentId, transaction.currency, transaction.eventKind, transaction.recordedAt,
        entries.map((entry) => entry.account), entries.map((entry) => entry.side), entries.map((entry) => entry.amountCents),
        entries.map((entry) => entry.bodyHead), entries.map((entry) => entry.bodyTail),
      ],
    };
  }
  const entries = transactions.flatMap((transaction) => transaction.entries);
  return {
    text: 'SELECT ledger_post_group($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
    values: [
      tenantId,
      transactions.map((transaction) => transaction.transactionId),
      transactions.map((transaction) => transaction.intentId),
      transactions.map((transaction) => transaction.currency),
      transactions.map((transaction) => transaction.eventKind),
      transactions.map((transaction) => transaction.recordedAt),
      transactions.map((transaction) => transaction.entries.length),
      entries.map((entry) => entry.account), entries.map((entry) => entry.side), entries.map((entry) => entry.amountCents),
      entries.map((entry) => entry.bodyHead), entries.map((entry) => entry.bodyTail),
    ],
  };
}

/** The head without a lock (what the tip route and the verifier read); undefined before the first posting. */
export async function findLedgerHead(tx: Queryable, tenantId: string): Promise<LedgerHead | undefined> {
  const { rows } = await tx.query<HeadRow>('SELECT last_ledger_seq, last_row_hash FROM ledger_heads WHERE tenant_id = $1', [tenantId]);
  return rows[0] && toHead(rows[0]);
}

/** Up to `limit` rows after `afterSeq`, in sequence order. */
export async function listLedgerRows(tx: Queryable, tenantId: string, afterSeq: number, limit: number): Promise<LedgerRow[]> {
  const { rows } = await tx.query<StoredRow>(
    `SELECT ${rowColumns} FROM ledger_rows WHERE tenant_id = $1 AND ledger_seq > $2 ORDER BY ledger_seq LIMIT $3`,
    [tenantId, afterSeq, limit],
  );
  return rows.map(toRow);
}

/** The columns of an intent that its escrow must agree with. */
export interface IntentLedgerFacts {
  readonly intentId: string;
  readonly state: string;
  /** Exactly as stored, as a row's amount is. */
  readonly amountCents: bigint;
  readonly currency: string;
  /** Once settled, the part paid to the payee (null before). */
  readonly releasedCents: bigint | null;
}

/** Up to `limit` intents with ids after `afterIntentId` (undefined: from the start), in id order. */
export async function listIntentLedgerFacts(
  tx: Queryable,
  tenantId: string,
  afterIntentId: string | undefined,
  limit: number,
): Promise<IntentLedgerFacts[]> {
  const { rows } = await tx.query<{ intent_id: string; state: string; amount_cents: string; currency: string; released_cents: string | null }>(
    `SELECT intent_id, state, amount_cents, currency, released_cents FROM intents
     WHERE tenant_id = $1 AND ($2::uuid IS NULL OR intent_id > $2::uuid) ORDER BY intent_id LIMIT $3`,
    [tenantId, afterIntentId ?? null, limit],
  );
  return rows.map((row) => ({
    intentId: row.intent_id,
    state: row.state,
    amountCents: BigInt(row.amount_cents),
    currency: row.currency,
    releasedCents: row.released_cents === null ? null : BigInt(row.released_cents),
  }));
}
