// RFC 6962 / RFC 9162 Merkle trees, pure: leaf and node hashing, the Merkle Tree Hash, inclusion (audit path) and
// consistency proofs, and their verifiers. Proofs are built from a subtree-hash function, so that a stored tree
// (docs/protocol.md#transparency-log) can answer from its perfect subtrees without reading every leaf.
import { createHash } from 'node:crypto';

export const merkleHashLength = 32;

/** SHA-256(0x00 ‖ bytes): a leaf's hash. The prefix keeps a leaf from ever passing for an interior node. */
export function merkleLeafHash(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(leafPrefix).update(bytes).digest());
}

/**
 * What a transparency-log leaf hashes (docs/protocol.md#transparency-log), by the format recorded with the leaf:
 * 1, the artifact's signed canonical bytes (the log's first leaves); 2, the 32-byte SHA-256 digest of those bytes,
 * its `message_digest_sha256_hex` (every leaf since, the public client's rule). One tree holds both: a leaf's hash
 * never changes once appended, so the roots and proofs of the older leaves stay what they were.
 */
export type LogLeafFormat = 1 | 2;
export const logLeafFormats: readonly LogLeafFormat[] = [1, 2];
/** The format of every leaf appended now. */
export const logLeafFormatCurrent: LogLeafFormat = 2;

/** The bytes a leaf of `format` hashes, from the artifact's signed canonical bytes. */
export function logLeafData(format: LogLeafFormat, canonicalBytes: Uint8Array): Uint8Array {
  return format === 1 ? canonicalBytes : new Uint8Array(createHash('sha256').update(canonicalBytes).digest());
}

/** SHA-256(0x01 ‖ left ‖ right): an interior node's hash. */
export function merkleNodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(nodePrefix).update(left).update(right).digest());
}

/** The root of the empty tree: SHA-256 of no bytes. */
export const emptyTreeRootHash: Uint8Array = new Uint8Array(createHash('sha256').digest());

const leafPrefix = new Uint8Array([0]);
const nodePrefix = new Uint8Array([1]);

/** MTH(D[start:end]) for 0 <= start < end. */
export type SubtreeHasher = (start: number, end: number) => Uint8Array;

/** The hash of the perfect subtree of 2^level leaves that starts at leaf index × 2^level (level 0: a leaf hash). */
export type PerfectNodeReader = (level: number, index: number) => Uint8Array;

/** The largest power of two strictly below `n` (n >= 2): where RFC 6962 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  assertSize(n, 'n');
  if (n < 2) throw new RangeError('splitPoint needs at least 2 leaves');
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A subtree hasher over perfect subtrees: MTH(D[start:end]) from the aligned perfect subtrees it is made of. */
export function perfectSubtreeHasher(read: PerfectNodeReader): SubtreeHasher {
  const hash = (start: number, end: number): Uint8Array => {
    const size = end - start;
    if (size < 1) throw new RangeError('an empty subtree has no node');
    if (isPowerOfTwo(size) && start % size === 0) return read(Math.log2(size), start / size);
    const k = splitPoint(size);
    return merkleNodeHash(hash(start, start + k), hash(start + k, end));
  };
  return hash;
}

/** A subtree hasher over leaf hashes held in memory (tests, offline tools, small trees). */
export function leafArrayHasher(leafHashes: readonly Uint8Array[]): SubtreeHasher {
  const hash = (start: number, end: number): Uint8Array => {
    if (end - start === 1) return leafHashes[start]!;
    const k = splitPoint(end - start);
    return merkleNodeHash(hash(start, start + k), hash(start + k, end));
  };
  return hash;
}

/** MTH of the first `size` leaves. */
export function merkleRoot(size: number, hasher: SubtreeHasher): Uint8Array {
  assertSize(size, 'size');
  return size === 0 ? emptyTreeRootHash : hasher(0, size);
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1: the audit path of leaf `leafIndex` in the tree of the first `size` leaves. */
export function inclusionProof(leafIndex: number, size: number, hasher: SubtreeHasher): Uint8Array[] {
  assertSize(size, 'size');
  assertSize(leafIndex, 'leafIndex');
  if (leafIndex >= size) throw new RangeError('the leaf is not in the tree');
  const proof: Uint8Array[] = [];
  // Iterative form of the recursion: walk down from the whole tree, collecting siblings, then reverse.
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (leafIndex < start + k) {
      proof.push(hasher(start + k, end));
      end = start + k;
    } else {
      proof.push(hasher(start, start + k));
      start += k;
    }
  }
  return proof.reverse();
}

