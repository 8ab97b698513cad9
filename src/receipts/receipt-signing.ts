// What every receipt this service issues goes through (docs/protocol.md#receipts): signed by the gateway's active
// key as an `ed25519-sha256-json-v1` artifact, appended to the tenant's transparency log, stored; and what every
// receipt verify route does with a received one.
import type { AgentReceiptSummary, ReceiptInclusionProof, ReceiptVerdict, SignedArtifact } from '../contracts/protocol.ts';
import {
  findReceipt,
  insertReceiptUnlessTaken,
  recordReceiptsStatement,
  type LoggedReceipt,
  type NewReceipt,
  type ReceiptFamily,
  type StoredReceipt,
} from './protocol-receipt-repository.ts';
import { errorCatalogue, type ErrorCode } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { artifactKinds, type ArtifactKindName } from '../signing/artifact-kinds.ts';
import { signArtifactWithBytes, verifyArtifact } from '../signing/artifacts.ts';
import { logLeafFormatCurrent } from '../signing/merkle.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';
import { appendLeafStatement, assertLeaf, inclusionProofOf, latestTreeHead } from './transparency-log.ts';
import { commitLocks } from '../db/commit-locks.ts';

/** The fields of a signed wire that are not hashed: left out to get back the canonical body. */
const materialFields = new Set(['signing_algorithm', 'signature_algorithm', 'message_digest_sha256_hex', 'signed_payload_sha256_hex',
  'signing_public_key_ed25519_hex', 'ed25519_signature_hex', 'operator_attestation']);

export interface SignedReceipt {
  readonly kind: ArtifactKindName;
  readonly receiptId: string;
  /** The wire object: canonical fields in their order, then the material fields. */
  readonly wire: Record<string, unknown>;
  /** The bytes the digest covers, which are also the log leaf's data. */
  readonly canonicalBytes: Uint8Array;
}

/** The canonical body of a wire: everything but the material fields. */
export function canonicalBodyOf(wire: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(wire).filter(([name]) => !materialFields.has(name)));
}

export function signReceipt(kind: ArtifactKindName, body: Record<string, unknown>, keyring: GatewayKeyring): SignedReceipt {
  const { wire, canonicalBytes } = signArtifactWithBytes(kind, body, keyring.active.signer);
  return { kind, receiptId: wire.receipt_id as string, wire, canonicalBytes };
}

export interface ReceiptPlacement {
  readonly family: NewReceipt['family'];
  readonly intentId: string;
  readonly scope?: NewReceipt['scope'];
  readonly toolCallId?: string;
}

const newReceiptRow = (receipt: SignedReceipt, placement: ReceiptPlacement, leafIndex: number): NewReceipt => ({
  family: placement.family,
  receiptId: receipt.receiptId,
  kind: receipt.kind,
  intentId: placement.intentId,
  wireText: JSON.stringify(receipt.wire),
  leafIndex,
  ...(placement.scope ? { scope: placement.scope } : {}),
  ...(placement.toolCallId ? { toolCallId: placement.toolCallId } : {}),
});

const leafOf = (receipt: SignedReceipt) => ({ kind: receipt.kind, artifactId: receipt.receiptId, canonicalBytes: receipt.canonicalBytes, artifact: receipt.wire });

const loggedReceipt = ({ receipt, placement }: { readonly receipt: SignedReceipt; readonly placement: ReceiptPlacement }): LoggedReceipt => {
  assertLeaf({ kind: receipt.kind, artifactId: receipt.receiptId, canonicalBytes: receipt.canonicalBytes });
  const { leafIndex: _assignedBySql, ...row } = newReceiptRow(receipt, placement, 0);
  return { ...row, canonicalBytes: receipt.canonicalBytes };
};

/**
 * Appends receipts to the tenant's log and stores them, in one statement and one round trip; answers their leaf
 * indexes. The caller holds the lock that makes their ids free (a taken id fails the statement, and the caller's
 * transaction with it, leaves included).
 */
export async function recordReceipts(
  tx: Queryable,
  tenantId: string,
  receipts: ReadonlyArray<{ readonly receipt: SignedReceipt; readonly placement: ReceiptPlacement }>,
): Promise<number[]> {
  return tx.run(recordReceiptsStatement(tenantId, receipts.map(loggedReceipt), logLeafFormatCurrent));
}

