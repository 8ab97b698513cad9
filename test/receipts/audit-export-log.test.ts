// Audit exports carry the transparency log: the bundle holds the latest signed tree head (a pass runs first, so it
// covers the window) and the window's receipts with their inclusion proofs; `verifyAuditBundle` (the code behind
// `svc audit verify`) checks them, and names a wrong proof, a foreign head or a tampered receipt in a bundle whose
// manifest is genuinely signed.
import type { FastifyInstance } from 'fastify';
import { strFromU8, strToU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayKeyring, ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { auditBundlePaths, buildAuditBundle, verifyAuditBundle } from '../../src/services/audit-bundle.ts';
import { appendLeaf, signTreeHead } from '../../src/receipts/transparency-log.ts';
import { canonicalArtifactBytes, signArtifact } from '../../src/signing/artifacts.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { verifyClientTreeHead } from '../helpers/client-verifier.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const seed = new Uint8Array(32).fill(0x33);
const keyring = new GatewayKeyring({ keys: [{ kid: 'gk-export-test', seed_hex: Buffer.from(seed).toString('hex'), status: 'active', created_at: '2026-11-25T00:00:00Z' }] });
const signer = ed25519SignerFromSeed(seed);

let database: TestDatabase;
let app: FastifyInstance;
let a: TestTenant;
const intentIds = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000c'];

function receipt(tenantId: string, intentId: string): Record<string, unknown> {
  return signArtifact('svc.protocol_settlement_receipt_v1', {
    receipt_id: intentId, issued_at: '2026-11-25T04:00:00Z', intent_id: intentId, tenant_id: tenantId, verifier_id: 'svc-gateway',
    transport_binding: { source_protocol: 'ap2' }, authorization_receipt_id: 'auth-1', mandate_digest_sha256_hex: 'cd'.repeat(32),
    harbor_state: 'refunded', predicate_passed: false, settlement_rail: 'x402_usdc_base', settlement_mode: 'simulated',
    principal_did: 'did:principal:1', payee_did: 'did:payee:1', currency: 'usd', amount_cents: 250, terminal_observed_at: '2026-11-25T04:00:00Z',
  }, signer);
}

function leafBytesOf(wire: Record<string, unknown>): Uint8Array {
  const { signing_algorithm: _a, message_digest_sha256_hex: _d, signing_public_key_ed25519_hex: _k, ed25519_signature_hex: _s, ...body } = wire;
  return canonicalArtifactBytes(body);
}

async function exportBundle(payload: object): Promise<Uint8Array> {
  const created = await app.inject({ method: 'POST', url: '/v1/compliance/audit-exports', headers: bearer(a.adminKey), payload });
  expect(created.statusCode, created.body).toBe(201);
  const job = created.json();
  const read = (await app.inject({ url: `/v1/compliance/audit-exports/${job.job_id}`, headers: bearer(a.adminKey) })).json();
  // The read answers with its own download credential (the create's works too).
  const response = await app.inject({ method: 'POST', url: `/v1/compliance/audit-exports/${job.job_id}/bundle`, headers: bearer(read.download_token) });
  expect(response.statusCode).toBe(200);
  return new Uint8Array(response.rawPayload);
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { gatewayKeys: keyring });
  a = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('audit exports with the transparency log', () => {
  it('exports a null head and no leaves for a tenant without a log, and verifies', async () => {
    const zip = await exportBundle({});
    const entries = unzipSync(zip);
    expect(strFromU8(entries[auditBundlePaths.treeHead]!).trim()).toBe('null');
    expect(strFromU8(entries[auditBundlePaths.logLeaves]!)).toBe('');
    expect(verifyAuditBundle(zip, { publicKeyHex: keyring.active.publicKeyHex })).toMatchObject({ ok: true, treeSize: null, logLeaves: 0 });
  });

  let zip: Uint8Array;
  it('carries the head and the window\'s receipts with proofs, all verified', async () => {
    for (const intentId of intentIds) {
      const wire = receipt(a.tenantId, intentId);
      await app.database.tenant(a.tenantId, (tx) => appendLeaf(tx, a.tenantId, { kind: wire.kind as string, artifactId: intentId, canonicalBytes: leafBytesOf(wire), artifact: wire }));
    }
    // No pass has run by hand: creating the export runs one.
    zip = await exportBundle({});
    const entries = unzipSync(zip);
    const head = JSON.parse(strFromU8(entries[auditBundlePaths.treeHead]!));
    expect(head).toMatchObject({ kind: 'svc.agent_receipt_transparency_sth_v1', tenant_id: a.tenantId, tree_size: 3 });
    verifyClientTreeHead(head, [keyring.active.publicKeyHex]);
    const lines = strFromU8(entries[auditBundlePaths.logLeaves]!).trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.artifact_id)).toEqual(intentIds);
    expect(lines.map((line) => line.leaf_format)).toEqual([2, 2, 2]);
    expect(JSON.parse(strFromU8(entries['manifest.json']!)).artifact_version).toBe('1');
    expect(verifyAuditBundle(zip, { publicKeyHex: keyring.active.publicKeyHex })).toMatchObject({ ok: true, problems: [], treeSize: 3, logLeaves: 3 });

    // An intent filter narrows the leaves to that intent's receipts; a window in the future takes none.
    const one = unzipSync(await exportBundle({ filter: { intent_id: intentIds[1] } }));
    expect(strFromU8(one[auditBundlePaths.logLeaves]!).trim().split('\n').map((line) => JSON.parse(line).leaf_index)).toEqual([1]);
    const future = unzipSync(await exportBundle({ filter: { time_start: '2099-01-01T00:00:00Z' } }));
    expect(strFromU8(future[auditBundlePaths.logLeaves]!)).toBe('');
  });

  it('names a wrong proof, a head from another key and a tampered receipt in a genuinely signed bundle', () => {
    const entries = unzipSync(zip);
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!));
    const lines = strFromU8(entries[auditBundlePaths.logLeaves]!).trim().split('\n').map((line) => JSON.parse(line));
    const resign = (logLines: unknown[], head: string = strFromU8(entries[auditBundlePaths.treeHead]!)) => {
      const built = buildAuditBundle(
        {
          tenantId: a.tenantId, jobId: manifest.job_id, generatedAt: manifest.generated_at_rfc3339, disclosureTier: 'standard',
          redactionProfile: manifest.redaction_profile, checkpointLastLedgerSeq: manifest.checkpoint_last_ledger_seq, exportFilter: {},
        },
        [
          ...['intents.jsonl', 'ledger.jsonl', 'ledger-checkpoint.json'].map((path) => ({ path, bytes: entries[path]! })),
          { path: auditBundlePaths.treeHead, bytes: strToU8(head) },
          { path: auditBundlePaths.logLeaves, bytes: strToU8(logLines.map((line) => `${JSON.stringify(line)}\n`).join('')) },
        ],
        keyring.active.signer,
      );
      return verifyAuditBundle(built.zip, { publicKeyHex: keyring.active.publicKeyHex });
    };
    expect(resign(lines)).toMatchObject({ ok: true });
    const swapped = resign([{ ...lines[0], inclusion_proof: lines[1].inclusion_proof }, ...lines.slice(1)]);
    expect(swapped.problems.join('\n')).toContain('inclusion proof of leaf 0 does not lead to the root');
    const tampered = resign([{ ...lines[0], artifact: { ...lines[0].artifact, amount_cents: 1 } }, ...lines.slice(1)]);
    expect(tampered.problems.join('\n')).toContain('artifact.signature_invalid');
    // A leaf's format is part of what its hash proves: the other format's leaf is not the one under the head.
    const reformatted = resign([{ ...lines[0], leaf_format: 1 }, ...lines.slice(1)]);
    expect(reformatted.problems.join('\n')).toContain('leaf_hash is not the hash of the artifact\'s leaf (format 1)');
    const foreignHead = signTreeHead(ephemeralKeyring(), { tenantId: a.tenantId, treeSize: 3, rootHash: new Uint8Array(32), issuedAt: new Date() });
    const foreign = resign(lines, JSON.stringify(foreignHead));
    expect(foreign.problems.join('\n')).toContain('artifact.key_untrusted');
  });
});
