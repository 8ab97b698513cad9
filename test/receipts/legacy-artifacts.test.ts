// What the service issued before the public client's formats (test/vectors/legacy-artifacts/: receipt reads with
// their log positions under heads of kind svc.transparency_tree_head_v1, leaves of the canonical bytes, settlement
// receipts with "" for a missing mandate, an audit bundle) still verifies with today's code: `svc receipt verify`,
// `svc audit verify`, and the receipt verify routes of a deployment holding the key that signed them. Each check is
// shown to fail on a changed copy, so it cannot pass by checking nothing.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayKeyring } from '../../src/infra/gateway-keys.ts';
import { readReceiptFile, verifyReceiptFile } from '../../src/cli/commands/receipt-verify.ts';
import { verifyAuditBundle } from '../../src/services/audit-bundle.ts';
import { trustedKeysFromJwks } from '../../src/receipts/transparency-log.ts';
import { verifyArtifact } from '../../src/signing/artifacts.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { verifyClientReceipt, verifyClientTreeHead } from '../helpers/client-verifier.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { inclusionProofHolds, independentCanonicalBytes } from '../helpers/receipts.ts';
import { projectRoot, runCli } from '../helpers/server-process.ts';

const directory = path.join(projectRoot, 'test/vectors/legacy-artifacts');
const read = (name: string) => JSON.parse(fs.readFileSync(path.join(directory, name), 'utf8')) as Record<string, unknown>;
const readAnswers = ['settlement-receipt-read.json', 'mandate-settlement-receipt-read.json', 'agent-receipt-read.json', 'action-receipt-read.json'];
const jwks = read('jwks.json');
const trusted = trustedKeysFromJwks(jwks);
const treeHead = read('tree-head.json');

describe('receipts and heads of before', () => {
  it('are of the earlier kinds: reads with log positions, heads with root_hash, "" for no mandate', () => {
    expect(treeHead).toMatchObject({ kind: 'svc.transparency_tree_head_v1', tree_size: 9 });
    const settlement = read('settlement-receipt-read.json');
    expect(settlement.receipt).toMatchObject({ authorization_receipt_id: '', mandate_digest_sha256_hex: '' });
    expect((settlement.inclusion_proof as { tree_head: { kind: string } }).tree_head.kind).toBe('svc.transparency_tree_head_v1');
    expect((read('agent-receipt-read.json').receipt as Record<string, unknown>).external_attestations).toBeNull();
  });

  it.each(readAnswers)('%s verifies in full: signature, inclusion of its leaf of the canonical bytes, the kept head', (name) => {
    const answer = read(name);
    // Independently of the service's code: its leaf is SHA-256(0x00 ‖ canonical bytes) under the head's root_hash.
    const position = answer.inclusion_proof as { leaf_index: number; tree_head: { tree_size: number; root_hash: string }; inclusion_proof: string[] };
    const bytes = independentCanonicalBytes(answer.receipt as Record<string, unknown>);
    expect(inclusionProofHolds(position.leaf_index, position.tree_head.tree_size, bytes, position.inclusion_proof, position.tree_head.root_hash)).toBe(true);

    const report = verifyReceiptFile(readReceiptFile(answer), { trustedKeysHex: trusted, treeHead });
    expect(report).toMatchObject({ ok: true, problems: [], leafIndex: position.leaf_index, treeSize: 9 });
    expect(report.checked).toEqual(expect.arrayContaining([`inclusion of leaf ${position.leaf_index} under the signed head of 9 leaves`]));

    const receipt = answer.receipt as Record<string, unknown>;
    const tampered = verifyReceiptFile(readReceiptFile({ ...answer, receipt: { ...receipt, issued_at: '2020-01-01T00:00:00Z' } }), { trustedKeysHex: trusted });
    expect(tampered.problems.join('\n')).toMatch(/artifact\.signature_invalid/);
    const otherIndex = (position.leaf_index + 1) % position.tree_head.tree_size;
    const moved = verifyReceiptFile(readReceiptFile({ ...answer, leaf_index: otherIndex, inclusion_proof: { ...position, leaf_index: otherIndex } }), { trustedKeysHex: trusted });
    expect(moved.problems.join('\n')).toMatch(/does not lead to the root/);
  });

  it('still verify with the command line (a file of before, the head kept then)', async () => {
    const result = await runCli(['receipt', 'verify', path.join(directory, 'settlement-receipt-read.json'), '--jwks', path.join(directory, 'jwks.json'),
      '--tree-head', path.join(directory, 'tree-head.json'), '--json'], {});
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, kind: 'svc.protocol_settlement_receipt_v1', leaf_index: 0, tree_size: 9 });
  });

  it('are what the public client refused, by the verifier written from its format: why the formats changed', () => {
    expect(() => verifyClientReceipt(read('settlement-receipt-read.json').receipt as Record<string, unknown>)).toThrow(/authorization_receipt_id "" is not canonical/);
    expect(() => verifyClientReceipt(read('agent-receipt-read.json').receipt as Record<string, unknown>)).toThrow(/must match an external_attestations entry of kind agent_mandate_v1/);
    expect(() => verifyClientTreeHead(treeHead)).toThrow(/kind must be svc\.agent_receipt_transparency_sth_v1/);
    // A read answer is not a receipt to the client's verifier.
    expect(() => verifyClientReceipt(read('action-receipt-read.json'))).toThrow();
    // The receipts it had no quarrel with verify there too.
    expect(verifyClientReceipt(read('action-receipt-read.json').receipt as Record<string, unknown>, trusted)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the settlement receipt with "" for its mandate, and the mandate import\'s receipt, verify by the signing core', () => {
    expect(verifyArtifact(read('settlement-receipt-read.json').receipt, { trustedPublicKeys: trusted }).kind).toBe('svc.protocol_settlement_receipt_v1');
    expect(verifyArtifact(read('mandate-import-answer.json').authorization_receipt, { trustedPublicKeys: trusted }).kind).toBe('svc.protocol_authorization_receipt_v1');
    expect(verifyArtifact(treeHead, { trustedPublicKeys: trusted }).kind).toBe('svc.transparency_tree_head_v1');
  });
});

