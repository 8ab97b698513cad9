// Service-account API keys: `svc_sk_<environment>_<key id: 32 hex>_<secret: 64 hex>` (restricted keys `svc_rk_…`).
// The id finds the stored record; only SHA-256 of the secret is stored, and it is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type Environment = 'sandbox' | 'live';
export type ApiKeyKind = 'standard' | 'restricted';

/** The Postgres NOTIFY channel on which a revoked or rotated key id is announced, so every replica's cache forgets it
 * (and reads the key's new state at its next use). */
export const credentialRevocationChannel = 'svc_credential_revoked';

export interface ParsedApiKey {
  readonly kind: ApiKeyKind;
  readonly environment: Environment;
  /** The stored record's id: `key_` + the 32 hex of the key. */
  readonly keyId: string;
  readonly secretSha256: Buffer;
}

const apiKeyPattern = /^svc_(sk|rk)_(sandbox|live)_([0-9a-f]{32})_([0-9a-f]{64})$/;
const kindByPrefix = { sk: 'standard', rk: 'restricted' } as const;
const prefixByKind = { standard: 'sk', restricted: 'rk' } as const;

/** True for anything shaped like one of our keys, valid or not: such a bearer is never tried as a JWT. */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('svc_sk_') || token.startsWith('svc_rk_');
}

export function parseApiKey(token: string): ParsedApiKey | undefined {
  const match = apiKeyPattern.exec(token);
  if (!match) return undefined;
  const [, prefix, environment, keyHex, secretHex] = match;
  // The pattern admits nothing else; saying so narrows the captures' types without a cast.
  if ((prefix !== 'sk' && prefix !== 'rk') || (environment !== 'sandbox' && environment !== 'live') || keyHex === undefined || secretHex === undefined) return undefined;
  return {
    kind: kindByPrefix[prefix],
    environment,
    keyId: `key_${keyHex}`,
    secretSha256: sha256(Buffer.from(secretHex, 'hex')),
  };
}

export interface MintedApiKey {
  /** The whole key; shown once, never stored. */
  readonly apiKey: string;
  readonly keyId: string;
  readonly secretSha256: Buffer;
}

export function mintApiKey(kind: ApiKeyKind, environment: Environment): MintedApiKey {
  return mintApiKeySecret(kind, environment, `key_${randomBytes(16).toString('hex')}`);
}

/** A new secret for an existing key id (a rotation): the same id, kind and environment, so the key is the same record. */
export function mintApiKeySecret(kind: ApiKeyKind, environment: Environment, keyId: string): MintedApiKey {
  const keyHex = keyId.slice('key_'.length);
  if (!/^[0-9a-f]{32}$/.test(keyHex)) throw new Error(`${keyId} is not an API key id`);
  const secret = randomBytes(32);
  return {
    apiKey: `svc_${prefixByKind[kind]}_${environment}_${keyHex}_${secret.toString('hex')}`,
    keyId: `key_${keyHex}`,
    secretSha256: sha256(secret),
  };
}

export function secretMatches(presentedSha256: Buffer, storedSha256: Buffer): boolean {
  return presentedSha256.length === storedSha256.length && timingSafeEqual(presentedSha256, storedSha256);
}

function sha256(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
