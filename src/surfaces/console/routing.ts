// How a console route runs: pages (GET) and actions (POST, CSRF-checked first) resolve the session cookie to a
// viewer through the API (`GET /v1/auth/principal`), run their handler, and answer HTML or a redirect. A session
// the API refuses sends the browser back to sign-in; a missing thing is the 404 page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../../credentials/roles.ts';
import { errorCatalogue } from '../../errors/catalogue.ts';
import { callApi } from './api.ts';
import { ApiFailure, ConsoleContext, PageNotFound, SessionEnded, sessionEnding, type Viewer } from './context.ts';
import { Html, html } from './html.ts';
import type { FormBody } from './input.ts';
import { barePage, errorBox, page } from './layout.ts';
// For its declaration of the route option `sessionTokenOf`.
import '../../plugins/rate-limit.ts';
// For its declaration of `reply.errorCode`, which the request's log line reports.
import type {} from '../../plugins/request-log.ts';
import { csrfTokenFor, csrfTokenValid, endSession, sessionTokenOf } from './session.ts';

export interface Redirect {
  readonly redirect: string;
}

export type PageResult = Html | Redirect | { readonly status: number; readonly html: Html } | { readonly file: Buffer; readonly type: string };

/** Console routes are public to the access hook: they authenticate with the session cookie and pass it on as the
 * bearer of every API call they make, where the access rules apply. */
export const consoleAccess = { access: { public: true } } as const;

/** A signed-in page or action: public to the access hook like the others, but the rate limiter counts a request
 * with a valid session against its user's budget, not the address's (docs/console.md "Rate limits"). */
const signedInConsoleConfig = { ...consoleAccess, sessionTokenOf } as const;

export type { FormBody } from './input.ts';

