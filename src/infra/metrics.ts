// The service's Prometheus metrics (docs/operations.md "Metrics"): one registry per app instance, never prom-client's
// global one, so that several apps in one process (the tests) each count their own. Every label takes its values
// from a fixed set (route patterns, methods, statuses, operation and rail names), never an id, a key or a raw path.
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The label of a request no route matched: its raw path would make one series per URL anyone cares to send. */
export const unmatchedRouteLabel = 'unmatched';

/** Upper bounds of the request-latency buckets, in seconds: from a cached read (a few ms) to the request timeout. */
const requestDurationBucketsSeconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly #requestDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: requestDurationBucketsSeconds,
    registers: [this.registry],
  });
  readonly #commands = new Counter({
    name: 'svc_engine_commands_total',
    help: 'Engine commands answered (a replayed answer included), by operation and status.',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly #replays = new Counter({
    name: 'svc_idempotent_replays_total',
    help: 'Requests answered with a stored answer under their idempotency key, by operation.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly #fundingAnswers = new Counter({
    name: 'svc_funding_answers_total',
    help: 'Answers of the fund route by rail and status: 402 a payment challenge, 202 pending, 200 funded.',
    labelNames: ['rail', 'status'] as const,
    registers: [this.registry],
  });
  readonly #rateLimitRefusals = new Counter({
    name: 'svc_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the rate limiter, by policy (credential or ip).',
    labelNames: ['policy'] as const,
    registers: [this.registry],
  });
  readonly #ledgerRows = new Counter({
    name: 'svc_ledger_rows_appended_total',
    help: 'Ledger rows committed, by event kind (fund, release, refund).',
    labelNames: ['event_kind'] as const,
    registers: [this.registry],
  });

  /** `pool`: the database pool whose use is read at each scrape. */
  constructor(pool: pg.Pool) {
    // Event-loop lag, heap, GC, handles, CPU and memory of the process: prom-client's defaults, on this registry. Their
    // event-loop delay monitor and GC observer stay attached for the life of the process: one per app, and a server
    // builds one app.
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    new Gauge({ name: 'svc_db_pool_clients', help: 'Connections the database pool holds, idle or in use.', registers, collect() { this.set(pool.totalCount); } });
    new Gauge({ name: 'svc_db_pool_idle_clients', help: 'Connections of the database pool that are idle.', registers, collect() { this.set(pool.idleCount); } });
    new Gauge({ name: 'svc_db_pool_waiting_requests', help: 'Queries waiting for a connection of the database pool.', registers, collect() { this.set(pool.waitingCount); } });
  }

  /** `route`: the registered route pattern (`/harbor/intents/:intent_id`), or undefined when none matched. */
  requestAnswered(method: string, route: string | undefined, status: number, durationSeconds: number): void {
    const labels = { method, route: route ?? unmatchedRouteLabel, status: String(status) };
    this.#requests.inc(labels);
    this.#requestDuration.observe(labels, durationSeconds);
  }

  commandAnswered(operation: string, status: number, replayed: boolean): void {
    this.#commands.inc({ operation, status: String(status) });
    if (replayed) this.#replays.inc({ operation });
  }

  fundingAnswered(rail: string, status: number): void {
    this.#fundingAnswers.inc({ rail, status: String(status) });
  }

  rateLimitRefused(policy: string): void {
    this.#rateLimitRefusals.inc({ policy });
  }

  ledgerRowsAppended(eventKind: string, rows: number): void {
    this.#ledgerRows.inc({ event_kind: eventKind }, rows);
  }

  /** The exposition text and its content type (the Prometheus text format, version 0.0.4). */
  async exposition(): Promise<{ readonly text: string; readonly contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
