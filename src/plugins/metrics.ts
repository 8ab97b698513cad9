// Prometheus metrics of one app (docs/operations.md "Metrics"): when a metrics token or a metrics port is configured,
// a registry of its own (src/infra/metrics.ts), fed by request hooks, by the engine's observer (src/engine/observer.ts)
// and by the fund route's answers. GET /metrics on the main port (src/surfaces/metrics.ts) serves it to a scraper
// presenting the token; the metrics port, when set, serves it on a listener of its own, by default on loopback only.
// With neither, nothing is collected and no hook is added to any request.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { ConfigError } from '../config.ts';
import { readAuthorizationHeader } from '../credentials/authorization-header.ts';
import { lifecycle } from '../engine/lifecycle.ts';
import { observeEngine } from '../engine/observer.ts';
import { ServiceError } from '../errors/service-error.ts';
import { ServiceMetrics } from '../infra/metrics.ts';
import { resolveRailName } from '../rails/index.ts';

export interface MetricsOptions {
  /** `SVC_METRICS_TOKEN`: the bearer token a scrape presents, on the main port and on the metrics port. Unset, GET
   * /metrics on the main port answers 404. */
  readonly token?: string | undefined;
  /** `SVC_METRICS_PORT`: a listener of its own that serves GET /metrics (0: any free port, for tests). Unset: none. */
  readonly port?: number | undefined;
  /** `SVC_METRICS_HOST`: the address the metrics port listens on; default loopback. */
  readonly host?: string | undefined;
}

/** What a scrape's Authorization header is worth: the token, no header, or anything else. */
export type MetricsCredential = 'accepted' | 'missing' | 'invalid';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics; undefined when metrics are off. */
    readonly metrics: ServiceMetrics | undefined;
    /** The metrics port's listener, when one is configured (its address tells a test the port it got). */
    readonly metricsListener: http.Server | undefined;
  }
}

/** Both sides hashed to one length first, so the comparison takes the same time whatever the presented length. */
const digestOf = (token: string): Buffer => createHash('sha256').update(token).digest();

/** The check of a scrape's Authorization header against `token`; with no token, every scrape is accepted (the
 * metrics port alone, reachable only where it listens). */
export function metricsCredentialCheck(token: string | undefined): (authorization: string | undefined) => MetricsCredential {
  if (token === undefined) return () => 'accepted';
  const expected = digestOf(token);
  return (authorization) => {
    if (authorization === undefined) return 'missing';
    const presented = readAuthorizationHeader(authorization)?.bearer;
    return presented !== undefined && timingSafeEqual(digestOf(presented), expected) ? 'accepted' : 'invalid';
  };
}

/** The rail label of an answer: one of our rails, or `other` (a label never repeats what a client sent). */
const railLabelOf = (rail: unknown): string => (typeof rail === 'string' ? resolveRailName(rail) : undefined) ?? 'other';

const fundRoute = lifecycle.fund.route.url;

export const metricsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: MetricsOptions) => {
    const enabled = options.token !== undefined || options.port !== undefined;
    const metrics = enabled ? new ServiceMetrics(app.database.pool) : undefined;
    const listener = metrics !== undefined && options.port !== undefined ? metricsListener(metrics, options) : undefined;
    app.decorate('metrics', metrics);
    app.decorate('metricsListener', listener?.server);
    if (metrics === undefined) return;
    observeEngine(app.database, metrics);
    if (listener !== undefined) {
      app.addHook('onReady', listener.start);
      app.addHook('onClose', listener.stop);
    }

    // Labelled by the registered route pattern, never the raw URL; a request no route matched gets a fixed label.
    app.addHook('onResponse', async (request, reply) => {
      metrics.requestAnswered(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    });
    // Funding outcomes per rail: every fund answer (402, 202, 200) names the intent's rail; an error envelope does not.
    app.addHook('preSerialization', async (request, reply, payload: unknown) => {
      if (request.routeOptions.url === fundRoute) {
        const rail = (payload as { settlement_rail?: unknown } | null)?.settlement_rail;
        if (rail !== undefined) metrics.fundingAnswered(railLabelOf(rail), reply.statusCode);
      }
      return payload;
    });
    app.addHook('onError', async (_request, _reply, error) => {
      if (error instanceof ServiceError && error.code === 'rate_limit.exceeded') metrics.rateLimitRefused(String(error.details?.policy));
    });
  },
  { name: 'metrics', dependencies: ['database'] },
);

/** Loopback: only a scraper on the same host (or a sidecar sharing its network) reaches the metrics port. */
const metricsHostDefault = '127.0.0.1';

/** Plain-text status answers of the metrics port: it speaks to a scraper, not to API clients. */
const listenerStatusTexts = { 401: 'The metrics token is missing or wrong.\n', 404: 'Only GET /metrics is served here.\n' } as const;

/** The metrics port: GET /metrics and nothing else, the token required when one is configured. */
function metricsListener(metrics: ServiceMetrics, options: MetricsOptions) {
  const check = metricsCredentialCheck(options.token);
  const host = options.host ?? metricsHostDefault;
  const server = http.createServer((request, response) => {
    const refuse = (status: 401 | 404) => response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(listenerStatusTexts[status]);
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') return refuse(404);
    if (check(request.headers.authorization) !== 'accepted') return refuse(401);
    metrics.exposition().then(
      ({ text, contentType }) => response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  return {
    server,
    start: () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(new ConfigError(`SVC_METRICS_HOST ${host} SVC_METRICS_PORT ${options.port}: cannot listen there (${error.code ?? error.message})`)));
        server.listen(options.port, host, () => resolve());
      }),
    stop: async () => {
      if (!server.listening) return;
      // A scraper keeps its connection open between scrapes: closing waits for none of them.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