/**
 * Queues the receipts' log appends and inserts, as one statement, to travel with COMMIT: no round trip of their own,
 * and the tenant's log head is locked only for the commit itself. For the engine's terminal transition, whose intent
 * row lock makes the receipt ids free (an intent settles once); should an insert ever conflict, the commit fails, and
 * with it the leaves, the ledger posting and the state change.
 */
export function queueReceipts(
  tx: Queryable,
  tenantId: string,
  receipts: ReadonlyArray<{ readonly receipt: SignedReceipt; readonly placement: ReceiptPlacement }>,
): void {
  if (receipts.length > 0) tx.beforeCommit(recordReceiptsStatement(tenantId, receipts.map(loggedReceipt), logLeafFormatCurrent), commitLocks.transparencyLogHead);
}

/** Appends one receipt and stores it at once; false when a receipt of its family already has the id, and the caller
 * must then fail its transaction, since the leaf is already appended. */
export async function recordReceiptNow(tx: Queryable, tenantId: string, receipt: SignedReceipt, placement: ReceiptPlacement): Promise<boolean> {
  const { leafIndex } = await tx.run(appendLeafStatement(tenantId, leafOf(receipt)));
  return insertReceiptUnlessTaken(tx, tenantId, newReceiptRow(receipt, placement, leafIndex));
}

/**
 * The inclusion proof of a stored receipt under the latest signed tree head, in the public client's format; 404
 * `merkle.inclusion_pending` (with the latest signed size) until the tree-head pass has covered its leaf, which takes
 * a few seconds after the receipt is issued.
 */
export async function storedReceiptInclusionProof(tx: Queryable, tenantId: string, stored: StoredReceipt): Promise<ReceiptInclusionProof> {
  // Every receipt is stored with its leaf; a null index is a row this service never wrote.
  if (stored.leafIndex === null) throw new Error(`receipt ${stored.receiptId} has no transparency log leaf`);
  const proof = await inclusionProofOf(tx, tenantId, stored.leafIndex, stored.receiptId);
  if (proof !== null) return proof;
  const head = await latestTreeHead(tx, tenantId);
  throw new ServiceError('merkle.inclusion_pending', { details: { leaf_index: stored.leafIndex, signed_tree_size: head?.tree_size ?? 0 } });
}

/** A stored agent receipt as a list shows it: the fields a lister reads at a glance, and the signed receipt. */
export function summarizeAgentReceipt(tenantId: string, stored: StoredReceipt): AgentReceiptSummary {
  return {
    kind: stored.kind,
    receipt_id: stored.receiptId,
    tenant_id: tenantId,
    // Agent receipts are stored with their scope (the family's CHECK).
    scope: stored.scope!,
    intent_id: stored.intentId,
    tool_call_id: stored.toolCallId,
    message_digest_sha256_hex: String(stored.wire.message_digest_sha256_hex),
    created_at: stored.issuedAt.toISOString(),
    leaf_index: stored.leafIndex,
    receipt: stored.wire,
  };
}

/** The signed wire of the tenant's stored receipt of `family` named `receiptId` (a verify body `{receipt_id}`); 404
 * `receipt.not_found` when the tenant has none of that id, another tenant's included. */
export async function storedReceiptWire(tx: Queryable, tenantId: string, family: ReceiptFamily, receiptId: string): Promise<SignedArtifact> {
  const stored = await findReceipt(tx, tenantId, family, receiptId.trim().toLowerCase());
  if (!stored) throw new ServiceError('receipt.not_found');
  return stored.wire;
}

/** Codes of a `valid: false` verdict: each says what is wrong with the artifact (not with the call). */
const verdictCodes = new Set<ErrorCode>([
  'artifact.schema_version_unsupported',
  'artifact.kind_unknown',
  'artifact.kind_mismatch',
  'artifact.malformed',
  'artifact.signature_invalid',
  'artifact.algorithm_unsupported',
  'artifact.key_untrusted',
  'artifact.signing_key_retired',
  'artifact.tenant_mismatch',
]);