describe('an audit bundle of before', () => {
  const zip = new Uint8Array(fs.readFileSync(path.join(directory, 'audit-bundle.zip')));

  it('verifies, leaves of the canonical bytes (no leaf_format) under a head of the earlier kind', () => {
    expect(verifyAuditBundle(zip, { publicKeyHex: trusted[0]! })).toMatchObject({ ok: true, problems: [], treeSize: 9, logLeaves: 9 });
  });

  it('verifies with svc audit verify', async () => {
    const result = await runCli(['audit', 'verify', '--bundle', path.join(directory, 'audit-bundle.zip'), '--public-key', trusted[0]!, '--json'], {});
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, tree_size: 9, log_leaves: 9 });
  });

  it('fails against another key', () => {
    expect(verifyAuditBundle(zip, { publicKeyHex: 'ab'.repeat(32) }).ok).toBe(false);
  });
});

describe('the verify routes of the deployment that signed them', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let tenant: TestTenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    // The key that signed the fixtures, still this deployment's active key.
    const keyring = new GatewayKeyring({ keys: [{ kid: 'gk-legacy', seed_hex: '5a'.repeat(32), status: 'active', created_at: '2026-11-20T00:00:00Z' }] });
    app = await buildTestApp(database.connection, { gatewayKeys: keyring });
    tenant = await createTestTenant(database.connection, 'sandbox', 'legacy-tenant');
  });

  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it('answer valid for each receipt of before, and invalid for a changed one', async () => {
    for (const name of readAnswers) {
      const receipt = read(name).receipt as Record<string, unknown>;
      const route = receipt.kind === 'svc.agent_receipt_v1' ? 'agent-receipts' : 'receipts';
      const verify = (wire: unknown) => app.inject({ method: 'POST', url: `/protocol/v2/${route}/verify`, headers: bearer(tenant.adminKey), payload: { receipt: wire } });
      expect((await verify(receipt)).json(), name).toMatchObject({ valid: true, kind: receipt.kind, receipt_id: receipt.receipt_id });
      expect((await verify({ ...receipt, tenant_id: 'legacy-tenant-2' })).json(), name).toMatchObject({ valid: false, code: 'artifact.signature_invalid' });
    }
  });
});
