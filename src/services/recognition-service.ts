// Recognition proofs against the database: the agent key registered for the proof's key_id, and the nonce used
// once. Runs inside the caller's tenant transaction, so a request that fails later does not burn the nonce.
import { findKeysForSubject } from '../db/registered-key-repository.ts';
import { claimNonce } from '../db/recognition-nonce-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../platform/database.ts';
import {
  parseRecognitionProofHeader,
  verifyRecognitionProof,
  type RecognitionExpectations,
  type RecognitionProof,
  type VerifiedRecognitionProof,
} from '../signing/recognition.ts';

/** The registered, live key for an agent key id; distinct codes for unknown and revoked. */
export async function agentKeyFor(tx: Queryable, tenantId: string, keyId: string): Promise<Buffer> {
  const keys = await findKeysForSubject(tx, tenantId, 'agent', keyId);
  const live = keys.find((key) => key.revokedAt === null);
  if (live) return live.publicKey;
  throw new ServiceError(keys.length > 0 ? 'recognition.key_revoked' : 'recognition.key_unknown', { details: { key_id: keyId } });
}

export interface RequestRecognition extends Omit<RecognitionExpectations, 'publicKey'> {
  /** The request's idempotency key: a retry under the same key may present the same proof again. */
  readonly idempotencyKey?: string | undefined;
}

/** Verifies the proof of a mutation (from its header) and consumes its nonce. */
export async function verifyRequestRecognition(
  tx: Queryable,
  headerValue: string | undefined,
  expectations: RequestRecognition,
): Promise<VerifiedRecognitionProof> {
  return verifyRecognition(tx, parseRecognitionProofHeader(headerValue), expectations, { consumeNonce: true });
}

/** Verifies a parsed proof against the registry and, when asked, consumes its nonce. */
export async function verifyRecognition(
  tx: Queryable,
  proof: RecognitionProof,
  expectations: RequestRecognition,
  options: { consumeNonce: boolean },
): Promise<VerifiedRecognitionProof> {
  const publicKey = await agentKeyFor(tx, expectations.tenantId, proof.key_id);
  const verified = verifyRecognitionProof(proof, { ...expectations, publicKey });
  if (!options.consumeNonce) return verified;
  const claim = await claimNonce(tx, expectations.tenantId, {
    keyId: verified.keyId,
    nonce: verified.nonce,
    purpose: verified.purpose,
    idempotencyKey: expectations.idempotencyKey,
    expiresAt: new Date(verified.expiresAtMs),
  });
  if (!claim.firstUse) {
    const sameRetry =
      expectations.idempotencyKey !== undefined &&
      claim.earlier.idempotencyKey === expectations.idempotencyKey &&
      claim.earlier.purpose === verified.purpose;
    if (!sameRetry) throw new ServiceError('recognition.nonce_replayed');
  }
  return verified;
}
