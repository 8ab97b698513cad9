// Signs and verifies `ed25519-sha256-json-v1` artifacts from the field-order table in artifact-kinds.ts:
// canonical bytes = compact JSON in the kind's order, digest = SHA-256 of them, signature = Ed25519 over the digest.
import { jsonNestingDepthMax } from '../limits.ts';
import {
  artifactKinds,
  artifactSignatureAlgorithm,
  type ArtifactKind,
  type ArtifactKindName,
  type FieldSpec,
  type StringFormat,
} from './artifact-kinds.ts';
import { sha256 } from './digests.ts';
import { ed25519PublicKey, verifyEd25519, type Ed25519Signer } from './ed25519.ts';
import { bytesToHex, isCanonicalUuidText, isWellFormedText } from './encoding.ts';
import { SigningError, type SigningErrorCode, type SigningErrorDetails } from './errors.ts';
import { isRfc3339SecondsUtc } from './rfc3339.ts';

export interface VerifiedArtifact {
  readonly kind: ArtifactKindName;
  /** The signed fields, canonical: what the signature covers and nothing else. */
  readonly body: Record<string, unknown>;
  readonly messageDigestHex: string;
  readonly signingPublicKeyHex: string;
}

export interface VerifyArtifactOptions {
  /** When non-empty, the embedded signing key must be one of these (lowercase hex or 32 raw bytes). */
  readonly trustedPublicKeys?: readonly (string | Uint8Array)[];
}

const keyMaterialFields = ['signing_public_key_ed25519_hex', 'ed25519_signature_hex'];
const knownSchemaVersions = new Set([...artifactKinds.values()].flatMap((kind) => kind.schemaVersions));
const hex64Pattern = /^[0-9a-f]{64}$/;
const hex128Pattern = /^[0-9a-f]{128}$/;
const formatPatterns: Record<Exclude<StringFormat, 'uuid' | 'hex64_or_uuid' | 'rfc3339_seconds'>, RegExp> = {
  scope_token: /^[a-z0-9][a-z0-9._:/-]{0,127}$/,
  tenant_id: /^[a-z0-9][a-z0-9._-]{0,255}$/,
  hex64: hex64Pattern,
  currency_mandate: /^[a-z0-9_]{3,16}$/,
  currency_iso: /^[a-z]{3}$/,
};

/** Refuses an artifact with an `artifact.*` code (shared by every signed-artifact reader in signing/). */
export function fail(code: SigningErrorCode, details: SigningErrorDetails): never {
  throw new SigningError(code, details);
}

