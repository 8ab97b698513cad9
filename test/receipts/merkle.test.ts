// RFC 6962 hashing against the Certificate Transparency test vectors (test/vectors/rfc6962-merkle.json), the
// stored-subtree path against the in-memory one, and refusals: a tampered leaf, a rewritten history, broken proofs.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  emptyTreeRootHash,
  inclusionProof,
  leafArrayHasher,
  merkleLeafHash,
  merkleNodeHash,
  merkleRoot,
  newPerfectNodes,
  perfectNodesRead,
  perfectSubtreeHasher,
  verifyConsistency,
  verifyInclusion,
} from '../../src/signing/merkle.ts';

interface Vectors {
  empty_tree_root: string;
  leaves: string[];
  roots: string[];
  inclusion: Array<{ leaf_index: number; tree_size: number; proof: string[] }>;
  consistency: Array<{ first: number; second: number; proof: string[] }>;
}
const vectors = JSON.parse(fs.readFileSync(new URL('../vectors/rfc6962-merkle.json', import.meta.url), 'utf8')) as Vectors;
const unhex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const leafHashes = vectors.leaves.map((leaf) => merkleLeafHash(unhex(leaf)));
const hasher = leafArrayHasher(leafHashes);

describe('RFC 6962 vectors', () => {
  it('hashes the empty tree and every size from 1 to 8 to the published roots', () => {
    expect(hex(emptyTreeRootHash)).toBe(vectors.empty_tree_root);
    expect(hex(merkleRoot(0, hasher))).toBe(vectors.empty_tree_root);
    vectors.roots.forEach((root, index) => expect(hex(merkleRoot(index + 1, hasher))).toBe(root));
  });

  it.each(vectors.inclusion)('builds and verifies the audit path of leaf $leaf_index in $tree_size', ({ leaf_index, tree_size, proof }) => {
    expect(inclusionProof(leaf_index, tree_size, hasher).map(hex)).toEqual(proof);
    const root = unhex(vectors.roots[tree_size - 1]!);
    expect(verifyInclusion(leaf_index, tree_size, leafHashes[leaf_index]!, proof.map(unhex), root)).toBe(true);
  });

  it.each(vectors.consistency)('builds and verifies consistency from $first to $second', ({ first, second, proof }) => {
    expect(consistencyProof(first, second, hasher).map(hex)).toEqual(proof);
    const firstRoot = unhex(vectors.roots[first - 1]!);
    const secondRoot = unhex(vectors.roots[second - 1]!);
    expect(verifyConsistency(first, second, firstRoot, secondRoot, proof.map(unhex))).toBe(true);
  });
});

describe('refusals', () => {
  const root8 = unhex(vectors.roots[7]!);

  it('refuses a tampered leaf, a wrong index or size, and a changed or truncated path', () => {
    for (let index = 0; index < 8; index += 1) {
      const proof = inclusionProof(index, 8, hasher);
      expect(verifyInclusion(index, 8, leafHashes[index]!, proof, root8)).toBe(true);
      const tampered = merkleLeafHash(new Uint8Array([...unhex(vectors.leaves[index]!), 0x01]));
      expect(verifyInclusion(index, 8, tampered, proof, root8)).toBe(false);
      expect(verifyInclusion((index + 1) % 8, 8, leafHashes[index]!, proof, root8)).toBe(false);
      expect(verifyInclusion(index, 16, leafHashes[index]!, proof, root8)).toBe(false);
      expect(verifyInclusion(index, 4, leafHashes[index]!, proof, root8)).toBe(false);
      expect(verifyInclusion(index, 8, leafHashes[index]!, proof.slice(0, -1), root8)).toBe(false);
      expect(verifyInclusion(index, 8, leafHashes[index]!, [...proof, root8], root8)).toBe(false);
      const flipped = proof.map((node, position) => (position === 0 ? Uint8Array.from(node, (byte, i) => (i === 0 ? byte ^ 8 : byte)) : node));
      expect(verifyInclusion(index, 8, leafHashes[index]!, flipped, root8)).toBe(false);
    }
    // A leaf's hash is not an interior node's: the prefixes keep a second preimage from posing as a leaf.
    expect(hex(merkleLeafHash(new Uint8Array([...leafHashes[0]!, ...leafHashes[1]!])))).not.toBe(hex(merkleNodeHash(leafHashes[0]!, leafHashes[1]!)));
  });

  it('refuses a rewritten history: a changed early leaf breaks consistency with the published root', () => {
    const rewritten = [...leafHashes];
    rewritten[2] = merkleLeafHash(unhex('2022'));
    const rewrittenHasher = leafArrayHasher(rewritten);
    for (let first = 1; first < 8; first += 1) {
      const honestFirstRoot = unhex(vectors.roots[first - 1]!);
      const proof = consistencyProof(first, 8, rewrittenHasher);
      const rewrittenRoot = merkleRoot(8, rewrittenHasher);
      // The rewritten log cannot prove that it extends what it published before, when leaf 2 was in it.
      expect(verifyConsistency(first, 8, honestFirstRoot, rewrittenRoot, proof)).toBe(first <= 2);
      expect(verifyConsistency(first, 8, honestFirstRoot, root8, consistencyProof(first, 8, hasher))).toBe(true);
    }
  });

  it('refuses consistency proofs with a wrong size, swapped roots or extra nodes', () => {
    const proof = consistencyProof(6, 8, hasher);
    const root6 = unhex(vectors.roots[5]!);
    expect(verifyConsistency(5, 8, root6, root8, proof)).toBe(false);
    expect(verifyConsistency(6, 8, root8, root6, proof)).toBe(false);
    expect(verifyConsistency(6, 8, root6, root8, [...proof, root8])).toBe(false);
    expect(verifyConsistency(6, 8, root6, root8, [])).toBe(false);
    expect(verifyConsistency(8, 6, root8, root6, proof)).toBe(false);
  });
});

describe('stored perfect subtrees', () => {
  // 37 leaves grown in uneven steps, as the tree-head pass grows a stored tree.
  const leaves = Array.from({ length: 37 }, (_, i) => merkleLeafHash(new Uint8Array([i, i * 7])));
  const memory = leafArrayHasher(leaves);

  it('grows node by node to the same roots and proofs as the whole tree in memory', () => {
    const store = new Map<string, Uint8Array>(leaves.map((hash, index) => [`0:${index}`, hash]));
    const read = (level: number, index: number) => {
      const hash = store.get(`${level}:${index}`);
      if (!hash) throw new Error(`missing ${level}:${index}`);
      return hash;
    };
    let size = 0;
    for (const step of [1, 2, 1, 5, 8, 3, 17]) {
      for (const node of newPerfectNodes(size, size + step, read)) {
        expect(store.has(`${node.level}:${node.index}`)).toBe(false);
        store.set(`${node.level}:${node.index}`, node.hash);
      }
      size += step;
      const stored = perfectSubtreeHasher(read);
      expect(hex(merkleRoot(size, stored))).toBe(hex(merkleRoot(size, memory)));
      for (let index = 0; index < size; index += 1) {
        expect(inclusionProof(index, size, stored).map(hex)).toEqual(inclusionProof(index, size, memory).map(hex));
      }
      for (let first = 1; first <= size; first += 1) {
        expect(consistencyProof(first, size, stored).map(hex)).toEqual(consistencyProof(first, size, memory).map(hex));
      }
    }
    expect(size).toBe(37);
  });

  it('reads O(log n) stored nodes for a proof', () => {
    const read = perfectNodesRead((h) => inclusionProof(1_000_000, 5_000_001, h));
    expect(read.length).toBeLessThanOrEqual(2 * 23);
  });
});
