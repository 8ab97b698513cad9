// Recognition proofs against the database: the agent key registered for the proof's key_id (registered on first
// use in a sandbox tenant), and the nonce used once. Runs inside the caller's tenant transaction, so a request
// that fails later neither burns the nonce nor keeps a key it registered.
import type { Environment } from '../credentials/api-key.ts';
import { findKeysForSubject, insertFirstUseAgentKey, type RegisteredKey } from '../db/registered-key-repository.ts';
import { claimNonce } from '../db/recognition-nonce-repository.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import {
  parseRecognitionProofHeader,
  verifyRecognitionProof,
  type RecognitionExpectations,
  type RecognitionProof,
  type VerifiedRecognitionProof,
} from '../signing/recognition.ts';
import { isUsableEd25519PublicKey } from '../signing/usable-public-key.ts';

/** The live key among a key id's registered keys; distinct codes for unknown and revoked. */
function liveKeyOf(keys: readonly RegisteredKey[], keyId: string): Buffer {
  const live = keys.find((key) => key.revokedAt === null);
  if (live) return live.publicKey;
  throw new ServiceError(keys.length > 0 ? 'recognition.key_revoked' : 'recognition.key_unknown', { details: { key_id: keyId } });
}

/** The registered, live key for an agent key id; distinct codes for unknown and revoked. */
export async function agentKeyFor(tx: Queryable, tenantId: string, keyId: string): Promise<Buffer> {
  return liveKeyOf(await findKeysForSubject(tx, tenantId, 'agent', keyId), keyId);
}

export interface RequestRecognition extends Omit<RecognitionExpectations, 'publicKey'> {
  /** The request's idempotency key: a retry under the same key may present the same proof again. */
  readonly idempotencyKey?: string | undefined;
  /** The tenant's environment when the caller has it at hand; otherwise read when a key turns out unregistered. */
  readonly environment?: Environment | undefined;
}

/**
 * How the proof's key stood: `registered` before this call, `first_use` registered by this call (sandbox), or
 * `unregistered` (sandbox, checked without consuming the nonce, so nothing was stored; the first use that acts on
 * a proof registers it).
 */
export type KeyRegistration = 'registered' | 'first_use' | 'unregistered';

export interface RecognizedProof extends VerifiedRecognitionProof {
  readonly keyRegistration: KeyRegistration;
}

/** Verifies the proof of a mutation (from its header) and consumes its nonce. */
export async function verifyRequestRecognition(
  tx: Queryable,
  headerValue: string | undefined,
  expectations: RequestRecognition,
): Promise<RecognizedProof> {
  return verifyRecognition(tx, parseRecognitionProofHeader(headerValue), expectations, { consumeNonce: true });
}

/** Verifies a parsed proof against the registry and, when asked, consumes its nonce. Only a call that consumes
 * the nonce registers a sandbox key on first use: a check that does not act on the proof stores nothing. */
export async function verifyRecognition(
  tx: Queryable,
  proof: RecognitionProof,
  expectations: RequestRecognition,
  options: { consumeNonce: boolean },
): Promise<RecognizedProof> {
  const keys = await findKeysForSubject(tx, expectations.tenantId, 'agent', proof.key_id);
  const recognized =
    keys.length === 0 && (await isSandboxTenant(tx, expectations))
      ? await verifyFirstUse(tx, proof, expectations, { register: options.consumeNonce })
      : { ...verifyRecognitionProof(proof, { ...expectations, publicKey: liveKeyOf(keys, proof.key_id) }), keyRegistration: 'registered' as const };
  if (options.consumeNonce) await consumeNonce(tx, recognized, expectations);
  return recognized;
}

async function isSandboxTenant(tx: Queryable, expectations: RequestRecognition): Promise<boolean> {
  const environment = expectations.environment ?? (await findTenant(tx, expectations.tenantId))?.environment;
  return environment === 'sandbox';
}

/**
 * A sandbox proof by a key id with no key at all (a revoked key is never replaced this way): the proof is checked
 * in full against the key it carries BEFORE anything is stored, then that key is registered under its key id.
 * When a concurrent first use registered the key id first, the proof is held to that key, as to any registered one.
 */
async function verifyFirstUse(
  tx: Queryable,
  proof: RecognitionProof,
  expectations: RequestRecognition,
  options: { register: boolean },
): Promise<RecognizedProof> {
  const embeddedKeyHex = proof.signing_public_key_ed25519_hex;
  // A small-order key would accept signatures that prove nothing; such a key is never registered by any path.
  if (!isUsableEd25519PublicKey(embeddedKeyHex)) {
    throw new ServiceError('recognition.signature_invalid', { details: { reason: 'the proof carries an unusable Ed25519 public key' } });
  }
  const publicKey = Buffer.from(embeddedKeyHex, 'hex');
  const verified = verifyRecognitionProof(proof, { ...expectations, publicKey });
  if (!options.register) return { ...verified, keyRegistration: 'unregistered' };
  const inserted = await insertFirstUseAgentKey(tx, expectations.tenantId, { keyId: proof.key_id, publicKey });
  if (inserted) return { ...verified, keyRegistration: 'first_use' };
  // Another transaction registered this key id between our look-up and our insert, and has committed.
  const winner = await agentKeyFor(tx, expectations.tenantId, proof.key_id);
  if (!winner.equals(publicKey)) throw new ServiceError('recognition.key_mismatch');
  return { ...verified, keyRegistration: 'registered' };
}

async function consumeNonce(tx: Queryable, verified: VerifiedRecognitionProof, expectations: RequestRecognition): Promise<void> {
  const claim = await claimNonce(tx, expectations.tenantId, {
    keyId: verified.keyId,
    nonce: verified.nonce,
    purpose: verified.purpose,
    idempotencyKey: expectations.idempotencyKey,
    expiresAt: new Date(verified.expiresAtMs),
  });
  if (claim.firstUse) return;
  const sameRetry =
    expectations.idempotencyKey !== undefined &&
    claim.earlier.idempotencyKey === expectations.idempotencyKey &&
    claim.earlier.purpose === verified.purpose;
  if (!sameRetry) throw new ServiceError('recognition.nonce_replayed');
}