/** PROOF(m, D[n]) of RFC 6962 §2.1.2: proves the tree of `first` leaves is a prefix of the tree of `second`. */
export function consistencyProof(first: number, second: number, hasher: SubtreeHasher): Uint8Array[] {
  assertSize(first, 'first');
  assertSize(second, 'second');
  if (first < 1 || first > second) throw new RangeError('consistency needs 1 <= first <= second');
  const proof: Uint8Array[] = [];
  // SUBPROOF(m, D[start:end], complete), unrolled: `complete` stays true while the old tree is a left edge.
  let start = 0;
  let end = second;
  let m = first;
  let complete = true;
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push(hasher(start + k, end));
      end = start + k;
    } else {
      proof.push(hasher(start, start + k));
      start += k;
      m -= k;
      complete = false;
    }
  }
  if (!complete) proof.push(hasher(start, end));
  return proof.reverse();
}

/** Recomputes the root from a leaf hash and its audit path (RFC 9162 §2.1.3.2); null when the path is malformed. */
export function rootFromInclusionProof(leafIndex: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[]): Uint8Array | null {
  if (!isSize(leafIndex) || !isSize(size) || leafIndex >= size) return null;
  let fn = leafIndex;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = merkleNodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = merkleNodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** True when `proof` shows leaf `leafHash` at `leafIndex` in the tree of `size` leaves with root `rootHash`. */
export function verifyInclusion(leafIndex: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[], rootHash: Uint8Array): boolean {
  const root = rootFromInclusionProof(leafIndex, size, leafHash, proof);
  return root !== null && bytesEqual(root, rootHash);
}

/** True when `proof` shows the tree (first, firstRoot) is a prefix of (second, secondRoot) (RFC 9162 §2.1.4.2). */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isSize(first) || !isSize(second) || first > second) return false;
  if (first === second) return proof.length === 0 && bytesEqual(firstRoot, secondRoot);
  // Every tree extends the empty one; its proof is empty.
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = merkleNodeHash(c, fr);
      sr = merkleNodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = merkleNodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot);
}

/**
 * The perfect subtrees a computation reads, found by running it once against a recorder: lets a stored tree fetch
 * exactly those nodes in one query, then run the computation again on the real hashes. Keys are `level:index`.
 */
export function perfectNodesRead(compute: (hasher: SubtreeHasher) => unknown): Array<{ level: number; index: number }> {
  const seen = new Map<string, { level: number; index: number }>();
  const placeholder = new Uint8Array(merkleHashLength);
  compute(
    perfectSubtreeHasher((level, index) => {
      seen.set(`${level}:${index}`, { level, index });
      return placeholder;
    }),
  );
  return [...seen.values()];
}

/**
 * The perfect subtrees of level >= 1 that are complete in a tree of `newSize` leaves but were not in one of
 * `oldSize` leaves, computed from their children: what a stored tree adds when it grows. `read` answers the leaf
 * hashes (level 0) and the older perfect subtrees; the answer lists the new nodes bottom-up.
 */
export function newPerfectNodes(oldSize: number, newSize: number, read: PerfectNodeReader): Array<{ level: number; index: number; hash: Uint8Array }> {
  assertSize(oldSize, 'oldSize');
  assertSize(newSize, 'newSize');
  if (oldSize > newSize) throw new RangeError('a tree does not shrink');
  const made = new Map<string, Uint8Array>();
  const nodes: Array<{ level: number; index: number; hash: Uint8Array }> = [];
  const child = (level: number, index: number): Uint8Array => made.get(`${level}:${index}`) ?? read(level, index);
  for (let level = 1, width = 2; width <= newSize; level += 1, width *= 2) {
    // Node i covers [i·width, (i+1)·width): new when its end passes oldSize and fits in newSize.
    for (let index = Math.floor(oldSize / width); (index + 1) * width <= newSize; index += 1) {
      const hash = merkleNodeHash(child(level - 1, 2 * index), child(level - 1, 2 * index + 1));
      made.set(`${level}:${index}`, hash);
      nodes.push({ level, index, hash });
    }
  }
  return nodes;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && Number.isSafeInteger(n) && 2 ** Math.round(Math.log2(n)) === n;
}

function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

function assertSize(n: number, name: string): void {
  if (!isSize(n)) throw new RangeError(`${name} must be a non-negative safe integer`);
}
