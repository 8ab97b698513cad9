// Issuing and revoking service-account API keys. The full key exists only in the answer to its creation.
import type { ApiKeyCreateBody } from '../contracts/api-keys.ts';
import { mintApiKey, type ApiKeyKind, type Environment } from '../credentials/api-key.ts';
import { normalizeScopes } from '../credentials/mcp-scopes.ts';
import { insertApiKey, revokeApiKey, type ApiKeyRecord } from '../db/api-key-repository.ts';
import { credentialRevocationChannel } from '../credentials/api-key.ts';
import type { Queryable } from '../infra/database.ts';

export interface IssuedApiKey {
  readonly record: ApiKeyRecord;
  /** Shown once. */
  readonly apiKey: string;
}

/**
 * Issues a key as `POST /v1/admin/api-keys` asks (its body's contract, `ApiKeyCreateBody`). `scopes` present makes a
 * restricted key (`svc_rk_…`), limited to those scopes as well as its role: catalogue scopes (`mcp.spend:write`) or
 * preset names, which are expanded; anything else is refused (src/credentials/mcp-scopes.ts).
 */
export async function issueApiKey(
  tx: Queryable,
  tenant: { tenantId: string; environment: Environment },
  request: Readonly<ApiKeyCreateBody>,
): Promise<IssuedApiKey> {
  const kind: ApiKeyKind = request.scopes === undefined ? 'standard' : 'restricted';
  const minted = mintApiKey(kind, tenant.environment);
  const record = await insertApiKey(tx, tenant.tenantId, {
    keyId: minted.keyId,
    kind,
    role: request.role,
    name: request.name ?? '',
    scopes: normalizeScopes(request.scopes ?? []),
    secretSha256: minted.secretSha256,
  });
  return { record, apiKey: minted.apiKey };
}

/** Revokes and tells every replica to drop the key from its cache when the transaction commits. */
export async function revokeAndAnnounce(tx: Queryable, tenantId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const record = await revokeApiKey(tx, tenantId, keyId);
  if (record) await tx.query('SELECT pg_notify($1, $2)', [credentialRevocationChannel, keyId]);
  return record;
}
