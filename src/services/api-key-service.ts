// Issuing and revoking service-account API keys. The full key exists only in the answer to its creation.
import { mintApiKey, type ApiKeyKind, type Environment } from '../credentials/api-key.ts';
import { normalizeScopes } from '../credentials/mcp-scopes.ts';
import type { Role } from '../credentials/roles.ts';
import { insertApiKey, revokeApiKey, type ApiKeyRecord } from '../db/api-key-repository.ts';
import { credentialRevocationChannel } from '../credentials/api-key.ts';
import type { Queryable } from '../infra/database.ts';

export interface IssuedApiKey {
  readonly record: ApiKeyRecord;
  /** Shown once. */
  readonly apiKey: string;
}

export interface ApiKeyRequest {
  readonly role: Role;
  readonly name?: string;
  /** Present for a restricted key (`svc_rk_…`), which is limited to these scopes as well as its role: catalogue scopes
   * (`mcp.spend:write`) or preset names, which are expanded; anything else is refused (src/credentials/mcp-scopes.ts). */
  readonly scopes?: readonly string[];
}

export async function issueApiKey(
  tx: Queryable,
  tenant: { tenantId: string; environment: Environment },
  request: ApiKeyRequest,
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
