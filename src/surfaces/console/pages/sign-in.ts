// Sign-in and sign-out: the one-time code mailed to the person (docs/sign-in.md) or the tenant's SSO provider
// (docs/sso.md), both through the public sign-in routes; the session JWT they return goes into the HttpOnly cookie.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { callApi, type ApiError } from '../api.ts';
import { html, type Html } from '../html.ts';
import { barePage, errorBox, field, form, notice } from '../layout.ts';
import { consoleAccess, consoleReturnPath, csrfRefusal, formValue, send, type FormBody } from '../routing.ts';
import { csrfTokenFor, csrfTokenValid, endSession, readCookies, setCookie, startSession } from '../session.ts';

interface Grant {
  access_token: string;
  expires_in: number;
}

/** Binds an SSO round trip to the browser that started it. SameSite=Lax: the provider's redirect back is a
 * cross-site navigation, on which a Strict cookie would not be sent. */
const ssoStateCookie = 'svc_console_sso_state';
const ssoStateLifetimeSeconds = 600;

const returnField = (next: string | undefined) => (next ? html`<input type="hidden" name="next" value="${next}">` : '');

function signInForms(csrfToken: string, options: { error?: ApiError; email?: string; notice?: Html; requestId: string; next?: string }): Html {
  return barePage(
    'Sign in',
    html`${options.notice ?? ''}${errorBox(options.error, options.requestId)}
<section aria-labelledby="email-heading">
<h2 id="email-heading">With a code by email</h2>
${form(csrfToken, '/console/sign-in', html`${returnField(options.next)}${field({ name: 'email', label: 'Email', type: 'email', value: options.email, required: true, attributes: html` autocomplete="email"` })}
<button type="submit">Send me a code</button>`)}
</section>
<section aria-labelledby="sso-heading">
<h2 id="sso-heading">With your company's single sign-on</h2>
${form(csrfToken, '/console/sso', html`${field({ name: 'tenant_id', label: 'Tenant id', required: true, hint: 'The tenant your administrator set single sign-on up for.' })}
<button type="submit">Continue with SSO</button>`)}
</section>`,
  );
}

function codeForm(csrfToken: string, options: { challengeId: string; email: string; error?: ApiError; tenantIds?: readonly string[]; requestId: string; next?: string }): Html {
  const tenantChoice = options.tenantIds?.length
    ? html`<fieldset><legend>Your email belongs to several tenants: choose one</legend>${options.tenantIds.map(
        (tenantId, index) => html`<div class="choice"><input type="radio" id="tenant-${index}" name="tenant_id" value="${tenantId}"${index === 0 ? html` checked` : ''}><label for="tenant-${index}">${tenantId}</label></div>`,
      )}</fieldset>`
    : '';
  return barePage(
    'Enter your code',
    html`${notice(html`We sent a 6-digit code to <strong>${options.email}</strong>. It works once, for 10 minutes.`)}
${errorBox(options.error, options.requestId)}
${form(csrfToken, '/console/sign-in/verify', html`<input type="hidden" name="challenge_id" value="${options.challengeId}">
<input type="hidden" name="email" value="${options.email}">${returnField(options.next)}
${field({ name: 'code', label: 'Code', required: true, attributes: html` inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"` })}
${tenantChoice}
<button type="submit">Sign in</button>`)}
<p><a href="/console/sign-in">Start again</a></p>`,
  );
}

function signedIn(reply: FastifyReply, grant: Grant, next: string | undefined): FastifyReply {
  startSession(reply, grant.access_token, grant.expires_in);
  return send(reply, { redirect: next ?? '/console' });
}

