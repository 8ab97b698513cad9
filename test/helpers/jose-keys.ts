// The private half of a gateway key as jose signs with it, built from the key file's seed through a JWK (RFC 8037),
// its public half computed by @noble/ed25519: tests that sign a token with jose stay independent of the service's
// own signing helper (src/signing/ed25519.ts).
import { createPrivateKey, type KeyObject } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import type { KeyFile } from '../../src/infra/gateway-keys.ts';

noble.hashes.sha512 = sha512;

export function josePrivateKeyOf(entry: KeyFile['keys'][number]): KeyObject {
  const seed = Buffer.from(entry.seed_hex, 'hex');
  const publicKey = Buffer.from(noble.getPublicKey(seed));
  return createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: publicKey.toString('base64url') } });
}
