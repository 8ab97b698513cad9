// Issuing and revoking service-account API keys. The full key exists only in the answer to its creation.
import type { ApiKey, ApiKeyCreateBody } from '../contracts/api-keys.ts';
import { mintApiKey, type ApiKeyKind, type Environment } from '../credentials/api-key.ts';
import type { Role } from '../credentials/roles.ts';
import { apiKeyNameLengthMax } from '../limits.ts';
import { ServiceError } from '../errors/service-error.ts';
import { normalizeScopes } from '../credentials/mcp-scopes.ts';
import { findApiKey, insertApiKey, revokeApiKey, type ApiKeyRecord } from '../db/api-key-repository.ts';
import { recordEvent } from '../db/event-repository.ts';
import { credentialRevocationChannel } from '../credentials/api-key.ts';
import type { Queryable } from '../infra/database.ts';

export interface IssuedApiKey {
  readonly record: ApiKeyRecord;
  /** Shown once. */
  readonly apiKey: string;
}

/** A key to issue: its role, its name, and for a restricted key its scopes (present, even empty, = restricted). */
export interface ApiKeyRequest {
  readonly role: Role;
  readonly name?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
}

/** 400 `request.invalid` naming one body field, as a schema refusal names it. */
function invalidField(field: string, message: string): ServiceError {
  return new ServiceError('request.invalid', { message: `${field} ${message}.`, details: { fields: [{ location: 'body', path: `/${field}`, message }] } });
}

/** Our field or the public client's name for it: either, or both when they agree. */
function eitherSpelling<T>(ours: T | undefined, theirs: T | undefined, names: [string, string], same: (a: T, b: T) => boolean = (a, b) => a === b): T | undefined {
  if (ours !== undefined && theirs !== undefined && !same(ours, theirs)) throw invalidField(names[1], `differs from ${names[0]}; send one of them`);
  return ours ?? theirs;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((entry, index) => entry === b[index]);

/**
 * The key a create body asks for, from our fields (`role`, `name`, `scopes`) or the public client's
 * (`service_account_role`, `service_account_name` and `label`, `key_kind`, `mcp_scopes` with `{scope, level}`
 * entries). The client names the account and may label the key; the key has one name, so a label is kept beside
 * the account's name as `name (label)`. `key_kind` says what our rule infers from `scopes`: `standard` with scopes
 * is refused (a key broader than asked for is never issued), `restricted` without any is a key limited to nothing.
 */
export function apiKeyRequestOf(body: Readonly<ApiKeyCreateBody>): ApiKeyRequest {
  const role = eitherSpelling(body.role, body.service_account_role, ['role', 'service_account_role']);
  if (role === undefined) throw invalidField('role', 'is required (or service_account_role)');
  const accountName = eitherSpelling(body.name, body.service_account_name, ['name', 'service_account_name']);
  const label = body.label?.trim() ? body.label : undefined;
  const name = label === undefined || label === accountName ? accountName : accountName ? `${accountName} (${label})` : label;
  if (name !== undefined && name.length > apiKeyNameLengthMax) throw invalidField('label', `and the name together are longer than ${apiKeyNameLengthMax} characters`);
  const clientScopes = body.mcp_scopes?.map((entry) => (typeof entry === 'string' ? entry : `${entry.scope}:${entry.level}`));
  const listed = eitherSpelling<readonly string[]>(body.scopes, clientScopes, ['scopes', 'mcp_scopes'], sameList);
  if (body.key_kind === 'standard' && listed !== undefined && listed.length > 0) {
    throw invalidField('key_kind', 'is standard, which carries no scopes; send key_kind restricted to limit the key to them');
  }
  const scopes = body.key_kind === 'standard' ? undefined : body.key_kind === 'restricted' ? (listed ?? []) : listed;
  return { role, ...(name === undefined ? {} : { name }), ...(scopes === undefined ? {} : { scopes }) };
}

/**
 * Issues a key as `POST /v1/admin/api-keys` asks (read by `apiKeyRequestOf`). `scopes` present makes a restricted
 * key (`svc_rk_…`), limited to those scopes as well as its role: catalogue scopes (`mcp.spend:write`) or preset
 * names, which are expanded; anything else is refused (src/credentials/mcp-scopes.ts).
 */
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
  recordEvent(tx, tenant.tenantId, { type: 'api_key.created', object: presentApiKey(record, tenant.environment) });
  return { record, apiKey: minted.apiKey };
}

/** Revokes and tells every replica to drop the key from its cache when the transaction commits. */
export async function revokeAndAnnounce(
  tx: Queryable,
  tenant: { tenantId: string; environment: Environment },
  keyId: string,
): Promise<ApiKeyRecord | undefined> {
  const before = await findApiKey(tx, tenant.tenantId, keyId);
  const record = await revokeApiKey(tx, tenant.tenantId, keyId);
  if (record) await tx.query('SELECT pg_notify($1, $2)', [credentialRevocationChannel, keyId]);
  // Revoking a revoked key changes nothing, and tells nobody again.
  if (record && before?.revokedAt === null) recordEvent(tx, tenant.tenantId, { type: 'api_key.revoked', object: presentApiKey(record, tenant.environment) });
  return record;
}

/** The key as the routes and its events show it (never its secret). */
export function presentApiKey(record: ApiKeyRecord, environment: Environment): ApiKey {
  return {
    object: 'api_key',
    key_id: record.keyId,
    role: record.role,
    name: record.name,
    key_kind: record.kind,
    scopes: [...record.scopes],
    environment,
    service_account_role: record.role,
    service_account_name: record.name,
    mcp_scopes: [...record.scopes],
    created_at: record.createdAt.toISOString(),
    last_used_at: record.lastUsedAt?.toISOString() ?? null,
    revoked_at: record.revokedAt?.toISOString() ?? null,
  };
}

