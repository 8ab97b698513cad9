// The per-tenant transparency log (docs/protocol.md#transparency-log): receipts and mandate imports are appended as
// RFC 6962 leaves inside the transaction that issues them; a periodic pass (publishTreeHeads) stores the new perfect
// subtrees and signs one tree head per tenant with new leaves; proofs are read from the stored subtrees.
import type { SignedTreeHead as SignedTreeHeadContract } from '../contracts/ledger.ts';
import type { ReceiptInclusionProof } from '../contracts/protocol.ts';
import type { Database, Queryable, Statement } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { logArtifactIdLengthMax, treeHeadLeavesPerPassMax, treeHeadTenantsPerPassMax } from '../limits.ts';
import { ServiceError } from '../errors/service-error.ts';
import { canonicalArtifactBytes, signArtifact, verifyArtifact } from '../signing/artifacts.ts';
import { sha256 } from '../signing/digests.ts';
import { bytesToHex } from '../signing/encoding.ts';
import {
  consistencyProof,
  inclusionProof,
  logLeafData,
  logLeafFormatCurrent,
  logLeafFormats,
  merkleLeafHash,
  merkleRoot,
  newPerfectNodes,
  perfectNodesRead,
  perfectSubtreeHasher,
  verifyConsistency,
  verifyInclusion,
  type LogLeafFormat,
  type SubtreeHasher,
} from '../signing/merkle.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { safeIntegerOf } from '../db/safe-integer.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';

/** The kind of the signed tree heads the pass signs: the public client's format. */
export const treeHeadKind = 'svc.agent_receipt_transparency_sth_v1';
/** The kind of the heads signed before the change, which stay in the logs that have them and keep verifying. */
export const legacyTreeHeadKind = 'svc.transparency_tree_head_v1';
const treeHeadKinds: readonly string[] = [treeHeadKind, legacyTreeHeadKind];

/** An inclusion proof of a leaf that hashes the artifact's message digest (the client's format). */
export const inclusionProofKind = 'svc.agent_receipt_transparency_inclusion_proof_v1';
/** An inclusion proof of a leaf appended before the change, which hashes the artifact's canonical bytes. */
export const legacyInclusionProofKind = 'svc.transparency_inclusion_proof_v1';
const inclusionProofKindOf = (format: LogLeafFormat) => (format === 2 ? inclusionProofKind : legacyInclusionProofKind);

export interface LogLeaf {
  /** The artifact's kind, e.g. 'svc.protocol_settlement_receipt_v1'. */
  readonly kind: string;
  /** receipt_id, or the mandate digest for a mandate import. */
  readonly artifactId: string;
  /** The artifact's signed canonical bytes (what its SHA-256 digest covers). */
  readonly canonicalBytes: Uint8Array;
  /** The full signed artifact JSON as served (kept for proofs and exports). */
  readonly artifact: unknown;
  /** What the leaf hashes (src/signing/merkle.ts); the current format when absent. */
  readonly format?: LogLeafFormat;
}

/** A signed tree head as its route answers it: the contract's type (src/contracts/ledger.ts), not a second copy. */
export type SignedTreeHead = SignedTreeHeadContract;

/** The root a signed head commits to, lowercase hex, whichever kind it is. */
export const treeHeadRootHex = (head: SignedTreeHead): string => ('root_hash_sha256_hex' in head ? head.root_hash_sha256_hex : head.root_hash);

const kindPattern = /^[a-z0-9][a-z0-9._]{0,127}$/;

// ---- Appending (inside the caller's transaction) ----

/**
 * The statement that appends `leaf` as the tenant's next leaf: one round trip, usable in a `tx.batch` with the
 * caller's own statements. It increments the tenant's log head, whose row lock then serializes the tenant's
 * appends until the transaction ends: append as late in the transaction as the leaf allows.
 */
