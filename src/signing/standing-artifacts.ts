// The two signed standing artifacts (docs/standing.md#the-signed-bytes): the operator receipt and the portfolio
// snapshot, `ed25519-sha256-json-v1` with the standing service's own material field names. Canonical bytes = compact
// JSON of the fields in the fixed order below; digest = SHA-256 of them; signature = Ed25519 over the 32-byte digest.
// Signing and offline verification (`verifyStandingArtifact`) share the one order table, so they cannot drift.
import { fail, isPlainObject, malformed } from './artifacts.ts';
import { sha256 } from './digests.ts';
import { ed25519PublicKey, verifyEd25519, type Ed25519Signer } from './ed25519.ts';
import { bytesToHex, isWellFormedText } from './encoding.ts';

export const standingSigningAlgorithm = 'ed25519-sha256-json-v1';
export const operatorReceiptKind = 'svc.signal.operator_receipt';
export const portfolioSnapshotKind = 'svc.signal.portfolio_snapshot';
export type StandingArtifactKind = typeof operatorReceiptKind | typeof portfolioSnapshotKind;

/** The material fields: never part of the signed bytes. */
export const standingMaterialFields = ['signing_algorithm', 'message_digest_hex', 'signing_public_key_hex', 'signature_hex'] as const;

/**
 * A field-order table: each entry is a field name and what its value is. `value` is a string, a safe integer or
 * null; an object or a list of objects has its own order. Every field is required (present, perhaps null), and no
 * other field is allowed, so there is one canonical text for a given artifact.
 */
type Order = readonly (readonly [string, Shape])[];
type Shape = 'value' | { readonly object: Order } | { readonly list: Order };

const amountOrder: Order = [['currency', 'value'], ['released_cents', 'value'], ['refunded_cents', 'value'], ['expired_cents', 'value']];
const medianOrder: Order = [['at_least', 'value'], ['below', 'value']];
const windowOrder: Order = [
  ['from_day', 'value'],
  ['released_count', 'value'],
  ['refunded_count', 'value'],
  ['expired_count', 'value'],
  ['disputed_count', 'value'],
  ['predicate_evaluated_count', 'value'],
  ['predicate_passed_count', 'value'],
  ['predicate_pass_rate_bps', 'value'],
  // An object, or null when the window has no settled intent.
  ['funding_to_terminal_median_seconds', { object: medianOrder }],
  ['amounts', { list: amountOrder }],
];
const metricsOrder: Order = [
  ['first_activity_at', 'value'],
  ['last_activity_at', 'value'],
  ['as_of_day', 'value'],
  ['all_time', { object: windowOrder }],
  ['last_30_days', { object: windowOrder }],
  ['last_7_days', { object: windowOrder }],
];

/** The receipt's signed fields, in order. */
export const operatorReceiptOrder: Order = [
  ['schema_version', 'value'],
  ['receipt_version', 'value'],
  ['kind', 'value'],
  ['tenant_id', 'value'],
  ['operator_did', 'value'],
  ['issued_at', 'value'],
  ['checkpoint_last_ledger_seq', 'value'],
  ['score_version', 'value'],
  ['scoring_model', 'value'],
  ['metrics', { object: metricsOrder }],
  ['score', 'value'],
];

/** The portfolio snapshot's signed fields, in order; each operator is an operator's metrics and score. */
export const portfolioSnapshotOrder: Order = [
  ['schema_version', 'value'],
  ['artifact_version', 'value'],
  ['kind', 'value'],
  ['tenant_id', 'value'],
  ['issued_at', 'value'],
  ['score_model_version', 'value'],
  ['scoring_model', 'value'],
  ['checkpoint_last_ledger_seq', 'value'],
  ['checkpoint_row_hash_hex', 'value'],
  ['operators', { list: [['operator_did', 'value'], ['metrics', { object: metricsOrder }], ['score', 'value']] }],
];

const orders: Record<StandingArtifactKind, { readonly order: Order; readonly schemaVersions: readonly number[] }> = {
  [operatorReceiptKind]: { order: operatorReceiptOrder, schemaVersions: [1] },
  [portfolioSnapshotKind]: { order: portfolioSnapshotOrder, schemaVersions: [1] },
};

function writeValue(value: unknown, path: string): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    // Integers only: no float ever enters the signed bytes, so every reader writes the same digits.
    if (!Number.isSafeInteger(value)) malformed(path, 'must be a safe integer (no fractions in signed standing artifacts)');
    return String(value);
  }
  if (typeof value === 'string') {
    if (!isWellFormedText(value)) malformed(path, 'contains a lone UTF-16 surrogate');
    return JSON.stringify(value);
  }
  return malformed(path, 'must be a string, an integer or null');
}

// The field names of each order (with the material fields, allowed at the top level only), built once.
const namesOfOrder = new WeakMap<Order, ReadonlySet<string>>();
function namesOf(order: Order, allowedExtra: readonly string[]): ReadonlySet<string> {
  if (allowedExtra.length > 0) return new Set([...order.map(([name]) => name), ...allowedExtra]);
  let names = namesOfOrder.get(order);
  if (!names) namesOfOrder.set(order, (names = new Set(order.map(([name]) => name))));
  return names;
}

function writeObject(order: Order, value: unknown, path: string, allowedExtra: readonly string[] = []): string {
  if (!isPlainObject(value)) malformed(path || 'artifact', 'must be an object');
  let text = '{';
  for (const [index, [name, shape]] of order.entries()) {
    const fieldPath = path === '' ? name : `${path}.${name}`;
    if (!Object.hasOwn(value, name)) malformed(fieldPath, 'is missing');
    text += `${index === 0 ? '' : ','}${JSON.stringify(name)}:${writeShape(shape, value[name], fieldPath)}`;
  }
  const known = namesOf(order, allowedExtra);
  const unknown = Object.keys(value).find((key) => !known.has(key));
  if (unknown !== undefined) malformed(path === '' ? unknown : `${path}.${unknown}`, 'is not a field of this artifact');
  return `${text}}`;
}

