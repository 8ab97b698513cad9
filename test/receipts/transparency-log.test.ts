// The transparency log on real Postgres: dense per-tenant leaf indexes inside the caller's transaction, rollback
// leaves no leaf, the tree-head pass signs one head per grown tenant, and stored proofs verify against the head.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring, GatewayKeyring } from '../../src/infra/gateway-keys.ts';
import {
  appendLeaf,
  checkConsistency,
  checkInclusionProofDocument,
  inclusionProofOf,
  latestTreeHead,
  leafAt,
  publishTreeHeads,
  readConsistencyProof,
  readInclusionProof,
  treeHeadRootHex,
  type SignedTreeHead,
} from '../../src/receipts/transparency-log.ts';
import { createTenant } from '../../src/services/tenant-service.ts';
import { signArtifact, verifyArtifact } from '../../src/signing/artifacts.ts';
import { sha256 } from '../../src/signing/digests.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { consistencyProof, leafArrayHasher, logLeafData, merkleLeafHash, merkleRoot, verifyConsistency, verifyInclusion } from '../../src/signing/merkle.ts';
import { verifyClientInclusionProof, verifyClientTreeHead } from '../helpers/client-verifier.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let testDatabase: TestDatabase;
let database: Database;
const keyring = ephemeralKeyring();
const tenantA = 'log-tenant-a';
const tenantB = 'log-tenant-b';
const tenantOld = 'log-tenant-old';

const leafBytes = (n: number) => new Uint8Array(Buffer.from(`{"receipt":${n}}`));
const leafOf = (n: number) => ({ kind: 'svc.protocol_settlement_receipt_v1', artifactId: `r-${n}`, canonicalBytes: leafBytes(n), artifact: { receipt: n } });
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const unhex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database(testDatabase.connection);
  await createTenant(database, tenantA, 'sandbox');
  await createTenant(database, tenantB, 'sandbox');
  await createTenant(database, tenantOld, 'sandbox');
});

afterAll(async () => {
  await database?.close();
  await testDatabase?.drop();
});

describe('appendLeaf', () => {
  it('gives each tenant dense indexes from 0, and a rolled-back append leaves no gap', async () => {
    expect(await database.tenant(tenantA, (tx) => appendLeaf(tx, tenantA, leafOf(0)))).toEqual({ leafIndex: 0 });
    expect(await database.tenant(tenantB, (tx) => appendLeaf(tx, tenantB, leafOf(100)))).toEqual({ leafIndex: 0 });
    await expect(
      database.tenant(tenantA, async (tx) => {
        await appendLeaf(tx, tenantA, leafOf(999));
        throw new Error('the receipt failed');
      }),
    ).rejects.toThrow('the receipt failed');
    expect(await database.tenant(tenantA, (tx) => appendLeaf(tx, tenantA, leafOf(1)))).toEqual({ leafIndex: 1 });
  });

  it('serializes concurrent appends of one tenant into dense indexes', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => database.tenant(tenantA, (tx) => appendLeaf(tx, tenantA, leafOf(2 + i)))),
    );
    expect(results.map((result) => result.leafIndex).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses another tenant through row-level security', async () => {
    await expect(database.tenant(tenantA, (tx) => appendLeaf(tx, tenantB, leafOf(5)))).rejects.toThrow(/row-level security/);
  });

  it('keeps leaves append-only', async () => {
    // As the owning superuser, past row-level security and grants: only the trigger stands in the way.
    const owner = new pg.Client(testDatabase.connection);
    await owner.connect();
    try {
      await expect(owner.query(`UPDATE transparency_log_leaves SET kind = 'x' WHERE tenant_id = $1`, [tenantA])).rejects.toThrow(/append-only/);
      await expect(owner.query(`DELETE FROM transparency_log_leaves WHERE tenant_id = $1`, [tenantA])).rejects.toThrow(/append-only/);
      await expect(owner.query(`UPDATE transparency_log_heads SET tree_size = 1 WHERE tenant_id = $1`, [tenantA])).rejects.toThrow(/forward/);
    } finally {
      await owner.end();
    }
  });
});