export function appendLeafStatement(tenantId: string, leaf: LogLeaf): Statement<{ leafIndex: number }> {
  assertLeaf(leaf);
  const bytes = Buffer.from(leaf.canonicalBytes.buffer, leaf.canonicalBytes.byteOffset, leaf.canonicalBytes.byteLength);
  const format = leaf.format ?? logLeafFormatCurrent;
  return {
    text: `WITH head AS (
             INSERT INTO transparency_log_heads AS h (tenant_id, tree_size) VALUES ($1, 1)
             ON CONFLICT (tenant_id) DO UPDATE SET tree_size = h.tree_size + 1, updated_at = now()
             RETURNING h.tree_size - 1 AS leaf_index)
           INSERT INTO transparency_log_leaves (tenant_id, leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact, leaf_format)
           SELECT $1, leaf_index, $2, $3, $4, $5, $6::jsonb, $7 FROM head
           RETURNING leaf_index`,
    values: [
      tenantId, leaf.kind, leaf.artifactId, bytes, Buffer.from(merkleLeafHash(logLeafData(format, leaf.canonicalBytes))), JSON.stringify(leaf.artifact), format,
    ],
    read: ({ rows }) => ({ leafIndex: safeIntegerOf(String(rows[0].leaf_index), 'transparency log: leaf_index') }),
  };
}

/** Refuses a leaf the log's tables would refuse, before any statement is built: a programmer error, not input. */
export function assertLeaf(leaf: Pick<LogLeaf, 'kind' | 'artifactId' | 'canonicalBytes'>): void {
  if (!kindPattern.test(leaf.kind)) throw new Error(`transparency log: leaf kind "${leaf.kind}" is not a kind name`);
  if (leaf.artifactId.length < 1 || leaf.artifactId.length > logArtifactIdLengthMax) {
    throw new Error('transparency log: artifactId must be 1 to 128 characters');
  }
  if (!(leaf.canonicalBytes instanceof Uint8Array) || leaf.canonicalBytes.length === 0) {
    throw new Error('transparency log: canonicalBytes must be the signed bytes');
  }
}

/** Appends `leaf` in the caller's transaction: the artifact and its leaf commit together or not at all. */
export async function appendLeaf(tx: Queryable, tenantId: string, leaf: LogLeaf): Promise<{ leafIndex: number }> {
  return tx.run(appendLeafStatement(tenantId, leaf));
}

// ---- Reading heads and proofs ----

export interface StoredLeaf {
  readonly leafIndex: number;
  readonly kind: string;
  readonly artifactId: string;
  readonly canonicalBytes: Buffer;
  readonly leafHash: Buffer;
  readonly leafFormat: LogLeafFormat;
  readonly artifact: unknown;
  readonly appendedAt: Date;
}

function latestTreeHeadStatement(tenantId: string): Statement<SignedTreeHead | null> {
  return {
    text: 'SELECT tree_head FROM transparency_tree_heads WHERE tenant_id = $1 ORDER BY tree_size DESC LIMIT 1',
    values: [tenantId],
    read: ({ rows }) => (rows[0] as { tree_head: SignedTreeHead } | undefined)?.tree_head ?? null,
  };
}

/** The tenant's latest signed tree head, or null before its first. */
export async function latestTreeHead(tx: Queryable, tenantId: string): Promise<SignedTreeHead | null> {
  return tx.run(latestTreeHeadStatement(tenantId));
}

/** The signed head of exactly `treeSize` leaves, when one was published. */
export async function treeHeadOfSize(tx: Queryable, tenantId: string, treeSize: number): Promise<SignedTreeHead | null> {
  const { rows } = await tx.query<{ tree_head: SignedTreeHead }>(
    'SELECT tree_head FROM transparency_tree_heads WHERE tenant_id = $1 AND tree_size = $2',
    [tenantId, treeSize],
  );
  return rows[0]?.tree_head ?? null;
}

