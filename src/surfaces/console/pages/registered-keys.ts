// Registered keys: the Ed25519 public keys of the tenant's principals, agents and operators (register, list, revoke).
import type { FastifyInstance } from 'fastify';
import { queryString, type ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, select, table } from '../layout.ts';
import { formValue, getPage, postAction } from '../routing.ts';

interface RegisteredKeyView {
  id: string;
  kind: string;
  subject: string;
  public_key_ed25519_hex: string;
  registered_by: string;
  created_at: string;
  revoked_at: string | null;
}

const kinds = ['principal', 'agent', 'operator'] as const;
const registeredKeyIdPattern = /^rkey_[0-9a-f]{32}$/;

async function listPage(context: ConsoleContext, query: Record<string, string | undefined>, top: Html = html``): Promise<Html> {
  const kind = (kinds as readonly string[]).includes(query['kind'] ?? '') ? query['kind'] : undefined;
  const cursor = query['cursor'] && registeredKeyIdPattern.test(query['cursor']) ? query['cursor'] : undefined;
  const answer = await context.api<{ data: RegisteredKeyView[]; has_more: boolean; next_cursor: string | null }>({ method: 'GET', url: `/v1/registry/keys${queryString({ limit: 50, kind, cursor })}` });
  const canRevoke = context.may('DELETE /v1/registry/keys/:id');
  const rows = (answer.body.data ?? []).map(
    (key) => html`<tr><td><code>${key.id}</code></td><td>${key.kind}</td><td>${key.subject}</td><td><code class="wrap">${key.public_key_ed25519_hex}</code></td><td>${key.registered_by.replace('_', ' ')}</td><td>${when(key.created_at)}</td>
<td>${key.revoked_at ? html`revoked ${when(key.revoked_at)}` : canRevoke ? form(context.csrfToken, `/console/registered-keys/${key.id}/revoke`, html`<button type="submit" class="danger" data-confirm="Revoke this key? Proofs and signatures made with it stop being accepted." aria-label="Revoke ${key.subject}">Revoke</button>`, 'inline') : 'active'}</td></tr>`,
  );
  const register = context.may('POST /v1/registry/keys')
    ? html`<section class="card" aria-labelledby="register-heading"><h2 id="register-heading">Register a key</h2>${form(context.csrfToken, '/console/registered-keys', html`<div class="row">
${select({ name: 'kind', label: 'Kind', value: 'agent', options: kinds.map((name) => [name, name] as const) })}
${field({ name: 'subject', label: 'Subject (DID or name)', required: true })}
${field({ name: 'public_key_ed25519_hex', label: 'Ed25519 public key (64 hex digits)', required: true })}
</div><button type="submit">Register</button>`)}</section>`
    : '';
  const next = answer.body.has_more && answer.body.next_cursor ? html`<p><a href="/console/registered-keys${queryString({ kind, cursor: answer.body.next_cursor })}">Next page</a></p>` : '';
  return page(
    context,
    'Registered keys',
    html`${top}${errorBox(answer.error, context.request.id)}${register}
<form method="get" action="/console/registered-keys" class="filters" aria-label="Filter registered keys">${select({ name: 'kind', id: 'filter-kind', label: 'Show kind', value: kind ?? '', options: [['', 'Any kind'], ...kinds.map((name) => [name, name] as const)] })}<button type="submit">Filter</button></form>
${table('Registered keys', ['Id', 'Kind', 'Subject', 'Public key', 'Registered by', 'Created', 'Status'], rows, 'No registered keys.')}${next}`,
  );
}

export async function registeredKeyPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/registered-keys', (context, _params, query) => listPage(context, query));

  postAction(app, '/registered-keys', async (context, body) => {
    const answer = await context.api<RegisteredKeyView>({
      method: 'POST',
      url: '/v1/registry/keys',
      body: { kind: formValue(body, 'kind'), subject: formValue(body, 'subject').trim(), public_key_ed25519_hex: formValue(body, 'public_key_ed25519_hex').trim().toLowerCase() },
    });
    const top = answer.error ? errorBox(answer.error as ApiError, context.request.id) : notice(html`Key <code>${answer.body.id}</code> registered.`);
    return { status: answer.error ? answer.status : 200, html: await listPage(context, {}, top) };
  });

  postAction<{ id: string }>(app, '/registered-keys/:id/revoke', async (context, _body, params) => {
    const answer = await context.act<RegisteredKeyView>({ method: 'DELETE', url: `/v1/registry/keys/${encodeURIComponent(params.id)}` });
    const top = answer.error ? errorBox(answer.error, context.request.id) : notice(html`Key <code>${answer.body.id}</code> is revoked.`);
    return { status: answer.error ? answer.status : 200, html: await listPage(context, {}, top) };
  });
}
