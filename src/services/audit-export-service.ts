// Audit exports (docs/audit-exports.md): building a tenant's bundle in one snapshot (intents, ledger, and the
// transparency log's latest tree head with the window's leaves), storing the job, and issuing the download JWT
// bound to one job. The bundle is built synchronously in the create
// request (status `ready` at once); a job queue with `pending` jobs is a later change.
import { recordEvent } from '../db/event-repository.ts';
import { randomBytes } from 'node:crypto';
import type { AuditExport, AuditExportCreateBody } from '../contracts/audit-exports.ts';
import { jwtAudiences, signGatewayJwt } from '../credentials/gateway-jwt.ts';
import type { Principal } from '../credentials/principal.ts';
import { insertReadyAuditExport, listEvidenceForExport, type AuditExportRecord, type DisclosureTier, type ExportEvidence } from '../db/audit-export-repository.ts';
import { listIntentsForExport, type Intent } from '../db/intent-repository.ts';
import { listLedgerRows, type LedgerRow } from '../db/ledger-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import {
  auditExportBundleBytesMax,
  auditExportDownloadTokenLifetimeSeconds,
  auditExportIntentsMax,
  auditExportLedgerRowsMax,
  auditExportLogLeavesMax,
  auditExportRetentionHoursDefault,
  ledgerVerifyBatchRows,
} from '../limits.ts';
import type { Database } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import {
  bytesToHex,
  formatRfc3339MillisecondsUtc,
  formatRfc3339SecondsUtc,
  isCanonicalUuidText,
  parseRfc3339,
} from '../signing/index.ts';
import { auditBundlePaths, buildAuditBundle, jsonLines, type LogLeafLine } from './audit-bundle.ts';
import { ledgerLine } from './ledger-service.ts';
import { readLedgerTip, signLedgerCheckpoint } from './ledger-service.ts';
import { latestTreeHead, leavesInWindow, publishTreeHeads, readInclusionProofs, type SignedTreeHead } from '../receipts/transparency-log.ts';
import type { Queryable } from '../infra/database.ts';

/** What each tier discloses of evidence (the manifest's redaction_profile). */
export const redactionProfiles: Record<DisclosureTier, string> = {
  standard: 'evidence_digests_only',
  extended: 'evidence_payloads_included',
};

export const auditExportDownloadPath = (jobId: string): string => `/v1/compliance/audit-exports/${jobId}/bundle`;

/** The gateway's active key as an artifact signer. */
interface NormalizedFilter {
  readonly exportFilter: Record<string, string>;
  readonly createdFrom?: Date;
  readonly createdBefore?: Date;
  readonly intentId?: string;
}

