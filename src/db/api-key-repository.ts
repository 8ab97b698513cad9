// Service-account API keys: creation, listing, revocation, and the credential lookup behind every request.
import type { ApiKeyKind, Environment } from '../credentials/api-key.ts';
import type { Role } from '../credentials/roles.ts';
import type { Queryable } from '../infra/database.ts';

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly tenantId: string;
  readonly kind: ApiKeyKind;
  readonly role: Role;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

/** What authentication needs to know about a key id, with its tenant. */
export interface ApiKeyCredential {
  readonly keyId: string;
  readonly kind: ApiKeyKind;
  readonly role: Role;
  readonly scopes: readonly string[];
  readonly secretSha256: Buffer;
  /** The secret a rotation replaced, and until when it still authenticates (docs/architecture.md#credentials). */
  readonly previousSecretSha256: Buffer | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly revoked: boolean;
  readonly tenantId: string;
  readonly tenantUuid: string;
  readonly environment: Environment;
}

interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  kind: ApiKeyKind;
  role: Role;
  name: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const recordColumns = 'key_id, tenant_id, kind, role, name, scopes, created_at, last_used_at, revoked_at';

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  keyId: row.key_id,
  tenantId: row.tenant_id,
  kind: row.kind,
  role: row.role,
  name: row.name,
  scopes: row.scopes,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export interface NewApiKey {
  readonly keyId: string;
  readonly kind: ApiKeyKind;
  readonly role: Role;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly secretSha256: Buffer;
}

export async function insertApiKey(tx: Queryable, tenantId: string, key: NewApiKey): Promise<ApiKeyRecord> {
  const { rows } = await tx.query<ApiKeyRow>(
    `INSERT INTO api_keys (key_id, tenant_id, kind, role, name, scopes, secret_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${recordColumns}`,
    [key.keyId, tenantId, key.kind, key.role, key.name, key.scopes, key.secretSha256],
  );
  return toRecord(rows[0]!);
}

export interface ApiKeyPage {
  readonly keys: ApiKeyRecord[];
  readonly hasMore: boolean;
}

/** Newest first. `startingAfter` is the key id of the last key of the previous page. */
export async function listApiKeys(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<ApiKeyPage> {
  const { rows } = await tx.query<ApiKeyRow>(
    `SELECT ${recordColumns} FROM api_keys
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR (created_at, key_id) < (
             SELECT created_at, key_id FROM api_keys WHERE tenant_id = $1 AND key_id = $2))
     ORDER BY created_at DESC, key_id DESC
     LIMIT $3`,
    [tenantId, page.startingAfter ?? null, page.limit + 1],
  );
  return { keys: rows.slice(0, page.limit).map(toRecord), hasMore: rows.length > page.limit };
}

export async function findApiKey(tx: Queryable, tenantId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(`SELECT ${recordColumns} FROM api_keys WHERE tenant_id = $1 AND key_id = $2`, [
    tenantId,
    keyId,
  ]);
  return rows[0] && toRecord(rows[0]);
}

/** Revokes a key; revoking a revoked key keeps its first revocation time. Undefined when there is no such key. */
export async function revokeApiKey(tx: Queryable, tenantId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
     WHERE tenant_id = $1 AND key_id = $2 RETURNING ${recordColumns}`,
    [tenantId, keyId],
  );
  return rows[0] && toRecord(rows[0]);
}

/** What a rotation did: the key as it now is, and until when the replaced secret still works (`rotatedAt` itself for
 * an overlap of 0: it is then refused as rotated, not as unknown). */
export interface RotatedApiKey {
  readonly record: ApiKeyRecord;
  readonly rotatedAt: Date;
  readonly previousSecretExpiresAt: Date;
}

/**
 * Gives a key a new secret. The secret it replaces keeps working for `overlapSeconds` (none at 0); a previous secret
 * still in its overlap is dropped, so a key has at most two working secrets and remembers one replaced one. Undefined for no such key; a revoked key
 * is answered as it is, unrotated, for the caller to refuse.
 */
export async function rotateApiKeySecret(tx: Queryable, tenantId: string, keyId: string, secretSha256: Buffer, overlapSeconds: number): Promise<RotatedApiKey | { revoked: ApiKeyRecord } | undefined> {
  const { rows } = await tx.query<ApiKeyRow & { rotated_at: Date; previous_secret_expires_at: Date }>(
    `UPDATE api_keys SET
       previous_secret_sha256 = secret_sha256,
       previous_secret_expires_at = now() + make_interval(secs => $4::integer),
       secret_sha256 = $3,
       rotated_at = now()
     WHERE tenant_id = $1 AND key_id = $2 AND revoked_at IS NULL
     RETURNING ${recordColumns}, rotated_at, previous_secret_expires_at`,
    [tenantId, keyId, secretSha256, overlapSeconds],
  );
  const row = rows[0];
  if (row) return { record: toRecord(row), rotatedAt: row.rotated_at, previousSecretExpiresAt: row.previous_secret_expires_at };
  const existing = await findApiKey(tx, tenantId, keyId);
  return existing && { revoked: existing };
}

/** The credential lookup: by key id alone, before the tenant is known, so it runs as the system role. */
export async function findApiKeyCredential(systemTx: Queryable, keyId: string): Promise<ApiKeyCredential | undefined> {
  const { rows } = await systemTx.query<{
    key_id: string;
    kind: ApiKeyKind;
    role: Role;
    scopes: string[];
    secret_sha256: Buffer;
    previous_secret_sha256: Buffer | null;
    previous_secret_expires_at: Date | null;
    revoked: boolean;
    tenant_id: string;
    tenant_uuid: string;
    environment: Environment;
  }>(
    `SELECT k.key_id, k.kind, k.role, k.scopes, k.secret_sha256, k.previous_secret_sha256, k.previous_secret_expires_at,
            k.revoked_at IS NOT NULL AS revoked,
            t.tenant_id, t.tenant_uuid, t.environment
     FROM api_keys k JOIN tenants t ON t.tenant_id = k.tenant_id
     WHERE k.key_id = $1`,
    [keyId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    keyId: row.key_id,
    kind: row.kind,
    role: row.role,
    scopes: row.scopes,
    secretSha256: row.secret_sha256,
    previousSecretSha256: row.previous_secret_sha256,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    revoked: row.revoked,
    tenantId: row.tenant_id,
    tenantUuid: row.tenant_uuid,
    environment: row.environment,
  };
}

export async function touchApiKeyLastUsed(systemTx: Queryable, keyId: string, usedAt: Date): Promise<void> {
  await systemTx.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE key_id = $1 AND (last_used_at IS NULL OR last_used_at < $2)',
    [keyId, usedAt],
  );
}