/** One value of a form field (the first when repeated); empty text when absent. */
export function formValue(body: FormBody | undefined, name: string): string {
  const value = body?.[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** Every value of a repeated form field (checkboxes). */
export function formValues(body: FormBody | undefined, name: string): string[] {
  const value = body?.[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function send(reply: FastifyReply, result: PageResult): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (result instanceof Html) return reply.code(200).type('text/html; charset=utf-8').send(result.text);
  if ('redirect' in result) return reply.code(303).header('location', result.redirect).send();
  if ('file' in result) return reply.code(200).type(result.type).send(result.file);
  // The request's log line names the error the page shows (its error box's code), as the API's lines do.
  if (result.status >= 400) reply.errorCode = errorBoxCode.exec(result.html.text)?.[1] ?? null;
  return reply.code(result.status).type('text/html; charset=utf-8').send(result.html.text);
}

/** The code an error box (layout.ts `errorBox`) carries in its `data-code`. */
const errorBoxCode = /data-code="([a-z0-9_.]{1,128})"/;

/** A console address to return to after sign-in; anything else (another site, `//host`, a backslash) is dropped. */
export function consoleReturnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  return /^\/console(?:[/?]|$)/.test(value) && !/\/\/|\\/.test(value) && !value.startsWith('/console/sign-') ? value : undefined;
}

export function signInRedirect(reason?: 'expired', next?: string): Redirect {
  const query = new URLSearchParams();
  if (reason) query.set('reason', reason);
  const back = consoleReturnPath(next);
  if (back && back !== '/console') query.set('next', back);
  const text = query.toString();
  return { redirect: text ? `/console/sign-in?${text}` : '/console/sign-in' };
}

async function viewerContext(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<ConsoleContext | Redirect> {
  const token = sessionTokenOf(request);
  // A page opened before sign-in (a device login link, a bookmark) is where sign-in returns to.
  const back = request.method === 'GET' ? request.url : undefined;
  if (token === undefined) return signInRedirect(undefined, back);
  const answer = await callApi<{ tenant_id: string; environment: 'sandbox' | 'live'; roles: Role[]; subject: string }>(app, request, token, {
    method: 'GET',
    url: '/v1/auth/principal',
  });
  if (answer.error) {
    if (sessionEnding(answer.error)) {
      endSession(reply);
      return signInRedirect('expired', back);
    }
    throw new ApiFailure(answer.error, answer.status);
  }
  const viewer: Viewer = { tenantId: answer.body.tenant_id, environment: answer.body.environment, role: answer.body.roles[0]!, subject: answer.body.subject };
  return new ConsoleContext(app, request, reply, viewer, csrfTokenFor(request, reply), token);
}

async function run(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  handler: (context: ConsoleContext) => Promise<PageResult>,
): Promise<FastifyReply> {
  let signedIn: ConsoleContext | undefined;
  try {
    const context = await viewerContext(app, request, reply);
    if ('redirect' in context) return send(reply, context);
    signedIn = context;
    return send(reply, await handler(context));
  } catch (error) {
    if (error instanceof SessionEnded) {
      endSession(reply);
      return send(reply, signInRedirect('expired'));
    }
    if (error instanceof PageNotFound) return send(reply, { status: 404, html: notFoundPage(error.error, request.id, signedIn) });
    if (error instanceof ApiFailure) return send(reply, { status: error.status, html: barePage('Something went wrong', html`${errorBox(error.error, request.id)}<p><a href="/console">Back to the overview</a></p>`) });
    throw error;
  }
}

/** The 404 page: inside the console's frame (its navigation, who is signed in) for a signed-in person, bare before
 * sign-in. */
export function notFoundPage(error: { code: string; message: string } | undefined, requestId: string, context?: ConsoleContext): Html {
  const content = html`<p data-testid="not-found">There is nothing here for your tenant.</p>${errorBox(error, requestId)}<p><a href="/console">Back to the overview</a></p>`;
  return context ? page(context, 'Not found', content) : barePage('Not found', content);
}

/** An address no console route has: the 404 page, in the console's frame when the browser has a session the API
 * accepts (an ended one goes to sign-in, as on any page). */
export async function notFoundAnswer(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const error = { code: 'request.route_not_found', message: 'No console page has this address.' };
  if (sessionTokenOf(request) === undefined) return send(reply, { status: 404, html: notFoundPage(error, request.id) });
  try {
    const context = await viewerContext(app, request, reply);
    if ('redirect' in context) return send(reply, context);
    return send(reply, { status: 404, html: notFoundPage(error, request.id, context) });
  } catch (failure) {
    // The API could not say who is signed in: the page is still a 404, without the frame.
    if (failure instanceof ApiFailure) return send(reply, { status: 404, html: notFoundPage(error, request.id) });
    throw failure;
  }
}

/** The answer to a state-changing request without its CSRF token: refused before anything else runs. */
export function csrfRefusal(reply: FastifyReply): FastifyReply {
  return send(reply, {
    status: 403,
    html: barePage(
      'Request refused',
      errorBox({ code: 'console.csrf_invalid', message: errorCatalogue['console.csrf_invalid'].message }, reply.request.id),
    ),
  });
}

/** A signed-in page. */
export function getPage<Params = Record<string, string>>(
  app: FastifyInstance,
  path: string,
  handler: (context: ConsoleContext, params: Params, query: Record<string, string | undefined>) => Promise<PageResult>,
): void {
  app.get(path, { config: signedInConsoleConfig }, (request, reply) =>
    run(app, request, reply, (context) => handler(context, request.params as Params, request.query as Record<string, string | undefined>)),
  );
}

/** A signed-in, state-changing form post; refused without the CSRF token. */
export function postAction<Params = Record<string, string>>(
  app: FastifyInstance,
  path: string,
  handler: (context: ConsoleContext, body: FormBody, params: Params) => Promise<PageResult>,
): void {
  app.post(path, { config: signedInConsoleConfig }, async (request, reply) => {
    if (!csrfTokenValid(request)) return csrfRefusal(reply);
    return run(app, request, reply, (context) => handler(context, (request.body ?? {}) as FormBody, request.params as Params));
  });
}
