// The gateway's Ed25519 signing keys: one active key signs (session, download and capability JWTs, ledger
// checkpoints, audit-export manifests); `next` keys are published before they sign (so every replica and verifier
// knows them first), `retired` keys stay published for verification until an operator removes them. Keys come from
// SVC_SIGNING_KEYS, else SVC_SIGNING_KEY_FILE, else a file in the data directory created on first start.
import { randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { GatewayJwks } from '../contracts/well-known.ts';
import { createFolder, fileErrorReason } from './directories.ts';
import { ed25519SignerFromSeed, type Ed25519Signer } from '../signing/ed25519.ts';

export interface GatewayKey {
  readonly kid: string;
  /** Signs with this key: every signer of the service (JWTs, receipts, tree heads, checkpoints, manifests, standing
   * answers) goes through it, so the private key never leaves the signing core. */
  readonly signer: Ed25519Signer;
  /** The public key as node:crypto holds it, for JWT verification and the JWKS. */
  readonly publicKey: KeyObject;
  /** The 32-byte public key, lowercase hex, as signed artifacts carry it. */
  readonly publicKeyHex: string;
  /** Where the key stands in its rotation (a verifier of receipts tells a retired signer apart). */
  readonly status: KeyStatus;
}

export type KeyStatus = 'next' | 'active' | 'retired';
const keyStatuses: readonly KeyStatus[] = ['next', 'active', 'retired'];

/** The stored form: seeds in hex. A file holding it is a secret (mode 0600). */
export interface KeyFile {
  keys: Array<{ kid: string; seed_hex: string; status: KeyStatus; created_at: string }>;
}

export class GatewayKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayKeyError';
  }
}

const kidPattern = /^[A-Za-z0-9._-]{1,64}$/;

function keyFromSeed(kid: string, seedHex: string, status: KeyStatus): GatewayKey {
  if (!kidPattern.test(kid)) throw new GatewayKeyError(`signing key id "${kid}" must be 1-64 characters of A-Za-z0-9._-`);
  if (!/^[0-9a-f]{64}$/.test(seedHex)) throw new GatewayKeyError(`signing key ${kid}: seed_hex must be 64 lowercase hex digits`);
  const signer = ed25519SignerFromSeed(Buffer.from(seedHex, 'hex'));
  return { kid, signer, publicKey: signer.publicKey.keyObject, publicKeyHex: signer.publicKey.hex, status };
}

export class GatewayKeyring {
  readonly active: GatewayKey;
  readonly #byKid: Map<string, GatewayKey>;