/** The latest signed head issued at or before `at` (an audit export's window end), or null. */
export async function treeHeadAsOf(tx: Queryable, tenantId: string, at: Date): Promise<SignedTreeHead | null> {
  const { rows } = await tx.query<{ tree_head: SignedTreeHead }>(
    'SELECT tree_head FROM transparency_tree_heads WHERE tenant_id = $1 AND issued_at <= $2 ORDER BY tree_size DESC LIMIT 1',
    [tenantId, at],
  );
  return rows[0]?.tree_head ?? null;
}

function leafAtStatement(tenantId: string, leafIndex: number): Statement<StoredLeaf | null> {
  return {
    text: `SELECT ${leafColumns} FROM transparency_log_leaves WHERE tenant_id = $1 AND leaf_index = $2`,
    values: [tenantId, leafIndex],
    read: ({ rows }) => (rows[0] ? toLeaf(rows[0] as StoredLeafRow) : null),
  };
}

export async function leafAt(tx: Queryable, tenantId: string, leafIndex: number): Promise<StoredLeaf | null> {
  return tx.run(leafAtStatement(tenantId, leafIndex));
}

/** Which leaves an audit export takes: appended in [from, to) (a bound open when absent), about `intentId` when
 * given (a receipt's `intent_id`, or an agent receipt's `references.intent_id`), under the first `treeSize` leaves. */
export interface LeafWindow {
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  readonly intentId?: string | undefined;
  readonly treeSize: number;
}

/** The leaves of `window` in index order, at most `limit`. */
export async function leavesInWindow(tx: Queryable, tenantId: string, window: LeafWindow, limit: number): Promise<StoredLeaf[]> {
  const { rows } = await tx.query<StoredLeafRow>(
    `SELECT ${leafColumns} FROM transparency_log_leaves
      WHERE tenant_id = $1 AND leaf_index < $2
        AND ($3::timestamptz IS NULL OR appended_at >= $3) AND ($4::timestamptz IS NULL OR appended_at < $4)
        AND ($5::text IS NULL OR artifact ->> 'intent_id' = $5 OR artifact -> 'references' ->> 'intent_id' = $5)
      ORDER BY leaf_index LIMIT $6`,
    [tenantId, window.treeSize, window.from ?? null, window.to ?? null, window.intentId ?? null, limit],
  );
  return rows.map(toLeaf);
}

/**
 * The inclusion proof of leaf `leafIndex` (an artifact named `receiptId`) under the latest signed head, in the public
 * client's format (docs/protocol.md#inclusion-proofs); null until a head covers the leaf.
 */
export async function inclusionProofOf(tx: Queryable, tenantId: string, leafIndex: number, receiptId: string): Promise<ReceiptInclusionProof | null> {
  const [head, leaf] = await tx.batch([latestTreeHeadStatement(tenantId), leafAtStatement(tenantId, leafIndex)] as const);
  // A receipt names its own leaf, appended with it: a receipt without one is corruption, not input.
  if (leaf === null) throw new Error(`transparency log: leaf ${leafIndex} of a stored receipt is missing`);
  if (head === null || head.tree_size <= leafIndex) return null;
  const path = await readInclusionProof(tx, tenantId, leafIndex, head.tree_size);
  return {
    kind: inclusionProofKindOf(leaf.leafFormat),
    schema_version: 1,
    tenant_id: tenantId,
    receipt_id: receiptId,
    message_digest_sha256_hex: bytesToHex(sha256(leaf.canonicalBytes)),
    leaf_index: leafIndex,
    tree_size: head.tree_size,
    leaf_hash_sha256_hex: leaf.leafHash.toString('hex'),
    audit_path_sha256_hex: path,
    root_hash_sha256_hex: treeHeadRootHex(head),
    tree_head: head,
  };
}

/** The audit path of `leafIndex` in the tree of `treeSize` leaves; `treeSize` must not pass the latest head. */
export async function readInclusionProof(tx: Queryable, tenantId: string, leafIndex: number, treeSize: number): Promise<string[]> {
  const proof = await computeFromStore(tx, tenantId, (hasher) => inclusionProof(leafIndex, treeSize, hasher));
  return proof.map(bytesToHex);
}