describe('tree heads and proofs', () => {
  it('has no inclusion proof before the first pass', async () => {
    expect(await database.tenant(tenantA, (tx) => inclusionProofOf(tx, tenantA, 0, 'r-0'))).toBeNull();
  });

  it('signs one head per grown tenant, and proofs verify against it', async () => {
    const report = await publishTreeHeads(database, keyring, new Date('2026-11-25T04:00:00Z'));
    expect(report).toEqual({ ran: true, heads: 2 });
    expect(await publishTreeHeads(database, keyring)).toEqual({ ran: true, heads: 0 });

    const head = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    expect(head).toMatchObject({ kind: 'svc.agent_receipt_transparency_sth_v1', tree_size: 10, issued_at: '2026-11-25T04:00:00Z' });
    expect(verifyArtifact(head, { trustedPublicKeys: [keyring.active.publicKeyHex] }).kind).toBe('svc.agent_receipt_transparency_sth_v1');
    verifyClientTreeHead(head, [keyring.active.publicKeyHex]);
    const { rows } = await database.system((tx) => tx.query('SELECT key_id FROM transparency_tree_heads WHERE tenant_id = $1', [tenantA]));
    expect(rows).toEqual([{ key_id: keyring.active.kid }]);

    const root = unhex(treeHeadRootHex(head));
    const leaves = await database.tenant(tenantA, async (tx) => Promise.all(Array.from({ length: 10 }, (_, i) => leafAt(tx, tenantA, i))));
    // The rolled-back receipt 999 never made it; the concurrent ones came in some order.
    expect(leaves.map((leaf) => leaf!.artifactId).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r-${i}`).sort());
    // A leaf appended now hashes the SHA-256 of the canonical bytes (the message digest), not the bytes.
    expect(leaves.every((leaf) => leaf!.leafFormat === 2)).toBe(true);
    const leafHashes = leaves.map((leaf) => merkleLeafHash(sha256(leaf!.canonicalBytes)));
    expect(hex(merkleRoot(10, leafArrayHasher(leafHashes)))).toBe(treeHeadRootHex(head));
    for (let i = 0; i < 10; i += 1) {
      const proof = (await database.tenant(tenantA, (tx) => inclusionProofOf(tx, tenantA, i, leaves[i]!.artifactId)))!;
      expect(proof).toMatchObject({ kind: 'svc.agent_receipt_transparency_inclusion_proof_v1', leaf_index: i, tree_size: 10, tree_head: head });
      verifyClientInclusionProof(proof, [keyring.active.publicKeyHex]);
      expect(verifyInclusion(i, 10, leafHashes[i]!, proof.audit_path_sha256_hex.map(unhex), root)).toBe(true);
      expect(verifyInclusion(i, 10, leafHashes[(i + 1) % 10]!, proof.audit_path_sha256_hex.map(unhex), root)).toBe(false);
    }
  });

  it('grows in later passes, consistent with earlier heads', async () => {
    const first = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    for (let i = 10; i < 23; i += 1) await database.tenant(tenantA, (tx) => appendLeaf(tx, tenantA, leafOf(i)));
    expect(await publishTreeHeads(database, keyring)).toEqual({ ran: true, heads: 1 });
    const second = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    expect(second.tree_size).toBe(23);
    const proof = await database.tenant(tenantA, (tx) => readConsistencyProof(tx, tenantA, first.tree_size, second.tree_size));
    expect(verifyConsistency(10, 23, unhex(treeHeadRootHex(first)), unhex(treeHeadRootHex(second)), proof.map(unhex))).toBe(true);
    // Every earlier size is consistent with the latest, and every leaf is included at every size.
    const leaves = await database.tenant(tenantA, async (tx) => Promise.all(Array.from({ length: 23 }, (_, i) => leafAt(tx, tenantA, i))));
    const hasher = leafArrayHasher(leaves.map((leaf) => merkleLeafHash(sha256(leaf!.canonicalBytes))));
    const root = unhex(treeHeadRootHex(second));
    expect(hex(merkleRoot(23, hasher))).toBe(treeHeadRootHex(second));
    for (let size = 1; size <= 23; size += 1) {
      const rootAtSize = merkleRoot(size, hasher);
      const stored = await database.tenant(tenantA, (tx) => readConsistencyProof(tx, tenantA, size, 23));
      expect(stored).toEqual(consistencyProof(size, 23, hasher).map(hex));
      expect(verifyConsistency(size, 23, rootAtSize, root, stored.map(unhex))).toBe(true);
      for (let index = 0; index < size; index += 1) {
        const path = await database.tenant(tenantA, (tx) => readInclusionProof(tx, tenantA, index, size));
        expect(verifyInclusion(index, size, hasher(index, index + 1), path.map(unhex), rootAtSize)).toBe(true);
      }
    }
  });

  it('lets one replica run a pass at a time', async () => {
    await database.tenant(tenantB, (tx) => appendLeaf(tx, tenantB, leafOf(101)));
    const reports = await Promise.all([publishTreeHeads(database, keyring), publishTreeHeads(database, keyring)]);
    expect(reports.filter((report) => report.ran && report.heads === 1)).toHaveLength(1);
  });
});

describe('a log begun before the leaf format changed', () => {
  // What the service wrote before: leaves of the canonical bytes (format 1, the column's default, as the old append
  // statement never named it) under heads of the earlier kind, signed by the pass of then.
  const legacyKeyring = new GatewayKeyring({ keys: [{ kid: 'gk-before', seed_hex: '5a'.repeat(32), status: 'active', created_at: '2026-11-01T00:00:00Z' }] });
  const oldLeaf = (n: number) => ({ kind: 'svc.protocol_settlement_receipt_v1', artifactId: `old-${n}`, canonicalBytes: leafBytes(1000 + n), artifact: { receipt: 1000 + n } });

  async function appendAsBefore(n: number): Promise<void> {
    const leaf = oldLeaf(n);
    await database.tenant(tenantOld, (tx) => tx.query(
      `WITH head AS (INSERT INTO transparency_log_heads AS h (tenant_id, tree_size) VALUES ($1, 1)
                     ON CONFLICT (tenant_id) DO UPDATE SET tree_size = h.tree_size + 1 RETURNING h.tree_size - 1 AS leaf_index)
       INSERT INTO transparency_log_leaves (tenant_id, leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact)
       SELECT $1, leaf_index, $2, $3, $4, $5, $6::jsonb FROM head`,
      [tenantOld, leaf.kind, leaf.artifactId, Buffer.from(leaf.canonicalBytes), Buffer.from(merkleLeafHash(leaf.canonicalBytes)), JSON.stringify(leaf.artifact)],
    ));
  }

  it('goes on as one tree: old heads stay true, the new head extends them, and each leaf is proven by its format', async () => {
    for (let n = 0; n < 5; n += 1) await appendAsBefore(n);
    // The old pass: the subtrees of 5 leaves, then one head of the earlier kind.
    expect(await publishTreeHeads(database, legacyKeyring)).toEqual({ ran: true, heads: 1 });
    const signed = (await database.tenant(tenantOld, (tx) => latestTreeHead(tx, tenantOld)))!;
    const oldRootHex = treeHeadRootHex(signed);
    const legacyHead = signArtifact('svc.transparency_tree_head_v1', {
      tenant_id: tenantOld, tree_size: 5, root_hash: oldRootHex, issued_at: '2026-11-01T12:00:00Z', key_id: 'gk-before',
    }, ed25519SignerFromSeed(Buffer.from('5a'.repeat(32), 'hex'))) as unknown as SignedTreeHead;
    const oldLeafHashes = Array.from({ length: 5 }, (_, n) => merkleLeafHash(oldLeaf(n).canonicalBytes));
    expect(hex(merkleRoot(5, leafArrayHasher(oldLeafHashes)))).toBe(oldRootHex);

    // After the change: new leaves hash the digest, and the pass signs a head of the client's kind over all of them.
    for (let n = 5; n < 12; n += 1) await database.tenant(tenantOld, (tx) => appendLeaf(tx, tenantOld, leafOf(n)));
    expect(await publishTreeHeads(database, keyring)).toEqual({ ran: true, heads: 1 });
    const head = (await database.tenant(tenantOld, (tx) => latestTreeHead(tx, tenantOld)))!;
    expect(head).toMatchObject({ kind: 'svc.agent_receipt_transparency_sth_v1', tree_size: 12 });
    const leaves = await database.tenant(tenantOld, async (tx) => Promise.all(Array.from({ length: 12 }, (_, i) => leafAt(tx, tenantOld, i))));
    expect(leaves.map((leaf) => leaf!.leafFormat)).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2]);
    const allHashes = leaves.map((leaf) => merkleLeafHash(logLeafData(leaf!.leafFormat, leaf!.canonicalBytes)));
    expect(hex(merkleRoot(12, leafArrayHasher(allHashes)))).toBe(treeHeadRootHex(head));

    // The head of before and the head of now are one tree: the consistency proof across the change holds.
    const proof = await database.tenant(tenantOld, (tx) => readConsistencyProof(tx, tenantOld, 5, 12));
    expect(checkConsistency(legacyHead, head, proof)).toBeNull();
    expect(checkConsistency(legacyHead, head, await database.tenant(tenantOld, (tx) => readConsistencyProof(tx, tenantOld, 4, 12)))).not.toBeNull();

    // An old leaf is proven as the kind of before (its leaf is the canonical bytes); a new one in the client's kind.
    const old = (await database.tenant(tenantOld, (tx) => inclusionProofOf(tx, tenantOld, 2, 'old-2')))!;
    expect(old.kind).toBe('svc.transparency_inclusion_proof_v1');
    expect(checkInclusionProofDocument(old, { receipt_id: 'old-2', tenant_id: tenantOld }, oldLeaf(2).canonicalBytes)).toBeNull();
    expect(() => verifyClientInclusionProof(old)).toThrow(/kind must be/);
    const recent = (await database.tenant(tenantOld, (tx) => inclusionProofOf(tx, tenantOld, 7, 'r-7')))!;
    expect(recent.kind).toBe('svc.agent_receipt_transparency_inclusion_proof_v1');
    verifyClientInclusionProof(recent, [keyring.active.publicKeyHex]);
    expect(checkInclusionProofDocument(recent, { receipt_id: 'r-7', tenant_id: tenantOld }, leafBytes(7))).toBeNull();
    // A proof of one format does not pass for the other.
    expect(checkInclusionProofDocument({ ...old, kind: 'svc.agent_receipt_transparency_inclusion_proof_v1' }, { receipt_id: 'old-2', tenant_id: tenantOld }, oldLeaf(2).canonicalBytes)).toMatch(/leaf hash/);
  });

  it('keeps a leaf\'s hash bound to its format by the table', async () => {
    const leaf = oldLeaf(99);
    await expect(database.tenant(tenantOld, (tx) => tx.query(
      `WITH head AS (UPDATE transparency_log_heads SET tree_size = tree_size + 1 WHERE tenant_id = $1 RETURNING tree_size - 1 AS leaf_index)
       INSERT INTO transparency_log_leaves (tenant_id, leaf_index, kind, artifact_id, canonical_bytes, leaf_hash, artifact, leaf_format)
       SELECT $1, leaf_index, $2, $3, $4, $5, '{}'::jsonb, 2 FROM head`,
      [tenantOld, leaf.kind, leaf.artifactId, Buffer.from(leaf.canonicalBytes), Buffer.from(merkleLeafHash(leaf.canonicalBytes))],
    ))).rejects.toThrow(/transparency_log_leaves_leaf_hash_check/);
  });
});

describe('the tree-head timer', () => {
  it('signs a head for new leaves within 5 s in a running app', async () => {
    const { createFastify } = await import('../../src/server-options.ts');
    const { createLogger } = await import('../../src/infra/logging.ts');
    const { app } = await import('../../src/app.ts');
    const instance = createFastify(createLogger('silent'));
    await instance.register(app, { connection: testDatabase.connection, gatewayKeys: keyring, maintenance: true, validateResponses: true });
    await instance.ready();
    try {
      const before = (await database.tenant(tenantB, (tx) => latestTreeHead(tx, tenantB)))?.tree_size ?? 0;
      const { leafIndex } = await database.tenant(tenantB, (tx) => appendLeaf(tx, tenantB, leafOf(200)));
      const appendedAt = Date.now();
      let head = await database.tenant(tenantB, (tx) => latestTreeHead(tx, tenantB));
      while ((head?.tree_size ?? 0) <= leafIndex && Date.now() - appendedAt < 5_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        head = await database.tenant(tenantB, (tx) => latestTreeHead(tx, tenantB));
      }
      expect(head!.tree_size).toBe(leafIndex + 1);
      expect(head!.tree_size).toBeGreaterThan(before);
    } finally {
      await instance.close();
    }
  });
});