  constructor(file: KeyFile) {
    if (!Array.isArray(file?.keys) || file.keys.length === 0) throw new GatewayKeyError('the signing key set has no keys');
    const keys = file.keys.map((entry) => {
      if (!keyStatuses.includes(entry.status)) throw new GatewayKeyError(`signing key ${entry.kid}: status must be next, active or retired`);
      return keyFromSeed(entry.kid, entry.seed_hex, entry.status);
    });
    const active = file.keys.filter((entry) => entry.status === 'active');
    if (active.length !== 1) throw new GatewayKeyError(`the signing key set must have exactly one active key, it has ${active.length}`);
    this.#byKid = new Map(keys.map((key) => [key.kid, key]));
    if (this.#byKid.size !== keys.length) throw new GatewayKeyError('two signing keys share a kid');
    this.active = this.#byKid.get(active[0]!.kid)!;
  }

  /** Every key a verifier should accept: active, next and retired-but-published. */
  get verificationKeys(): GatewayKey[] {
    return [...this.#byKid.values()];
  }

  find(kid: string): GatewayKey | undefined {
    return this.#byKid.get(kid);
  }

  /** The JSON Web Key Set published at /.well-known/jwks.json (RFC 8037 OKP keys). */
  jwks(): GatewayJwks {
    return {
      keys: this.verificationKeys.map((key) => ({
        kty: 'OKP',
        crv: 'Ed25519',
        x: key.publicKey.export({ format: 'jwk' }).x!,
        kid: key.kid,
        alg: 'EdDSA',
        use: 'sig',
      })),
    };
  }
}

export function newKeyFileEntry(now = new Date()): KeyFile['keys'][number] {
  const day = now.toISOString().slice(0, 10);
  return { kid: `gk_${day}_${randomBytes(4).toString('hex')}`, seed_hex: randomBytes(32).toString('hex'), status: 'active', created_at: now.toISOString() };
}

/** A key set that lives only in memory (tests, throwaway instances). */
export function ephemeralKeyring(): GatewayKeyring {
  return new GatewayKeyring({ keys: [newKeyFileEntry()] });
}

/** One-step rotation, for a single replica: the active key is retired (still published) and a new key, or the
 * staged `next` key when there is one, becomes active. */
export function rotateKeyFile(file: KeyFile, now = new Date()): KeyFile {
  const staged = file.keys.find((entry) => entry.status === 'next');
  const keys = file.keys.map((entry) => ({ ...entry, status: entry.status === 'active' ? ('retired' as const) : entry.status }));
  if (staged) return { keys: keys.map((entry) => (entry.kid === staged.kid ? { ...entry, status: 'active' as const } : entry)) };
  return { keys: [...keys, newKeyFileEntry(now)] };
}

/** First step of a rotation across replicas: publish a new key everywhere before it signs anything. */
export function stageKeyFile(file: KeyFile, now = new Date()): KeyFile {
  if (file.keys.some((entry) => entry.status === 'next')) throw new GatewayKeyError('a next key is already staged; rotate to activate it');
  return { keys: [...file.keys, { ...newKeyFileEntry(now), status: 'next' }] };
}

/** Retirement's last step: the key is no longer published, so what it signed no longer verifies. */
export function removeFromKeyFile(file: KeyFile, kid: string): KeyFile {
  const entry = file.keys.find((key) => key.kid === kid);
  if (!entry) throw new GatewayKeyError(`no signing key ${kid}`);
  if (entry.status === 'active') throw new GatewayKeyError(`${kid} is the active key; rotate first`);
  return { keys: file.keys.filter((key) => key.kid !== kid) };
}

export interface KeySource {
  readonly keyring: GatewayKeyring;
  /** Where the keys came from, for the start-up log (never the keys). */
  readonly origin: string;
  readonly created: boolean;
}

export function defaultKeyFilePath(dataDir: string): string {
  return path.join(dataDir, 'signing-keys.json');
}

export function readKeyFile(filePath: string): KeyFile {
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (error) {
    throw new GatewayKeyError(`cannot read the signing key file ${filePath}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as KeyFile;
  } catch {
    // The parser's message quotes the text around the fault, which here is secret seed material.
    throw new GatewayKeyError(`the signing key file ${filePath} is not valid JSON`);
  }
}

export function writeKeyFile(filePath: string, file: KeyFile): void {
  createFolder(path.dirname(filePath), 0o700);
  // Write then rename, so a crash never leaves a half-written key file.
  const temporary = `${filePath}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, filePath);
}

export function loadGatewayKeys(options: { signingKeysJson?: string | undefined; signingKeyFile?: string | undefined; dataDir: string }): KeySource {
  if (options.signingKeysJson) {
    const json = options.signingKeysJson;
    return namingTheSetting('SVC_SIGNING_KEYS', () => {
      let file: KeyFile;
      try {
        file = JSON.parse(json) as KeyFile;
      } catch {
        throw new GatewayKeyError('the value is not valid JSON');
      }
      return { keyring: new GatewayKeyring(file), origin: 'SVC_SIGNING_KEYS', created: false };
    });
  }
  const filePath = options.signingKeyFile ?? defaultKeyFilePath(options.dataDir);
  const setting = options.signingKeyFile ? 'SVC_SIGNING_KEY_FILE' : 'SVC_DATA_DIR';
  return namingTheSetting(setting, () => {
    if (!options.signingKeyFile && !fs.existsSync(filePath)) {
      writeKeyFile(filePath, { keys: [newKeyFileEntry()] });
      return { keyring: new GatewayKeyring(readKeyFile(filePath)), origin: filePath, created: true };
    }
    return { keyring: new GatewayKeyring(readKeyFile(filePath)), origin: filePath, created: false };
  });
}

/** Runs `load` and prefixes any failure with the variable the operator has to fix, so a refused start says where
 * to look. File-system errors (an unwritable data folder) are reported the same way. */
function namingTheSetting(setting: string, load: () => KeySource): KeySource {
  try {
    return load();
  } catch (error) {
    if (error instanceof GatewayKeyError) throw new GatewayKeyError(`${setting}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined) throw new GatewayKeyError(`${setting}: cannot write the signing key file: ${fileErrorReason(error)}`);
    throw error;
  }
}