/** The audit paths of several leaves in the tree of `treeSize` leaves, from one read of the stored hashes. */
export async function readInclusionProofs(tx: Queryable, tenantId: string, leafIndexes: readonly number[], treeSize: number): Promise<string[][]> {
  const proofs = await computeFromStore(tx, tenantId, (hasher) => leafIndexes.map((leafIndex) => inclusionProof(leafIndex, treeSize, hasher)));
  return proofs.map((proof) => proof.map(bytesToHex));
}

/** The consistency proof from `first` to `second` leaves (1 <= first <= second <= the latest head's size). */
export async function readConsistencyProof(tx: Queryable, tenantId: string, first: number, second: number): Promise<string[]> {
  const proof = await computeFromStore(tx, tenantId, (hasher) => consistencyProof(first, second, hasher));
  return proof.map(bytesToHex);
}

/** Runs a proof computation on stored hashes: once to learn which perfect subtrees it reads, then for real. */
async function computeFromStore<T>(tx: Queryable, tenantId: string, compute: (hasher: SubtreeHasher) => T): Promise<T> {
  const needed = perfectNodesRead(compute);
  const stored = await readPerfectNodes(tx, tenantId, needed);
  return compute(perfectSubtreeHasher(storedReader(stored)));
}

type NodeKey = { level: number; index: number };

/** Leaf hashes (level 0) and stored perfect subtrees, keyed `level:index`, in one round trip. */
async function readPerfectNodes(tx: Queryable, tenantId: string, keys: readonly NodeKey[]): Promise<Map<string, Uint8Array>> {
  const leaves = keys.filter((key) => key.level === 0).map((key) => key.index);
  const nodes = keys.filter((key) => key.level > 0);
  const { rows } = await tx.query<{ level: number; node_index: string; hash: Buffer }>(
    `SELECT 0 AS level, leaf_index AS node_index, leaf_hash AS hash FROM transparency_log_leaves
      WHERE tenant_id = $1 AND leaf_index = ANY ($2::bigint[])
     UNION ALL
     SELECT n.level, n.node_index, n.hash FROM transparency_log_nodes n
       JOIN unnest($3::smallint[], $4::bigint[]) AS k (level, node_index) ON n.level = k.level AND n.node_index = k.node_index
      WHERE n.tenant_id = $1`,
    [tenantId, leaves, nodes.map((key) => key.level), nodes.map((key) => key.index)],
  );
  return new Map(rows.map((row) => [`${row.level}:${row.node_index}`, new Uint8Array(row.hash)]));
}

function storedReader(stored: ReadonlyMap<string, Uint8Array>): (level: number, index: number) => Uint8Array {
  return (level, index) => {
    const hash = stored.get(`${level}:${index}`);
    // Every perfect subtree under a signed head is stored before the head is: a gap is corruption, not input.
    if (hash === undefined) throw new Error(`transparency log: perfect subtree ${level}:${index} is missing`);
    return hash;
  };
}

// ---- Publishing signed tree heads (the tree-head pass) ----

/** Any fixed number: replicas agree on it, and it differs from the migration and maintenance locks. */
const treeHeadLockKey = '7213402119';

export interface TreeHeadPassReport {
  /** False when another replica held the lock and this pass did nothing. */
  readonly ran: boolean;
  /** Heads signed, one per tenant that had new leaves. */
  readonly heads: number;
}

/**
 * One pass: under a transaction-scoped advisory lock (one replica at a time), for each tenant whose log has grown
 * past its latest signed head, store the new perfect subtrees and sign one head. Batched by design: however many
 * receipts a tenant issued since the last pass, it gets one signature.
 */
