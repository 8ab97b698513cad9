// The operator console at /console: server-rendered HTML with a little vanilla JavaScript, served by this process
// with no build step (docs/console.md). Every page and action calls the service's own HTTP API in-process with the
// session's bearer (api.ts), so the console adds no rule of its own.
import { consoleResponses } from '../../contracts/common.ts';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../errors/service-error.ts';
import { fastifyRefusalOf } from '../../plugins/http-errors.ts';
import { consoleFormBytesMax } from '../../limits.ts';
import { asServiceError } from '../../errors/pure-error-mapping.ts';
import { html } from './html.ts';
import { barePage, errorBox } from './layout.ts';
import { assertConsoleInput, parseForm } from './input.ts';
import { notFoundAnswer, notFoundPage, send, consoleAccess } from './routing.ts';
import { apiKeyPages } from './pages/api-keys.ts';
import { devicePages } from './pages/device.ts';
import { exportPages } from './pages/exports.ts';
import { intentPages } from './pages/intents.ts';
import { overviewPages } from './pages/overview.ts';
import { policyPages } from './pages/policies.ts';
import { registeredKeyPages } from './pages/registered-keys.ts';
import { reviewPages } from './pages/review.ts';
import { settlementPages } from './pages/settlement.ts';
import { signInPages } from './pages/sign-in.ts';
import { standingPages } from './pages/standing.ts';
import { webhookPages } from './pages/webhooks.ts';

/** Read once at start: the stylesheet, the script and the icon ship in the repository, nothing is fetched at run time. */
const assets = new Map<string, { type: string; body: Buffer }>(
  (
    [
      ['console.css', 'text/css; charset=utf-8'],
      ['console.js', 'text/javascript; charset=utf-8'],
      ['favicon.svg', 'image/svg+xml'],
    ] as const
  ).map(([name, type]) => [name, { type, body: fs.readFileSync(new URL(`./assets/${name}`, import.meta.url)) }]),
);

/** No inline script or style, no other origin, no framing; pages never leak their URL to another site. */
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'";

export async function consoleSurface(app: FastifyInstance): Promise<void> {
  // Every console route answers HTML (or, for its files, CSS and scripts): one contract for all (docs/api.md).
  // A form is at most consoleFormBytesMax however it is sent, urlencoded or as JSON.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, response: route.schema?.response ?? consoleResponses };
    route.bodyLimit ??= consoleFormBytesMax;
  });
  // Encapsulated: only console routes take form bodies; the API keeps JSON alone.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseForm(body as string));
  });
  // After parsing, before any page: what the pages read as text is text (src/surfaces/console/input.ts).
  app.addHook('preValidation', assertConsoleInput);

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', contentSecurityPolicy);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });

  app.get<{ Params: { name: string } }>('/assets/:name', { config: consoleAccess }, async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (!asset) return send(reply, { status: 404, html: notFoundPage({ code: 'request.route_not_found', message: 'The console has no such file.' }, request.id) });
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  // A request refused before its page ran (the rate limiter, say) answers a page with the catalogue's words and the
  // same status and headers (Retry-After), not the API's JSON envelope; anything else goes to the app's handler.
  app.setErrorHandler((thrown, request, reply) => {
    const error = fastifyRefusalOf(thrown) ?? asServiceError(thrown);
    if (!(error instanceof ServiceError) || error.statusCode >= 500) throw thrown;
    return send(reply, { status: error.statusCode, html: barePage('Request refused', html`${errorBox({ code: error.code, message: error.message }, request.id)}<p><a href="/console">Back to the overview</a></p>`) });
  });

  app.setNotFoundHandler((request, reply) => notFoundAnswer(app, request, reply));

  await app.register(signInPages);
  await app.register(overviewPages);
  await app.register(intentPages);
  await app.register(apiKeyPages);
  await app.register(registeredKeyPages);
  await app.register(policyPages);
  await app.register(settlementPages);
  await app.register(exportPages);
  await app.register(webhookPages);
  await app.register(reviewPages);
  await app.register(standingPages);
  await app.register(devicePages);
}
