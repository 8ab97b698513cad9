// Ed25519 through node:crypto (OpenSSL), from raw 32-byte seeds and public keys: the one signing helper. Every
// signature the service and the SDK make goes through `ed25519SignerFromSeed` (the gateway keys hold one signer each),
// and only this file turns a seed into a private key. Key objects are built once and reused: the engine verifies a
// signature on every mutation.
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { ed25519PublicKeyCacheEntriesMax } from '../limits.ts';
import { bytesToHex, valueInvalid } from './encoding.ts';

export const ed25519SeedLength = 32;
export const ed25519PublicKeyLength = 32;
export const ed25519SignatureLength = 64;

// DER wrappers that turn raw key bytes into PKCS#8 / SPKI, the forms node:crypto imports (RFC 8410).
const pkcs8SeedPrefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiPublicKeyPrefix = Buffer.from('302a300506032b6570032100', 'hex');

/** A verified-shape Ed25519 public key with its node:crypto key object. Build with `ed25519PublicKey`. */
export class Ed25519PublicKey {
  readonly bytes: Uint8Array;
  readonly hex: string;
  readonly keyObject: KeyObject;

  constructor(bytes: Uint8Array, hex: string, keyObject: KeyObject) {
    this.bytes = bytes;
    this.hex = hex;
    this.keyObject = keyObject;
  }
}

/** Holds a private key object; `sign` is raw Ed25519 (RFC 8032 PureEdDSA, no pre-hash). */
export interface Ed25519Signer {
  readonly publicKey: Ed25519PublicKey;
  sign(message: Uint8Array): Uint8Array;
}

// Least recently used first (Map keeps insertion order; a hit re-inserts). Process memory as a cache only.
const publicKeyCache = new Map<string, Ed25519PublicKey>();

/** The public key for 32 raw bytes, from the cache when seen before. Wrong length → `signing.value_invalid`. */
export function ed25519PublicKey(bytes: Uint8Array, field = 'public_key'): Ed25519PublicKey {
  if (!(bytes instanceof Uint8Array) || bytes.length !== ed25519PublicKeyLength) {
    valueInvalid(field, `an Ed25519 public key is exactly ${ed25519PublicKeyLength} bytes`);
  }
  const hex = bytesToHex(bytes);
  const cached = publicKeyCache.get(hex);
  if (cached) {
    publicKeyCache.delete(hex);
    publicKeyCache.set(hex, cached);
    return cached;
  }
  const keyObject = createPublicKey({ key: Buffer.concat([spkiPublicKeyPrefix, bytes]), format: 'der', type: 'spki' });
  const publicKey = new Ed25519PublicKey(new Uint8Array(bytes), hex, keyObject);
  publicKeyCache.set(hex, publicKey);
  if (publicKeyCache.size > ed25519PublicKeyCacheEntriesMax) {
    publicKeyCache.delete(publicKeyCache.keys().next().value as string);
  }
  return publicKey;
}

/** A signer from a raw 32-byte seed (the RFC 8032 private key). The seed is not kept, only the key object. */
export function ed25519SignerFromSeed(seed: Uint8Array, field = 'seed'): Ed25519Signer {
  if (!(seed instanceof Uint8Array) || seed.length !== ed25519SeedLength) {
    valueInvalid(field, `an Ed25519 seed is exactly ${ed25519SeedLength} bytes`);
  }
  const privateKey = createPrivateKey({ key: Buffer.concat([pkcs8SeedPrefix, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = ed25519PublicKey(new Uint8Array(spki.subarray(spkiPublicKeyPrefix.length)));
  return {
    publicKey,
    sign: (message: Uint8Array): Uint8Array => new Uint8Array(sign(null, message, privateKey)),
  };
}

/**
 * True when `signature` is a valid Ed25519 signature of `message` by `publicKey`. Never throws for a wrong
 * signature; a signature that is not 64 bytes is simply invalid. OpenSSL refuses S ≥ L (non-canonical).
 */
export function verifyEd25519(publicKey: Ed25519PublicKey | Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = publicKey instanceof Ed25519PublicKey ? publicKey : ed25519PublicKey(publicKey);
  if (!(signature instanceof Uint8Array) || signature.length !== ed25519SignatureLength) return false;
  return verify(null, message, key.keyObject, signature);
}
