// The whole service as one Fastify plugin: shared platform first, then the use cases composed (the engine's terminal
// effects, mail, the background services), then the surfaces with their prefixes. server.ts registers it on a
// configured instance and listens; tests register it on an instance of their own.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { groupCommitEnabledDefault, rateLimitPerMinuteDefault, rateLimitPublicPerMinuteDefault } from './config.ts';
import { groupCommands, groupCommitDefaults, type GroupCommitSettings } from './engine/group-commit.ts';
import { httpErrors } from './plugins/http-errors.ts';
import { access } from './plugins/access.ts';
import { databasePlugin, type DatabasePluginOptions } from './plugins/database-plugin.ts';
import { engineEffects, type EngineEffects, type TerminalEffect } from './engine/effects.ts';
import type { BackgroundService } from './infra/background.ts';
import { inputBoundary } from './plugins/input-boundary.ts';
import { jsonBody } from './plugins/json-body.ts';
import { requestFraming } from './plugins/request-framing.ts';
import { receiptsOnTerminal } from './receipts/receipt-service.ts';
import { treeHeadTimer } from './receipts/tree-head-timer.ts';
import { createMailTransport, type MailOptions, type MailTransport } from './services/mail-transport.ts';
import { maintenanceTimer } from './services/maintenance-timer.ts';
import { WebhookDeliverer, webhookDelivererService } from './services/webhook-deliverer.ts';
import { standingTerminalEffect } from './services/standing-service.ts';
import { releaseGateProbe, reviewHoldTerminalEffect } from './services/review-service.ts';
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
  /** The engine's terminal effects, in order; default `terminalEffectsDefault`. Only a bench composes another, to
   * price one effect against the same service without it. */
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
  /** Group commit of the engine's commands (src/engine/group-commit.ts): its window and group size, or false for
   * one transaction per command. Default: `groupCommitEnabledDefault` with the default window and size;
   * `src/server.ts` follows `SVC_GROUP_COMMIT`. */
  readonly groupCommit?: Partial<Pick<GroupCommitSettings, 'windowMs' | 'groupSizeMax'>> | false;
  /** Webhook delivery (docs/events.md): whether this app runs a deliverer (default: as `maintenance`), the destination
   * policy's operator switch, and one attempt's deadline. */
  readonly webhooks?: WebhookOptions;
}

export interface WebhookOptions {
  readonly deliver?: boolean;
  readonly allowPrivateDestinations?: boolean;
  readonly attemptTimeoutMs?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** `SVC_PUBLIC_URL` when configured; read it through `publicBaseUrlOf` (src/config.ts). */
    readonly publicBaseUrl: string | undefined;
    /** What the live rails need from the deployment: the secrets key's box and the rail call deadline. */
    readonly railRuntime: RailRuntime;
    /** The engine's terminal effects, composed once and shared by every caller that can settle an intent: the confirm
     * route, the sandbox evidence route and the maintenance sweeper. */
    readonly engineEffects: EngineEffects;
    /** How sign-in codes leave: SMTP, or the log and the local outbox. */
    readonly mail: MailTransport;
    /** The webhook endpoints' destination switch (`SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS`). */
    readonly webhookDestinations: { readonly allowPrivateDestinations: boolean };
  }
}

/** The engine's terminal effects, in order: each runs in the settling transaction, after the ledger posting is queued. */
export const terminalEffectsDefault: readonly TerminalEffect[] = [standingTerminalEffect, receiptsOnTerminal, reviewHoldTerminalEffect];

/** Starts the services now, as the app is composed, and stops them when it closes: before the database closes, since
 * Fastify runs onClose hooks last registered first. Now rather than once the app is ready, so that the first
 * maintenance pass, which resolves funding claims a crash left behind, is due seconds after the process starts
 * however long the surfaces take to register. */
function runInBackground(instance: FastifyInstance, services: readonly BackgroundService[]): void {
  for (const service of services) service.start();
  instance.addHook('onClose', async () => {
    await Promise.all(services.map((service) => service.stop()));
  });
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
  const groupCommit = options.groupCommit ?? (groupCommitEnabledDefault ? {} : false);
  if (groupCommit !== false) groupCommands(instance.database, { ...groupCommitDefaults, ...groupCommit });
  // Before every plugin and surface that answers requests, so that its hooks see all of them.
  await instance.register(metricsPlugin, options.metrics ?? {});
  instance.decorate('engineEffects', engineEffects(instance.gatewayKeys, options.terminalEffects ?? terminalEffectsDefault, releaseGateProbe));
  const mail = createMailTransport(options.mail ?? {}, instance.log);
  instance.decorate('mail', mail);
  // Deliveries in flight finish before the app is closed.
  instance.addHook('onClose', async () => mail.close());
  await instance.register(access, { authenticator: instance.authenticator });
  await instance.register(rateLimit, options.rateLimit ?? { perCredential: rateLimitPerMinuteDefault, perAddress: rateLimitPublicPerMinuteDefault });
  // Periodic maintenance and the transparency logs' signed tree heads; off in tests, which run passes by hand.
  const background: BackgroundService[] = [];
  if (options.maintenance ?? true) {
    background.push(maintenanceTimer({ database: instance.database, engineEffects: instance.engineEffects, railRuntime, log: instance.log }));
    background.push(treeHeadTimer({ database: instance.database, gatewayKeys: instance.gatewayKeys, log: instance.log }));
  }
  const webhooks = options.webhooks ?? {};
  instance.decorate('webhookDestinations', { allowPrivateDestinations: webhooks.allowPrivateDestinations ?? false });
  // The webhook deliverer: every replica runs one; the claims' leases keep them from sending the same attempt.
  if (webhooks.deliver ?? options.maintenance ?? true) {
    const deliverer = new WebhookDeliverer({
      database: instance.database,
      secretBox: railRuntime.secretBox,
      keyring: instance.gatewayKeys,
      log: instance.log,
      allowPrivateDestinations: webhooks.allowPrivateDestinations ?? false,
      ...(webhooks.attemptTimeoutMs ? { attemptTimeoutMs: webhooks.attemptTimeoutMs } : {}),
    });
    background.push(webhookDelivererService(deliverer, instance.log));
  }
  runInBackground(instance, background);

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
