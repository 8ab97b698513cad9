// Registering a tenant's Ed25519 public keys, for the registry route and the operator CLI alike: the checks a key
// must pass, the registry's refusals as catalogue codes, and the one JSON shape a registered key is shown in.
import type { RegisteredKey as RegisteredKeyAnswer } from '../contracts/registry.ts';
import {
  insertRegisteredKey,
  registeredKeyKinds,
  type KeyRegistrationSource,
  type RegisteredKey,
  type RegisteredKeyKind,
} from '../db/registered-key-repository.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { registeredKeySubjectLengthMax } from '../limits.ts';
import { isUniqueViolation, type Database } from '../infra/database.ts';
import { isUsableEd25519PublicKey } from '../signing/usable-public-key.ts';
import { isValidTenantId } from './tenant-service.ts';

/** Agent subjects are recognition-proof key ids and follow their grammar (the proof's `key_id`). */
export const agentKeyIdPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;

export interface KeyRegistration {
  readonly kind: RegisteredKeyKind;
  readonly subject: string;
  /** 64 lowercase hex digits: the raw 32-byte Ed25519 public key. */
  readonly publicKeyHex: string;
  /** Who registers: the registry route or the operator CLI. First use registers through recognition-service.ts. */
  readonly registeredBy: Exclude<KeyRegistrationSource, 'first_use'>;
}


function invalidField(path: string, message: string): never {
  throw new ServiceError('request.invalid', { message, details: { fields: [{ location: 'body', path, message }] } });
}

/** The checks the route schema also makes, repeated here for callers without one (the CLI). */
function assertRegistration(registration: KeyRegistration): void {
  const { kind, subject, publicKeyHex } = registration;
  if (!(registeredKeyKinds as readonly string[]).includes(kind)) invalidField('/kind', `kind must be one of ${registeredKeyKinds.join(', ')}`);
  if (typeof subject !== 'string' || subject.length < 1 || subject.length > registeredKeySubjectLengthMax) {
    invalidField('/subject', `subject must be 1 to ${registeredKeySubjectLengthMax} characters`);
  }
  if (kind === 'agent' && !agentKeyIdPattern.test(subject)) {
    invalidField('/subject', 'An agent subject is its recognition-proof key_id: lowercase, ^[a-z0-9][a-z0-9._:/-]{0,127}$.');
  }
  if (!isUsableEd25519PublicKey(publicKeyHex)) throw new ServiceError('registry.public_key_invalid');
}

/**
 * Registers a public key for a tenant's principal, agent or operator. Unknown tenant → `tenant.not_found`; the same
 * live key twice → `registry.key_already_registered`; a second live key for an agent key id →
 * `registry.agent_key_id_taken`; a malformed or unusable key → `registry.public_key_invalid`.
 */
export async function registerKey(database: Database, tenantId: string, registration: KeyRegistration): Promise<RegisteredKey> {
  // An id no tenant could have names no tenant: the same answer as an unknown one.
  if (!isValidTenantId(tenantId)) throw new ServiceError('tenant.not_found');
  assertRegistration(registration);
  try {
    return await database.tenant(tenantId, async (tx) => {
      if (!(await findTenant(tx, tenantId))) throw new ServiceError('tenant.not_found');
      return insertRegisteredKey(tx, tenantId, {
        kind: registration.kind,
        subject: registration.subject,
        publicKey: Buffer.from(registration.publicKeyHex, 'hex'),
        registeredBy: registration.registeredBy,
      });
    });
  } catch (error) {
    if (isUniqueViolation(error, 'registered_keys_live_key')) throw new ServiceError('registry.key_already_registered');
    if (isUniqueViolation(error, 'registered_keys_live_agent')) throw new ServiceError('registry.agent_key_id_taken');
    throw error;
  }
}

/** A registered key as the registry route and the CLI show it. */
export function presentRegisteredKey(key: RegisteredKey): RegisteredKeyAnswer {
  return {
    object: 'registered_key',
    id: key.registeredKeyId,
    kind: key.kind,
    subject: key.subject,
    public_key_ed25519_hex: key.publicKey.toString('hex'),
    registered_by: key.registeredBy,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
