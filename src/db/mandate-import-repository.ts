// Imported mandates (docs/protocol.md#mandates): one row per import, the mandate's nonce single-use per tenant.
import type { Queryable, Statement } from '../infra/database.ts';

export interface MandateImport {
  readonly nonce: string;
  readonly intentId: string;
  readonly mandateDigestHex: string;
  readonly authorizationReceiptId: string;
  readonly transportBinding: Record<string, unknown>;
  /** The signed mandate as received. */
  readonly signedMandate: Record<string, unknown>;
  readonly importedAt: Date;
}

interface ImportRow {
  nonce: string;
  intent_id: string;
  mandate_digest: Buffer;
  authorization_receipt_id: string;
  transport_binding: string;
  signed_mandate: string;
  imported_at: Date;
}

const toImport = (row: ImportRow): MandateImport => ({
  nonce: row.nonce,
  intentId: row.intent_id,
  mandateDigestHex: row.mandate_digest.toString('hex'),
  authorizationReceiptId: row.authorization_receipt_id,
  transportBinding: JSON.parse(row.transport_binding) as Record<string, unknown>,
  signedMandate: JSON.parse(row.signed_mandate) as Record<string, unknown>,
  importedAt: row.imported_at,
});

/** Records an import; false when the tenant has seen this nonce before (the mandate was already used). */
export async function insertMandateImport(
  tx: Queryable,
  tenantId: string,
  mandate: { nonce: string; intentId: string; mandateDigestHex: string; authorizationReceiptId: string; transportBinding: Record<string, unknown>; signedMandateText: string },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO mandate_imports (tenant_id, nonce, intent_id, mandate_digest, authorization_receipt_id, transport_binding, signed_mandate)
     VALUES ($1, $2, $3, $4, $5, $6::json, $7::json) ON CONFLICT (tenant_id, nonce) DO NOTHING`,
    [
      tenantId, mandate.nonce, mandate.intentId, Buffer.from(mandate.mandateDigestHex, 'hex'), mandate.authorizationReceiptId,
      JSON.stringify(mandate.transportBinding), mandate.signedMandateText,
    ],
  );
  return rowCount === 1;
}

/** The latest mandate imported for an intent, which its settlement receipt refers to. */
export function latestMandateImportStatement(tenantId: string, intentId: string): Statement<MandateImport | undefined> {
  return {
    text: `SELECT nonce, intent_id, mandate_digest, authorization_receipt_id, transport_binding::text AS transport_binding,
                  signed_mandate::text AS signed_mandate, imported_at
           FROM mandate_imports WHERE tenant_id = $1 AND intent_id = $2 ORDER BY imported_at DESC, nonce DESC LIMIT 1`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && toImport(rows[0] as ImportRow),
  };
}