function writeShape(shape: Shape, value: unknown, path: string): string {
  if (shape === 'value') return writeValue(value, path);
  if ('object' in shape) return value === null ? 'null' : writeObject(shape.object, value, path);
  if (!Array.isArray(value)) malformed(path, 'must be an array');
  return `[${value.map((item, index) => writeObject(shape.list, item, `${path}[${index}]`)).join(',')}]`;
}

function orderOf(value: Record<string, unknown>): { kind: StandingArtifactKind; order: Order } {
  const kind = value.kind;
  if (kind !== operatorReceiptKind && kind !== portfolioSnapshotKind) fail('artifact.kind_unknown', { field: 'kind' });
  const entry = orders[kind];
  if (typeof value.schema_version !== 'number' || !entry.schemaVersions.includes(value.schema_version)) {
    fail('artifact.schema_version_unsupported', { field: 'schema_version', value: value.schema_version ?? null });
  }
  return { kind, order: entry.order };
}

/** The canonical bytes of a standing artifact's signed fields (material fields allowed and left out). */
export function standingArtifactBytes(artifact: Record<string, unknown>): Uint8Array {
  if (!isPlainObject(artifact)) malformed('artifact', 'must be a JSON object');
  const { order } = orderOf(artifact);
  return new Uint8Array(Buffer.from(writeObject(order, artifact, '', standingMaterialFields), 'utf8'));
}

/** Signs a standing artifact: the signed fields in their order, then the four material fields (the signature is raw
 * Ed25519 over the 32-byte digest). */
export function signStandingArtifact(body: Record<string, unknown>, signer: Ed25519Signer): Record<string, unknown> {
  const bytes = standingArtifactBytes(body);
  const digest = sha256(bytes);
  return {
    ...(JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>),
    signing_algorithm: standingSigningAlgorithm,
    message_digest_hex: bytesToHex(digest),
    signing_public_key_hex: signer.publicKey.hex,
    signature_hex: bytesToHex(signer.sign(digest)),
  };
}

export interface VerifiedStandingArtifact {
  readonly kind: StandingArtifactKind;
  /** The signed fields, canonical. */
  readonly body: Record<string, unknown>;
  readonly messageDigestHex: string;
  readonly signingPublicKeyHex: string;
}

const hexPattern = (bytes: number) => new RegExp(`^[0-9a-f]{${bytes * 2}}$`);
const hex32 = hexPattern(32);
const hex64 = hexPattern(64);

/**
 * Verifies a standing artifact offline: a receipt, the `GET /reputation` answer around it (`{…, receipt}`), or a
 * portfolio snapshot. Order: kind and schema_version, algorithm (before any hashing or key use), material shape,
 * trusted keys (when `trustedPublicKeys` is non-empty the embedded key must be one of them), signed fields, digest,
 * signature. Throws SigningError with an `artifact.*` code on the first failure.
 */
export function verifyStandingArtifact(json: unknown, trustedPublicKeys: readonly string[] = []): VerifiedStandingArtifact {
  const artifact = isPlainObject(json) && isPlainObject(json.receipt) ? json.receipt : json;
  if (!isPlainObject(artifact)) malformed('artifact', 'must be a JSON object');
  const { kind } = orderOf(artifact);
  if (artifact.signing_algorithm !== standingSigningAlgorithm) fail('artifact.algorithm_unsupported', { field: 'signing_algorithm' });
  const digestHex = artifact.message_digest_hex;
  const publicKeyHex = artifact.signing_public_key_hex;
  const signatureHex = artifact.signature_hex;
  if (typeof digestHex !== 'string' || !hex32.test(digestHex)) malformed('message_digest_hex', 'must be 64 lowercase hex digits');
  if (typeof publicKeyHex !== 'string' || !hex32.test(publicKeyHex)) malformed('signing_public_key_hex', 'must be 64 lowercase hex digits');
  if (typeof signatureHex !== 'string' || !hex64.test(signatureHex)) malformed('signature_hex', 'must be 128 lowercase hex digits');
  if (trustedPublicKeys.length > 0 && !trustedPublicKeys.map((key) => key.toLowerCase()).includes(publicKeyHex)) {
    fail('artifact.key_untrusted', { field: 'signing_public_key_hex' });
  }
  const bytes = standingArtifactBytes(artifact);
  const digest = sha256(bytes);
  if (bytesToHex(digest) !== digestHex) fail('artifact.signature_invalid', { field: 'message_digest_hex', reason: 'digest does not match the signed fields' });
  const publicKey = ed25519PublicKey(Buffer.from(publicKeyHex, 'hex'), 'signing_public_key_hex');
  if (!verifyEd25519(publicKey, digest, Buffer.from(signatureHex, 'hex'))) {
    fail('artifact.signature_invalid', { field: 'signature_hex', reason: 'Ed25519 signature does not verify' });
  }
  return { kind, body: JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>, messageDigestHex: digestHex, signingPublicKeyHex: publicKeyHex };
}

/** Whether a parsed JSON document looks like a standing artifact (for a verifier that dispatches on kind). */
export function isStandingArtifact(json: unknown): boolean {
  const artifact = isPlainObject(json) && isPlainObject(json.receipt) ? json.receipt : json;
  return isPlainObject(artifact) && (artifact.kind === operatorReceiptKind || artifact.kind === portfolioSnapshotKind);
}
