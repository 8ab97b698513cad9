// Ed25519 keys for the three signers of the protocol: the principal (signs intent creation), the payee (signs
// evidence) and the agent (signs recognition proofs). Raw 32-byte seeds in, node:crypto underneath.
import { randomBytes } from 'node:crypto';
import { bytesToBase64, ed25519SignerFromSeed, SigningError, type Ed25519Signer } from '../signing/index.ts';
import { SvcSigningError } from './errors.ts';

/** A private signing key. The seed is not kept: only the node:crypto key object. */
export class SvcSigningKey {
  /** The signing core's signer (used to build recognition proofs). */
  readonly signer: Ed25519Signer;
  /** The 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** Standard base64 with padding, as engine bodies carry keys (`principal_pubkey`, `payee_pubkey`). */
  readonly publicKeyBase64: string;
  /** Lowercase hex, as the key registry and signed artifacts carry keys. */
  readonly publicKeyHex: string;

  constructor(signer: Ed25519Signer) {
    this.signer = signer;
    this.publicKey = signer.publicKey.bytes;
    this.publicKeyBase64 = bytesToBase64(signer.publicKey.bytes);
    this.publicKeyHex = signer.publicKey.hex;
  }

  /** Raw Ed25519 (RFC 8032, no pre-hash) over the bytes. */
  sign(message: Uint8Array): Uint8Array {
    return this.signer.sign(message);
  }
}

/** A key from a 32-byte seed, given as bytes or as 64 hex digits. */
export function keyFromSeed(seed: Uint8Array | string): SvcSigningKey {
  let bytes: Uint8Array;
  if (typeof seed === 'string') {
    if (!/^[0-9a-fA-F]{64}$/.test(seed)) throw new SvcSigningError('A seed given as text must be 64 hex digits (32 bytes).', 'signing.value_invalid');
    bytes = new Uint8Array(Buffer.from(seed, 'hex'));
  } else {
    bytes = seed;
  }
  return withSigningErrors(() => new SvcSigningKey(ed25519SignerFromSeed(bytes, 'seed')));
}

/** The principal's key: it signs intent creation envelopes. */
export const principalKeyFromSeed = keyFromSeed;
/** The payee's key: it signs evidence; its public key is committed when the intent is created. */
export const payeeKeyFromSeed = keyFromSeed;
/** An agent's key: it signs recognition proofs; register its public key under the agent's `key_id`. */
export const agentKeyFromSeed = keyFromSeed;

/** A fresh random key, with its seed (hex) so the caller can store it. */
export function generateKey(): { readonly seedHex: string; readonly key: SvcSigningKey } {
  const seed = randomBytes(32);
  return { seedHex: seed.toString('hex'), key: keyFromSeed(new Uint8Array(seed)) };
}

/** Runs a call into the signing core, turning its refusals (SigningError `signing.*`, …) into `SvcSigningError`
 * with the core's own message: the code, then the field and why (`signing.value_invalid: deadline must be …`). */
export function withSigningErrors<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof SigningError) throw new SvcSigningError(error.message, error.code, error.details, error);
    throw error;
  }
}
