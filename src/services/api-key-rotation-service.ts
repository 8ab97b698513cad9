// Rotating a service-account API key (docs/architecture.md#credentials): a new secret under the same key id, answered
// once; the replaced secret works for an overlap, then is refused.
import { credentialRevocationChannel, mintApiKeySecret, type Environment } from '../credentials/api-key.ts';
import { findApiKey, rotateApiKeySecret, type RotatedApiKey } from '../db/api-key-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { recordEvent } from '../db/event-repository.ts';
import { presentApiKey } from './api-key-service.ts';

/**
 * Rotates a key (docs/architecture.md#credentials): a new secret under the same key id, kind, role and scopes; the
 * replaced secret keeps working for `overlapSeconds`, then is refused (`auth.credential_rotated`). Every replica is
 * told through the revocation channel when the transaction commits, so no cache keeps answering the old state.
 */
export async function rotateAndAnnounce(
  tx: Queryable,
  tenant: { tenantId: string; environment: Environment },
  keyId: string,
  overlapSeconds: number,
): Promise<RotatedApiKey & { apiKey: string }> {
  const existing = await findApiKey(tx, tenant.tenantId, keyId);
  if (!existing) throw new ServiceError('api_key.not_found');
  const minted = mintApiKeySecret(existing.kind, tenant.environment, existing.keyId);
  const rotated = await rotateApiKeySecret(tx, tenant.tenantId, existing.keyId, minted.secretSha256, overlapSeconds);
  if (!rotated) throw new ServiceError('api_key.not_found');
  if ('revoked' in rotated) throw new ServiceError('api_key.revoked');
  await tx.query('SELECT pg_notify($1, $2)', [credentialRevocationChannel, existing.keyId]);
  recordEvent(tx, tenant.tenantId, { type: 'api_key.rotated', object: presentApiKey(rotated.record, tenant.environment) });
  return { ...rotated, apiKey: minted.apiKey };
}
