// Audit export jobs (migrations/0010_audit_exports.sql): insert a built job, read, list, delete (drop the bytes),
// read the bundle; and the evidence rows an export carries. `expired` is derived from expires_at by the database
// clock on every read.
import type { Queryable } from '../infra/database.ts';
import type { EvidenceRecord } from './evidence-repository.ts';

export type AuditExportStatus = 'pending' | 'ready' | 'failed' | 'expired' | 'deleted';
export type DisclosureTier = 'standard' | 'extended';

export interface AuditExportRecord {
  readonly tenantId: string;
  readonly jobId: string;
  /** As answered: a stored `ready` past its expires_at is `expired`. */
  readonly status: AuditExportStatus;
  readonly disclosureTier: DisclosureTier;
  readonly filter: Record<string, unknown>;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly deletedAt: Date | null;
  readonly manifestSha256: Buffer | null;
  readonly bundleSha256: Buffer | null;
  readonly bundleSizeBytes: number | null;
  readonly error: string | null;
}

export interface NewAuditExport {
  readonly jobId: string;
  readonly disclosureTier: DisclosureTier;
  readonly filter: Record<string, unknown>;
  readonly createdBy: string;
  readonly retentionHours: number;
  readonly manifestSha256: Buffer;
  readonly bundleSha256: Buffer;
  readonly bundle: Buffer;
}

const columns = `tenant_id, job_id,
  CASE WHEN status = 'ready' AND expires_at <= now() THEN 'expired' ELSE status END AS status,
  disclosure_tier, filter, created_by, created_at, expires_at, deleted_at, manifest_sha256, bundle_sha256,
  bundle_size_bytes, error`;

type Row = Record<string, unknown>;

const toRecord = (row: Row): AuditExportRecord => ({
  tenantId: row.tenant_id as string,
  jobId: row.job_id as string,
  status: row.status as AuditExportStatus,
  disclosureTier: row.disclosure_tier as DisclosureTier,
  filter: row.filter as Record<string, unknown>,
  createdBy: row.created_by as string,
  createdAt: row.created_at as Date,
  expiresAt: row.expires_at as Date,
  deletedAt: row.deleted_at as Date | null,
  manifestSha256: row.manifest_sha256 as Buffer | null,
  bundleSha256: row.bundle_sha256 as Buffer | null,
  bundleSizeBytes: row.bundle_size_bytes as number | null,
  error: row.error as string | null,
});

/** Inserts a job whose bundle is built (status `ready`); expires_at is now() + retentionHours. */
export async function insertReadyAuditExport(tx: Queryable, tenantId: string, job: NewAuditExport): Promise<AuditExportRecord> {
  const { rows } = await tx.query<Row>(
    `INSERT INTO audit_exports (tenant_id, job_id, status, disclosure_tier, filter, created_by, expires_at,
       manifest_sha256, bundle_sha256, bundle_size_bytes, bundle)
     VALUES ($1, $2, 'ready', $3, $4, $5, now() + make_interval(hours => $6), $7, $8, $9, $10)
     RETURNING ${columns}`,
    [
      tenantId, job.jobId, job.disclosureTier, JSON.stringify(job.filter), job.createdBy, job.retentionHours,
      job.manifestSha256, job.bundleSha256, job.bundle.length, job.bundle,
    ],
  );
  return toRecord(rows[0]!);
}

export async function findAuditExport(tx: Queryable, tenantId: string, jobId: string): Promise<AuditExportRecord | undefined> {
  const { rows } = await tx.query<Row>(`SELECT ${columns} FROM audit_exports WHERE tenant_id = $1 AND job_id = $2`, [tenantId, jobId]);
  return rows[0] && toRecord(rows[0]);
}

/** Newest first; `startingAfter` is the last job_id of the previous page. */
export async function listAuditExports(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<{ jobs: AuditExportRecord[]; hasMore: boolean }> {
  const { rows } = await tx.query<Row>(
    `SELECT ${columns} FROM audit_exports
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR (created_at, job_id) < (SELECT created_at, job_id FROM audit_exports WHERE tenant_id = $1 AND job_id = $2))
     ORDER BY created_at DESC, job_id DESC LIMIT $3`,
    [tenantId, page.startingAfter ?? null, page.limit + 1],
  );
  return { jobs: rows.slice(0, page.limit).map(toRecord), hasMore: rows.length > page.limit };
}

/** Marks a job deleted and drops its bundle; a deleted job keeps its first deleted_at. Undefined: no such job. */
export async function deleteAuditExport(tx: Queryable, tenantId: string, jobId: string): Promise<AuditExportRecord | undefined> {
  const { rows } = await tx.query<Row>(
    `UPDATE audit_exports SET status = 'deleted', bundle = NULL, deleted_at = coalesce(deleted_at, now())
     WHERE tenant_id = $1 AND job_id = $2 RETURNING ${columns}`,
    [tenantId, jobId],
  );
  return rows[0] && toRecord(rows[0]);
}

/** The job with its bytes (null once deleted). */
export async function findAuditExportBundle(
  tx: Queryable,
  tenantId: string,
  jobId: string,
): Promise<{ job: AuditExportRecord; bundle: Buffer | null } | undefined> {
  const { rows } = await tx.query<Row>(`SELECT ${columns}, bundle FROM audit_exports WHERE tenant_id = $1 AND job_id = $2`, [tenantId, jobId]);
  return rows[0] && { job: toRecord(rows[0]), bundle: rows[0].bundle as Buffer | null };
}

/** The evidence submission of each of `intentIds` that has one (the record the evidence repository writes). */
export type ExportEvidence = EvidenceRecord;

export async function listEvidenceForExport(tx: Queryable, tenantId: string, intentIds: readonly string[]): Promise<Map<string, ExportEvidence>> {
  if (intentIds.length === 0) return new Map();
  const { rows } = await tx.query<Row>(
    `SELECT intent_id, payload, artifacts, payee_did, payee_signature, submitted_at, payload_digest, artifacts_digest,
       predicate_passed, evaluation
     FROM evidence_submissions WHERE tenant_id = $1 AND intent_id = ANY($2::uuid[])`,
    [tenantId, intentIds],
  );
  return new Map(
    rows.map((row) => [
      row.intent_id as string,
      {
        intentId: row.intent_id as string,
        payload: row.payload,
        artifacts: row.artifacts as string[],
        payeeDid: row.payee_did as string,
        payeeSignature: row.payee_signature as Buffer | null,
        submittedAt: row.submitted_at as string,
        payloadDigest: row.payload_digest as Buffer,
        artifactsDigest: row.artifacts_digest as Buffer,
        predicatePassed: row.predicate_passed as boolean,
        evaluation: row.evaluation,
      },
    ]),
  );
}