/** time_start / time_end are RFC 3339 (normalized to UTC seconds); the range is [time_start, time_end). */
function normalizeFilter(filter: AuditExportCreateBody['filter'] = {}): NormalizedFilter {
  const invalid = (field: string): never => {
    throw new ServiceError('audit_export.filter_invalid', { details: { field } });
  };
  const time = (field: 'time_start' | 'time_end'): Date | undefined => {
    const text = filter[field];
    if (text === undefined) return undefined;
    let epochMs: number;
    try {
      epochMs = parseRfc3339(text, field).epochMs;
    } catch {
      return invalid(field);
    }
    return new Date(epochMs);
  };
  const createdFrom = time('time_start');
  const createdBefore = time('time_end');
  if (createdFrom && createdBefore && createdFrom.getTime() >= createdBefore.getTime()) invalid('time_end');
  if (filter.intent_id !== undefined && !isCanonicalUuidText(filter.intent_id)) invalid('intent_id');
  // The signed export_filter: fixed key order, only what was given.
  const exportFilter: Record<string, string> = {};
  if (createdFrom) exportFilter.time_start = formatRfc3339MillisecondsUtc(createdFrom.getTime());
  if (createdBefore) exportFilter.time_end = formatRfc3339MillisecondsUtc(createdBefore.getTime());
  if (filter.intent_id !== undefined) exportFilter.intent_id = filter.intent_id;
  return {
    exportFilter,
    ...(createdFrom ? { createdFrom } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(filter.intent_id !== undefined ? { intentId: filter.intent_id } : {}),
  };
}

const hexOrNull = (bytes: Buffer | null): string | null => (bytes ? bytes.toString('hex') : null);

/** One line of intents.jsonl. Signatures and public keys are evidence, not secrets, and are kept; the evidence
 * payload, its artifact list and the evaluation trace (which quotes the payload) only in the extended tier. */
function intentLine(intent: Intent, evidence: ExportEvidence | undefined, tier: DisclosureTier) {
  return {
    intent_id: intent.intentId,
    state: intent.state,
    signing_version: intent.signingVersion,
    principal_did: intent.principalDid,
    principal_pubkey_hex: hexOrNull(intent.principalPubkey),
    principal_signature_hex: hexOrNull(intent.principalSignature),
    principal_key_registered: intent.principalKeyRegistered,
    payee_did: intent.payeeDid,
    payee_pubkey_hex: hexOrNull(intent.payeePubkey),
    amount_cents: intent.amountCents,
    currency: intent.currency,
    budget: intent.budget,
    evidence_schema: intent.evidenceSchema,
    deadline: intent.deadlineText,
    predicate_dsl: intent.predicateDsl,
    predicate_ref: intent.predicateRef,
    policy_binding:
      intent.policyTemplateId === null
        ? null
        : { template_id: intent.policyTemplateId, version_seq: intent.policyVersionSeq, content_digest: hexOrNull(intent.policyContentDigest) },
    settlement_rail: intent.settlementRail,
    allowed_tools: intent.allowedTools,
    completion_preset_id: intent.completionPresetId,
    predicate_passed: intent.predicatePassed,
    funding_reference: intent.fundingReference,
    created_at: intent.createdAt.toISOString(),
    funded_at: intent.fundedAt?.toISOString() ?? null,
    evidence_recorded_at: intent.evidenceRecordedAt?.toISOString() ?? null,
    settled_at: intent.settledAt?.toISOString() ?? null,
    // How the rule settles (a metered rule releases the payee's signed cost), and once settled the parts: paid to the
    // payee and returned (their sum is amount_cents; a split, `resolved_split`, has both above 0). Null before.
    release_mode: intent.releaseMode,
    released_cents: intent.releasedCents,
    refunded_cents: intent.refundedCents,
    evidence: evidence
      ? {
          payee_did: evidence.payeeDid,
          submitted_at: evidence.submittedAt,
          payload_digest_hex: evidence.payloadDigest.toString('hex'),
          artifacts_digest_hex: evidence.artifactsDigest.toString('hex'),
          payee_signature_hex: hexOrNull(evidence.payeeSignature),
          predicate_passed: evidence.predicatePassed,
          ...(tier === 'extended' ? { payload: evidence.payload, artifacts: evidence.artifacts, evaluation: evidence.evaluation } : {}),
        }
      : null,
  };
}


const tooLarge = (what: string, limit: number): never => {
  throw new ServiceError('audit_export.too_large', { details: { [what]: limit } });
};

/** The transparency-log files: the latest signed head (null before the first) and the window's leaves under it,
 * each with its audit path against that head. */
async function transparencyFiles(tx: Queryable, tenantId: string, filter: NormalizedFilter) {
  const head: SignedTreeHead | null = await latestTreeHead(tx, tenantId);
  const leaves = head
    ? await leavesInWindow(tx, tenantId, { from: filter.createdFrom, to: filter.createdBefore, intentId: filter.intentId, treeSize: head.tree_size }, auditExportLogLeavesMax + 1)
    : [];
  if (leaves.length > auditExportLogLeavesMax) tooLarge('log_leaves_max', auditExportLogLeavesMax);
  const proofs = head ? await readInclusionProofs(tx, tenantId, leaves.map((leaf) => leaf.leafIndex), head.tree_size) : [];
  const lines: LogLeafLine[] = leaves.map((leaf, index) => ({
    leaf_index: leaf.leafIndex,
    kind: leaf.kind,
    artifact_id: leaf.artifactId,
    appended_at: leaf.appendedAt.toISOString(),
    leaf_format: leaf.leafFormat,
    leaf_hash: leaf.leafHash.toString('hex'),
    artifact: leaf.artifact,
    inclusion_proof: proofs[index]!,
  }));
  return [
    { path: auditBundlePaths.treeHead, bytes: new Uint8Array(Buffer.from(`${JSON.stringify(head, null, 2)}\n`)) },
    { path: auditBundlePaths.logLeaves, bytes: jsonLines(lines) },
  ];
}

/**
 * Builds the bundle and stores the job, all in one REPEATABLE READ tenant transaction: the intents, the ledger rows
 * and the tip the checkpoint signs are one snapshot, so the chain in the bundle ends exactly at the checkpoint.
 * The ledger is the tenant's whole chain from genesis (a chain cannot be verified in part); the filter selects the
 * intents and the transparency log's leaves. A tree-head pass runs first, so the head in the bundle covers every
 * leaf committed before the export began.
 */
export async function createAuditExport(
  database: Database,
  keyring: GatewayKeyring,
  principal: Principal,
  request: AuditExportCreateBody,
): Promise<AuditExportRecord> {
  const { tenantId } = principal;
  const gatewayKey = keyring.active;
  const filter = normalizeFilter(request.filter);
  const tier = request.disclosure_tier ?? 'standard';
  const jobId = `job_${randomBytes(16).toString('hex')}`;
  // When another replica holds the pass's lock, its pass signs the same leaves; the head read below is then at most
  // one pass older, and leaves past it wait for the next export.
  await publishTreeHeads(database, keyring);
  return database.tenant(
    tenantId,
    async (tx) => {
      const intents = await listIntentsForExport(tx, tenantId, filter, auditExportIntentsMax + 1);
      if (intents.length > auditExportIntentsMax) tooLarge('intents_max', auditExportIntentsMax);
      const evidence = await listEvidenceForExport(tx, tenantId, intents.map((intent) => intent.intentId));
      const tip = await readLedgerTip(tx, tenantId);
      if (tip.ledgerSeq > auditExportLedgerRowsMax) tooLarge('ledger_rows_max', auditExportLedgerRowsMax);
      const rows: LedgerRow[] = [];
      for (let afterSeq = 0; afterSeq < tip.ledgerSeq; ) {
        const batch = await listLedgerRows(tx, tenantId, afterSeq, ledgerVerifyBatchRows);
        if (batch.length === 0) break;
        rows.push(...batch.filter((row) => row.ledgerSeq <= tip.ledgerSeq));
        afterSeq = batch.at(-1)!.ledgerSeq;
      }
      const nowMs = Date.now();
      const checkpoint = signLedgerCheckpoint(tenantId, tip, gatewayKey, nowMs);
      const built = buildAuditBundle(
        {
          tenantId,
          jobId,
          generatedAt: formatRfc3339SecondsUtc(nowMs),
          disclosureTier: tier,
          redactionProfile: redactionProfiles[tier],
          checkpointLastLedgerSeq: tip.ledgerSeq,
          exportFilter: filter.exportFilter,
        },
        [
          { path: auditBundlePaths.intents, bytes: jsonLines(intents.map((intent) => intentLine(intent, evidence.get(intent.intentId), tier))) },
          { path: auditBundlePaths.ledger, bytes: jsonLines(rows.map(ledgerLine)) },
          { path: auditBundlePaths.checkpoint, bytes: new Uint8Array(Buffer.from(`${JSON.stringify(checkpoint, null, 2)}\n`)) },
          ...(await transparencyFiles(tx, tenantId, filter)),
        ],
        gatewayKey.signer,
      );
      if (built.zip.length > auditExportBundleBytesMax) tooLarge('bundle_bytes_max', auditExportBundleBytesMax);
      const job = await insertReadyAuditExport(tx, tenantId, {
        jobId,
        disclosureTier: tier,
        filter: filter.exportFilter,
        createdBy: principal.subject,
        retentionHours: request.retention_hours ?? auditExportRetentionHoursDefault,
        manifestSha256: Buffer.from(built.manifestSha256),
        bundleSha256: Buffer.from(built.zipSha256),
        bundle: Buffer.from(built.zip),
      });
      // Built at once, so ready as it is created (a queued build would record this when it finished).
      recordEvent(tx, tenantId, { type: 'audit_export.ready', object: presentAuditExport(job) });
      return job;
    },
    { isolation: 'repeatable read' },
  );
}

/** A download JWT for one job: aud svc-audit-export-download, sub and job_id the job, tid its tenant. */
export async function issueDownloadToken(keyring: GatewayKeyring, job: AuditExportRecord, now = new Date()) {
  const token = await signGatewayJwt(keyring, { job_id: job.jobId }, {
    audience: jwtAudiences.auditExportDownload,
    subject: job.jobId,
    tenantId: job.tenantId,
    expiresInSeconds: auditExportDownloadTokenLifetimeSeconds,
    now,
  });
  const expiresAtMs = (Math.floor(now.getTime() / 1000) + auditExportDownloadTokenLifetimeSeconds) * 1000;
  return { download_token: token, download_token_expires_at: new Date(expiresAtMs).toISOString(), download_path: auditExportDownloadPath(job.jobId) };
}

/** A job as the audit export routes answer it. */
export function presentAuditExport(job: AuditExportRecord): AuditExport {
  return {
    object: 'audit_export',
    id: job.jobId,
    job_id: job.jobId,
    status: job.status,
    tenant_realm_id: job.tenantId,
    tenant_id: job.tenantId,
    disclosure_tier: job.disclosureTier,
    filter: exportFilterOf(job.filter),
    created_at: job.createdAt.toISOString(),
    expires_at: job.expiresAt.toISOString(),
    deleted_at: job.deletedAt?.toISOString() ?? null,
    error: job.error,
    manifest_sha256: job.manifestSha256 ? bytesToHex(job.manifestSha256) : null,
    bundle_sha256: job.bundleSha256 ? bytesToHex(job.bundleSha256) : null,
    bundle_size_bytes: job.bundleSizeBytes,
  };
}

/** The stored filter (what normalizeFilter kept: only the members given, as text) as the answer lists it. */
function exportFilterOf(stored: Record<string, unknown>): AuditExport['filter'] {
  const filter: AuditExport['filter'] = {};
  for (const field of ['time_start', 'time_end', 'intent_id'] as const) {
    const value = stored[field];
    if (typeof value === 'string') filter[field] = value;
  }
  return filter;
}
