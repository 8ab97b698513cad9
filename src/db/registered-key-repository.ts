// The tenant key registry: Ed25519 public keys of principals, agents and operators, revocable, never deleted.
import { randomBytes } from 'node:crypto';
import type { KeyRegistrationSource, RegisteredKeyKind } from '../contracts/registry.ts';
import type { Queryable } from '../infra/database.ts';

// The kinds and registration sources are part of the API contract; the table's CHECKs list the same values.
export { keyRegistrationSources, registeredKeyKinds, type KeyRegistrationSource, type RegisteredKeyKind } from '../contracts/registry.ts';

export interface RegisteredKey {
  readonly registeredKeyId: string;
  readonly tenantId: string;
  readonly kind: RegisteredKeyKind;
  readonly subject: string;
  readonly publicKey: Buffer;
  readonly registeredBy: KeyRegistrationSource;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

interface RegisteredKeyRow {
  registered_key_id: string;
  tenant_id: string;
  kind: RegisteredKeyKind;
  subject: string;
  public_key: Buffer;
  registered_by: KeyRegistrationSource;
  created_at: Date;
  revoked_at: Date | null;
}

const columns = 'registered_key_id, tenant_id, kind, subject, public_key, registered_by, created_at, revoked_at';

const toRegisteredKey = (row: RegisteredKeyRow): RegisteredKey => ({
  registeredKeyId: row.registered_key_id,
  tenantId: row.tenant_id,
  kind: row.kind,
  subject: row.subject,
  publicKey: row.public_key,
  registeredBy: row.registered_by,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

const newRegisteredKeyId = (): string => `rkey_${randomBytes(16).toString('hex')}`;

/** Unique violations name `registered_keys_live_key` (the same live key twice) or `registered_keys_live_agent`
 * (a second live key for one agent key id). */
export async function insertRegisteredKey(
  tx: Queryable,
  tenantId: string,
  key: { kind: RegisteredKeyKind; subject: string; publicKey: Buffer; registeredBy: Exclude<KeyRegistrationSource, 'first_use'> },
): Promise<RegisteredKey> {
  const { rows } = await tx.query<RegisteredKeyRow>(
    `INSERT INTO registered_keys (registered_key_id, tenant_id, kind, subject, public_key, registered_by)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
    [newRegisteredKeyId(), tenantId, key.kind, key.subject, key.publicKey, key.registeredBy],
  );
  return toRegisteredKey(rows[0]!);
}

/**
 * Registers a sandbox agent key on its first use, unless a live key already holds the key id. A concurrent first
 * use of the same key id waits on the unique index until the other transaction ends; it then inserts nothing
 * (and answers undefined) when the other committed, or inserts when the other rolled back. No error either way,
 * so the caller's transaction stays usable.
 */
export async function insertFirstUseAgentKey(
  tx: Queryable,
  tenantId: string,
  key: { keyId: string; publicKey: Buffer },
): Promise<RegisteredKey | undefined> {
  const { rows } = await tx.query<RegisteredKeyRow>(
    `INSERT INTO registered_keys (registered_key_id, tenant_id, kind, subject, public_key, registered_by)
     VALUES ($1, $2, 'agent', $3, $4, 'first_use') ON CONFLICT DO NOTHING RETURNING ${columns}`,
    [newRegisteredKeyId(), tenantId, key.keyId, key.publicKey],
  );
  return rows[0] && toRegisteredKey(rows[0]);
}

export interface RegisteredKeyFilter {
  readonly kind?: RegisteredKeyKind | undefined;
  readonly subject?: string | undefined;
  readonly registeredBy?: KeyRegistrationSource | undefined;
  readonly limit: number;
  readonly startingAfter?: string | undefined;
}

/** Newest first, live and revoked alike. */
export async function listRegisteredKeys(
  tx: Queryable,
  tenantId: string,
  filter: RegisteredKeyFilter,
): Promise<{ keys: RegisteredKey[]; hasMore: boolean }> {
  const { rows } = await tx.query<RegisteredKeyRow>(
    `SELECT ${columns} FROM registered_keys
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR kind = $2)
       AND ($3::text IS NULL OR subject = $3)
       AND ($4::text IS NULL OR (created_at, registered_key_id) < (
             SELECT created_at, registered_key_id FROM registered_keys WHERE tenant_id = $1 AND registered_key_id = $4))
       AND ($6::text IS NULL OR registered_by = $6)
     ORDER BY created_at DESC, registered_key_id DESC
     LIMIT $5`,
    [tenantId, filter.kind ?? null, filter.subject ?? null, filter.startingAfter ?? null, filter.limit + 1, filter.registeredBy ?? null],
  );
  return { keys: rows.slice(0, filter.limit).map(toRegisteredKey), hasMore: rows.length > filter.limit };
}

/** Revokes; revoking a revoked key keeps its first revocation time. Undefined when there is no such key. */
export async function revokeRegisteredKey(tx: Queryable, tenantId: string, registeredKeyId: string): Promise<RegisteredKey | undefined> {
  const { rows } = await tx.query<RegisteredKeyRow>(
    `UPDATE registered_keys SET revoked_at = coalesce(revoked_at, now())
     WHERE tenant_id = $1 AND registered_key_id = $2 RETURNING ${columns}`,
    [tenantId, registeredKeyId],
  );
  return rows[0] && toRegisteredKey(rows[0]);
}

/** The keys registered for one subject, newest first: the live ones, and the revoked ones so that a caller can
 * tell "revoked" from "unknown". */
export async function findKeysForSubject(
  tx: Queryable,
  tenantId: string,
  kind: RegisteredKeyKind,
  subject: string,
): Promise<RegisteredKey[]> {
  const { rows } = await tx.query<RegisteredKeyRow>(
    `SELECT ${columns} FROM registered_keys WHERE tenant_id = $1 AND kind = $2 AND subject = $3
     ORDER BY revoked_at IS NULL DESC, created_at DESC LIMIT 32`,
    [tenantId, kind, subject],
  );
  return rows.map(toRegisteredKey);
}