export function malformed(field: string, reason: string): never {
  fail('artifact.malformed', { field, reason });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The kind for a wire or body: schema_version first (an unknown one is never hashed), then kind. */
function artifactKindOf(value: Record<string, unknown>): ArtifactKind {
  const schemaVersion = value.schema_version;
  if (typeof schemaVersion !== 'number' || !knownSchemaVersions.has(schemaVersion)) {
    fail('artifact.schema_version_unsupported', { field: 'schema_version', value: schemaVersion ?? null });
  }
  const kind = typeof value.kind === 'string' ? artifactKinds.get(value.kind) : undefined;
  if (!kind) fail('artifact.kind_unknown', { field: 'kind' });
  if (!kind.schemaVersions.includes(schemaVersion)) {
    fail('artifact.schema_version_unsupported', { field: 'schema_version', value: schemaVersion });
  }
  return kind;
}

/** The canonical bytes of `body` (which must already carry schema_version and kind) for its kind. */
export function canonicalArtifactBytes(body: unknown): Uint8Array {
  if (!isPlainObject(body)) malformed('artifact', 'must be a JSON object');
  const kind = artifactKindOf(body);
  return new Uint8Array(Buffer.from(writeObject(kind.fields, body, '', kind.htmlEscape, []), 'utf8'));
}

/**
 * Signs `body` as an artifact of `kind`. Constant fields (schema_version, kind, receipt_version, a proof's
 * signature_algorithm) are filled in when absent. Returns the wire object: the canonical fields in their order,
 * then the material fields.
 */
export function signArtifact(kind: ArtifactKindName, body: Record<string, unknown>, signer: Ed25519Signer): Record<string, unknown> {
  return signArtifactWithBytes(kind, body, signer).wire;
}

/** `signArtifact`, also answering the canonical bytes it signed (what the digest covers): for a caller that needs
 * both, such as a transparency log leaf, without writing the canonical form a second time. */
export function signArtifactWithBytes(
  kind: ArtifactKindName,
  body: Record<string, unknown>,
  signer: Ed25519Signer,
): { readonly wire: Record<string, unknown>; readonly canonicalBytes: Uint8Array } {
  const artifactKind = artifactKinds.get(kind);
  if (!artifactKind) fail('artifact.kind_unknown', { field: 'kind' });
  if (!isPlainObject(body)) malformed('artifact', 'must be a JSON object');
  const constants = Object.fromEntries(
    artifactKind.fields.flatMap((field) => (field.type === 'const' ? [[field.name, field.value]] : [])),
  );
  const text = writeObject(artifactKind.fields, { ...constants, ...body }, '', artifactKind.htmlEscape, []);
  const canonicalBytes = new Uint8Array(Buffer.from(text, 'utf8'));
  const digest = sha256(canonicalBytes);
  const signature = signer.sign(digest);
  const wire = JSON.parse(text) as Record<string, unknown>;
  if (artifactKind.algorithmField === 'signing_algorithm') wire.signing_algorithm = artifactSignatureAlgorithm;
  wire[artifactKind.digestField] = bytesToHex(digest);
  wire.signing_public_key_ed25519_hex = signer.publicKey.hex;
  wire.ed25519_signature_hex = bytesToHex(signature);
  return { wire, canonicalBytes };
}

/**
 * Verifies a received artifact. Order: schema_version, kind, algorithm (all before any hashing or key use), then
 * material shape, trusted keys, shape of the signed fields, digest, signature.
 */
export function verifyArtifact(wire: unknown, options: VerifyArtifactOptions = {}): VerifiedArtifact {
  if (!isPlainObject(wire)) malformed('artifact', 'must be a JSON object');
  const kind = artifactKindOf(wire);
  if (wire[kind.algorithmField] !== artifactSignatureAlgorithm) {
    fail('artifact.algorithm_unsupported', { field: kind.algorithmField });
  }
  const digestHex = lowercaseHex(wire[kind.digestField], 32, kind.digestField);
  const publicKeyHex = lowercaseHex(wire.signing_public_key_ed25519_hex, 32, 'signing_public_key_ed25519_hex');
  const signatureHex = lowercaseHex(wire.ed25519_signature_hex, 64, 'ed25519_signature_hex');
  assertTrusted(publicKeyHex, options.trustedPublicKeys);

  const allowedExtra = [kind.algorithmField, kind.digestField, ...keyMaterialFields, ...(kind.unsignedFields ?? [])];
  const text = writeObject(kind.fields, wire, '', kind.htmlEscape, allowedExtra);
  const digest = sha256(Buffer.from(text, 'utf8'));
  if (bytesToHex(digest) !== digestHex) {
    fail('artifact.signature_invalid', { field: kind.digestField, reason: 'digest does not match the signed fields' });
  }
  const publicKey = ed25519PublicKey(Buffer.from(publicKeyHex, 'hex'), 'signing_public_key_ed25519_hex');
  if (!verifyEd25519(publicKey, digest, Buffer.from(signatureHex, 'hex'))) {
    fail('artifact.signature_invalid', { field: 'ed25519_signature_hex', reason: 'Ed25519 signature does not verify' });
  }
  const body = JSON.parse(text) as Record<string, unknown>;
  if (wire.operator_attestation !== undefined) verifyOperatorAttestation(wire.operator_attestation, body, digestHex, digest);
  return { kind: kind.kind as ArtifactKindName, body, messageDigestHex: digestHex, signingPublicKeyHex: publicKeyHex };
}

/** Material fields: lowercase hex of exactly `byteLength` bytes, else `artifact.malformed`. */
function lowercaseHex(value: unknown, byteLength: 32 | 64, field: string): string {
  const pattern = byteLength === 32 ? hex64Pattern : hex128Pattern;
  if (typeof value !== 'string' || !pattern.test(value)) malformed(field, `must be ${byteLength * 2} lowercase hex digits`);
  return value;
}

function assertTrusted(publicKeyHex: string, trusted: VerifyArtifactOptions['trustedPublicKeys']): void {
  if (!trusted || trusted.length === 0) return;
  const trustedHex = trusted.map((key) => (typeof key === 'string' ? key.toLowerCase() : bytesToHex(key)));
  if (!trustedHex.includes(publicKeyHex)) fail('artifact.key_untrusted', { field: 'signing_public_key_ed25519_hex' });
}

/** An agent receipt's operator counter-signature: same digest, the operator's key
 * (docs/signing.md#signed-artifacts-ed25519-sha256-json-v1). */
function verifyOperatorAttestation(attestation: unknown, body: Record<string, unknown>, digestHex: string, digest: Uint8Array): void {
  const field = 'operator_attestation';
  if (!isPlainObject(attestation)) malformed(field, 'must be an object');
  const agent = (body.authorization as { agent: { operator_did: string } }).agent;
  if (attestation.operator_did !== agent.operator_did) malformed(`${field}.operator_did`, 'must equal authorization.agent.operator_did');
  const keyHex = lowercaseHex(attestation.signing_public_key_ed25519_hex, 32, `${field}.signing_public_key_ed25519_hex`);
  const signatureHex = lowercaseHex(attestation.ed25519_signature_hex, 64, `${field}.ed25519_signature_hex`);
  if (attestation.message_digest_sha256_hex !== digestHex) {
    fail('artifact.signature_invalid', { field: `${field}.message_digest_sha256_hex`, reason: 'digest does not match' });
  }
  if (!verifyEd25519(ed25519PublicKey(Buffer.from(keyHex, 'hex')), digest, Buffer.from(signatureHex, 'hex'))) {
    fail('artifact.signature_invalid', { field: `${field}.ed25519_signature_hex`, reason: 'Ed25519 signature does not verify' });
  }
}

// ---- Canonical JSON in a fixed field order ----

/** `{"a":…,"b":…}` in the order of `fields`; fields not in the table (besides `allowedExtra`) are refused. */
function writeObject(
  fields: readonly FieldSpec[],
  value: Record<string, unknown>,
  path: string,
  escape: boolean,
  allowedExtra: readonly string[],
): string {
  const members: string[] = [];
  for (const field of fields) {
    const fieldPath = path === '' ? field.name : `${path}.${field.name}`;
    const written = writeField(field, value[field.name], fieldPath, escape);
    if (written !== undefined) members.push(`${jsonString(field.name, escape, fieldPath)}:${written}`);
  }
  const known = new Set([...fields.map((field) => field.name), ...allowedExtra]);
  const unknown = Object.keys(value).find((key) => !known.has(key));
  if (unknown !== undefined) malformed(path === '' ? unknown : `${path}.${unknown}`, 'is not a field of this artifact');
  return `{${members.join(',')}}`;
}

/** Absent for an `omit_empty` field: missing, null, or the zero value of the field's own type. */
function isEmpty(field: FieldSpec, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (field.type === 'string') return value === '';
  if (field.type === 'integer') return value === 0;
  return field.type === 'string_list' && Array.isArray(value) && value.length === 0;
}

/** The JSON text of one field, or undefined when the field is left out of the bytes. */
function writeField(field: FieldSpec, value: unknown, path: string, escape: boolean): string | undefined {
  const presence = 'presence' in field ? field.presence ?? 'required' : 'required';
  if (presence === 'omit_empty' && isEmpty(field, value)) return undefined;
  if (presence === 'optional' && value === undefined) return undefined;
  switch (field.type) {
    case 'const':
      if (value !== field.value) malformed(path, `must be ${JSON.stringify(field.value)}`);
      return JSON.stringify(field.value);
    case 'string':
      return writeString(field, value, path, escape);
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (field.min ?? Number.MIN_SAFE_INTEGER)) {
        malformed(path, `must be an integer${field.min === undefined ? '' : ` >= ${field.min}`}`);
      }
      return String(value);
    case 'boolean':
      if (typeof value !== 'boolean') malformed(path, 'must be a boolean');
      return String(value);
    case 'string_set':
      return writeStringSet(value, path, escape, field.emptyAsNull ?? false);
    case 'string_list': {
      if (!Array.isArray(value)) malformed(path, 'must be an array of strings');
      const itemSpec = { name: field.name, type: 'string', format: field.format } as const;
      return `[${value.map((item, index) => writeString(itemSpec, item, `${path}[${index}]`, escape)).join(',')}]`;
    }
    case 'object':
      if (!isPlainObject(value)) malformed(path, 'must be an object');
      return writeObject(field.fields, value, path, escape, []);
    case 'object_list':
      if (value === null && field.emptyAsNull) return 'null';
      if (!Array.isArray(value)) malformed(path, 'must be an array of objects');
      if (value.length === 0 && field.emptyAsNull) return 'null';
      return `[${value.map((item, index) => {
        if (!isPlainObject(item)) malformed(`${path}[${index}]`, 'must be an object');
        return writeObject(field.fields, item, `${path}[${index}]`, escape, []);
      }).join(',')}]`;
    case 'json':
      return writeJsonAsReceived(value, path, escape, 0);
    case 'string_or_null':
      if (value === null) return 'null';
      return writeString({ name: field.name, type: 'string', format: field.format }, value, path, escape);
  }
}

