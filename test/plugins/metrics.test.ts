// GET /metrics: off (404) without a metrics token, refused without the right one; with it, the Prometheus text that a
// maintained parser reads, whose counters move through a sandbox lifecycle (create → fund 402 → fund 200 → evidence
// → confirm), a replay, a rate-limit refusal and an unknown route, and which names no tenant, intent, key or path.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, metricsTokenLengthMin } from '../../src/config.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

/** The parser's output (prom2json's shape): histograms carry buckets, count and sum instead of a value. */
interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  readonly metrics: ReadonlyArray<{ readonly value?: string; readonly count?: string; readonly labels?: Readonly<Record<string, string>> }>;
}
const parsePrometheusTextFormat = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => MetricFamily[];

const metricsToken = randomBytes(32).toString('hex');
/** Small enough for one key to run out within a test, large enough for the lifecycle's requests under the admin key. */
const perCredentialQuota = 30;
let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
const principal = party('did:principal:metrics');
const payee = party('did:payee:metrics');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { appOptions: {
    metrics: { token: metricsToken },
    rateLimit: { perCredential: perCredentialQuota, perAddress: 1_000 },
  } });
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const scrapeText = async (): Promise<string> => {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(metricsToken) });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return response.body;
};

/** A counter's or gauge's value, 0 when the series does not exist yet. */
function sample(families: readonly MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((candidate) => candidate.name === name);
  expect(family?.type ?? 'COUNTER', name).not.toBe('HISTOGRAM');
  const metric = family?.metrics.find((candidate) => Object.entries(labels).every(([key, value]) => candidate.labels?.[key] === value));
  return metric ? Number(metric.value) : 0;
}

/** A histogram's count, read from its `_count` line (the parser keeps a labelled histogram's buckets only); 0 when the
 * series does not exist yet. Label values here hold no quote or backslash. */
function histogramCount(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}_count\\{(.*)\\} (\\S+)$`).exec(line);
    if (!match) continue;
    const present = Object.fromEntries([...match[1]!.matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)].map(([, key, value]) => [key, value]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[2]);
  }
  return 0;
}

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });

describe('SVC_METRICS_TOKEN', () => {
  it('is read from the environment, and unset or blank means off', () => {
    expect(loadConfig({ SVC_METRICS_TOKEN: ` ${metricsToken} ` }).metricsToken).toBe(metricsToken);
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ SVC_METRICS_TOKEN: '  ' }).metricsToken).toBeUndefined();
  });

  it.each([
    ['too short', 'a'.repeat(metricsTokenLengthMin - 1)],
    ['too long', 'a'.repeat(513)],
    ['not bearer characters', `${'a'.repeat(40)} secret`],
    ['a comma', `${'a'.repeat(40)},b`],
  ])('refuses a token %s, without repeating it', (_, token) => {
    expect(() => loadConfig({ SVC_METRICS_TOKEN: token })).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_METRICS_TOKEN: token })).toThrow(/^SVC_METRICS_TOKEN must be (?![\s\S]*aaaa)/);
  });
});

describe('SVC_METRICS_PORT', () => {
  it('is a port from 1 to 65535, and SVC_METRICS_HOST an address', () => {
    expect(loadConfig({ SVC_METRICS_PORT: '9464', SVC_METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0' });
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: undefined });
    for (const port of ['0', '65536', '9464a', '-1']) expect(() => loadConfig({ SVC_METRICS_PORT: port }), port).toThrow(/^SVC_METRICS_PORT must be/);
  });

  const listenerUrl = (instance: FastifyInstance, path = '/metrics') => {
    const address = instance.metricsListener!.address() as AddressInfo;
    expect(address.address).toBe('127.0.0.1');
    return `http://127.0.0.1:${address.port}${path}`;
  };

  it('serves GET /metrics on a loopback listener of its own, and nothing on the main port without a token', async () => {
    const instance = await buildTestApp(database.connection, { appOptions: { metrics: { port: 0 } } });
    let url: string;
    try {
      url = listenerUrl(instance);
      expect((await instance.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
      await instance.inject({ method: 'GET', url: '/healthz' });
      const scrape = await fetch(url);
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const families = parsePrometheusTextFormat(await scrape.text());
      expect(sample(families, 'svc_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
      expect((await fetch(listenerUrl(instance, '/healthz'))).status).toBe(404);
      expect((await fetch(url, { method: 'POST' })).status).toBe(404);
    } finally {
      await instance.close();
    }
    // Closed with the app.
    await expect(fetch(url)).rejects.toThrow();
  });

  it('requires the token there too when one is configured', async () => {
    const instance = await buildTestApp(database.connection, { appOptions: { metrics: { port: 0, token: metricsToken } } });
    try {
      const url = listenerUrl(instance);
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: `Bearer ${metricsToken}x` } })).status).toBe(401);
      expect((await fetch(url, { headers: bearer(metricsToken) })).status).toBe(200);
    } finally {
      await instance.close();
    }
  });
});

