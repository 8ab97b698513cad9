// The per-tenant transparency log (docs/protocol.md#transparency-log): receipts and mandate imports are appended as
// RFC 6962 leaves inside the transaction that issues them; a periodic pass (publishTreeHeads) stores the new perfect
// subtrees and signs one tree head per tenant with new leaves; proofs are read from the stored subtrees.
import type { SignedTreeHead as SignedTreeHeadContract } from '../contracts/ledger.ts';
import type { LogPosition as LogPositionContract } from '../contracts/protocol.ts';
import type { Database, Queryable, Statement } from '../infra/database.ts';
import { sign } from 'node:crypto';
import type { GatewayKey, GatewayKeyring } from '../infra/gateway-keys.ts';
import { logArtifactIdLengthMax, treeHeadLeavesPerPassMax, treeHeadTenantsPerPassMax } from '../limits.ts';
import { ServiceError } from '../errors/service-error.ts';
import { canonicalArtifactBytes, signArtifact, verifyArtifact } from '../signing/artifacts.ts';
import { ed25519PublicKey, type Ed25519Signer } from '../signing/ed25519.ts';
import { bytesToHex } from '../signing/encoding.ts';
import {
  consistencyProof,
  inclusionProof,
  merkleLeafHash,
  merkleRoot,
  newPerfectNodes,
  perfectNodesRead,
  perfectSubtreeHasher,
  verifyConsistency,
  verifyInclusion,
  type SubtreeHasher,
} from '../signing/merkle.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { safeIntegerOf } from '../db/safe-integer.ts';
import { asServiceError } from './pure-error-mapping.ts';

export const treeHeadKind = 'svc.transparency_tree_head_v1';

export interface LogLeaf {
  /** The artifact's kind, e.g. 'svc.protocol_settlement_receipt_v1'. */
  readonly kind: string;
  /** receipt_id, or the mandate digest for a mandate import. */
  readonly artifactId: string;
  /** The artifact's signed canonical bytes (what its SHA-256 digest covers). */
  readonly canonicalBytes: Uint8Array;
  /** The full signed artifact JSON as served (kept for proofs and exports). */
  readonly artifact: unknown;
}

/** A signed tree head as served: the signed fields in their order, then the signature material. */
/** A signed tree head as its route answers it: the contract's type (src/contracts/ledger.ts), not a second copy. */
export type SignedTreeHead = SignedTreeHeadContract;

/** Where a leaf stands in the tenant's log: the contract's shape (src/contracts/protocol.ts), with the tree head
 * typed as the signed head it is (the contract declares it as any signed artifact). */
export type LogPosition = Omit<LogPositionContract, 'tree_head'> & { readonly tree_head: SignedTreeHead | null };

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
  return {
    text: `WITH head AS (
             INSERT INTO transparency_log_heads AS h (tenant_id, tree_size) VALUES ($1, 1)
             ON CONFLICT (tenant_id) DO UPDATE SET tree_size = h.tree_size + 1, updated_at = now()
             RETURNING h.tree_size - 1 AS leaf_index)
           INSERT INTO transparency_log_leaves (tenant_id, leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact)
           SELECT $1, leaf_index, $2, $3, $4, $5, $6::jsonb FROM head
           RETURNING leaf_index`,
    values: [tenantId, leaf.kind, leaf.artifactId, bytes, Buffer.from(merkleLeafHash(leaf.canonicalBytes)), JSON.stringify(leaf.artifact)],
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
  readonly artifact: unknown;
  readonly appendedAt: Date;
}

