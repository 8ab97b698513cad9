// Audit exports on real Postgres: create → download with the download JWT → a ZIP whose signed manifest and file
// digests verify (independently, with @noble/ed25519) and which `svc audit verify` accepts offline; the download
// route takes nothing but a download JWT for its own job; download JWTs are refused everywhere else; delete, expiry,
// roles and tenants.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as ed from '@noble/ed25519';
import type { FastifyInstance } from 'fastify';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { decodeJwt } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt } from '../../../src/credentials/gateway-jwt.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { buildAuditBundle, verifyAuditBundle } from '../../../src/services/audit-bundle.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../../helpers/intents.ts';
import { projectRoot } from '../../helpers/server-process.ts';

const run = promisify(execFile);

let database: TestDatabase;
let app: FastifyInstance;
let a: TestTenant;
let b: TestTenant;
let tmp: string;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools');
const intentIds: string[] = [];
let splitIntentId: string;

const base = '/v1/compliance/audit-exports';
const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object, headers: Record<string, string> = {}) {
  return app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload ? { payload } : {}) });
}

async function ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object, headers: Record<string, string> = {}) {
  const response = await call(method, url, key, payload, headers);
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json();
}

/** An intent of A, funded (so the ledger has rows), with evidence when asked. */
async function fundedIntent(withEvidence: boolean, options: Partial<CreateOptions> = {}, payload: object = { status: 'completed', note: 'secret-payload-text' }): Promise<string> {
  const body = signedCreateBody({ tenantId: a.tenantId, principal, payee, allowedTools: ['search.web'], ...options });
  const intentId = (await ok('POST', '/harbor/intents', a.adminKey, body)).intent_id as string;
  const challenge = await call('POST', `/harbor/intents/${intentId}/fund`, a.adminKey, {});
  await ok('POST', `/harbor/intents/${intentId}/fund`, a.adminKey, {}, {
    'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
  });
  if (withEvidence) {
    await ok('POST', `/harbor/intents/${intentId}/evidence`, a.adminKey, signedEvidenceBody({ tenantId: a.tenantId, intentId, payee, payload }));
  }
  return intentId;
}

/** An intent of A bound (v7) to a metered completion_budget_v1 version and settled for part: the payee's signed cost
 * of 120 of 250 released, 130 refunded (docs/engine.md#the-split-rule). */
