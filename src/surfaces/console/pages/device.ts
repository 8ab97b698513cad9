// Device login approval (RFC 8628): the person types the code their CLI or SDK shows (or follows the link that
// carries it), sees which client asks and for what, and approves or denies. The device then receives a session of
// its own, or the API key it asked for by name.
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page } from '../layout.ts';
import { formValue, getPage, postAction } from '../routing.ts';

interface DeviceLoginView {
  user_code: string;
  client_name: string | null;
  status: string;
  expires_at: string;
  decided_at: string | null;
  requested_environment: 'sandbox' | 'live' | null;
  requested_key_role: string | null;
}

/** What approving gives the device: the person's session, or the API key the device asked for by name. */
function whatItAsks(context: ConsoleContext, login: DeviceLoginView): Html {
  const who = login.client_name ? html`<strong>${login.client_name}</strong>` : 'A device';
  if (login.requested_key_role === null) return html`<p>${who} asks to sign in as you to <strong>${context.viewer.tenantId}</strong> with your role (${context.viewer.role}).</p>`;
  return html`<p data-testid="device-asks-key">${who} asks for an API key of <strong>${context.viewer.tenantId}</strong> with the role
<strong>${login.requested_key_role}</strong>, in a <strong>${login.requested_environment}</strong> tenant. Approving mints that key for it
(only an admin may); it works until revoked under API keys.</p>`;
}

function lookupForm(context: ConsoleContext, userCode = ''): Html {
  return html`<form method="get" action="/console/device" aria-label="Find a device login">
${field({ name: 'user_code', label: 'Code shown by your device', value: userCode, required: true, hint: 'Eight letters, e.g. WDJB-MJHT.', attributes: html` autocomplete="off" autocapitalize="characters" spellcheck="false"` })}
<button type="submit">Continue</button></form>`;
}

async function devicePage(context: ConsoleContext, userCode: string | undefined, top: Html = html``): Promise<Html> {
  if (!userCode) return page(context, 'Device login', html`${top}<p>Signing in from a terminal or a program? Enter the code it shows.</p>${lookupForm(context)}`);
  const answer = await context.api<DeviceLoginView>({ method: 'GET', url: `/v1/auth/device/${encodeURIComponent(userCode)}` });
  if (answer.error) return page(context, 'Device login', html`${top}${errorBox(answer.error, context.request.id)}${lookupForm(context, userCode)}`);
  const login = answer.body;
  const pending = login.status === 'pending';
  return page(
    context,
    'Device login',
    html`${top}<div class="card" data-testid="device-login">
${whatItAsks(context, login)}
<p>Code <code data-testid="device-code">${login.user_code}</code> · status <span class="badge" data-testid="device-status">${login.status}</span> · ${pending ? `expires ${when(login.expires_at)}` : `decided ${when(login.decided_at)}`}</p>
${pending
  ? html`<p>Approve only if you started this sign-in yourself, just now.</p>
<div class="buttons">${form(context.csrfToken, '/console/device', html`<input type="hidden" name="user_code" value="${login.user_code}"><input type="hidden" name="decision" value="approve"><button type="submit">Approve</button>`, 'inline')}
${form(context.csrfToken, '/console/device', html`<input type="hidden" name="user_code" value="${login.user_code}"><input type="hidden" name="decision" value="deny"><button type="submit" class="danger">Deny</button>`, 'inline')}</div>`
  : ''}</div>`,
  );
}

export async function devicePages(app: FastifyInstance): Promise<void> {
  getPage(app, '/device', (context, _params, query) => devicePage(context, query['user_code']?.trim() || undefined));

  postAction(app, '/device', async (context, body) => {
    const userCode = formValue(body, 'user_code');
    const decision = formValue(body, 'decision');
    const answer = await context.api<DeviceLoginView>({ method: 'POST', url: '/v1/auth/device/approve', body: { user_code: userCode, decision } });
    const top = answer.error
      ? errorBox(answer.error as ApiError, context.request.id)
      : notice(decision === 'approve' ? 'Approved: your device is signed in within a few seconds.' : 'Denied: the device gets no access.');
    return { status: answer.error ? answer.status : 200, html: await devicePage(context, userCode, top) };
  });
}
