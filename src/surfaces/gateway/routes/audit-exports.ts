// Audit export routes (docs/audit-exports.md): create (the bundle is built at once), list, read
// (with a fresh download token while the bundle is ready), delete (idempotent), and the download route, which takes only a
// download JWT for its job (config.access `{ download: 'audit-export' }`, src/plugins/access.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  AuditExport,
  AuditExportCreateBody,
  AuditExportListQuery,
  AuditExportPage,
  AuditExportParams,
  AuditExportRead,
  AuditExportReadQuery,
  AuditExportWithDownload,
} from '../../../contracts/audit-exports.ts';
import { authenticatedBodyErrors, authenticatedErrors, errorResponses, routeErrorStatuses } from '../../../contracts/common.ts';
import { deleteAuditExport, findAuditExport, findAuditExportBundle, listAuditExports } from '../../../db/audit-export-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { downloadGrantOf, principalOf, type RouteAccess } from '../../../plugins/access.ts';
import { createAuditExport, issueDownloadToken, presentAuditExport } from '../../../services/audit-export-service.ts';

/** Operators and auditors export (an auditor's reason to exist); deleting is not read-only, so not auditors. */
const exporters: RouteAccess = { roles: ['admin', 'operator', 'auditor'] };
/** Listing and reading are the client's `compliance:read` tools; creating and deleting are not scoped for restricted keys. */
const exportReaders: RouteAccess = { roles: ['admin', 'operator', 'auditor'], scope: 'mcp.compliance:read' };
const deleters: RouteAccess = { roles: ['admin', 'operator'] };
const downloaders: RouteAccess = { download: 'audit-export' };

/** The bundle: a zip with its manifest and signature (docs/audit-exports.md). */
const BundleZip = {
  description: 'The bundle, a zip; `x-bundle-sha256` is its SHA-256 (hex).',
  headers: { 'x-bundle-sha256': Type.String(), 'content-disposition': Type.String() },
  content: { 'application/zip': { schema: Type.String({ format: 'binary' }) } },
};

export async function auditExportRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post(
    '/v1/compliance/audit-exports',
    {
      config: { access: exporters },
      schema: {
        summary: 'Create an audit export (built at once) with a download token',
        body: AuditExportCreateBody,
        response: { 201: AuditExportWithDownload, ...authenticatedBodyErrors(422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const job = await createAuditExport(app.database, app.gatewayKeys, principal, request.body ?? {});
      return reply.code(201).send({ ...presentAuditExport(job), ...(await issueDownloadToken(app.gatewayKeys, job)) });
    },
  );

  routes.get(
    '/v1/compliance/audit-exports',
    {
      config: { access: exportReaders },
      schema: { summary: 'List audit exports', querystring: AuditExportListQuery, response: { 200: AuditExportPage, ...authenticatedErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listAuditExports(tx, tenantId, { limit, startingAfter: cursor }));
      const nextCursor = page.hasMore ? (page.jobs.at(-1)?.jobId ?? null) : null;
      return { object: 'list', tenant_realm_id: tenantId, jobs: page.jobs.map(presentAuditExport), has_more: page.hasMore, next_cursor: nextCursor } as const;
    },
  );

  routes.get(
    '/v1/compliance/audit-exports/:job_id',
    {
      config: { access: exportReaders },
      schema: {
        summary: 'Read an audit export (with a fresh download token while it is ready)',
        params: AuditExportParams,
        querystring: AuditExportReadQuery,
        response: { 200: AuditExportRead, ...authenticatedErrors(404) },
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
  routes.delete(
    '/v1/compliance/audit-exports/:job_id',
    {
      config: { access: deleters },
      schema: { summary: 'Delete an audit export', params: AuditExportParams, response: { 200: AuditExport, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const job = await app.database.tenant(tenantId, (tx) => deleteAuditExport(tx, tenantId, request.params.job_id));
      if (!job) throw new ServiceError('audit_export.not_found');
      return presentAuditExport(job);
    },
  );

  // The download route. The access layer has checked the download JWT and that it names this job; its tenant is
  // the token's tid, and the job is read inside that tenant only. Only a download token opens it: no 403.
  routes.post(
    '/v1/compliance/audit-exports/:job_id/bundle',
    {
      config: { access: downloaders },
      schema: {
        summary: 'Download an audit export\'s bundle (download token only)',
        params: AuditExportParams,
        response: { 200: BundleZip, ...errorResponses(...routeErrorStatuses, 401, 404, 409, 410) },
      },
    },
    async (request, reply) => {
      const grant = downloadGrantOf(request);
      const found = await app.database.tenant(grant.tenantId, (tx) => findAuditExportBundle(tx, grant.tenantId, request.params.job_id));
      if (!found) throw new ServiceError('audit_export.not_found');
      const { job, bundle } = found;
      if (job.status === 'deleted' || job.status === 'expired') throw new ServiceError('audit_export.gone', { details: { status: job.status } });
      if (job.status !== 'ready' || !bundle) throw new ServiceError('audit_export.not_ready', { details: { status: job.status } });
      // The zip as bytes: a Buffer passes the serializer untouched, so the reply is used untyped here.
      return (reply as FastifyReply)
        .type('application/zip')
        .header('content-disposition', `attachment; filename="audit-export-${job.jobId}.zip"`)
        .header('x-bundle-sha256', job.bundleSha256?.toString('hex') ?? '')
        .send(bundle);
    },
  );
}
