// Contracts of the audit export routes (docs/audit-exports.md): create, list, read, delete, and the bundle download,
// which answers the zip itself.
import Type, { type Static } from 'typebox';
import { auditExportRetentionHoursMax, pageSizeDefault, pageSizeMax, auditExportFilterFieldLengthMax } from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';

export const AuditExportJobId = Type.String({ pattern: '^job_[0-9a-f]{32}$' });
export type AuditExportJobId = Static<typeof AuditExportJobId>;
const DisclosureTier = Type.Union([Type.Literal('standard'), Type.Literal('extended')]);
const Sha256Hex = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** The filter as sent; the service checks the times (RFC 3339 UTC, start before end) and the intent id (a UUID). */
const ExportFilter = Type.Object(
  {
    time_start: Type.Optional(Type.String({ maxLength: auditExportFilterFieldLengthMax })),
    time_end: Type.Optional(Type.String({ maxLength: auditExportFilterFieldLengthMax })),
    intent_id: Type.Optional(Type.String({ maxLength: auditExportFilterFieldLengthMax })),
  },
  { additionalProperties: false },
);

export const AuditExportCreateBody = Type.Object(
  {
    filter: Type.Optional(ExportFilter),
    disclosure_tier: Type.Optional(DisclosureTier),
    retention_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: auditExportRetentionHoursMax })),
  },
  { additionalProperties: false },
);
export type AuditExportCreateBody = Static<typeof AuditExportCreateBody>;

export const AuditExportListQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault }), cursor: Type.Optional(AuditExportJobId) },
  { additionalProperties: false },
);
export type AuditExportListQuery = Static<typeof AuditExportListQuery>;

export const AuditExportParams = Type.Object({ job_id: AuditExportJobId });
export type AuditExportParams = Static<typeof AuditExportParams>;

/** A read of a ready job carries a fresh download token unless `issue_download` is `0` or `false`. */
export const AuditExportReadQuery = Type.Object(
  { issue_download: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')])) },
  { additionalProperties: false },
);
export type AuditExportReadQuery = Static<typeof AuditExportReadQuery>;

const auditExportFields = {
  object: Type.Literal('audit_export'),
  id: AuditExportJobId,
  job_id: AuditExportJobId,
  /** A stored `ready` past its expires_at is answered `expired`. */
  status: Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('failed'), Type.Literal('expired'), Type.Literal('deleted')]),
  tenant_realm_id: Type.String(),
  tenant_id: Type.String(),
  disclosure_tier: DisclosureTier,
  /** The signed export filter: only what was given, times normalized. */
  filter: Type.Object(
    { time_start: Type.Optional(Type.String()), time_end: Type.Optional(Type.String()), intent_id: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  created_at: Timestamp,
  expires_at: Timestamp,
  deleted_at: Nullable(Timestamp),
  error: Nullable(Type.String()),
  manifest_sha256: Nullable(Sha256Hex),
  bundle_sha256: Nullable(Sha256Hex),
  bundle_size_bytes: Nullable(Type.Integer({ minimum: 0 })),
};

export const AuditExport = Type.Object(auditExportFields, { additionalProperties: false });
export type AuditExport = Static<typeof AuditExport>;

/** A download credential for one job's bundle: a JWT for POST download_path. */
const downloadFields = {
  download_token: Type.String(),
  download_token_expires_at: Timestamp,
  download_path: Type.String(),
};

/** Create answers the record with a download credential; a read adds one while the bundle is ready. */
export const AuditExportWithDownload = Type.Object({ ...auditExportFields, ...downloadFields }, { additionalProperties: false });
export type AuditExportWithDownload = Static<typeof AuditExportWithDownload>;
export const AuditExportRead = Type.Object(
  {
    ...auditExportFields,
    download_token: Type.Optional(downloadFields.download_token),
    download_token_expires_at: Type.Optional(downloadFields.download_token_expires_at),
    download_path: Type.Optional(downloadFields.download_path),
  },
  { additionalProperties: false },
);
export type AuditExportRead = Static<typeof AuditExportRead>;

export const AuditExportPage = Type.Object(
  {
    object: Type.Literal('list'),
    tenant_realm_id: Type.String(),
    jobs: Type.Array(AuditExport),
    has_more: Type.Boolean(),
    next_cursor: Nullable(AuditExportJobId),
  },
  { additionalProperties: false },
);
export type AuditExportPage = Static<typeof AuditExportPage>;
