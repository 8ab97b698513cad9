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

/** A receipt to store together with its transparency log leaf, made of its signed canonical bytes. */
export interface LoggedReceipt extends Omit<NewReceipt, 'leafIndex'> {
  readonly canonicalBytes: Uint8Array;
}

/**
 * One statement that appends `receipts` to the tenant's transparency log as its next leaves, in order, and stores
 * them with their leaf indexes: the log head moves once for all of them, each leaf's hash is computed where the
 * table's check recomputes it anyway, and each wire text travels once, for the receipt (json, its text kept) and the
 * leaf (jsonb). A leaf of `leafFormat` 1 hashes the canonical bytes, of format 2 their SHA-256 digest
 * (src/signing/merkle.ts). Answers the leaf indexes, in the order of `receipts`. The head's row lock then serializes the
 * tenant's appends until the transaction ends: run it as late as the transaction allows (queued with COMMIT).
 * A receipt id already taken fails the statement, and with it the transaction (the caller holds the lock that makes
 * the ids free).
 */
export function recordReceiptsStatement(tenantId: string, receipts: readonly LoggedReceipt[], leafFormat: 1 | 2): Statement<number[]> {
  if (receipts.length === 0) throw new Error('recordReceiptsStatement: no receipts');
  return {
    text: `WITH input AS (
             SELECT * FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::text[])
                      WITH ORDINALITY AS i (kind, receipt_id, canonical_bytes, wire, family, scope, intent_id, tool_call_id, ord)),
           head AS (
             INSERT INTO transparency_log_heads AS h (tenant_id, tree_size) VALUES ($1, $10::bigint)
             ON CONFLICT (tenant_id) DO UPDATE SET tree_size = h.tree_size + $10::bigint, updated_at = now()
             RETURNING h.tree_size - $10::bigint AS first_index),
           leaves AS (
             INSERT INTO transparency_log_leaves (tenant_id, leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact, leaf_format)
             SELECT $1, head.first_index + i.ord - 1, i.kind, i.receipt_id, i.canonical_bytes,
                    sha256(decode('00', 'hex') || CASE WHEN $11::smallint = 1 THEN i.canonical_bytes ELSE sha256(i.canonical_bytes) END),
                    i.wire::jsonb, $11::smallint
               FROM head, input i)
           INSERT INTO protocol_receipts (tenant_id, family, receipt_id, kind, scope, intent_id, tool_call_id, wire, leaf_index)
           SELECT $1, i.family, i.receipt_id, i.kind, i.scope, i.intent_id, i.tool_call_id, i.wire::json, head.first_index + i.ord - 1
             FROM head, input i
           RETURNING leaf_index`,
    values: [
      tenantId,
      receipts.map((receipt) => receipt.kind),
      receipts.map((receipt) => receipt.receiptId),
      receipts.map((receipt) => Buffer.from(receipt.canonicalBytes.buffer, receipt.canonicalBytes.byteOffset, receipt.canonicalBytes.byteLength)),
      receipts.map((receipt) => receipt.wireText),
      receipts.map((receipt) => receipt.family),
      receipts.map((receipt) => receipt.scope ?? null),
      receipts.map((receipt) => receipt.intentId),
      receipts.map((receipt) => receipt.toolCallId ?? null),
      receipts.length,
      leafFormat,
    ],
    read: ({ rows }) => {
      // The leaves are consecutive, in input order, from the smallest (BIGINT as text; 2^53 leaves are out of reach).
      const first = Math.min(...rows.map((row) => Number(row.leaf_index)));
      return receipts.map((_, index) => first + index);
    },
  };
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
