// GET /metrics on the main port: the app's Prometheus metrics (src/plugins/metrics.ts) in the text exposition format,
// for a scraper that presents the metrics token (docs/operations.md "Metrics"). Without a configured token the route
// answers 404, as if it did not exist (the metrics port, if set, serves them instead). Its access is `public` to the
// API-key machinery: the token is no API key, and is checked here.
import type { FastifyInstance } from 'fastify';
import { publicErrors } from '../contracts/common.ts';
import { MetricsHeaders, MetricsText } from '../contracts/metrics.ts';
import { ServiceError } from '../errors/service-error.ts';
import { metricsCredentialCheck, type MetricsOptions } from '../plugins/metrics.ts';

export async function metricsRoutes(app: FastifyInstance, options: MetricsOptions): Promise<void> {
  const check = options.token === undefined ? undefined : metricsCredentialCheck(options.token);

  app.get('/metrics', {
    config: { access: { public: true } },
    schema: {
      summary: 'Scrape the Prometheus metrics (metrics token; 404 when none is configured)',
      headers: MetricsHeaders,
      response: { 200: MetricsText, ...publicErrors(401, 404) },
    },
  }, async (request, reply) => {
    const metrics = app.metrics;
    if (check === undefined || metrics === undefined) throw new ServiceError('request.route_not_found');
    const credential = check(request.headers.authorization);
    if (credential === 'missing') throw new ServiceError('auth.credential_missing');
    if (credential === 'invalid') throw new ServiceError('auth.credential_invalid');
    const { text, contentType } = await metrics.exposition();
    // Never cached: every scrape reads the counters as they are now.
    return reply.type(contentType).header('cache-control', 'no-store').send(text);
  });
}
