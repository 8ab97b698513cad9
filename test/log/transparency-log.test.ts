// The transparency log on real Postgres: dense per-tenant leaf indexes inside the caller's transaction, rollback
// leaves no leaf, the tree-head pass signs one head per grown tenant, and stored proofs verify against the head.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import {
  appendLeaf,
  latestTreeHead,
  leafAt,
  logPositionOf,
  publishTreeHeads,
  readConsistencyProof,
  readInclusionProof,
} from '../../src/services/transparency-log.ts';
import { createTenant } from '../../src/services/tenant-service.ts';
import { verifyArtifact } from '../../src/signing/artifacts.ts';
import { consistencyProof, leafArrayHasher, merkleLeafHash, merkleRoot, verifyConsistency, verifyInclusion } from '../../src/signing/merkle.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let testDatabase: TestDatabase;
let database: Database;
const keyring = ephemeralKeyring();
const tenantA = 'log-tenant-a';
const tenantB = 'log-tenant-b';

const leafBytes = (n: number) => new Uint8Array(Buffer.from(`{"receipt":${n}}`));
const leafOf = (n: number) => ({ kind: 'svc.protocol_settlement_receipt_v1', artifactId: `r-${n}`, canonicalBytes: leafBytes(n), artifact: { receipt: n } });
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const unhex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database(testDatabase.connection);
  await createTenant(database, tenantA, 'sandbox');
  await createTenant(database, tenantB, 'sandbox');
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
  it('reports no head before the first pass', async () => {
    expect(await database.tenant(tenantA, (tx) => logPositionOf(tx, tenantA, 0))).toEqual({ leaf_index: 0, tree_head: null, inclusion_proof: null });
  });

  it('signs one head per grown tenant, and proofs verify against it', async () => {
    const report = await publishTreeHeads(database, keyring, new Date('2026-11-25T04:00:00Z'));
    expect(report).toEqual({ ran: true, heads: 2 });
    expect(await publishTreeHeads(database, keyring)).toEqual({ ran: true, heads: 0 });

    const head = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    expect(head.tree_size).toBe(10);
    expect(head.issued_at).toBe('2026-11-25T04:00:00Z');
    expect(head.key_id).toBe(keyring.active.kid);
    expect(verifyArtifact(head, { trustedPublicKeys: [keyring.active.publicKeyHex] }).kind).toBe('svc.transparency_tree_head_v1');

    const root = unhex(head.root_hash);
    const leaves = await database.tenant(tenantA, async (tx) => Promise.all(Array.from({ length: 10 }, (_, i) => leafAt(tx, tenantA, i))));
    // The rolled-back receipt 999 never made it; the concurrent ones came in some order.
    expect(leaves.map((leaf) => leaf!.artifactId).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r-${i}`).sort());
    const leafHashes = leaves.map((leaf) => merkleLeafHash(leaf!.canonicalBytes));
    expect(hex(merkleRoot(10, leafArrayHasher(leafHashes)))).toBe(head.root_hash);
    for (let i = 0; i < 10; i += 1) {
      const position = await database.tenant(tenantA, (tx) => logPositionOf(tx, tenantA, i));
      expect(position.tree_head).toEqual(head);
      expect(verifyInclusion(i, 10, leafHashes[i]!, position.inclusion_proof!.map(unhex), root)).toBe(true);
      expect(verifyInclusion(i, 10, leafHashes[(i + 1) % 10]!, position.inclusion_proof!.map(unhex), root)).toBe(false);
    }
  });

  it('grows in later passes, consistent with earlier heads', async () => {
    const first = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    for (let i = 10; i < 23; i += 1) await database.tenant(tenantA, (tx) => appendLeaf(tx, tenantA, leafOf(i)));
    expect(await publishTreeHeads(database, keyring)).toEqual({ ran: true, heads: 1 });
    const second = (await database.tenant(tenantA, (tx) => latestTreeHead(tx, tenantA)))!;
    expect(second.tree_size).toBe(23);
    const proof = await database.tenant(tenantA, (tx) => readConsistencyProof(tx, tenantA, first.tree_size, second.tree_size));
    expect(verifyConsistency(10, 23, unhex(first.root_hash), unhex(second.root_hash), proof.map(unhex))).toBe(true);
    // Every earlier size is consistent with the latest, and every leaf is included at every size.
    const leaves = await database.tenant(tenantA, async (tx) => Promise.all(Array.from({ length: 23 }, (_, i) => leafAt(tx, tenantA, i))));
    const hasher = leafArrayHasher(leaves.map((leaf) => merkleLeafHash(leaf!.canonicalBytes)));
    const root = unhex(second.root_hash);
    expect(hex(merkleRoot(23, hasher))).toBe(second.root_hash);
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

describe('the tree-head plugin', () => {
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
