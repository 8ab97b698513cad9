// API keys: create (role, name, and for a restricted key its presets and scopes; the secret is shown once, with a
// copy button), list with last use, revoke. Admin routes: other roles do not see this page's controls, and the API
// refuses them anyway.
import type { FastifyInstance } from 'fastify';
import { knownScopes, scopeGrant, scopePresets } from '../../../credentials/mcp-scopes.ts';
import { roles } from '../../../credentials/roles.ts';
import { queryString, type ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, select, shownOnce, table } from '../layout.ts';
import { formValue, formValues, getPage, postAction, type FormBody } from '../routing.ts';

interface ApiKeyView {
  key_id: string;
  role: string;
  name: string | null;
  key_kind: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const keyIdPattern = /^key_[0-9a-f]{32}$/;

/** What the create form was sent with, shown again when it is refused so that nothing has to be typed twice. */
interface CreateValues {
  readonly name: string;
  readonly role: string;
  readonly kind: 'standard' | 'restricted';
  readonly scopes: readonly string[];
}

const emptyCreate: CreateValues = { name: '', role: 'agent', kind: 'standard', scopes: [] };

/** One checkbox of the scopes fieldset (`name="scopes"`): a preset or a scope, with what it grants in words. */
function scopeChoice(id: string, value: string, ticked: boolean, hint: Html | string): Html {
  return html`<div class="choice"><input type="checkbox" id="${id}" name="scopes" value="${value}"${ticked ? html` checked` : ''}><label for="${id}"><code>${value}</code> <span class="hint">${hint}</span></label></div>`;
}

function createForm(context: ConsoleContext, values: CreateValues): Html {
  const ticked = new Set(values.scopes);
  // The presets `svc key create --scopes` takes, first: a starting set is what most keys want.
  const presets = scopePresets.map((preset, index) => scopeChoice(`preset-${index}`, preset.id, ticked.has(preset.id), html`${preset.description} (${preset.scopes.join(', ')})`));
  const scopes = knownScopes().map((scope, index) => scopeChoice(`scope-${index}`, scope, ticked.has(scope), scopeGrant(scope) ?? ''));
  return html`<section class="card" aria-labelledby="create-heading"><h2 id="create-heading">Create a key</h2>
${form(context.csrfToken, '/console/api-keys', html`<div class="row">
${field({ name: 'name', label: 'Name', value: values.name, hint: 'What the key is for, e.g. "billing agent".' })}
${select({ name: 'role', label: 'Role', value: values.role, options: roles.map((role) => [role, role] as const) })}
${select({ name: 'key_kind', label: 'Kind', value: values.kind, options: [['standard', 'Standard (bound by role)'], ['restricted', 'Restricted (role and the scopes below)']] })}
</div>
<fieldset data-testid="scopes"><legend>Scopes of a restricted key</legend>
<p class="hint">A restricted key may do only what its role allows <em>and</em> what a ticked preset or scope grants. Ticking one makes the key restricted; a standard key with scopes ticked is refused, never issued.</p>
<h3 class="small">Presets</h3><div class="choices">${presets}</div>
<h3 class="small">Scopes</h3><div class="choices">${scopes}</div></fieldset>
<button type="submit">Create key</button>`)}</section>`;
}

/** The form's values, or the refusal of a kind and scopes that disagree: the console never guesses a key's power. */
function createValuesOf(body: FormBody | undefined): { values: CreateValues; conflict?: string } {
  const values: CreateValues = {
    name: formValue(body, 'name').trim(),
    role: formValue(body, 'role'),
    kind: formValue(body, 'key_kind') === 'restricted' ? 'restricted' : 'standard',
    scopes: formValues(body, 'scopes'),
  };
  if (values.kind === 'standard' && values.scopes.length > 0) {
    return { values, conflict: `Scopes are ticked (${values.scopes.join(', ')}) but the kind is Standard, which only the role bounds: choose Restricted to limit the key to them, or untick them. No key was created.` };
  }
  if (values.kind === 'restricted' && values.scopes.length === 0) {
    return { values, conflict: 'A restricted key may do only what its scopes grant: tick at least one preset or scope, or choose Standard. No key was created.' };
  }
  return { values };
}

async function listPage(context: ConsoleContext, query: Record<string, string | undefined>, top: Html = html``, values: CreateValues = emptyCreate): Promise<Html> {
  const cursor = query['cursor'] && keyIdPattern.test(query['cursor']) ? query['cursor'] : undefined;
  const answer = await context.api<{ data: ApiKeyView[]; has_more: boolean; next_cursor: string | null }>({ method: 'GET', url: `/v1/admin/api-keys${queryString({ limit: 50, cursor })}` });
  const canRevoke = context.may('DELETE /v1/admin/api-keys/:key_id');
  const rows = (answer.body.data ?? []).map(
    (key) => html`<tr data-key-id="${key.key_id}">
<td><code>${key.key_id}</code></td><td>${key.name ?? ''}</td><td>${key.role}</td><td>${key.key_kind}${key.scopes.length ? html`<br><span class="hint">${key.scopes.join(', ')}</span>` : ''}</td>
<td>${when(key.created_at)}</td><td>${key.last_used_at ? when(key.last_used_at) : 'never'}</td>
<td>${key.revoked_at
  ? html`revoked ${when(key.revoked_at)}`
  : canRevoke
    ? form(context.csrfToken, `/console/api-keys/${key.key_id}/revoke`, html`<button type="submit" class="danger" data-confirm="Revoke this key? Clients using it stop working within seconds." aria-label="Revoke ${key.name ?? key.key_id}">Revoke</button>`, 'inline')
    : 'active'}</td></tr>`,
  );
  const next = answer.body.has_more && answer.body.next_cursor ? html`<p><a href="/console/api-keys?cursor=${answer.body.next_cursor}">Next page</a></p>` : '';
  return page(
    context,
    'API keys',
    html`${top}${errorBox(answer.error, context.request.id)}${context.may('POST /v1/admin/api-keys') ? createForm(context, values) : ''}
${table('API keys of this tenant', ['Key', 'Name', 'Role', 'Kind', 'Created', 'Last used', 'Status'], rows, 'No API keys yet.')}${next}`,
  );
}

function secretShownOnce(key: ApiKeyView & { api_key: string }): Html {
  return shownOnce({ name: 'new-key', heading: 'Your new key', kept: 'The service keeps only a digest of it.', label: html`Key <code>${key.key_id}</code> (${key.role})`, secret: key.api_key });
}

export async function apiKeyPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/api-keys', (context, _params, query) => listPage(context, query));

