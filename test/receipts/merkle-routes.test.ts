// The transparency log over HTTP on real Postgres: the merkle routes (heads, proofs, refusals with their codes,
// roles, another tenant's 404), tree heads checked independently (@noble/ed25519 over bytes written here, and the
// client-format verifier), and `svc receipt verify` on files saved from the routes: it passes honest ones and names
// what is wrong with others.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as noble from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayKeyring, ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { appendLeaf, inclusionProofOf, publishTreeHeads, signTreeHead } from '../../src/receipts/transparency-log.ts';
import { canonicalArtifactBytes, signArtifact } from '../../src/signing/artifacts.ts';
import { sha256 } from '../../src/signing/digests.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { merkleLeafHash, verifyConsistency, verifyInclusion } from '../../src/signing/merkle.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { verifyClientTreeHead } from '../helpers/client-verifier.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/server-process.ts';

noble.hashes.sha512 = sha512;
const seed = new Uint8Array(32).fill(0x2a);
const keyring = new GatewayKeyring({ keys: [{ kid: 'gk-log-test', seed_hex: Buffer.from(seed).toString('hex'), status: 'active', created_at: '2026-11-25T00:00:00Z' }] });
const gatewaySigner = ed25519SignerFromSeed(seed);

let database: TestDatabase;
let app: FastifyInstance;
let a: TestTenant;
let b: TestTenant;
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-log-'));
const unhex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

/** A settlement receipt signed by the gateway key, as the protocol service issues them. */
function settlementReceipt(tenantId: string, n: number): Record<string, unknown> {
  const intentId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return signArtifact('svc.protocol_settlement_receipt_v1', {
    receipt_id: intentId, issued_at: '2026-11-25T04:00:00Z', intent_id: intentId, tenant_id: tenantId, verifier_id: 'svc-gateway',
    transport_binding: { source_protocol: 'ap2' }, authorization_receipt_id: 'auth-1', mandate_digest_sha256_hex: 'cd'.repeat(32),
    harbor_state: 'released', predicate_passed: true, settlement_rail: 'x402_usdc_base', settlement_mode: 'simulated',
    principal_did: 'did:principal:1', payee_did: 'did:payee:1', currency: 'usd', amount_cents: 100 + n, terminal_observed_at: '2026-11-25T04:00:00Z',
  }, gatewaySigner);
}

/** The canonical bytes of a signed artifact: its wire without the material fields. */
function leafBytesOf(wire: Record<string, unknown>): Uint8Array {
  const { signing_algorithm: _a, message_digest_sha256_hex: _d, signing_public_key_ed25519_hex: _k, ed25519_signature_hex: _s, ...body } = wire;
  return canonicalArtifactBytes(body);
}

const receipts: Record<string, unknown>[] = [];
async function issue(tenant: TestTenant, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const wire = settlementReceipt(tenant.tenantId, receipts.length);
    receipts.push(wire);
    await app.database.tenant(tenant.tenantId, (tx) =>
      appendLeaf(tx, tenant.tenantId, { kind: wire.kind as string, artifactId: wire.receipt_id as string, canonicalBytes: leafBytesOf(wire), artifact: wire }),
    );
  }
}

