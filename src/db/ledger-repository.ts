// The ledger's SQL: the per-tenant head (locked to allocate ledger_seq), appending rows, reading pages of rows, and
// the few intent columns the verifier cross-checks. Bigint columns arrive from pg as text and leave as numbers.
import type { Queryable } from '../platform/database.ts';

export interface LedgerHead {
  readonly lastLedgerSeq: number;
  readonly lastRowHash: Buffer;
}

/** One stored row, columns as Postgres holds them (ledger_seq and amount_cents converted to numbers). */
export interface LedgerRow {
  readonly ledgerSeq: number;
  readonly transactionId: string;
  readonly intentId: string;
  readonly entryIndex: number;
  readonly account: string;
  /** 0 debit, 1 credit (ledgerSides). */
  readonly side: number;
  readonly amountCents: number;
  readonly currency: string;
  readonly eventKind: string;
  readonly recordedAt: Date;
  readonly body: Buffer;
  readonly prevRowHash: Buffer;
  readonly rowHash: Buffer;
}

/** A row to append; `recordedAt` is the exact RFC 3339 text the body carries. */
export type NewLedgerRow = Omit<LedgerRow, 'recordedAt'> & { readonly recordedAt: string };

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
const rowColumnCount = 13;

/** pg hands bigint columns over as text; every value we keep there stays within the safe integers. */
function safeNumber(text: string, column: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`ledger: ${column} ${text} is not a safe integer`);
  return value;
}

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
  amountCents: safeNumber(row.amount_cents, 'amount_cents'),
  currency: row.currency,
  eventKind: row.event_kind,
  recordedAt: row.recorded_at,
  body: row.body,
  prevRowHash: row.prev_row_hash,
  rowHash: row.row_hash,
});

/**
 * Locks the tenant's head for the rest of the transaction, creating it (seq 0, `genesisRowHash`) on first use.
 * Concurrent first postings both pass: the loser of the insert race finds the row and queues on its lock.
 */
export async function lockLedgerHead(tx: Queryable, tenantId: string, genesisRowHash: Uint8Array): Promise<LedgerHead> {
  const select = 'SELECT last_ledger_seq, last_row_hash FROM ledger_heads WHERE tenant_id = $1 FOR UPDATE';
  // Every posting after a tenant's first finds its head here, in one round trip.
  const existing = await tx.query<HeadRow>(select, [tenantId]);
  if (existing.rows[0]) return toHead(existing.rows[0]);
  await tx.query(
    'INSERT INTO ledger_heads (tenant_id, last_ledger_seq, last_row_hash) VALUES ($1, 0, $2) ON CONFLICT (tenant_id) DO NOTHING',
    [tenantId, Buffer.from(genesisRowHash)],
  );
  const created = await tx.query<HeadRow>(select, [tenantId]);
  if (!created.rows[0]) throw new Error(`ledger: the head of tenant ${tenantId} is neither insertable nor visible`);
  return toHead(created.rows[0]);
}

/** Appends `rows` and moves the head to the last of them, in one statement. The head must be locked. */
export async function appendLedgerRows(tx: Queryable, tenantId: string, rows: readonly NewLedgerRow[]): Promise<void> {
  const last = rows.at(-1);
  if (!last) throw new Error('ledger: nothing to append');
  const values: unknown[] = [tenantId, last.ledgerSeq, last.rowHash];
  const tuples = rows.map((row, index) => {
    const base = 3 + index * rowColumnCount;
    values.push(
      row.ledgerSeq, row.transactionId, row.intentId, row.entryIndex, row.account, row.side, row.amountCents,
      row.currency, row.eventKind, row.recordedAt, row.body, row.prevRowHash, row.rowHash,
    );
    return `($1, ${Array.from({ length: rowColumnCount }, (_, column) => `$${base + column + 1}`).join(', ')})`;
  });
  // Data-modifying CTEs always run to completion, whether or not the outer statement reads them.
  const { rowCount } = await tx.query(
    `WITH appended AS (INSERT INTO ledger_rows (tenant_id, ${rowColumns}) VALUES ${tuples.join(', ')})
     UPDATE ledger_heads SET last_ledger_seq = $2, last_row_hash = $3, updated_at = now() WHERE tenant_id = $1`,
    values,
  );
  if (rowCount !== 1) throw new Error(`ledger: the head of tenant ${tenantId} was not moved`);
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
  readonly amountCents: number;
  readonly currency: string;
}

/** Up to `limit` intents with ids after `afterIntentId` (undefined: from the start), in id order. */
export async function listIntentLedgerFacts(
  tx: Queryable,
  tenantId: string,
  afterIntentId: string | undefined,
  limit: number,
): Promise<IntentLedgerFacts[]> {
  const { rows } = await tx.query<{ intent_id: string; state: string; amount_cents: string; currency: string }>(
    `SELECT intent_id, state, amount_cents, currency FROM intents
     WHERE tenant_id = $1 AND ($2::uuid IS NULL OR intent_id > $2::uuid) ORDER BY intent_id LIMIT $3`,
    [tenantId, afterIntentId ?? null, limit],
  );
  return rows.map((row) => ({
    intentId: row.intent_id,
    state: row.state,
    amountCents: safeNumber(row.amount_cents, 'amount_cents'),
    currency: row.currency,
  }));
}