function writeString(field: Extract<FieldSpec, { type: 'string' }>, value: unknown, path: string, escape: boolean): string {
  if (typeof value !== 'string') malformed(path, 'must be a string');
  if (field.nonEmpty && value === '') malformed(path, 'must not be empty');
  if (field.values && !field.values.includes(value)) malformed(path, `must be one of ${field.values.join(', ')}`);
  if (field.format && !(field.emptyAllowed && value === '') && !matchesFormat(field.format, value)) malformed(path, `must be a ${field.format}`);
  return jsonString(value, escape, path);
}

function matchesFormat(format: StringFormat, value: string): boolean {
  switch (format) {
    case 'uuid':
      return isCanonicalUuidText(value);
    case 'hex64_or_uuid':
      return hex64Pattern.test(value) || isCanonicalUuidText(value);
    case 'rfc3339_seconds':
      return isRfc3339SecondsUtc(value);
    default:
      return formatPatterns[format].test(value);
  }
}

/** A set as signers write it: scope tokens, strictly ascending (sorted, no duplicates). */
function writeStringSet(value: unknown, path: string, escape: boolean, emptyAsNull: boolean): string {
  if (value === null && emptyAsNull) return 'null';
  if (!Array.isArray(value)) malformed(path, 'must be an array of strings');
  if (value.length === 0) return emptyAsNull ? 'null' : '[]';
  value.forEach((item: unknown, index) => {
    if (typeof item !== 'string' || !formatPatterns.scope_token.test(item)) malformed(`${path}[${index}]`, 'must be a lowercase scope token');
    if (index > 0 && !(value[index - 1] < item)) malformed(path, 'must be sorted without duplicates');
  });
  return `[${value.map((item: string) => jsonString(item, escape, path)).join(',')}]`;
}

/** JSON text of a string as JSON.stringify writes it, plus Go's HTML-safe escapes where the kind wants them. */
function jsonString(text: string, escape: boolean, path: string): string {
  if (!isWellFormedText(text)) malformed(path, 'contains a lone UTF-16 surrogate');
  const json = JSON.stringify(text);
  if (!escape) return json;
  return json.replace(/[&<>\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Nested values written in the order received (the client re-serializes them with JSON.stringify). */
function writeJsonAsReceived(value: unknown, path: string, escape: boolean, depth: number): string {
  if (depth > jsonNestingDepthMax) malformed(path, `nests deeper than ${jsonNestingDepthMax} levels`);
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) malformed(path, 'must be a finite number');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return jsonString(value, escape, path);
  if (Array.isArray(value)) return `[${value.map((item, index) => writeJsonAsReceived(item, `${path}[${index}]`, escape, depth + 1)).join(',')}]`;
  if (!isPlainObject(value)) malformed(path, 'must be JSON');
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .map(([key, member]) => `${jsonString(key, escape, path)}:${writeJsonAsReceived(member, `${path}.${key}`, escape, depth + 1)}`);
  return `{${members.join(',')}}`;
}