const get = (tenantKey: string, url: string) => app.inject({ method: 'GET', url, headers: bearer(tenantKey) });

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { gatewayKeys: keyring });
  a = await createTestTenant(database.connection);
  b = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('merkle routes', () => {
  it('answers 404 merkle.tree_head_missing before the first head', async () => {
    const response = await get(a.adminKey, '/harbor/ledger/v1/merkle/latest');
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('merkle.tree_head_missing');
  });

  it('serves the latest signed head, which verifies independently', async () => {
    await issue(a, 5);
    await publishTreeHeads(app.database, keyring, new Date('2026-11-25T04:00:07Z'));
    const response = await get(a.adminKey, '/harbor/ledger/v1/merkle/latest');
    const head = response.json();
    expect(head).toMatchObject({ kind: 'svc.agent_receipt_transparency_sth_v1', schema_version: 1, tenant_id: a.tenantId, tree_size: 5, issued_at: '2026-11-25T04:00:07Z' });
    // Served in the signed order, and the signed bytes, written here in the documented field order.
    expect(response.body.startsWith('{"kind":"svc.agent_receipt_transparency_sth_v1","schema_version":1,')).toBe(true);
    const bytes = new TextEncoder().encode(
      `{"kind":"svc.agent_receipt_transparency_sth_v1","schema_version":1,"tenant_id":"${a.tenantId}","tree_size":5,"root_hash_sha256_hex":"${head.root_hash_sha256_hex}","issued_at":"2026-11-25T04:00:07Z","signing_algorithm":"ed25519-sha256-json-v1"}`,
    );
    const digest = nobleSha256(bytes);
    expect(Buffer.from(digest).toString('hex')).toBe(head.message_digest_sha256_hex);
    expect(head.signing_public_key_ed25519_hex).toBe(keyring.active.publicKeyHex);
    expect(noble.verify(unhex(head.ed25519_signature_hex), digest, unhex(keyring.active.publicKeyHex))).toBe(true);
    verifyClientTreeHead(head, [keyring.active.publicKeyHex]);
    // The root is RFC 6962's over leaves of the receipts' message digests (SHA-256 of their canonical bytes).
    const leafHashes = receipts.map((wire) => merkleLeafHash(sha256(leafBytesOf(wire))));
    const auditor = await a.key('auditor');
    for (let index = 0; index < 5; index += 1) {
      const proof = (await get(auditor, `/harbor/ledger/v1/merkle/proof?leaf_index=${index}`)).json();
      expect(proof).toMatchObject({ tenant_id: a.tenantId, leaf_index: index, tree_size: 5, kind: 'svc.protocol_settlement_receipt_v1', leaf_format: 2, tree_head: head });
      expect(proof.leaf_hash).toBe(Buffer.from(leafHashes[index]!).toString('hex'));
      expect(verifyInclusion(index, 5, leafHashes[index]!, proof.inclusion_proof.map(unhex), unhex(head.root_hash_sha256_hex))).toBe(true);
    }
  });

  it('fixes the field order of both tree head kinds to known bytes', () => {
    const bytes = canonicalArtifactBytes({
      kind: 'svc.agent_receipt_transparency_sth_v1', schema_version: 1, tenant_id: 't1', tree_size: 3, root_hash_sha256_hex: '00'.repeat(32), issued_at: '2026-01-01T00:00:00Z',
      signing_algorithm: 'ed25519-sha256-json-v1',
    });
    expect(new TextDecoder().decode(bytes)).toBe(
      `{"kind":"svc.agent_receipt_transparency_sth_v1","schema_version":1,"tenant_id":"t1","tree_size":3,"root_hash_sha256_hex":"${'00'.repeat(32)}","issued_at":"2026-01-01T00:00:00Z","signing_algorithm":"ed25519-sha256-json-v1"}`,
    );
    // The heads signed before the change keep their own bytes.
    const legacy = canonicalArtifactBytes({
      schema_version: 1, kind: 'svc.transparency_tree_head_v1', tenant_id: 't1', tree_size: 3, root_hash: '00'.repeat(32), issued_at: '2026-01-01T00:00:00Z', key_id: 'k1',
    });
    expect(new TextDecoder().decode(legacy)).toBe(
      `{"schema_version":1,"kind":"svc.transparency_tree_head_v1","tenant_id":"t1","tree_size":3,"root_hash":"${'00'.repeat(32)}","issued_at":"2026-01-01T00:00:00Z","key_id":"k1"}`,
    );
  });

  it('proves consistency between heads, and proofs against an older size', async () => {
    const first = (await get(a.adminKey, '/harbor/ledger/v1/merkle/latest')).json();
    await issue(a, 6);
    await publishTreeHeads(app.database, keyring, new Date('2026-11-25T04:00:12Z'));
    const second = (await get(a.adminKey, '/harbor/ledger/v1/merkle/latest')).json();
    expect(second.tree_size).toBe(11);
    const consistency = (await get(a.adminKey, '/harbor/ledger/v1/merkle/consistency?first=5&second=11')).json();
    expect(consistency).toMatchObject({ tenant_id: a.tenantId, first: 5, second: 11, first_tree_head: first, second_tree_head: second });
    expect(verifyConsistency(5, 11, unhex(first.root_hash_sha256_hex), unhex(second.root_hash_sha256_hex), consistency.consistency_proof.map(unhex))).toBe(true);
    // second defaults to the latest head; a proof at an older head's size comes with that head.
    expect((await get(a.adminKey, '/harbor/ledger/v1/merkle/consistency?first=5')).json().consistency_proof).toEqual(consistency.consistency_proof);
    const older = (await get(a.adminKey, '/harbor/ledger/v1/merkle/proof?leaf_index=2&tree_size=5')).json();
    expect(older.tree_head).toEqual(first);
    expect(verifyInclusion(2, 5, merkleLeafHash(sha256(leafBytesOf(receipts[2]!))), older.inclusion_proof.map(unhex), unhex(first.root_hash_sha256_hex))).toBe(true);
    // A size no head was signed at is still provable; it just has no head of its own.
    expect((await get(a.adminKey, '/harbor/ledger/v1/merkle/proof?leaf_index=2&tree_size=7')).json().tree_head).toBeNull();
  });

  it.each([
    ['/harbor/ledger/v1/merkle/proof', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=abc', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=-1', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=01', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=1&tree_size=0', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=99999999999999999', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=11', 422, 'merkle.leaf_out_of_range'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=6&tree_size=5', 422, 'merkle.leaf_out_of_range'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=0&tree_size=12', 422, 'merkle.tree_size_out_of_range'],
    ['/harbor/ledger/v1/merkle/proof?leaf_index=0&other=1', 400, 'request.invalid'],
    ['/harbor/ledger/v1/merkle/consistency', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/consistency?first=0', 400, 'merkle.parameter_invalid'],
    ['/harbor/ledger/v1/merkle/consistency?first=6&second=5', 422, 'merkle.consistency_range_invalid'],
    ['/harbor/ledger/v1/merkle/consistency?first=1&second=12', 422, 'merkle.tree_size_out_of_range'],
  ])('GET %s → %i %s', async (url, status, code) => {
    const response = await get(a.adminKey, url);
    expect(response.statusCode, response.body).toBe(status);
    expect(response.json().error.code).toBe(code);
  });

  it('lets operators and auditors read, refuses agents, and gives another tenant 404', async () => {
    const urls = ['/harbor/ledger/v1/merkle/latest', '/harbor/ledger/v1/merkle/proof?leaf_index=0', '/harbor/ledger/v1/merkle/consistency?first=1'];
    const [operator, agent] = [await a.key('operator'), await a.key('agent')];
    for (const url of urls) {
      expect((await get(operator, url)).statusCode).toBe(200);
      expect((await get(agent, url)).statusCode).toBe(403);
      const foreign = await get(b.adminKey, url);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).not.toContain(a.tenantId);
    }
  });
});

