// Policies: the managed templates, a template's versions with its head, preview and test of a rule (the trace in
// words), drafting a version, rolling it out, and rolling back to an earlier one after an explicit confirmation.
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, table } from '../layout.ts';
import { formValue, getPage, postAction, type FormBody } from '../routing.ts';
import { traceInWords } from './intents.ts';

interface TemplateView {
  template_id: string;
  use: string;
  parameters: { name: string; type: string; default: unknown }[];
}

interface VersionView {
  version_seq: number;
  human_summary: string;
  content_digest: string;
  created_at: string;
  is_head: boolean;
  parameters: Record<string, unknown>;
}

const templateIdPattern = /^[a-z0-9_]{1,64}$/;

/** The parameters typed into the form: `parameter.<name>` fields, read as JSON when they parse, else as text. */
function parametersOf(body: FormBody, template: TemplateView | undefined): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const parameter of template?.parameters ?? []) {
    const text = formValue(body, `parameter.${parameter.name}`).trim();
    if (text === '') continue;
    try {
      parameters[parameter.name] = JSON.parse(text);
    } catch {
      parameters[parameter.name] = text;
    }
  }
  return parameters;
}

interface Outcome {
  readonly top?: Html;
  readonly result?: Html;
  readonly body?: FormBody;
}

async function templatePage(context: ConsoleContext, templateId: string, outcome: Outcome = {}): Promise<Html> {
  const templates = await context.read<{ templates: TemplateView[] }>('/harbor/policy/v1/templates');
  const template = templates.templates.find((candidate) => candidate.template_id === templateId);
  if (!template) return page(context, 'Policy not found', html`<p data-testid="not-found">No template ${templateId}.</p>`);
  const versions = await context.api<{ versions: VersionView[]; current_head_digest: string | null }>({ method: 'GET', url: `/harbor/policy/v1/versions?template_id=${templateId}&limit=50` });
  const head = versions.body.current_head_digest;
  const canRollout = context.may('POST /harbor/policy/v1/rollout');
  const canRollback = context.may('POST /v1/policy/rollback');
  const rows = (versions.body.versions ?? []).map(
    (version) => html`<tr><td>${version.version_seq}${version.is_head ? html` <span class="badge">head</span>` : ''}</td><td>${version.human_summary}</td><td><code>${version.content_digest.slice(0, 16)}…</code></td><td>${when(version.created_at)}</td>
<td class="actions">${!version.is_head && canRollout ? form(context.csrfToken, `/console/policies/${templateId}/rollout`, html`<input type="hidden" name="version_seq" value="${version.version_seq}"><button type="submit">Roll out</button>`, 'inline') : ''}
${!version.is_head && head && canRollback ? html`<a href="/console/policies/${templateId}/rollback?target=${version.content_digest}">Roll back to this</a>` : ''}</td></tr>`,
  );
  const parameterFields = template.parameters.map((parameter) =>
    field({ name: `parameter.${parameter.name}`, label: `${parameter.name} (${parameter.type})`, value: formValue(outcome.body, `parameter.${parameter.name}`) || JSON.stringify(parameter.default) }),
  );
  const canDraft = context.may('POST /harbor/policy/v1/drafts');
  return page(
    context,
    `Policy ${template.template_id}`,
    html`${outcome.top ?? ''}<p>${template.use}</p>
${form(context.csrfToken, `/console/policies/${templateId}/try`, html`<fieldset><legend>Parameters</legend><div class="row">${parameterFields}</div></fieldset>
<div class="field"><label for="field-evidence">Evidence to test against (JSON)</label><textarea id="field-evidence" name="evidence" rows="4">${formValue(outcome.body, 'evidence') || '{"status": "completed", "cost_cents": 90}'}</textarea></div>
${field({ name: 'amount_cents', label: 'Intent amount in cents (for the test)', type: 'number', value: formValue(outcome.body, 'amount_cents') || '100' })}
<div class="buttons"><button type="submit" name="do" value="preview">Preview</button><button type="submit" name="do" value="test">Test</button>${canDraft ? html`<button type="submit" name="do" value="draft">Save as draft version</button>` : ''}</div>`)}
${outcome.result ?? ''}
<section aria-labelledby="versions-heading"><h2 id="versions-heading">Versions</h2>${errorBox(versions.error, context.request.id)}
${table(`Versions of ${templateId}, newest first`, ['Version', 'Summary', 'Digest', 'Created', 'Actions'], rows, 'No versions yet: save a draft, then roll it out.')}</section>
<p><a href="/console/policies">All templates</a></p>`,
  );
}

