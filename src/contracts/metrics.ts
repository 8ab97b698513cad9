// The contract of GET /metrics (docs/operations.md "Metrics"): Prometheus's text exposition format, not JSON, so
// the answer's contract is its media type; the request's only input is the metrics token in Authorization.
import Type from 'typebox';

/** The scrape's credential: `Bearer <SVC_METRICS_TOKEN>`. Checked by the route, so that a refusal keeps its code. */
export const MetricsHeaders = Type.Object({
  authorization: Type.Optional(Type.String({ description: 'Bearer <SVC_METRICS_TOKEN>: the metrics token, not an API key.' })),
});

/** 200: the text exposition format, version 0.0.4. */
export const MetricsText = {
  description: 'The metrics in the Prometheus text exposition format (version 0.0.4).',
  content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: Type.String() } },
};