export type ArtifactVerdict =
  | { readonly valid: true; readonly kind: ArtifactKindName; readonly body: Record<string, unknown>; readonly messageDigestHex: string; readonly signingPublicKeyHex: string }
  | { readonly valid: false; readonly code: ErrorCode; readonly message: string; readonly details?: Record<string, unknown> };

function refuse(code: ErrorCode, details?: Record<string, unknown>): never {
  throw new ServiceError(code, details ? { details } : {});
}

/**
 * Verifies a received artifact for a route that takes `routeKinds`, in this order: schema_version (before anything
 * else, never hashed when unknown), kind (known, and one this route takes), signature against the embedded key,
 * then who signed: `trust` decides (a deployment key that is not retired, for receipts), and last the tenant the
 * artifact names (`tenantOf`) must be the caller's. Every refusal is a verdict with its own code.
 */
export function verifyForRoute(
  wire: unknown,
  options: {
    readonly routeKinds: readonly ArtifactKindName[];
    readonly tenantId: string;
    readonly tenantOf: (body: Record<string, unknown>) => unknown;
    readonly trust: (signingPublicKeyHex: string) => void;
  },
): ArtifactVerdict {
  try {
    if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) refuse('artifact.malformed', { field: 'artifact', reason: 'must be a JSON object' });
    const { schema_version: schemaVersion, kind } = wire as Record<string, unknown>;
    const supported = options.routeKinds.flatMap((name) => artifactKinds.get(name)!.schemaVersions);
    if (typeof schemaVersion !== 'number' || !supported.includes(schemaVersion)) {
      refuse('artifact.schema_version_unsupported', { field: 'schema_version', value: schemaVersion ?? null });
    }
    if (typeof kind !== 'string' || !artifactKinds.has(kind)) refuse('artifact.kind_unknown', { field: 'kind' });
    if (!options.routeKinds.includes(kind as ArtifactKindName)) refuse('artifact.kind_mismatch', { kind, route_kinds: [...options.routeKinds] });
    const verified = verifyArtifact(wire);
    options.trust(verified.signingPublicKeyHex);
    if (options.tenantOf(verified.body) !== options.tenantId) refuse('artifact.tenant_mismatch');
    return { valid: true, kind: verified.kind, body: verified.body, messageDigestHex: verified.messageDigestHex, signingPublicKeyHex: verified.signingPublicKeyHex };
  } catch (thrown) {
    // The signing core's refusals arrive as SigningErrors; the verdict answers them as the catalogue words them.
    const error = asServiceError(thrown);
    if (error instanceof ServiceError && verdictCodes.has(error.code)) {
      return { valid: false, code: error.code, message: error.message, ...(error.details ? { details: error.details as Record<string, unknown> } : {}) };
    }
    throw thrown;
  }
}

/** Receipts are trusted when a published gateway key signed them; a retired one is told apart. */
export function deploymentKeyTrust(keyring: GatewayKeyring): (signingPublicKeyHex: string) => void {
  return (signingPublicKeyHex) => {
    const key = keyring.verificationKeys.find((candidate) => candidate.publicKeyHex === signingPublicKeyHex);
    if (!key) refuse('artifact.key_untrusted', { field: 'signing_public_key_ed25519_hex' });
    if (key.status === 'retired') refuse('artifact.signing_key_retired', { kid: key.kid });
  };
}

/** The answer of a receipt verify route (`wire` is the receipt as received, or as stored when named by id). */
export function verdictAnswer(verdict: ArtifactVerdict, wire: unknown): ReceiptVerdict {
  if (!verdict.valid) {
    return { valid: false, code: verdict.code, message: verdict.message ?? errorCatalogue[verdict.code].message, ...(verdict.details ? { details: verdict.details } : {}) };
  }
  return {
    valid: true,
    kind: verdict.kind,
    // A valid verdict means the wire was a signed object whose kind's schema requires these two strings.
    receipt_id: String(verdict.body.receipt_id),
    tenant_id: String(verdict.body.tenant_id),
    message_digest_sha256_hex: verdict.messageDigestHex,
    receipt: wire as SignedArtifact,
  };
}