async function splitIntent(): Promise<string> {
  const drafted = await ok('POST', '/harbor/policy/v1/drafts', a.adminKey, { template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' } });
  await ok('POST', '/harbor/policy/v1/rollout', a.adminKey, { template_id: 'completion_budget_v1', version_seq: drafted.version_seq });
  const policy = { templateId: 'completion_budget_v1', versionSeq: drafted.version_seq, contentDigestHex: drafted.content_digest, materializedPredicate: drafted.materialized_predicate };
  const intentId = await fundedIntent(true, { policy, amountCents: 250 }, { status: 'completed', cost_cents: 120 });
  const settled = await ok('POST', `/harbor/intents/${intentId}/settlement/confirm`, a.adminKey, {});
  expect(settled).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
  return intentId;
}

const download = (jobId: string, token: string) => app.inject({ method: 'POST', url: `${base}/${jobId}/bundle`, headers: bearer(token) });

async function cli(bundle: Uint8Array, ...args: string[]): Promise<{ code: number; stdout: string }> {
  const file = path.join(tmp, `bundle-${Math.random().toString(16).slice(2)}.zip`);
  fs.writeFileSync(file, bundle);
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'audit', 'verify', '--bundle', file, ...args], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' },
    });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '' };
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  a = await createTestTenant(database.connection);
  b = await createTestTenant(database.connection);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-export-test-'));
  await ok('PUT', '/v1/admin/settlement/config', a.adminKey, { rails: ['x402_usdc_base'], x402_address: '0x1111111111111111111111111111111111111111' });
  intentIds.push(await fundedIntent(false), await fundedIntent(true));
  splitIntentId = await splitIntent();
  intentIds.push(splitIntentId);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await database?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('audit exports', () => {
  let job: Record<string, unknown>;
  let zip: Uint8Array;

  it('creates a ready export and answers a download JWT bound to the job', async () => {
    const response = await call('POST', base, a.adminKey, { disclosure_tier: 'standard', retention_hours: 24 });
    expect(response.statusCode, response.body).toBe(201);
    job = response.json();
    expect(job).toMatchObject({ status: 'ready', tenant_realm_id: a.tenantId, disclosure_tier: 'standard', download_path: `${base}/${job.job_id}/bundle` });
    expect(job.job_id).toMatch(/^job_[0-9a-f]{32}$/);
    expect(Date.parse(job.expires_at as string) - Date.parse(job.created_at as string)).toBe(24 * 3_600_000);
    const claims = decodeJwt(job.download_token as string);
    expect(claims).toMatchObject({ aud: jwtAudiences.auditExportDownload, sub: job.job_id, job_id: job.job_id, tid: a.tenantId });
    expect(claims.exp! - claims.iat!).toBe(15 * 60);
  });

  it('downloads the ZIP, whose manifest signature and file digests verify independently', async () => {
    const response = await download(job.job_id as string, job.download_token as string);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    zip = new Uint8Array(response.rawPayload);
    expect(sha256Hex(zip)).toBe(job.bundle_sha256);
    expect(zip.length).toBe(job.bundle_size_bytes);

    const entries = unzipSync(zip);
    expect(Object.keys(entries).sort()).toEqual(['intents.jsonl', 'ledger-checkpoint.json', 'ledger.jsonl', 'manifest.json', 'transparency-log.jsonl', 'transparency-tree-head.json']);
    expect(sha256Hex(entries['manifest.json']!)).toBe(job.manifest_sha256);
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!)) as Record<string, unknown>;
    // docs/audit-exports.md#the-bundle: the core is the present keys in this order; digest = SHA-256 of its compact
    // JSON.
    const coreOrder = ['schema_version', 'kind', 'tenant_realm_id', 'job_id', 'generated_at_rfc3339', 'gateway_build_version', 'score_model_version',
      'disclosure_tier', 'redaction_profile', 'checkpoint_last_ledger_seq', 'export_filter', 'artifacts'];
    const core = Object.fromEntries(coreOrder.filter((key) => manifest[key] !== undefined).map((key) => [key, manifest[key]]));
    expect(Object.keys(manifest).filter((key) => coreOrder.includes(key))).toEqual(Object.keys(core));
    const digest = createHash('sha256').update(JSON.stringify(core)).digest();
    expect(manifest.signed_payload_sha256_hex).toBe(digest.toString('hex'));
    expect(manifest.signing_public_key_ed25519_hex).toBe(app.gatewayKeys.active.publicKeyHex);
    expect(await ed.verifyAsync(Buffer.from(manifest.ed25519_signature_hex as string, 'hex'), digest, Buffer.from(manifest.signing_public_key_ed25519_hex as string, 'hex'))).toBe(true);
    expect(manifest).toMatchObject({ schema_version: 1, kind: 'svc.audit_export_manifest_v1', artifact_version: '1', tenant_realm_id: a.tenantId, job_id: job.job_id, disclosure_tier: 'standard', export_filter: {} });

    const artifacts = manifest.artifacts as { path: string; sha256_hex: string; size_bytes: number }[];
    expect(artifacts.map((artifact) => artifact.path).sort()).toEqual(['intents.jsonl', 'ledger-checkpoint.json', 'ledger.jsonl', 'transparency-log.jsonl', 'transparency-tree-head.json']);
    for (const artifact of artifacts) {
      expect(sha256Hex(entries[artifact.path]!), artifact.path).toBe(artifact.sha256_hex);
      expect(entries[artifact.path]!.length, artifact.path).toBe(artifact.size_bytes);
    }

    const intents = strFromU8(entries['intents.jsonl']!).trim().split('\n').map((line) => JSON.parse(line));
    expect(intents.map((intent) => intent.intent_id).sort()).toEqual([...intentIds].sort());
    const withEvidence = intents.find((intent) => intent.evidence !== null && intent.intent_id !== splitIntentId);
    expect(withEvidence.evidence.payload_digest_hex).toMatch(/^[0-9a-f]{64}$/);
    expect(withEvidence.evidence).not.toHaveProperty('payload');
    expect(strFromU8(entries['intents.jsonl']!)).not.toContain('secret-payload-text');
    const ledger = strFromU8(entries['ledger.jsonl']!).trim().split('\n').map((line) => JSON.parse(line));
    const tip = (await ok('GET', '/harbor/ledger/v1/tip', a.adminKey)) as { ledger_seq: number; row_hash_hex: string };
    expect(ledger.length).toBe(tip.ledger_seq);
    expect(manifest.checkpoint_last_ledger_seq).toBe(tip.ledger_seq);
    const checkpoint = JSON.parse(strFromU8(entries['ledger-checkpoint.json']!));
    expect(checkpoint).toMatchObject({ tenant_id: a.tenantId, ledger_seq: tip.ledger_seq, row_hash_hex: tip.row_hash_hex });

    // The split travels with its intent: the outcome and both parts, as the intent answer carries them, and the
    // ledger's split transaction moves the same parts; an unsettled intent's parts are null.
    const split = intents.find((intent) => intent.intent_id === splitIntentId);
    expect(split).toMatchObject({ state: 'resolved_split', release_mode: 'metered', amount_cents: 250, released_cents: 120, refunded_cents: 130 });
    const read = (await ok('GET', `/harbor/intents/${splitIntentId}`, a.adminKey)) as Record<string, unknown>;
    expect(split).toMatchObject({ state: read.state, release_mode: read.release_mode, released_cents: read.released_cents, refunded_cents: read.refunded_cents });
    for (const open of intents.filter((intent) => intent.intent_id !== splitIntentId)) {
      expect(open).toMatchObject({ state: expect.stringMatching(/^(funded|evidence_recorded)$/), release_mode: 'full', released_cents: null, refunded_cents: null });
    }
    const splitRows = ledger.filter((row) => row.intent_id === splitIntentId && row.event_kind === 'split');
    expect(splitRows.map((row) => [row.account, row.side, row.amount_cents])).toEqual([
      [`payee:${payee.did}:payable`, 'debit', 120],
      [`payer:${principal.did}:refund`, 'debit', 130],
      [`intent:${splitIntentId}:escrow`, 'credit', 250],
    ]);
  });

  it('`svc audit verify` accepts the bundle offline (exit 0) and rejects any change (exit 1)', async () => {
    const pinned = await cli(zip, '--public-key', app.gatewayKeys.active.publicKeyHex, '--json');
    expect(pinned.code, pinned.stdout).toBe(0);
    expect(JSON.parse(pinned.stdout)).toMatchObject({ ok: true, key_source: 'given', job_id: job.job_id, problems: [] });
    const embedded = await cli(zip);
    expect(embedded.code, embedded.stdout).toBe(0);
    expect(embedded.stdout).toContain("the manifest's embedded key");

    // One byte of a listed file changed, the ZIP rebuilt around it: the digest no longer matches.
    const entries = unzipSync(zip);
    const intents = entries['intents.jsonl']!.slice();
    intents[10] = intents[10]! ^ 1;
    const tampered = await cli(zipSync({ ...entries, 'intents.jsonl': intents }), '--json');
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout).problems.join('\n')).toContain('intents.jsonl: SHA-256 does not match the manifest');
    // One byte of the ZIP itself.
    const flipped = zip.slice();
    flipped[Math.floor(flipped.length / 2)] = flipped[Math.floor(flipped.length / 2)]! ^ 1;
    expect((await cli(flipped)).code).toBe(1);
    // An unlisted file.
    expect((await cli(zipSync({ ...entries, 'extra.txt': strToU8('x') }))).code).toBe(1);
    // Another key pinned.
    const other = await cli(zip, '--public-key', 'ab'.repeat(32), '--json');
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stdout).problems.join('\n')).toContain('artifact.key_untrusted');
  }, 60_000);

  it('a bundle whose manifest is genuinely signed still fails when its ledger chain or checkpoint is wrong', () => {
    const entries = unzipSync(zip);
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!));
    const lines = strFromU8(entries['ledger.jsonl']!).trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const resign = (ledger: string[], intents: Uint8Array = entries['intents.jsonl']!) => {
      const built = buildAuditBundle(
        {
          tenantId: a.tenantId, jobId: manifest.job_id, generatedAt: manifest.generated_at_rfc3339, disclosureTier: 'standard',
          redactionProfile: manifest.redaction_profile, checkpointLastLedgerSeq: manifest.checkpoint_last_ledger_seq, exportFilter: {},
        },
        [
          { path: 'intents.jsonl', bytes: intents },
          { path: 'ledger.jsonl', bytes: strToU8(ledger.map((line) => `${line}\n`).join('')) },
          { path: 'ledger-checkpoint.json', bytes: entries['ledger-checkpoint.json']! },
        ],
        app.gatewayKeys.active.signer,
      );
      return verifyAuditBundle(built.zip, { publicKeyHex: app.gatewayKeys.active.publicKeyHex });
    };
    expect(resign(lines)).toMatchObject({ ok: true, problems: [] });
    const dropped = resign([lines[0]!, ...lines.slice(2)]);
    expect(dropped.ok).toBe(false);
    expect(dropped.problems.join('\n')).toContain('ledger_seq');
    const changed = JSON.parse(lines[0]!);
    const edited = resign([JSON.stringify({ ...changed, amount_cents: changed.amount_cents + 1 }), ...lines.slice(1)]);
    expect(edited.problems.join('\n')).toContain('body_hex does not match');
    const truncated = resign(lines.slice(0, -1));
    expect(truncated.problems.join('\n')).toContain('checkpoint names seq');

    // An intent line whose parts disagree with the ledger, or with its amount, is found though the manifest is signed.
    const intentLines = strFromU8(entries['intents.jsonl']!).trim().split('\n');
    const splitLine = intentLines.findIndex((line) => JSON.parse(line).intent_id === splitIntentId) + 1;
    expect(splitLine).toBeGreaterThan(0);
    const withParts = (released: unknown, refunded: unknown) => strToU8(intentLines.map((line) => {
      const intent = JSON.parse(line);
      return `${JSON.stringify(intent.intent_id === splitIntentId ? { ...intent, released_cents: released, refunded_cents: refunded } : intent)}\n`;
    }).join(''));
    expect(resign(lines, withParts(120, 130))).toMatchObject({ ok: true, problems: [] });
    expect(resign(lines, withParts(130, 120)).problems).toEqual([`intents.jsonl line ${splitLine}: ledger.jsonl paid the payee 120, the intent records released_cents 130`]);
    expect(resign(lines, withParts(120, 131)).problems).toEqual([`intents.jsonl line ${splitLine}: released_cents 120 and refunded_cents 131 do not add up to amount_cents 250`]);
    expect(resign(lines, withParts(null, 130)).problems).toEqual([`intents.jsonl line ${splitLine}: released_cents and refunded_cents are not both integers or both null`]);
    expect(resign(lines, withParts(null, null)).problems).toEqual([`intents.jsonl line ${splitLine}: ledger.jsonl paid the payee 120, the intent records released_cents null`]);
  });

  it('the download route refuses an API key, a session JWT, another job\'s token and an expired token', async () => {
    const jobId = job.job_id as string;
    const session = await signGatewayJwt(app.gatewayKeys, { roles: ['admin'] }, { audience: jwtAudiences.session, subject: 'user-1', tenantId: a.tenantId, expiresInSeconds: 300 });
    const other = (await ok('POST', base, a.adminKey, {})) as Record<string, string>;
    const expired = await signGatewayJwt(app.gatewayKeys, { job_id: jobId }, {
      audience: jwtAudiences.auditExportDownload, subject: jobId, tenantId: a.tenantId, expiresInSeconds: 60, now: new Date(Date.now() - 3_600_000),
    });
    // A download-audience token for this job without the job_id claim.
    const unbound = await signGatewayJwt(app.gatewayKeys, {}, { audience: jwtAudiences.auditExportDownload, subject: jobId, tenantId: a.tenantId, expiresInSeconds: 60 });
    for (const [label, token, code] of [
      ['API key', a.adminKey, 'auth.credential_invalid'],
      ['session JWT', session, 'auth.credential_invalid'],
      ['token of another job', other.download_token!, 'auth.credential_invalid'],
      ['expired token', expired, 'audit_export.download_token_expired'],
      ['token without job_id', unbound, 'auth.credential_invalid'],
    ] as const) {
      const response = await download(jobId, token);
      expect(response.statusCode, label).toBe(401);
      expect(response.json().error.code, label).toBe(code);
    }
    expect((await app.inject({ method: 'POST', url: `${base}/${jobId}/bundle` })).json().error.code).toBe('auth.credential_missing');
    // The other job's own token still works for it.
    expect((await download(other.job_id!, other.download_token!)).statusCode).toBe(200);
  });

  it('a download JWT is refused on every other route', async () => {
    const token = job.download_token as string;
    for (const [method, url] of [['GET', '/v1/auth/principal'], ['GET', '/v1/admin/api-keys'], ['GET', base], ['GET', `${base}/${job.job_id}`]] as const) {
      const response = await call(method, url, token);
      expect(response.statusCode, url).toBe(401);
      expect(response.json().error.code, url).toBe('auth.credential_invalid');
    }
  });

  it('reads and lists jobs, each read of a ready job with a fresh download token unless told not to', async () => {
    const plain = (await ok('GET', `${base}/${job.job_id}?issue_download=0`, a.adminKey)) as Record<string, unknown>;
    expect(plain).toMatchObject({ job_id: job.job_id, status: 'ready', bundle_sha256: job.bundle_sha256 });
    expect(plain).not.toHaveProperty('download_token');
    const read = (await ok('GET', `${base}/${job.job_id}`, a.adminKey)) as Record<string, string>;
    expect((await download(job.job_id as string, read.download_token!)).statusCode).toBe(200);
    const auditor = await a.key('auditor');
    const fresh = (await ok('GET', `${base}/${job.job_id}?issue_download=1`, auditor)) as Record<string, string>;
    expect(fresh.download_token).toBeTruthy();
    expect((await download(job.job_id as string, fresh.download_token!)).statusCode).toBe(200);

    const first = (await ok('GET', `${base}?limit=1`, a.adminKey)) as { jobs: { job_id: string }[]; next_cursor: string; has_more: boolean };
    expect(first.jobs).toHaveLength(1);
    expect(first.has_more).toBe(true);
    const rest = (await ok('GET', `${base}?limit=200&cursor=${first.next_cursor}`, a.adminKey)) as { jobs: { job_id: string }[] };
    expect([...first.jobs, ...rest.jobs].map((entry) => entry.job_id)).toContain(job.job_id);
    expect(new Set([...first.jobs, ...rest.jobs].map((entry) => entry.job_id)).size).toBe(first.jobs.length + rest.jobs.length);
  });

  it('extended tier carries evidence payloads; a filter narrows the intents and is signed', async () => {
    const created = (await ok('POST', base, a.adminKey, { disclosure_tier: 'extended', filter: { intent_id: intentIds[1] } })) as Record<string, string>;
    const entries = unzipSync(new Uint8Array((await download(created.job_id!, created.download_token!)).rawPayload));
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!));
    expect(manifest).toMatchObject({ disclosure_tier: 'extended', redaction_profile: 'evidence_payloads_included', export_filter: { intent_id: intentIds[1] } });
    const intents = strFromU8(entries['intents.jsonl']!).trim().split('\n').map((line) => JSON.parse(line));
    expect(intents).toHaveLength(1);
    expect(intents[0].evidence.payload).toMatchObject({ note: 'secret-payload-text' });

    const future = (await ok('POST', base, a.adminKey, { filter: { time_start: '2999-01-01T00:00:00Z' } })) as Record<string, string>;
    const none = unzipSync(new Uint8Array((await download(future.job_id!, future.download_token!)).rawPayload));
    expect(strFromU8(none['intents.jsonl']!)).toBe('');
    for (const filter of [{ time_start: 'yesterday' }, { intent_id: 'not-a-uuid' }, { time_start: '2026-01-02T00:00:00Z', time_end: '2026-01-01T00:00:00Z' }]) {
      const response = await call('POST', base, a.adminKey, { filter });
      expect(response.statusCode, JSON.stringify(filter)).toBe(400);
      expect(response.json().error.code).toBe('audit_export.filter_invalid');
    }
    expect((await call('POST', base, a.adminKey, { retention_hours: 721 })).statusCode).toBe(400);
  });

  it('delete drops the bundle (410 after), and deleting twice answers 200 deleted', async () => {
    const created = (await ok('POST', base, a.adminKey, {})) as Record<string, string>;
    const first = await call('DELETE', `${base}/${created.job_id}`, a.adminKey);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'deleted' });
    const second = await call('DELETE', `${base}/${created.job_id}`, a.adminKey);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ status: 'deleted', deleted_at: first.json().deleted_at });
    const gone = await download(created.job_id!, created.download_token!);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.code).toBe('audit_export.gone');
    const client = new pg.Client(database.connection);
    await client.connect();
    try {
      const { rows } = await client.query('SELECT bundle FROM audit_exports WHERE job_id = $1', [created.job_id]);
      expect(rows[0].bundle).toBeNull();
    } finally {
      await client.end();
    }
    expect((await call('DELETE', `${base}/job_${'0'.repeat(32)}`, a.adminKey)).statusCode).toBe(404);
  });

  it('an expired export reads as expired and its bundle answers 410', async () => {
    const created = (await ok('POST', base, a.adminKey, {})) as Record<string, string>;
    const client = new pg.Client(database.connection);
    await client.connect();
    try {
      await client.query(`UPDATE audit_exports SET created_at = now() - interval '10 hours', expires_at = now() - interval '1 hour' WHERE job_id = $1`, [created.job_id]);
    } finally {
      await client.end();
    }
    expect((await ok('GET', `${base}/${created.job_id}?issue_download=1`, a.adminKey)).status).toBe('expired');
    expect((await ok('GET', `${base}/${created.job_id}?issue_download=1`, a.adminKey))).not.toHaveProperty('download_token');
    const gone = await download(created.job_id!, created.download_token!);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error).toMatchObject({ code: 'audit_export.gone' });
  });

  it('keeps tenants apart: B gets 404 on A\'s job, sees none in its list, and no token of B opens A\'s bundle', async () => {
    const jobId = job.job_id as string;
    expect((await call('GET', `${base}/${jobId}`, b.adminKey)).statusCode).toBe(404);
    expect((await call('DELETE', `${base}/${jobId}`, b.adminKey)).statusCode).toBe(404);
    const list = await call('GET', base, b.adminKey);
    expect(list.json().jobs).toEqual([]);
    expect(list.body).not.toContain(a.tenantId);
    const ofB = (await ok('POST', base, b.adminKey, {})) as Record<string, string>;
    expect((await download(jobId, ofB.download_token!)).statusCode).toBe(401);
    // Even a genuine gateway token naming A's job but B's tenant finds nothing: the job is read in the token's tenant.
    const crossed = await signGatewayJwt(app.gatewayKeys, { job_id: jobId }, { audience: jwtAudiences.auditExportDownload, subject: jobId, tenantId: b.tenantId, expiresInSeconds: 60 });
    const response = await download(jobId, crossed);
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('audit_export.not_found');
    // B's own bundle holds none of A's intents.
    const entries = unzipSync(new Uint8Array((await download(ofB.job_id!, ofB.download_token!)).rawPayload));
    for (const intentId of intentIds) expect(strFromU8(entries['intents.jsonl']!)).not.toContain(intentId);
  });

  it('roles: agents cannot export, auditors export but do not delete', async () => {
    const agent = await a.key('agent');
    expect((await call('POST', base, agent, {})).statusCode).toBe(403);
    expect((await call('GET', base, agent)).statusCode).toBe(403);
    const auditor = await a.key('auditor');
    const created = (await ok('POST', base, auditor, {})) as Record<string, string>;
    expect(created.status).toBe('ready');
    expect((await call('DELETE', `${base}/${created.job_id}`, auditor)).statusCode).toBe(403);
  });
});
