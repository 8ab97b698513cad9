// Audit export routes (docs/audit-exports.md): create (the bundle is built at once), list, read
// (with a fresh download token while the bundle is ready), delete (idempotent), and the download route, which takes only a
// download JWT for its job (config.access `{ download: 'audit-export' }`, src/plugins/access.ts).
import type { FastifyInstance } from 'fastify';
import { deleteAuditExport, findAuditExport, findAuditExportBundle, listAuditExports } from '../../../db/audit-export-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { auditExportRetentionHoursMax, pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { downloadGrantOf, principalOf, type RouteAccess } from '../../../plugins/access.ts';
import {
  createAuditExport,
  issueDownloadToken,
  presentAuditExport,
  type AuditExportRequest,
} from '../../../services/audit-export-service.ts';

const jobIdSchema = { type: 'string', pattern: '^job_[0-9a-f]{32}$' } as const;

/** Operators and auditors export (an auditor's reason to exist); deleting is not read-only, so not auditors. */
const exporters: RouteAccess = { roles: ['admin', 'operator', 'auditor'] };
/** Listing and reading are the client's `compliance:read` tools; creating and deleting are not scoped for restricted keys. */
const exportReaders: RouteAccess = { roles: ['admin', 'operator', 'auditor'], scope: 'mcp.compliance:read' };
const deleters: RouteAccess = { roles: ['admin', 'operator'] };
const downloaders: RouteAccess = { download: 'audit-export' };

const createBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    filter: {
      type: 'object',
      additionalProperties: false,
      properties: {
        time_start: { type: 'string', maxLength: 64 },
        time_end: { type: 'string', maxLength: 64 },
        intent_id: { type: 'string', maxLength: 64 },
      },
    },
    disclosure_tier: { type: 'string', enum: ['standard', 'extended'] },
    retention_hours: { type: 'integer', minimum: 1, maximum: auditExportRetentionHoursMax },
  },
} as const;

const byId = { params: { type: 'object', required: ['job_id'], properties: { job_id: jobIdSchema } } } as const;

export async function auditExportRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: AuditExportRequest | undefined }>(
    '/v1/compliance/audit-exports',
    { config: { access: exporters }, schema: { body: createBody } },
    async (request, reply) => {
      const principal = principalOf(request);
      const job = await createAuditExport(app.database, app.gatewayKeys, principal, request.body ?? {});
      return reply.code(201).send({ ...presentAuditExport(job), ...(await issueDownloadToken(app.gatewayKeys, job)) });
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/v1/compliance/audit-exports',
    {
      config: { access: exportReaders },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault }, cursor: jobIdSchema },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listAuditExports(tx, tenantId, { limit, startingAfter: cursor }));
      const nextCursor = page.hasMore ? (page.jobs.at(-1)?.jobId ?? null) : null;
      return { object: 'list', tenant_realm_id: tenantId, jobs: page.jobs.map(presentAuditExport), has_more: page.hasMore, next_cursor: nextCursor };
    },
  );

  app.get<{ Params: { job_id: string }; Querystring: { issue_download?: '0' | '1' | 'true' | 'false' } }>(
    '/v1/compliance/audit-exports/:job_id',
    {
      config: { access: exportReaders },
      schema: {
        ...byId,
        querystring: { type: 'object', additionalProperties: false, properties: { issue_download: { type: 'string', enum: ['0', '1', 'true', 'false'] } } },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const job = await app.database.tenant(tenantId, (tx) => findAuditExport(tx, tenantId, request.params.job_id));
      if (!job) throw new ServiceError('audit_export.not_found');
      // Like create, a read of a ready job carries a fresh download credential; `issue_download=0` (or `false`) asks
      // for the record alone. A token only for a bundle that can still be downloaded.
      const wantsToken = request.query.issue_download !== '0' && request.query.issue_download !== 'false';
      const download = wantsToken && job.status === 'ready' ? await issueDownloadToken(app.gatewayKeys, job) : {};
      return { ...presentAuditExport(job), ...download };
    },
  );

  // Idempotent: deleting a deleted job answers the same record (status deleted, first deleted_at).
  app.delete<{ Params: { job_id: string } }>('/v1/compliance/audit-exports/:job_id', { config: { access: deleters }, schema: byId }, async (request) => {
    const { tenantId } = principalOf(request);
    const job = await app.database.tenant(tenantId, (tx) => deleteAuditExport(tx, tenantId, request.params.job_id));
    if (!job) throw new ServiceError('audit_export.not_found');
    return presentAuditExport(job);
  });

  // The download route. The access layer has checked the download JWT and that it names this job; its tenant is
  // the token's tid, and the job is read inside that tenant only.
  app.post<{ Params: { job_id: string } }>(
    '/v1/compliance/audit-exports/:job_id/bundle',
    { config: { access: downloaders }, schema: byId },
    async (request, reply) => {
      const grant = downloadGrantOf(request);
      const found = await app.database.tenant(grant.tenantId, (tx) => findAuditExportBundle(tx, grant.tenantId, request.params.job_id));
      if (!found) throw new ServiceError('audit_export.not_found');
      const { job, bundle } = found;
      if (job.status === 'deleted' || job.status === 'expired') throw new ServiceError('audit_export.gone', { details: { status: job.status } });
      if (job.status !== 'ready' || !bundle) throw new ServiceError('audit_export.not_ready', { details: { status: job.status } });
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="audit-export-${job.jobId}.zip"`)
        .header('x-bundle-sha256', job.bundleSha256?.toString('hex') ?? '')
        .send(bundle);
    },
  );
}