export async function publishTreeHeads(database: Database, keyring: GatewayKeyring, now = new Date()): Promise<TreeHeadPassReport> {
  return database.system(async (tx) => {
    const { rows: lock } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [treeHeadLockKey]);
    if (!lock[0]!.locked) return { ran: false, heads: 0 };
    const { rows: grown } = await tx.query<{ tenant_id: string; tree_size: string; signed_size: string }>(
      `SELECT l.tenant_id, l.tree_size, coalesce(s.tree_size, 0) AS signed_size
         FROM transparency_log_heads l
         LEFT JOIN LATERAL (SELECT t.tree_size FROM transparency_tree_heads t WHERE t.tenant_id = l.tenant_id
                             ORDER BY t.tree_size DESC LIMIT 1) s ON true
        WHERE l.tree_size > coalesce(s.tree_size, 0)
        ORDER BY l.updated_at LIMIT $1`,
      [treeHeadTenantsPerPassMax],
    );
    for (const row of grown) {
      const signedSize = safeIntegerOf(row.signed_size, 'transparency log: signed size');
      const treeSize = Math.min(safeIntegerOf(row.tree_size, 'transparency log: tree_size'), signedSize + treeHeadLeavesPerPassMax);
      await growAndSign(tx, keyring, row.tenant_id, signedSize, treeSize, now);
    }
    return { ran: true, heads: grown.length };
  });
}

