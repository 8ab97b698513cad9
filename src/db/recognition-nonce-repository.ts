// Single-use nonces of recognition proofs, per tenant and key.
import type { Queryable } from '../infra/database.ts';

export interface NonceUse {
  readonly keyId: string;
  readonly nonce: string;
  readonly purpose: string;
  readonly idempotencyKey: string | undefined;
  readonly expiresAt: Date;
}

/** Records the nonce's first use. When it was used before, answers that earlier use instead. */
export async function claimNonce(
  tx: Queryable,
  tenantId: string,
  use: NonceUse,
): Promise<{ firstUse: true } | { firstUse: false; earlier: { purpose: string; idempotencyKey: string | null } }> {
  const inserted = await tx.query(
    `INSERT INTO recognition_nonces (tenant_id, key_id, nonce, purpose, idempotency_key, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, key_id, nonce) DO NOTHING`,
    [tenantId, use.keyId, use.nonce, use.purpose, use.idempotencyKey ?? null, use.expiresAt],
  );
  if (inserted.rowCount === 1) return { firstUse: true };
  const { rows } = await tx.query<{ purpose: string; idempotency_key: string | null }>(
    'SELECT purpose, idempotency_key FROM recognition_nonces WHERE tenant_id = $1 AND key_id = $2 AND nonce = $3',
    [tenantId, use.keyId, use.nonce],
  );
  return { firstUse: false, earlier: { purpose: rows[0]!.purpose, idempotencyKey: rows[0]!.idempotency_key } };
}

/** Forgets nonces whose proofs have expired: an expired proof is refused by its window, so its nonce can go. */
export async function deleteExpiredNonces(systemTx: Queryable, before: Date): Promise<number> {
  const { rowCount } = await systemTx.query('DELETE FROM recognition_nonces WHERE expires_at < $1', [before]);
  return rowCount ?? 0;
}