/** The tenant's latest signed tree head, or null before its first. */
export async function latestTreeHead(tx: Queryable, tenantId: string): Promise<SignedTreeHead | null> {
  const { rows } = await tx.query<{ tree_head: SignedTreeHead }>(
    'SELECT tree_head FROM transparency_tree_heads WHERE tenant_id = $1 ORDER BY tree_size DESC LIMIT 1',
    [tenantId],
  );
  return rows[0]?.tree_head ?? null;
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

export async function leafAt(tx: Queryable, tenantId: string, leafIndex: number): Promise<StoredLeaf | null> {
  const { rows } = await tx.query<StoredLeafRow>(`SELECT ${leafColumns} FROM transparency_log_leaves WHERE tenant_id = $1 AND leaf_index = $2`, [
    tenantId,
    leafIndex,
  ]);
  return rows[0] ? toLeaf(rows[0]) : null;
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

/** Where leaf `leafIndex` stands: the latest head and, when that head covers the leaf, its audit path. */
export async function logPositionOf(tx: Queryable, tenantId: string, leafIndex: number): Promise<LogPosition> {
  const head = await latestTreeHead(tx, tenantId);
  if (head === null || head.tree_size <= leafIndex) return { leaf_index: leafIndex, tree_head: null, inclusion_proof: null };
  const proof = await readInclusionProof(tx, tenantId, leafIndex, head.tree_size);
  return { leaf_index: leafIndex, tree_head: head, inclusion_proof: proof };
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
    [tenantId, newSize, Buffer.from(root), head.issued_at, head.key_id, JSON.stringify(head)],
  );
}

/** Signs a tree head with the gateway's active key (kind svc.transparency_tree_head_v1). */
export function signTreeHead(
  keyring: GatewayKeyring,
  head: { tenantId: string; treeSize: number; rootHash: Uint8Array; issuedAt: Date },
): SignedTreeHead {
  const key = keyring.active;
  return signArtifact(
    treeHeadKind,
    {
      tenant_id: head.tenantId,
      tree_size: head.treeSize,
      root_hash: bytesToHex(head.rootHash),
      issued_at: formatRfc3339SecondsUtc(head.issuedAt.getTime()),
      key_id: key.kid,
    },
    gatewayKeySigner(key),
  ) as unknown as SignedTreeHead;
}

function gatewayKeySigner(key: GatewayKey): Ed25519Signer {
  return {
    publicKey: ed25519PublicKey(Buffer.from(key.publicKeyHex, 'hex')),
    sign: (message) => new Uint8Array(sign(null, message, key.privateKey)),
  };
}

// ---- Row mapping ----

const leafColumns = 'leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact, appended_at';

interface StoredLeafRow {
  leaf_index: string;
  kind: string;
  artifact_id: string;
  canonical_bytes: Buffer;
  leaf_hash: Buffer;
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

/** The signed canonical bytes of a signed artifact (what its digest covers, and what its log leaf hashes). */
export function artifactLeafBytes(wire: unknown, trustedKeysHex?: readonly string[]): Uint8Array {
  const verified = verifyArtifact(wire, trustedKeysHex && trustedKeysHex.length > 0 ? { trustedPublicKeys: trustedKeysHex } : {});
  return canonicalArtifactBytes(verified.body);
}

/** A tree head's own checks: kind, signature, and (when keys are given) a trusted signer. */
export function checkTreeHead(head: unknown, trustedKeysHex: readonly string[] | undefined, label: string): LogProblem {
  try {
    const verified = verifyArtifact(head, trustedKeysHex && trustedKeysHex.length > 0 ? { trustedPublicKeys: trustedKeysHex } : {});
    if (verified.kind !== treeHeadKind) return `${label} is a ${verified.kind}, not a tree head`;
    return null;
  } catch (error) {
    return `${label} does not verify: ${describeError(error)}`;
  }
}

/** Whether the leaf of `leafBytes` sits at `leafIndex` under `head`, by the audit path `proofHex`. */
export function checkInclusion(leafBytes: Uint8Array, leafIndex: number, head: SignedTreeHead, proofHex: unknown): LogProblem {
  if (!Array.isArray(proofHex) || !proofHex.every((node) => typeof node === 'string' && hexHashPattern.test(node))) {
    return 'the inclusion proof is not a list of 64-digit lowercase hex hashes';
  }
  if (!Number.isSafeInteger(leafIndex) || leafIndex < 0) return 'the leaf index is not a non-negative integer';
  if (leafIndex >= head.tree_size) return `leaf ${leafIndex} is not under the tree head of ${head.tree_size} leaves`;
  const ok = verifyInclusion(leafIndex, head.tree_size, merkleLeafHash(leafBytes), proofHex.map(hexToHash), hexToHash(head.root_hash));
  return ok ? null : `the inclusion proof of leaf ${leafIndex} does not lead to the root of the tree head of ${head.tree_size} leaves`;
}

/** Whether `newer` extends `older` (same tenant; equal sizes need equal roots; else the consistency proof holds). */
export function checkConsistency(older: SignedTreeHead, newer: SignedTreeHead, proofHex: unknown): LogProblem {
  if (older.tenant_id !== newer.tenant_id) return `the tree heads belong to different tenants (${older.tenant_id}, ${newer.tenant_id})`;
  if (older.tree_size === newer.tree_size) {
    return older.root_hash === newer.root_hash ? null : `two tree heads of ${older.tree_size} leaves have different roots: the log was rewritten`;
  }
  if (older.tree_size > newer.tree_size) return checkConsistency(newer, older, proofHex);
  if (!Array.isArray(proofHex) || !proofHex.every((node) => typeof node === 'string' && hexHashPattern.test(node))) {
    return 'the consistency proof is not a list of 64-digit lowercase hex hashes';
  }
  const ok = verifyConsistency(older.tree_size, newer.tree_size, hexToHash(older.root_hash), hexToHash(newer.root_hash), proofHex.map(hexToHash));
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