describe('GET /metrics access', () => {
  it('answers 404 when no metrics token is configured, as if the route did not exist', async () => {
    const plain = await buildTestApp(database.connection);
    try {
      const response = await plain.inject({ method: 'GET', url: '/metrics', headers: bearer(metricsToken) });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('request.route_not_found');
      expect(plain.metrics).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('refuses a scrape without the token, with another token, or with an API key', async () => {
    const missing = await app.inject({ method: 'GET', url: '/metrics' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error.code).toBe('auth.credential_missing');
    for (const authorization of [`Bearer ${metricsToken.slice(0, -1)}x`, `Bearer ${metricsToken}x`, `Bearer ${tenant.adminKey}`, `Basic ${metricsToken}`, metricsToken]) {
      const refused = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      expect(refused.statusCode, authorization.slice(0, 8)).toBe(401);
      expect(refused.json().error.code).toBe('auth.credential_invalid');
      expect(refused.body).not.toContain('svc_http_requests_total');
    }
  });
});

describe('GET /metrics content', () => {
  let before: MetricFamily[];
  let beforeText: string;
  let after: MetricFamily[];
  let afterText: string;
  const intentIds: string[] = [];

  beforeAll(async () => {
    beforeText = await scrapeText();
    before = parsePrometheusTextFormat(beforeText);
    // A sandbox lifecycle on x402: create (then its replay), fund 402, fund 200, passing evidence, confirm.
    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    intentIds.push(intentId);
    const idempotencyKey = `metrics-${randomBytes(8).toString('hex')}`;
    const created = await post('/harbor/intents', body, { 'idempotency-key': idempotencyKey });
    expect(created.statusCode, created.body).toBe(201);
    const replayed = await post('/harbor/intents', body, { 'idempotency-key': idempotencyKey });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
    expect(challenge.statusCode).toBe(402);
    const funded = await post(`/harbor/intents/${intentId}/fund`, {}, {
      'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
    });
    expect(funded.statusCode, funded.body).toBe(200);
    const evidence = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } }));
    expect(evidence.statusCode, evidence.body).toBe(200);
    const confirmed = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().state).toBe('released');
    // Another key of the tenant runs out of its quota.
    const auditorKey = await tenant.key('auditor');
    let lastStatus = 0;
    for (let request = 0; request <= perCredentialQuota; request += 1) {
      const response: LightMyRequestResponse = await app.inject({ method: 'GET', url: '/v1/auth/principal', headers: bearer(auditorKey) });
      lastStatus = response.statusCode;
    }
    expect(lastStatus).toBe(429);
    // A path no route matches, carrying something that must never become a label.
    expect((await app.inject({ method: 'GET', url: `/no-such-route/${intentId}` })).statusCode).toBe(404);
    afterText = await scrapeText();
    after = parsePrometheusTextFormat(afterText);
  });

  const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

  it('counts requests and their latency per method, route pattern and status', () => {
    const created = { method: 'POST', route: '/harbor/intents', status: '201' };
    expect(moved('svc_http_requests_total', created)).toBe(2);
    expect(histogramCount(afterText, 'svc_http_request_duration_seconds', created) - histogramCount(beforeText, 'svc_http_request_duration_seconds', created)).toBe(2);
    const fund = { method: 'POST', route: '/harbor/intents/:intent_id/fund' };
    expect(moved('svc_http_requests_total', { ...fund, status: '402' })).toBe(1);
    expect(moved('svc_http_requests_total', { ...fund, status: '200' })).toBe(1);
    expect(moved('svc_http_requests_total', { method: 'GET', route: '/v1/auth/principal', status: '429' })).toBe(1);
    expect(moved('svc_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
  });

  it('counts engine commands per operation and status, replays, funding answers per rail, ledger rows and refusals', () => {
    expect(moved('svc_engine_commands_total', { operation: 'intent.create', status: '201' })).toBe(2);
    expect(moved('svc_idempotent_replays_total', { operation: 'intent.create' })).toBe(1);
    expect(moved('svc_engine_commands_total', { operation: 'intent.fund', status: '402' })).toBe(1);
    expect(moved('svc_engine_commands_total', { operation: 'intent.fund', status: '200' })).toBe(1);
    expect(moved('svc_engine_commands_total', { operation: 'intent.evidence', status: '200' })).toBe(1);
    expect(moved('svc_engine_commands_total', { operation: 'intent.settlement_confirm', status: '200' })).toBe(1);
    expect(moved('svc_funding_answers_total', { rail: 'x402_usdc_base', status: '402' })).toBe(1);
    expect(moved('svc_funding_answers_total', { rail: 'x402_usdc_base', status: '200' })).toBe(1);
    // A fund and a release transaction, two rows each.
    expect(moved('svc_ledger_rows_appended_total', { event_kind: 'fund' })).toBe(2);
    expect(moved('svc_ledger_rows_appended_total', { event_kind: 'release' })).toBe(2);
    expect(moved('svc_rate_limit_refusals_total', { policy: 'credential' })).toBe(1);
  });

  it('reports the database pool, the event loop and the process', () => {
    expect(sample(after, 'svc_db_pool_clients')).toBeGreaterThan(0);
    expect(after.find((family) => family.name === 'svc_db_pool_idle_clients')?.type).toBe('GAUGE');
    expect(after.find((family) => family.name === 'svc_db_pool_waiting_requests')?.type).toBe('GAUGE');
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      expect(after.map((family) => family.name), name).toContain(name);
    }
  });

  it('is well-formed exposition text: HELP and TYPE before every family, valid names, quoted and escaped labels', () => {
    const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
    const labelPair = String.raw`[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"`;
    const sampleLine = new RegExp(String.raw`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?:${labelPair})(?:,${labelPair})*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$`);
    const declared = new Map<string, { help: boolean; type?: string }>();
    for (const line of afterText.split('\n')) {
      if (line === '') continue;
      const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (comment) {
        const [, kind, name, rest] = comment;
        expect(name, line).toMatch(metricName);
        const entry = declared.get(name!) ?? { help: false };
        if (kind === 'HELP') entry.help = true;
        else entry.type = rest;
        declared.set(name!, entry);
        continue;
      }
      const match = sampleLine.exec(line);
      expect(match, line).not.toBeNull();
      const family = match![1]!.replace(/_(bucket|sum|count)$/, '');
      const entry = declared.get(match![1]!) ?? declared.get(family);
      expect(entry?.help && entry.type, `${line} has no HELP and TYPE before it`).toBeTruthy();
      expect(['counter', 'gauge', 'histogram', 'summary', 'untyped']).toContain(entry!.type);
    }
    // Every family the parser reads has a help text and a type, and none appears twice.
    expect(after.length).toBeGreaterThan(20);
    expect(new Set(after.map((family) => family.name)).size).toBe(after.length);
    for (const family of after) {
      expect(family.help, family.name).not.toBe('');
      expect(family.type, family.name).not.toBe('UNTYPED');
    }
  });

  it('names no tenant, intent, key, token or raw path', () => {
    for (const secret of [tenant.tenantId, ...intentIds, tenant.adminKey, metricsToken, '/no-such-route']) {
      expect(afterText).not.toContain(secret);
    }
    // Every route label is a registered pattern or the fixed label of unmatched requests.
    const routes = new Set(after.flatMap((family) => family.metrics.map((metric) => metric.labels?.route)).filter((route) => route !== undefined));
    for (const route of routes) expect(route === 'unmatched' || !/[0-9a-f]{8}-[0-9a-f]{4}/.test(route!), route).toBe(true);
  });
});
