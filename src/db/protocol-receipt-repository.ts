// Signed receipts (protocol and agent receipts, docs/protocol.md): stored once, as the exact JSON text that was
// signed and answered, never rewritten (migrations/0017_protocol_receipts.sql).
import type { Queryable, Statement } from '../infra/database.ts';

export type ReceiptFamily = 'protocol' | 'agent';
export type AgentReceiptScope = 'action' | 'intent_terminal';

export interface StoredReceipt {
  readonly family: ReceiptFamily;
  readonly receiptId: string;
  readonly kind: string;
  readonly scope: AgentReceiptScope | null;
  readonly intentId: string;
  readonly toolCallId: string | null;
  /** The signed wire object, fields in their signed order. */
  readonly wire: Record<string, unknown>;
  readonly leafIndex: number | null;
  readonly issuedAt: Date;
}

export interface NewReceipt {
  readonly family: ReceiptFamily;
  readonly receiptId: string;
  readonly kind: string;
  readonly scope?: AgentReceiptScope;
  readonly intentId: string;
  readonly toolCallId?: string;
  /** The wire as JSON text, exactly as signed. */
  readonly wireText: string;
  readonly leafIndex: number | null;
}

interface ReceiptRow {
  family: ReceiptFamily;
  receipt_id: string;
  kind: string;
  scope: AgentReceiptScope | null;
  intent_id: string;
  tool_call_id: string | null;
  wire: string;
  leaf_index: string | null;
  issued_at: Date;
}

// `wire::text` keeps the stored text as it is: pg would parse a json column into an object, losing nothing of the
// order here, but the text is what was signed.
const columns = 'family, receipt_id, kind, scope, intent_id, tool_call_id, wire::text AS wire, leaf_index, issued_at';

const toReceipt = (row: ReceiptRow): StoredReceipt => ({
  family: row.family,
  receiptId: row.receipt_id,
  kind: row.kind,
  scope: row.scope,
  intentId: row.intent_id,
  toolCallId: row.tool_call_id,
  wire: JSON.parse(row.wire) as Record<string, unknown>,
  // BIGINT as text; a log of 2^53 leaves is out of reach.
  leafIndex: row.leaf_index === null ? null : Number(row.leaf_index),
  issuedAt: row.issued_at,
});

function insertStatement(tenantId: string, receipt: NewReceipt, onConflict: string): Statement<boolean> {
  return {
    text: `INSERT INTO protocol_receipts (tenant_id, family, receipt_id, kind, scope, intent_id, tool_call_id, wire, leaf_index)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9) ${onConflict}`,
    values: [tenantId, receipt.family, receipt.receiptId, receipt.kind, receipt.scope ?? null, receipt.intentId, receipt.toolCallId ?? null, receipt.wireText, receipt.leafIndex],
    read: ({ rowCount }) => rowCount === 1,
  };
}

/** Queues the insert to travel with COMMIT (no round trip of its own): for receipts whose id cannot be taken yet,
 * such as an intent's settlement receipts, issued under the intent's row lock exactly once. */
export function queueReceiptInsert(tx: Queryable, tenantId: string, receipt: NewReceipt): void {
  tx.beforeCommit(insertStatement(tenantId, receipt, ''));
}

/**
 * Queues the insert to travel with COMMIT, right after the statement (queued before it) that appended the receipt to
 * the tenant's transparency log: the leaf index is read back from that leaf, found by the receipt's kind and id.
 */
export function queueReceiptInsertAfterLeaf(tx: Queryable, tenantId: string, receipt: Omit<NewReceipt, 'leafIndex'>): void {
  tx.beforeCommit({
    text: `INSERT INTO protocol_receipts (tenant_id, family, receipt_id, kind, scope, intent_id, tool_call_id, wire, leaf_index)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json,
                   (SELECT leaf_index FROM transparency_log_leaves WHERE tenant_id = $1 AND artifact_id = $3 AND kind = $4
                    ORDER BY leaf_index DESC LIMIT 1))`,
    values: [tenantId, receipt.family, receipt.receiptId, receipt.kind, receipt.scope ?? null, receipt.intentId, receipt.toolCallId ?? null, receipt.wireText],
  });
}

/** Inserts now; false when a receipt of this family already has the id (the caller decides what that means). */
export function insertReceiptUnlessTaken(tx: Queryable, tenantId: string, receipt: NewReceipt): Promise<boolean> {
  return tx.run(insertStatement(tenantId, receipt, 'ON CONFLICT (tenant_id, family, receipt_id) DO NOTHING'));
}

export function findReceiptStatement(tenantId: string, family: ReceiptFamily, receiptId: string): Statement<StoredReceipt | undefined> {
  return {
    text: `SELECT ${columns} FROM protocol_receipts WHERE tenant_id = $1 AND family = $2 AND receipt_id = $3`,
    values: [tenantId, family, receiptId],
    read: ({ rows }) => rows[0] && toReceipt(rows[0] as ReceiptRow),
  };
}

export function findReceipt(tx: Queryable, tenantId: string, family: ReceiptFamily, receiptId: string): Promise<StoredReceipt | undefined> {
  return tx.run(findReceiptStatement(tenantId, family, receiptId));
}

/** A page of a tenant's agent receipts, newest first, optionally of one intent and/or one tool call. A cursor that
 * names no receipt of the tenant gives an empty page. */
export async function listAgentReceipts(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; intentId?: string | undefined; toolCallId?: string | undefined; startingAfter?: string | undefined },
): Promise<{ receipts: StoredReceipt[]; hasMore: boolean }> {
  const { rows } = await tx.query<ReceiptRow>(
    `SELECT ${columns} FROM protocol_receipts
     WHERE tenant_id = $1 AND family = 'agent' AND ($2::uuid IS NULL OR intent_id = $2) AND ($3::text IS NULL OR tool_call_id = $3)
       AND ($4::text IS NULL OR (issued_at, receipt_id) < (SELECT issued_at, receipt_id FROM protocol_receipts
                                                          WHERE tenant_id = $1 AND family = 'agent' AND receipt_id = $4))
     ORDER BY issued_at DESC, receipt_id DESC LIMIT $5`,
    [tenantId, page.intentId ?? null, page.toolCallId ?? null, page.startingAfter ?? null, page.limit + 1],
  );
  return { receipts: rows.slice(0, page.limit).map(toReceipt), hasMore: rows.length > page.limit };
}