export async function signInPages(app: FastifyInstance): Promise<void> {
  app.get('/sign-in', { config: consoleAccess }, async (request, reply) => {
    const { reason, next } = request.query as { reason?: string; next?: string };
    const status = reason === 'expired' ? notice('Your session has ended. Sign in again.') : reason === 'signed-out' ? notice('You are signed out.') : undefined;
    return send(reply, signInForms(csrfTokenFor(request, reply), { notice: status, requestId: request.id, next: consoleReturnPath(next) }));
  });

  app.post('/sign-in', { config: consoleAccess }, async (request, reply) => {
    if (!csrfTokenValid(request)) return csrfRefusal(reply);
    const email = formValue(request.body as FormBody, 'email').trim();
    const next = consoleReturnPath(formValue(request.body as FormBody, 'next'));
    const csrf = csrfTokenFor(request, reply);
    const answer = await callApi<{ challenge_id: string }>(app, request, undefined, { method: 'POST', url: '/v1/public/auth/login/start', body: { email } });
    if (answer.error) return send(reply, { status: answer.status, html: signInForms(csrf, { error: answer.error, email, requestId: request.id, next }) });
    return send(reply, codeForm(csrf, { challengeId: answer.body.challenge_id, email, requestId: request.id, next }));
  });

  app.post('/sign-in/verify', { config: consoleAccess }, async (request, reply) => {
    if (!csrfTokenValid(request)) return csrfRefusal(reply);
    const body = request.body as FormBody;
    const challengeId = formValue(body, 'challenge_id');
    const email = formValue(body, 'email');
    const tenantId = formValue(body, 'tenant_id');
    const next = consoleReturnPath(formValue(body, 'next'));
    const verify = { challenge_id: challengeId, code: formValue(body, 'code').trim(), ...(tenantId ? { tenant_id: tenantId } : {}) };
    const answer = await callApi<Grant>(app, request, undefined, { method: 'POST', url: '/v1/public/auth/challenges/verify', body: verify });
    if (!answer.error) return signedIn(reply, answer.body, next);
    const tenantIds = answer.error.code === 'auth.tenant_required' && Array.isArray(answer.error.details?.['tenant_ids']) ? (answer.error.details['tenant_ids'] as string[]) : undefined;
    const error = tenantIds ? { ...answer.error, message: 'Choose the tenant to sign in to, and enter the same code again.' } : answer.error;
    return send(reply, { status: answer.status, html: codeForm(csrfTokenFor(request, reply), { challengeId, email, error, tenantIds, requestId: request.id, next }) });
  });

  app.post('/sso', { config: consoleAccess }, async (request, reply) => {
    if (!csrfTokenValid(request)) return csrfRefusal(reply);
    const tenantId = formValue(request.body as FormBody, 'tenant_id').trim();
    const answer = await callApi<{ authorization_url: string; state: string }>(app, request, undefined, { method: 'POST', url: '/v1/auth/sso/start', body: { tenant_id: tenantId } });
    if (answer.error) return send(reply, { status: answer.status, html: signInForms(csrfTokenFor(request, reply), { error: answer.error, requestId: request.id }) });
    setCookie(reply, ssoStateCookie, answer.body.state, ssoStateLifetimeSeconds, { path: '/console/sso', sameSite: 'Lax' });
    return send(reply, { redirect: answer.body.authorization_url });
  });

  // The page the tenant registers as its SSO redirect URI (https://<host>/console/sso/callback).
  app.get('/sso/callback', { config: consoleAccess }, async (request, reply) => {
    const query = request.query as { code?: string; state?: string; iss?: string };
    const expected = readCookies(request).get(ssoStateCookie);
    setCookie(reply, ssoStateCookie, '', 0, { path: '/console/sso', sameSite: 'Lax' });
    if (!query.state || !query.code || expected === undefined || !sameText(expected, query.state)) {
      const error = { code: 'sso.state_invalid', message: 'This sign-in was not started in this browser, or it took too long. Start again.' };
      return send(reply, { status: 400, html: signInForms(csrfTokenFor(request, reply), { error, requestId: request.id }) });
    }
    const body = { state: query.state, code: query.code, ...(query.iss ? { iss: query.iss } : {}) };
    const answer = await callApi<Grant>(app, request, undefined, { method: 'POST', url: '/v1/auth/sso/callback', body });
    if (answer.error) return send(reply, { status: answer.status, html: signInForms(csrfTokenFor(request, reply), { error: answer.error, requestId: request.id }) });
    startSession(reply, answer.body.access_token, answer.body.expires_in);
    // A page of ours, not a redirect: this response ends a navigation that started at the provider (cross-site), on
    // which the browser would not send the new SameSite=Strict cookie; the link below is a same-site navigation.
    return send(reply, barePage('Signed in', html`<p>You are signed in.</p><p><a href="/console" data-testid="continue">Continue to the console</a></p>`));
  });

  app.post('/sign-out', { config: consoleAccess }, async (request, reply) => {
    if (!csrfTokenValid(request)) return csrfRefusal(reply);
    endSession(reply);
    return send(reply, { redirect: '/console/sign-in?reason=signed-out' });
  });
}

function sameText(left: string, right: string): boolean {
  const a = Buffer.from(left);
  const b = Buffer.from(right);
  return a.length === b.length && timingSafeEqual(a, b);
}