describe('svc receipt verify', () => {
  const write = (name: string, value: unknown) => {
    const file = path.join(directory, name);
    fs.writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it('passes an honest receipt, and names the problem in a tampered one, a foreign key and a rewritten log', async () => {
    const jwks = write('jwks.json', (await app.inject({ url: '/.well-known/jwks.json' })).json());
    // A receipt as the read routes answer it (the signed receipt itself), and its inclusion proof beside it.
    const proof = (await app.database.tenant(a.tenantId, (tx) => inclusionProofOf(tx, a.tenantId, 3, receipts[3]!.receipt_id as string)))!;
    const honest = write('receipt.json', receipts[3]);
    const proofFile = write('proof.json', proof);
    const latest = write('latest.json', (await get(a.adminKey, '/harbor/ledger/v1/merkle/latest')).json());
    // Without the proof, only the signature; with it, the inclusion too. The receipt's head is the latest (11).
    const bare = await runCli(['receipt', 'verify', honest, '--jwks', jwks, '--json'], {});
    expect(JSON.parse(bare.stdout)).toMatchObject({ ok: true, leaf_index: null, checked: ['signature, by a published key', expect.stringContaining('--inclusion-proof')] });
    const ok = await runCli(['receipt', 'verify', honest, '--inclusion-proof', proofFile, '--jwks', jwks, '--tree-head', latest, '--json'], {});
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, keys_pinned: true, leaf_index: 3, tree_size: 11, problems: [] });

    // Against an older head: needs the consistency proof, and passes with it.
    const olderHead = (await get(a.adminKey, '/harbor/ledger/v1/merkle/proof?leaf_index=0&tree_size=5')).json().tree_head;
    const older = write('older.json', olderHead);
    const consistency = write('consistency.json', (await get(a.adminKey, '/harbor/ledger/v1/merkle/consistency?first=5&second=11')).json());
    const withConsistency = await runCli(['receipt', 'verify', honest, '--inclusion-proof', proofFile, '--jwks', jwks, '--tree-head', older, '--consistency', consistency, '--json'], {});
    expect(withConsistency.code, withConsistency.stdout).toBe(0);

    // A tampered amount, a wrong leaf index, an untrusted key set, a rewritten history: each exits 1 with its reason.
    const tampered = write('tampered.json', { ...receipts[3], amount_cents: 99_999 });
    const moved = write('moved.json', { ...proof, leaf_index: 4 });
    const otherReceipt = write('other-proof.json', { ...proof, receipt_id: receipts[4]!.receipt_id });
    const otherJwks = write('other-jwks.json', ephemeralKeyring().jwks());
    const forged = signTreeHead(keyring, { tenantId: a.tenantId, treeSize: 5, rootHash: new Uint8Array(32).fill(9), issuedAt: new Date() });
    const rewritten = write('rewritten.json', forged);
    const cases: Array<[string[], RegExp]> = [
      [[tampered, '--jwks', jwks], /artifact\.signature_invalid/],
      [[honest, '--inclusion-proof', moved, '--jwks', jwks], /inclusion proof of leaf 4 does not lead to the root/],
      [[honest, '--inclusion-proof', otherReceipt, '--jwks', jwks], /the inclusion proof is about receipt/],
      [[honest, '--jwks', otherJwks], /artifact\.key_untrusted/],
      [[honest, '--inclusion-proof', proofFile, '--jwks', jwks, '--tree-head', rewritten, '--consistency', consistency], /does not extend the tree of 5 leaves: the log was rewritten/],
    ];
    // --server fetches the same keys from the running deployment.
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const served = await runCli(['receipt', 'verify', honest, '--inclusion-proof', proofFile, '--server', address, '--json'], {});
    expect(served.code, served.stdout + served.stderr).toBe(0);
    expect(JSON.parse(served.stdout)).toMatchObject({ ok: true, keys_pinned: true });
    for (const [args, reason] of cases) {
      const result = await runCli(['receipt', 'verify', ...args], {});
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toMatch(reason);
    }
  }, 150_000); // Ten CLI processes, a few seconds each on a busy machine.
});
