// The whole service as one Fastify plugin: shared platform first, then the three surfaces with their prefixes.
// server.ts registers it on a configured instance and listens; tests register it on an instance of their own.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { rateLimitPerMinuteDefault, rateLimitPublicPerMinuteDefault } from './config.ts';
import { httpErrors } from './plugins/http-errors.ts';
import { access } from './plugins/access.ts';
import { databasePlugin, type DatabasePluginOptions } from './plugins/database-plugin.ts';
import type { TerminalEffect } from './engine/effects.ts';
import { engineEffectsPlugin } from './plugins/engine-effects.ts';
import { inputBoundary } from './plugins/input-boundary.ts';
import { jsonBody } from './plugins/json-body.ts';
import { requestFraming } from './plugins/request-framing.ts';
import { mailPlugin, type MailOptions } from './plugins/mail.ts';
import { maintenance } from './plugins/maintenance-plugin.ts';
import { treeHeads } from './plugins/tree-head-plugin.ts';
import { rateLimit, type RateLimitSettings } from './plugins/rate-limit.ts';
import { requestLog } from './plugins/request-log.ts';
import { gateway } from './surfaces/gateway/index.ts';
import { engineRoutes } from './surfaces/harbor/engine-routes.ts';
import { harbor } from './surfaces/harbor/index.ts';
import { faviconRoute } from './surfaces/favicon.ts';
import { healthRoutes } from './surfaces/health.ts';
import { consoleSurface } from './surfaces/console/index.ts';
import { mcp } from './surfaces/mcp/index.ts';
import { routeContracts } from './surfaces/mcp/route-contracts.ts';
import { openApiDocument, referenceRoutes } from './surfaces/reference.ts';
import { responseValidation } from './plugins/response-validation.ts';
import { standing } from './surfaces/standing/index.ts';
import { metricsPlugin, type MetricsOptions } from './plugins/metrics.ts';
import { metricsRoutes } from './surfaces/metrics.ts';
import { SecretBox } from './infra/secret-box.ts';
import { railCallTimeoutMsDefault } from './limits.ts';
import type { RailRuntime } from './rails/index.ts';

export interface AppOptions extends DatabasePluginOptions {
  /** Periodic maintenance (expired intents, old records); tests run passes by hand instead. */
  readonly maintenance?: boolean;
  /** How sign-in codes are sent: SMTP when `smtpUrl` is set, else the log and the local outbox. */
  readonly mail?: MailOptions;
  /** Gateway rate limits; default the configuration's defaults (600 per key, 120 per address, per minute). */
  readonly rateLimit?: RateLimitSettings;
  /** The configured public base URL (`SVC_PUBLIC_URL`); absent: each answer uses its request's address. */
  readonly publicBaseUrl?: string | undefined;
  /** The engine's terminal effects, in order; default the service's list (src/plugins/engine-effects.ts). Only a
   * bench composes another, to price one effect against the same service without it. */
  readonly terminalEffects?: readonly TerminalEffect[];
  /** Prometheus metrics: GET /metrics behind `SVC_METRICS_TOKEN`, and/or a listener of its own (`SVC_METRICS_PORT`); default off. */
  readonly metrics?: MetricsOptions;
  /** `SVC_SECRETS_KEY` (32 bytes, standard base64): seals the live rails' secrets at rest; absent, none can be stored. */
  readonly secretsKey?: string | undefined;
  /** Deadline of one call to a live rail's facilitator or processor; default railCallTimeoutMsDefault. */
  readonly railCallTimeoutMs?: number;
  /** Check every JSON answer against its route's declared response schema, failing loudly on drift
   * (src/plugins/response-validation.ts). On in the test suite, off in production. */
  readonly validateResponses?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** `SVC_PUBLIC_URL` when configured; read it through `publicBaseUrlOf` (src/config.ts). */
    readonly publicBaseUrl: string | undefined;
    /** What the live rails need from the deployment: the secrets key's box and the rail call deadline. */
    readonly railRuntime: RailRuntime;
  }
}

async function service(instance: FastifyInstance, options: AppOptions): Promise<void> {
  // First hook of all, so that even a request refused by authentication carries its id.
  instance.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  instance.decorate('publicBaseUrl', options.publicBaseUrl);
  const railRuntime: RailRuntime = {
    secretBox: options.secretsKey ? SecretBox.fromBase64(options.secretsKey) : undefined,
    callTimeoutMs: options.railCallTimeoutMs ?? railCallTimeoutMsDefault,
  };
  instance.decorate('railRuntime', railRuntime);
  await instance.register(httpErrors);
  await instance.register(requestLog);
  await instance.register(inputBoundary);
  await instance.register(requestFraming);
  await instance.register(jsonBody);
  await instance.register(databasePlugin, options);
  // Before every plugin and surface that answers requests, so that its hooks see all of them.
  await instance.register(metricsPlugin, options.metrics ?? {});
  await instance.register(engineEffectsPlugin, { terminalEffects: options.terminalEffects });
  await instance.register(mailPlugin, options.mail ?? {});
  await instance.register(access, { authenticator: instance.authenticator });
  await instance.register(rateLimit, options.rateLimit ?? { perCredential: rateLimitPerMinuteDefault, perAddress: rateLimitPublicPerMinuteDefault });
  await instance.register(maintenance, { enabled: options.maintenance ?? true });
  // Signed tree heads of the transparency logs: periodic like maintenance, and off with it in tests.
  await instance.register(treeHeads, { enabled: options.maintenance ?? true });

  // Before the surfaces, so that it sees every route they add (the MCP tools read their routes' contracts).
  await instance.register(routeContracts);
  await instance.register(openApiDocument);
  if (options.validateResponses === true) await instance.register(responseValidation);
  await instance.register(healthRoutes);
  await instance.register(faviconRoute);
  await instance.register(referenceRoutes);
  await instance.register(metricsRoutes, options.metrics ?? {});
  await instance.register(gateway);
  await instance.register(harbor, { prefix: '/harbor' });
  // The lifecycle's command routes, at the whole URLs its table gives them (under /harbor and /v1/sandbox).
  await instance.register(engineRoutes);
  await instance.register(standing);
  await instance.register(mcp);
  // The operator console (docs/console.md): HTML pages that call the routes above in-process.
  await instance.register(consoleSurface, { prefix: '/console' });
}

/** Not encapsulated, so the instance that registers it (server or test) sees its decorations. */
export const app = fastifyPlugin(service, { name: 'svc-app' });
