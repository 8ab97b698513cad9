// Audit exports: create (a time range or one intent, a disclosure tier), watch their status, download the signed
// bundle, delete. The download goes through the API's own download route with a fresh download token that the
// server uses at once: the token never reaches the page.
import type { FastifyInstance } from 'fastify';
import { ApiFailure, PageNotFound, type ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, select, table } from '../layout.ts';
import { formValue, getPage, postAction, type FormBody } from '../routing.ts';
import { callApi, type ApiError } from '../api.ts';

interface ExportView {
  job_id: string;
  status: string;
  disclosure_tier: string;
  filter: { time_start?: string; time_end?: string; intent_id?: string } | null;
  created_at: string;
  expires_at: string;
  bundle_size_bytes: number | null;
  bundle_sha256: string | null;
  error: unknown;
}

async function listPage(context: ConsoleContext, top: Html = html``): Promise<Html> {
  const answer = await context.api<{ jobs: ExportView[] }>({ method: 'GET', url: '/v1/compliance/audit-exports?limit=50' });
  const canDelete = context.may('DELETE /v1/compliance/audit-exports/:job_id');
  const rows = (answer.body.jobs ?? []).map((job) => {
    const filter = job.filter?.intent_id ? `intent ${job.filter.intent_id}` : [job.filter?.time_start, job.filter?.time_end].filter(Boolean).map(when).join(' → ') || 'everything';
    return html`<tr><td><code>${job.job_id}</code></td><td><span class="badge" data-testid="export-status">${job.status}</span></td><td>${job.disclosure_tier}</td><td>${filter}</td><td>${when(job.created_at)}</td><td>${when(job.expires_at)}</td>
<td class="actions">${job.status === 'ready' ? html`<a href="/console/exports/${job.job_id}/download" download>Download${job.bundle_size_bytes === null ? '' : ` (${Math.ceil(job.bundle_size_bytes / 1024)} KiB)`}</a>` : ''}
${canDelete && job.status !== 'deleted' ? form(context.csrfToken, `/console/exports/${job.job_id}/delete`, html`<button type="submit" class="danger" data-confirm="Delete this export? Its bundle can no longer be downloaded." aria-label="Delete export ${job.job_id}">Delete</button>`, 'inline') : ''}</td></tr>`;
  });
  const create = context.may('POST /v1/compliance/audit-exports')
    ? html`<section class="card" aria-labelledby="create-export"><h2 id="create-export">New export</h2>${form(context.csrfToken, '/console/exports', html`<div class="row">
${field({ name: 'time_start', label: 'From (RFC 3339, optional)', hint: 'e.g. 2026-11-01T00:00:00Z' })}
${field({ name: 'time_end', label: 'To (RFC 3339, optional)' })}
${field({ name: 'intent_id', label: 'Or one intent id (optional)' })}
${select({ name: 'disclosure_tier', label: 'Disclosure tier', value: 'standard', options: [['standard', 'Standard'], ['extended', 'Extended']] })}
</div><button type="submit">Create export</button>`)}</section>`
    : '';
  return page(context, 'Audit exports', html`${top}${errorBox(answer.error, context.request.id)}${create}
${table('Audit exports, newest first', ['Job', 'Status', 'Tier', 'Covers', 'Created', 'Expires', 'Actions'], rows, 'No audit exports yet.')}`);
}

function exportRequest(body: FormBody) {
  const filter: Record<string, string> = {};
  for (const name of ['time_start', 'time_end', 'intent_id']) {
    const value = formValue(body, name).trim();
    if (value) filter[name] = value;
  }
  return { ...(Object.keys(filter).length ? { filter } : {}), disclosure_tier: formValue(body, 'disclosure_tier') || 'standard' };
}

export async function exportPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/exports', (context) => listPage(context));

  postAction(app, '/exports', async (context, body) => {
    const answer = await context.api<ExportView>({ method: 'POST', url: '/v1/compliance/audit-exports', body: exportRequest(body) });
    const top = answer.error ? errorBox(answer.error as ApiError, context.request.id) : notice(html`Export <code>${answer.body.job_id}</code> is ${answer.body.status}.`);
    return { status: answer.error ? answer.status : 200, html: await listPage(context, top) };
  });

  postAction<{ job_id: string }>(app, '/exports/:job_id/delete', async (context, _body, params) => {
    const answer = await context.act<ExportView>({ method: 'DELETE', url: `/v1/compliance/audit-exports/${encodeURIComponent(params.job_id)}` });
    const top = answer.error ? errorBox(answer.error, context.request.id) : notice(html`Export <code>${answer.body.job_id}</code> is deleted.`);
    return { status: answer.error ? answer.status : 200, html: await listPage(context, top) };
  });

  // Sends the bundle itself, not a page; errors are pages.
  getPage<{ job_id: string }>(app, '/exports/:job_id/download', async (context, params) => {
    const job = await context.read<{ download_token: string }>(`/v1/compliance/audit-exports/${encodeURIComponent(params.job_id)}?issue_download=1`);
    // The download route takes only the download token: called without the session, as any downloader would.
    const bundle = await callApi(context.app, context.request, job.download_token, { method: 'POST', url: `/v1/compliance/audit-exports/${encodeURIComponent(params.job_id)}/bundle` });
    if (bundle.error?.code === 'audit_export.not_found') throw new PageNotFound(bundle.error);
    if (bundle.error) throw new ApiFailure(bundle.error, bundle.status);
    context.reply.header('content-disposition', String(bundle.headers['content-disposition'] ?? 'attachment'));
    context.reply.header('x-bundle-sha256', String(bundle.headers['x-bundle-sha256'] ?? ''));
    return { file: bundle.raw, type: 'application/zip' };
  });
}