export async function policyPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/policies', async (context) => {
    const templates = await context.read<{ templates: TemplateView[] }>('/harbor/policy/v1/templates');
    const rows = templates.templates.map((template) => html`<tr><td><a href="/console/policies/${template.template_id}"><code>${template.template_id}</code></a></td><td>${template.use}</td><td>${template.parameters.map((parameter) => parameter.name).join(', ')}</td></tr>`);
    return page(context, 'Policies', table('Managed templates', ['Template', 'Use', 'Parameters'], rows, 'No templates.'));
  });

  getPage<{ template_id: string }>(app, '/policies/:template_id', (context, params) => templatePage(context, params.template_id));

  postAction<{ template_id: string }>(app, '/policies/:template_id/try', async (context, body, params) => {
    const templates = await context.read<{ templates: TemplateView[] }>('/harbor/policy/v1/templates');
    const template = templates.templates.find((candidate) => candidate.template_id === params.template_id);
    const parameters = parametersOf(body, template);
    const action = formValue(body, 'do');
    if (action === 'draft') {
      const answer = await context.api<VersionView>({ method: 'POST', url: '/harbor/policy/v1/drafts', body: { template_id: params.template_id, parameters } });
      const top = answer.error ? errorBox(answer.error, context.request.id) : notice(html`Version ${answer.body.version_seq} saved as a draft: ${answer.body.human_summary}`);
      return { status: answer.error ? answer.status : 200, html: await templatePage(context, params.template_id, { top, body }) };
    }
    if (action === 'test') {
      let evidence: unknown;
      try {
        evidence = JSON.parse(formValue(body, 'evidence'));
      } catch {
        const error: ApiError = { code: 'request.malformed_json', message: 'The evidence is not valid JSON.' };
        return { status: 400, html: await templatePage(context, params.template_id, { top: errorBox(error, context.request.id), body }) };
      }
      const answer = await context.api<{ predicate_evaluation: { passed: boolean; trace: { kind: string; detail: string; data?: { passed?: boolean } }[] } }>({
        method: 'POST',
        url: '/harbor/policy/v1/test',
        body: { template_id: params.template_id, parameters, evidence, amount_cents: Number(formValue(body, 'amount_cents') || 0) },
      });
      const result = answer.error ? undefined : html`<section class="card"><h2>Test: ${answer.body.predicate_evaluation.passed ? 'passes' : 'fails'}</h2>${traceInWords(answer.body.predicate_evaluation.trace)}</section>`;
      return { status: answer.error ? answer.status : 200, html: await templatePage(context, params.template_id, { top: errorBox(answer.error, context.request.id), result, body }) };
    }
    const answer = await context.api<{ human_summary: string; materialized_dsl: unknown }>({ method: 'POST', url: '/harbor/policy/v1/preview', body: { template_id: params.template_id, parameters } });
    const result = answer.error ? undefined : html`<section class="card"><h2>Preview</h2><p data-testid="summary">${answer.body.human_summary}</p><pre>${JSON.stringify(answer.body.materialized_dsl, null, 2)}</pre></section>`;
    return { status: answer.error ? answer.status : 200, html: await templatePage(context, params.template_id, { top: errorBox(answer.error, context.request.id), result, body }) };
  });

  postAction<{ template_id: string }>(app, '/policies/:template_id/rollout', async (context, body, params) => {
    const answer = await context.api({ method: 'POST', url: '/harbor/policy/v1/rollout', body: { template_id: params.template_id, version_seq: Number(formValue(body, 'version_seq')) } });
    const top = answer.error ? errorBox(answer.error, context.request.id) : notice(`Version ${formValue(body, 'version_seq')} is now the head: new intents bind to it.`);
    return { status: answer.error ? answer.status : 200, html: await templatePage(context, params.template_id, { top }) };
  });

  // The confirmation step: what the head is now, what it goes back to; nothing moves until the form is sent.
  getPage<{ template_id: string }>(app, '/policies/:template_id/rollback', async (context, params, query) => {
    const target = query['target'] ?? '';
    if (!templateIdPattern.test(params.template_id)) return templatePage(context, params.template_id);
    const versions = await context.read<{ versions: VersionView[]; current_head_digest: string | null }>(`/harbor/policy/v1/versions?template_id=${params.template_id}&limit=200`);
    const current = versions.versions.find((version) => version.is_head);
    const chosen = versions.versions.find((version) => version.content_digest === target);
    if (!current || !chosen) return templatePage(context, params.template_id, { top: notice('Choose a version to roll back to from the list.') });
    return page(
      context,
      `Roll back ${params.template_id}?`,
      html`<div class="card warning" role="alert"><p>New intents will bind to version <strong>${chosen.version_seq}</strong> (${chosen.human_summary}) instead of the current head, version <strong>${current.version_seq}</strong> (${current.human_summary}). Intents already created keep their rule.</p></div>
${form(context.csrfToken, `/console/policies/${params.template_id}/rollback`, html`<input type="hidden" name="expected_head_digest" value="${current.content_digest}"><input type="hidden" name="target_digest" value="${chosen.content_digest}">
<div class="choice"><input type="checkbox" id="field-confirm" name="confirm" value="true" required><label for="field-confirm">I understand: roll back to version ${chosen.version_seq}</label></div>
<div class="buttons"><button type="submit" class="danger">Roll back</button> <a href="/console/policies/${params.template_id}">Cancel</a></div>`)}`,
    );
  });

  postAction<{ template_id: string }>(app, '/policies/:template_id/rollback', async (context, body, params) => {
    const answer = await context.api({
      method: 'POST',
      url: '/v1/policy/rollback',
      body: { template_id: params.template_id, expected_head_digest: formValue(body, 'expected_head_digest'), target_digest: formValue(body, 'target_digest'), confirm: formValue(body, 'confirm') === 'true' },
    });
    const top = answer.error ? errorBox(answer.error, context.request.id) : notice('Rolled back: new intents bind to the chosen version.');
    return { status: answer.error ? answer.status : 200, html: await templatePage(context, params.template_id, { top }) };
  });
}