  postAction(app, '/api-keys', async (context, body) => {
    const { values, conflict } = createValuesOf(body);
    if (conflict) return { status: 400, html: await listPage(context, {}, errorBox({ code: 'console.key_kind_conflict', message: conflict }, context.request.id), values) };
    const answer = await context.api<ApiKeyView & { api_key: string }>({
      method: 'POST',
      url: '/v1/admin/api-keys',
      body: { role: values.role, ...(values.name ? { name: values.name } : {}), ...(values.kind === 'restricted' ? { scopes: values.scopes } : {}) },
    });
    if (answer.error) return { status: answer.status, html: await listPage(context, {}, errorBox(answer.error as ApiError, context.request.id), values) };
    // Answered in place, never by redirect: the secret must not travel in a URL or be re-readable from history.
    return listPage(context, {}, secretShownOnce(answer.body));
  });

  postAction<{ key_id: string }>(app, '/api-keys/:key_id/revoke', async (context, _body, params) => {
    const answer = await context.act<ApiKeyView>({ method: 'DELETE', url: `/v1/admin/api-keys/${encodeURIComponent(params.key_id)}` });
    if (answer.error) return { status: answer.status, html: await listPage(context, {}, errorBox(answer.error, context.request.id)) };
    return listPage(context, {}, notice(html`Key <code>${answer.body.key_id}</code> is revoked.`));
  });
}