/** Stores the perfect subtrees completed between `oldSize` and `newSize` leaves and signs the head of `newSize`. */
async function growAndSign(tx: Queryable, keyring: GatewayKeyring, tenantId: string, oldSize: number, newSize: number, now: Date): Promise<void> {
  const grow = (read: (level: number, index: number) => Uint8Array) => {
    const nodes = newPerfectNodes(oldSize, newSize, read);
    const made = new Map(nodes.map((node) => [`${node.level}:${node.index}`, node.hash]));
    const root = merkleRoot(newSize, perfectSubtreeHasher((level, index) => made.get(`${level}:${index}`) ?? read(level, index)));
    return { nodes, root };
  };
  const needed = new Map<string, NodeKey>();
  grow((level, index) => {
    needed.set(`${level}:${index}`, { level, index });
    return new Uint8Array(32);
  });
  const stored = await readPerfectNodes(tx, tenantId, [...needed.values()]);
  const { nodes, root } = grow(storedReader(stored));
  if (nodes.length > 0) {
    await tx.query(
      `INSERT INTO transparency_log_nodes (tenant_id, level, node_index, hash)
       SELECT $1, level, node_index, hash FROM unnest($2::smallint[], $3::bigint[], $4::bytea[]) AS n (level, node_index, hash)`,
      [tenantId, nodes.map((node) => node.level), nodes.map((node) => node.index), nodes.map((node) => Buffer.from(node.hash))],
    );
  }
  const head = signTreeHead(keyring, { tenantId, treeSize: newSize, rootHash: root, issuedAt: now });
  await tx.query(
    `INSERT INTO transparency_tree_heads (tenant_id, tree_size, root_hash, issued_at, key_id, tree_head)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
    [tenantId, newSize, Buffer.from(root), head.issued_at, keyring.active.kid, JSON.stringify(head)],
  );
}

/** Signs a tree head with the gateway's active key, in the public client's format (kind
 * svc.agent_receipt_transparency_sth_v1); the key is named by its public key, which the JWKS and the signing-keys
 * document publish. */
export function signTreeHead(
  keyring: GatewayKeyring,
  head: { tenantId: string; treeSize: number; rootHash: Uint8Array; issuedAt: Date },
): SignedTreeHead {
  return signArtifact(
    treeHeadKind,
    {
      tenant_id: head.tenantId,
      tree_size: head.treeSize,
      root_hash_sha256_hex: bytesToHex(head.rootHash),
      issued_at: formatRfc3339SecondsUtc(head.issuedAt.getTime()),
    },
    keyring.active.signer,
  ) as unknown as SignedTreeHead;
}

// ---- Row mapping ----

const leafColumns = 'leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, leaf_format, artifact, appended_at';

interface StoredLeafRow {
  leaf_index: string;
  kind: string;
  artifact_id: string;
  canonical_bytes: Buffer;
  leaf_hash: Buffer;
  leaf_format: number;
  artifact: unknown;
  appended_at: Date;
}

function toLeaf(row: StoredLeafRow): StoredLeaf {
  return {
    leafIndex: safeIntegerOf(row.leaf_index, 'transparency log: leaf_index'),
    kind: row.kind,
    artifactId: row.artifact_id,
    canonicalBytes: row.canonical_bytes,
    leafHash: row.leaf_hash,
    leafFormat: row.leaf_format as LogLeafFormat,
    artifact: row.artifact,
    appendedAt: row.appended_at,
  };
}

// ---- Offline checks (`svc receipt verify`, `svc audit verify`): pure, no database ----

/** A check's verdict: null when it holds, else the reason in words. */
export type LogProblem = string | null;

const hexHashPattern = /^[0-9a-f]{64}$/;

/** The key set a verifier trusts, as lowercase hex: from a JWKS document (RFC 8037 OKP Ed25519 keys). */
export function trustedKeysFromJwks(jwks: unknown): string[] {
  const keys = (jwks as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw new Error('the JWKS has no "keys" array');
  return keys
    .filter((key): key is { kty: string; crv: string; x: string } => typeof key === 'object' && key !== null && key.kty === 'OKP' && key.crv === 'Ed25519' && typeof key.x === 'string')
    .map((key) => Buffer.from(key.x, 'base64url').toString('hex'));
}

/** The signed canonical bytes of a signed artifact (what its digest covers, and what its log leaf is made of). */
export function artifactLeafBytes(wire: unknown, trustedKeysHex?: readonly string[]): Uint8Array {
  const verified = verifyArtifact(wire, trustedKeysHex && trustedKeysHex.length > 0 ? { trustedPublicKeys: trustedKeysHex } : {});
  return canonicalArtifactBytes(verified.body);
}

export const isLogLeafFormat = (value: unknown): value is LogLeafFormat => logLeafFormats.includes(value as LogLeafFormat);

/** A tree head's own checks: kind (either kind of head), signature, and (when keys are given) a trusted signer. */
export function checkTreeHead(head: unknown, trustedKeysHex: readonly string[] | undefined, label: string): LogProblem {
  try {
    const verified = verifyArtifact(head, trustedKeysHex && trustedKeysHex.length > 0 ? { trustedPublicKeys: trustedKeysHex } : {});
    if (!treeHeadKinds.includes(verified.kind)) return `${label} is a ${verified.kind}, not a tree head`;
    return null;
  } catch (error) {
    return `${label} does not verify: ${describeError(error)}`;
  }
}

const isHashList = (value: unknown): value is string[] => Array.isArray(value) && value.every((node) => typeof node === 'string' && hexHashPattern.test(node));

/** Whether the leaf whose data are `leafData` (src/signing/merkle.ts, logLeafData) sits at `leafIndex` under `head`,
 * by the audit path `proofHex`. */
export function checkInclusion(leafData: Uint8Array, leafIndex: number, head: SignedTreeHead, proofHex: unknown): LogProblem {
  if (!isHashList(proofHex)) return 'the inclusion proof is not a list of 64-digit lowercase hex hashes';
  if (!Number.isSafeInteger(leafIndex) || leafIndex < 0) return 'the leaf index is not a non-negative integer';
  if (leafIndex >= head.tree_size) return `leaf ${leafIndex} is not under the tree head of ${head.tree_size} leaves`;
  const ok = verifyInclusion(leafIndex, head.tree_size, merkleLeafHash(leafData), proofHex.map(hexToHash), hexToHash(treeHeadRootHex(head)));
  return ok ? null : `the inclusion proof of leaf ${leafIndex} does not lead to the root of the tree head of ${head.tree_size} leaves`;
}

/**
 * An inclusion-proof document (GET …/inclusion-proof, docs/protocol.md#inclusion-proofs) against the receipt it is
 * about, whose signed canonical bytes are `canonicalBytes`: its kind says what the leaf hashes, the receipt id and
 * message digest must be the receipt's, the leaf hash is recomputed from the receipt (never taken from the
 * document), and the audit path must lead to the root the document and its tree head name. The head's own signature
 * is checked by the caller, with its keys.
 */
export function checkInclusionProofDocument(document: unknown, receipt: Record<string, unknown>, canonicalBytes: Uint8Array): LogProblem {
  const proof = document as Partial<ReceiptInclusionProof> | null;
  if (typeof proof !== 'object' || proof === null) return 'the inclusion proof is not a JSON object';
  const format: LogLeafFormat | undefined = proof.kind === inclusionProofKind ? 2 : proof.kind === legacyInclusionProofKind ? 1 : undefined;
  if (format === undefined) return `the inclusion proof has kind ${JSON.stringify(proof.kind)}, not ${inclusionProofKind} or ${legacyInclusionProofKind}`;
  if (proof.schema_version !== 1) return `the inclusion proof has schema_version ${JSON.stringify(proof.schema_version)}, not 1`;
  const head = proof.tree_head;
  if (typeof head !== 'object' || head === null) return 'the inclusion proof has no tree head';
  const digestHex = bytesToHex(sha256(canonicalBytes));
  if (proof.receipt_id !== receipt.receipt_id) return `the inclusion proof is about receipt ${String(proof.receipt_id)}, not ${String(receipt.receipt_id)}`;
  if (proof.message_digest_sha256_hex !== digestHex) return "the inclusion proof's message digest is not the receipt's";
  if (proof.tenant_id !== receipt.tenant_id || head.tenant_id !== receipt.tenant_id) return `the inclusion proof or its head is of another tenant than the receipt's (${String(receipt.tenant_id)})`;
  if (proof.tree_size !== head.tree_size) return `the inclusion proof names ${String(proof.tree_size)} leaves, its tree head ${head.tree_size}`;
  if (proof.root_hash_sha256_hex !== treeHeadRootHex(head)) return "the inclusion proof's root is not its tree head's root";
  const leafData = logLeafData(format, canonicalBytes);
  if (proof.leaf_hash_sha256_hex !== bytesToHex(merkleLeafHash(leafData))) return `the inclusion proof's leaf hash is not the receipt's leaf (format ${format})`;
  return checkInclusion(leafData, proof.leaf_index ?? Number.NaN, head, proof.audit_path_sha256_hex);
}

/** Whether `newer` extends `older` (same tenant; equal sizes need equal roots; else the consistency proof holds).
 * The heads may be of either kind: a head of the earlier kind and one of the current kind are roots of one tree. */
export function checkConsistency(older: SignedTreeHead, newer: SignedTreeHead, proofHex: unknown): LogProblem {
  if (older.tenant_id !== newer.tenant_id) return `the tree heads belong to different tenants (${older.tenant_id}, ${newer.tenant_id})`;
  if (older.tree_size === newer.tree_size) {
    return treeHeadRootHex(older) === treeHeadRootHex(newer) ? null : `two tree heads of ${older.tree_size} leaves have different roots: the log was rewritten`;
  }
  if (older.tree_size > newer.tree_size) return checkConsistency(newer, older, proofHex);
  if (!isHashList(proofHex)) return 'the consistency proof is not a list of 64-digit lowercase hex hashes';
  const ok = verifyConsistency(older.tree_size, newer.tree_size, hexToHash(treeHeadRootHex(older)), hexToHash(treeHeadRootHex(newer)), proofHex.map(hexToHash));
  return ok ? null : `the tree of ${newer.tree_size} leaves does not extend the tree of ${older.tree_size} leaves: the log was rewritten`;
}

function hexToHash(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'));
}

function describeError(thrown: unknown): string {
  const error = asServiceError(thrown);
  if (error instanceof ServiceError) {
    const field = typeof error.details?.field === 'string' ? ` (${error.details.field})` : '';
    return `${error.code}${field}`;
  }
  return (error as Error).message;
}
