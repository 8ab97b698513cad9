// Gateway rate limits: the six headers (draft-ietf-httpapi-ratelimit-headers-10 RateLimit / RateLimit-Policy,
// X-RateLimit-*, Retry-After), the 429 envelope, per-key and per-address budgets, health checks never limited,
// and one budget shared by two server processes on one database. Real Postgres throughout; the Redis store
// (REDIS_URL) against the real Redis at TEST_REDIS_URL (default redis://127.0.0.1:6379).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../../src/app.ts';
import { Database } from '../../../src/infra/database.ts';
import { ephemeralKeyring } from '../../../src/infra/gateway-keys.ts';
import { createLogger } from '../../../src/infra/logging.ts';
import {
  bucketKey, credentialSubject, PostgresRateLimitStore, RateLimiter, rateLimitHeaders, rateLimitPolicies,
  type RateLimitPolicy, type RateLimitSettings, type RateLimitStore,
} from '../../../src/plugins/rate-limit.ts';
import { RedisRateLimitStore, type RedisRateLimitStoreOptions } from '../../../src/plugins/rate-limit-redis.ts';
import { createFastify } from '../../../src/server-options.ts';
import { runMaintenance } from '../../../src/services/maintenance.ts';
import { engineEffects } from '../../../src/engine/effects.ts';
import { bearer, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { call } from '../../helpers/http-client.ts';
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.ts';

// ---- Structured Fields (RFC 9651), just what the two fields use: a List of String Items with Integer parameters ----

interface SfItem {
  readonly name: string;
  readonly params: Record<string, number>;
}

function parseSfList(text: string): SfItem[] {
  return text.split(/\s*,\s*/).map((member) => {
    const match = /^"([^"\\]*)"((?:;[a-z*][a-z0-9_.*-]*=\d{1,15})*)$/.exec(member);
    if (!match) throw new Error(`not an SF list member of a string with integer parameters: ${member}`);
    const params: Record<string, number> = {};
    for (const param of match[2]!.split(';').slice(1)) {
      const [key, value] = param.split('=') as [string, string];
      params[key] = Number(value);
    }
    return { name: match[1]!, params };
  });
}

/** The six rate-limit headers of an answer, parsed and cross-checked against each other. */
function limitHeaders(headers: Record<string, unknown>) {
  const policy = parseSfList(String(headers['ratelimit-policy']));
  const limit = parseSfList(String(headers['ratelimit']));
  expect(policy).toHaveLength(1);
  expect(limit).toHaveLength(1);
  expect(Object.keys(policy[0]!.params).sort()).toEqual(['q', 'w']);
  expect(Object.keys(limit[0]!.params).sort()).toEqual(['r', 't']);
  expect(limit[0]!.name).toBe(policy[0]!.name);
  const parsed = {
    name: policy[0]!.name,
    q: policy[0]!.params.q!,
    w: policy[0]!.params.w!,
    r: limit[0]!.params.r!,
    t: limit[0]!.params.t!,
    xLimit: Number(headers['x-ratelimit-limit']),
    xRemaining: Number(headers['x-ratelimit-remaining']),
    xReset: Number(headers['x-ratelimit-reset']),
    retryAfter: headers['retry-after'] === undefined ? undefined : Number(headers['retry-after']),
  };
  // The X- trio says the same as the structured fields.
  expect([parsed.xLimit, parsed.xRemaining, parsed.xReset]).toEqual([parsed.q, parsed.r, parsed.t]);
  expect(parsed.t).toBeGreaterThanOrEqual(1);
  expect(parsed.t).toBeLessThanOrEqual(parsed.w);
  return parsed;
}

const rateLimitHeaderNames = ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];
const hasNoLimitHeaders = (response: LightMyRequestResponse) => rateLimitHeaderNames.every((name) => response.headers[name] === undefined);

/** Waits out the end of the current fixed window when it is close, so a short flood never straddles two windows. */
async function awayFromWindowEnd(windowSeconds: number, marginMs = 3_000): Promise<void> {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

async function buildLimitedApp(database: TestDatabase, rateLimit: RateLimitSettings): Promise<FastifyInstance> {
  const instance = createFastify(createLogger('silent'));
  await instance.register(app, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true, rateLimit });
  await instance.ready();
  return instance;
}

// ---- Unit: header formatting, bucket keys ----

describe('header formatting', () => {
  const policy: RateLimitPolicy = { name: 'credential', quota: 600, windowSeconds: 60 };

  it('writes the draft-10 structured fields and the X- trio', () => {
    expect(rateLimitHeaders(policy, { allowed: true, remaining: 599, resetSeconds: 42 })).toEqual({
      'ratelimit-policy': '"credential";q=600;w=60',
      ratelimit: '"credential";r=599;t=42',
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '599',
      'x-ratelimit-reset': '42',
    });
    expect(rateLimitHeaders({ name: 'ip', quota: 120, windowSeconds: 60 }, { allowed: false, remaining: 0, resetSeconds: 1 })).toMatchObject({
      'ratelimit-policy': '"ip";q=120;w=60',
      ratelimit: '"ip";r=0;t=1',
    });
  });

  it('parses back as Structured Field Lists', () => {
    const headers = rateLimitHeaders(policy, { allowed: true, remaining: 3, resetSeconds: 17 });
    expect(parseSfList(headers['ratelimit-policy']!)).toEqual([{ name: 'credential', params: { q: 600, w: 60 } }]);
    expect(parseSfList(headers.ratelimit!)).toEqual([{ name: 'credential', params: { r: 3, t: 17 } }]);
  });

  it('builds policies from settings and refuses nonsense', () => {
    expect(rateLimitPolicies({ perCredential: 600, perAddress: 120 })).toEqual({
      credential: { name: 'credential', quota: 600, windowSeconds: 60 },
      address: { name: 'ip', quota: 120, windowSeconds: 60 },
    });
    expect(() => rateLimitPolicies({ perCredential: 0, perAddress: 1 })).toThrow(/quota/);
    expect(() => rateLimitPolicies({ perCredential: 1, perAddress: 1.5 })).toThrow(/quota/);
    expect(() => rateLimitPolicies({ perCredential: 1, perAddress: 1, windowSeconds: 0 })).toThrow(/window/);
  });

  it('spends an API key\'s budget per key, a session\'s per user', () => {
    const base = { tenantId: 'acme', tenantUuid: '00000000-0000-4000-8000-000000000000', environment: 'sandbox', role: 'agent' } as const;
    expect(credentialSubject({
      ...base, subject: 'key_0123456789abcdef0123456789abcdef',
      credential: { type: 'api_key', keyId: 'key_0123456789abcdef0123456789abcdef', keyKind: 'standard', scopes: [] },
    })).toBe('key_0123456789abcdef0123456789abcdef');
    expect(credentialSubject({
      ...base, subject: 'usr_0123456789abcdef0123456789abcdef',
      credential: { type: 'session', userId: 'usr_0123456789abcdef0123456789abcdef', tokenId: 'jti_1', expiresAt: new Date() },
    })).toBe('usr_0123456789abcdef0123456789abcdef');
  });

  it('keys buckets by policy and subject, hashing subjects that are not plain', () => {
    expect(bucketKey(policy, 'key_0123456789abcdef0123456789abcdef')).toBe('credential:key_0123456789abcdef0123456789abcdef');
    expect(bucketKey({ ...policy, name: 'ip' }, '::ffff:127.0.0.1')).toBe('ip:::ffff:127.0.0.1');
    const odd = bucketKey({ ...policy, name: 'ip' }, `1.2.3.4'; DROP TABLE x; --${'x'.repeat(300)}`);
    expect(odd).toMatch(/^ip:sha256-[0-9a-f]{64}$/);
  });
});

// ---- Integration ----

let database: TestDatabase;
let acme: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  acme = await createTestTenant(database.connection);
});

afterAll(async () => {
  await database?.drop();
});

describe('the limiter against the Postgres store', () => {
  /** The real store, counting how often it is asked. */
  class CountingStore implements RateLimitStore {
    calls = 0;
    constructor(readonly inner: RateLimitStore) {}
    increment(bucket: string, windowStartMs: number, windowMs: number, hits?: number): Promise<number> {
      this.calls += 1;
      return this.inner.increment(bucket, windowStartMs, windowMs, hits);
    }
  }

  let db: Database;
  beforeAll(() => {
    db = new Database(database.connection);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('admits exactly the quota from a concurrent burst, in fewer round trips than requests', async () => {
    const store = new CountingStore(new PostgresRateLimitStore(db.pool));
    const limiter = new RateLimiter(store);
    const policy: RateLimitPolicy = { name: 'credential', quota: 20, windowSeconds: 3600 };
    await awayFromWindowEnd(3600);
    const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.hit(policy, 'key_burst')));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
    // Every admitted request has its own place in the shared counter: remaining 19, 18, … 0, each once.
    expect(decisions.filter((decision) => decision.allowed).map((decision) => decision.remaining).sort((a, b) => a - b))
      .toEqual(Array.from({ length: 20 }, (_, index) => index));
    expect(store.calls).toBeLessThan(60);
    // Full for this window: further requests are refused without a round trip.
    const callsBefore = store.calls;
    expect((await limiter.hit(policy, 'key_burst')).allowed).toBe(false);
    expect(store.calls).toBe(callsBefore);
  });

  it('counts the concurrent requests of many buckets in one statement, each bucket exactly', async () => {
    const inner = new PostgresRateLimitStore(db.pool);
    let statements = 0;
    let buckets = 0;
    const store: RateLimitStore = {
      increment: (...args) => {
        statements += 1;
        buckets += 1;
        return inner.increment(...args);
      },
      incrementMany: (increments) => {
        statements += 1;
        buckets += increments.length;
        return inner.incrementMany(increments);
      },
    };
    const limiter = new RateLimiter(store);
    const policy: RateLimitPolicy = { name: 'credential', quota: 7, windowSeconds: 3600 };
    await awayFromWindowEnd(3600);
    const subjects = Array.from({ length: 12 }, (_, index) => `key_many_${index}`);
    // Ten requests of each of twelve keys, all in flight at once.
    const decisions = await Promise.all(subjects.flatMap((subject) => Array.from({ length: 10 }, () => limiter.hit(policy, subject).then((decision) => ({ subject, decision })))));
    for (const subject of subjects) {
      const admitted = decisions.filter((entry) => entry.subject === subject && entry.decision.allowed);
      // Exactly the quota per key, each admitted request with its own place in its key's counter.
      expect(admitted.map((entry) => entry.decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 7 }, (_, index) => index));
    }
    // The first request's key went alone; everything that arrived while it was in flight went in one more statement.
    expect(statements).toBeLessThanOrEqual(3);
    expect(buckets).toBeGreaterThan(statements);
    const stored = await db.system(async (tx) =>
      (await tx.query<{ hits: string }>(`SELECT hits FROM rate_limit_counters WHERE bucket LIKE 'credential:key_many_%' ORDER BY bucket`)).rows.map((row) => Number(row.hits)),
    );
    expect(stored).toEqual(subjects.map(() => 10));
  });

  it('gives each increment of one counter in one statement its own total', async () => {
    const store = new PostgresRateLimitStore(db.pool);
    const windowStartMs = 1_000 * 3600;
    const totals = await store.incrementMany([
      { bucket: 'credential:key_twice', windowStartMs, windowMs: 3_600_000, hits: 2 },
      { bucket: 'credential:key_once', windowStartMs, windowMs: 3_600_000, hits: 5 },
      { bucket: 'credential:key_twice', windowStartMs, windowMs: 3_600_000, hits: 3 },
    ]);
    expect(totals).toEqual([2, 5, 5]);
  });

  it('shares one counter between two limiters (two processes\' worth) on one database', async () => {
    const policy: RateLimitPolicy = { name: 'credential', quota: 15, windowSeconds: 3600 };
    const limiters = [new RateLimiter(new PostgresRateLimitStore(db.pool)), new RateLimiter(new PostgresRateLimitStore(db.pool))];
    await awayFromWindowEnd(3600);
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, index) => limiters[index % 2]!.hit(policy, 'key_shared')));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(15);
  });

  it('fails the request when the store fails, and recovers', async () => {
    let failing = true;
    const inner = new PostgresRateLimitStore(db.pool);
    const limiter = new RateLimiter({
      increment: (...args) => (failing ? Promise.reject(new Error('store down')) : inner.increment(...args)),
    });
    const policy: RateLimitPolicy = { name: 'credential', quota: 5, windowSeconds: 3600 };
    await expect(Promise.all([limiter.hit(policy, 'key_flaky'), limiter.hit(policy, 'key_flaky')])).rejects.toThrow(/store down/);
    failing = false;
    expect((await limiter.hit(policy, 'key_flaky')).allowed).toBe(true);
  });

  it('runs as svc_system, and the tenant role cannot touch the counters', async () => {
    await expect(db.tenant(acme.tenantId, (tx) => tx.query('SELECT * FROM rate_limit_counters'))).rejects.toThrow(/permission denied/);
    const rows = await db.system(async (tx) => (await tx.query('SELECT bucket, hits::int AS hits FROM rate_limit_counters WHERE bucket = $1', ['credential:key_shared'])).rows);
    // Each limiter stops asking once it has seen the bucket full, so the counter holds at least the quota, not every request.
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hits).toBeGreaterThanOrEqual(15);
  });

  it('is pruned by the maintenance pass once the window has ended', async () => {
    const store = new PostgresRateLimitStore(db.pool);
    await store.increment('ip:192.0.2.1', 60_000, 60_000);
    const report = await runMaintenance(db, engineEffects(ephemeralKeyring()));
    expect(report.deleted.rate_limit_counters).toBeGreaterThanOrEqual(1);
    const left = await db.system(async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM rate_limit_counters WHERE bucket = 'ip:192.0.2.1'`)).rows[0]);
    expect(left).toEqual({ n: 0 });
  });

  it('works on the embedded database (PGlite) too', async () => {
    const embedded = await createEmbeddedTestDatabase();
    const embeddedDb = new Database(embedded.connection);
    try {
      const store = new PostgresRateLimitStore(embeddedDb.pool);
      expect(await store.increment('credential:key_x', 0, 60_000)).toBe(1);
      expect(await store.increment('credential:key_x', 0, 60_000, 4)).toBe(5);
      expect(await store.increment('credential:key_x', 60_000, 60_000)).toBe(1);
    } finally {
      await embeddedDb.close();
      await embedded.drop();
    }
  });
});

describe('the gateway under a bounded flood', () => {
  const windowSeconds = 3600;
  let limited: FastifyInstance;

  beforeAll(async () => {
    limited = await buildLimitedApp(database, { perCredential: 5, perAddress: 3, windowSeconds });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('counts down, then answers 429 with all six headers and the envelope', async () => {
    const key = await acme.key('agent');
    await awayFromWindowEnd(windowSeconds);
    const answers: LightMyRequestResponse[] = [];
    for (let index = 0; index < 8; index += 1) answers.push(await limited.inject({ url: '/v1/auth/principal', headers: bearer(key) }));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);

    const allowed = answers.slice(0, 5).map((answer) => limitHeaders(answer.headers));
    expect(allowed.map((headers) => headers.r)).toEqual([4, 3, 2, 1, 0]);
    for (const headers of allowed) {
      expect(headers).toMatchObject({ name: 'credential', q: 5, w: windowSeconds, retryAfter: undefined });
    }

    for (const answer of answers.slice(5)) {
      const headers = limitHeaders(answer.headers);
      expect(headers).toMatchObject({ name: 'credential', q: 5, w: windowSeconds, r: 0 });
      // Retry-After is present and not earlier than t.
      expect(headers.retryAfter).toBeGreaterThanOrEqual(headers.t);
      // The fixed window ends at the next multiple of the window length.
      const secondsToWindowEnd = Math.ceil((windowSeconds * 1000 - (Date.now() % (windowSeconds * 1000))) / 1000);
      expect(Math.abs(headers.t - secondsToWindowEnd)).toBeLessThanOrEqual(1);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.json()).toEqual({
        error: {
          code: 'rate_limit.exceeded',
          message: 'Too many requests for this credential or client address; retry after the seconds in Retry-After.',
          details: { policy: 'credential', retry_after_seconds: headers.retryAfter },
        },
        request_id: answer.headers['x-request-id'],
      });
      // Nothing of the credential comes back: not the key, not its secret, not its id.
      const [, , , keyIdHex, secretHex] = key.split('_');
      const everything = JSON.stringify(answer.headers) + answer.body;
      for (const part of [key, keyIdHex!, secretHex!]) expect(everything).not.toContain(part);
    }
  });

  it('puts the headers on other answers of a limited route too', async () => {
    const key = await acme.key('operator');
    const missing = await limited.inject({ url: '/harbor/intents/00000000-0000-4000-8000-000000000000', headers: bearer(key) });
    expect(missing.statusCode).toBe(404);
    expect(limitHeaders(missing.headers)).toMatchObject({ name: 'credential', q: 5, r: 4 });
  });

  it('gives two keys of one tenant separate budgets', async () => {
    const [first, second] = [await acme.key('agent'), await acme.key('agent')];
    await awayFromWindowEnd(windowSeconds);
    for (let index = 0; index < 5; index += 1) expect((await limited.inject({ url: '/v1/auth/principal', headers: bearer(first) })).statusCode).toBe(200);
    expect((await limited.inject({ url: '/v1/auth/principal', headers: bearer(first) })).statusCode).toBe(429);
    const other = await limited.inject({ url: '/v1/auth/principal', headers: bearer(second) });
    expect(other.statusCode).toBe(200);
    expect(limitHeaders(other.headers).r).toBe(4);
  });

  it('does not count refused credentials, and sends no limit headers with the 401', async () => {
    const refused = await limited.inject({ url: '/v1/auth/principal', headers: bearer('svc_sk_test_nope') });
    expect(refused.statusCode).toBe(401);
    expect(hasNoLimitHeaders(refused)).toBe(true);
  });

  it('limits public routes per client address', async () => {
    await awayFromWindowEnd(windowSeconds);
    const fromA = () => limited.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.7' });
    const statuses = [];
    for (let index = 0; index < 5; index += 1) statuses.push((await fromA()).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await fromA();
    expect(limitHeaders(refused.headers)).toMatchObject({ name: 'ip', q: 3, r: 0 });
    expect(refused.json().error).toMatchObject({ code: 'rate_limit.exceeded', details: { policy: 'ip' } });
    // Another address has its own budget.
    const fromB = await limited.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.8' });
    expect(fromB.statusCode).toBe(200);
    expect(limitHeaders(fromB.headers)).toMatchObject({ name: 'ip', q: 3, r: 2 });
  });

  it('never limits /healthz and /readyz, nor unknown routes', async () => {
    for (let index = 0; index < 10; index += 1) {
      for (const url of ['/healthz', '/readyz']) {
        const answer = await limited.inject({ url, remoteAddress: '198.51.100.9' });
        expect(answer.statusCode).toBe(200);
        expect(hasNoLimitHeaders(answer)).toBe(true);
      }
      const unknown = await limited.inject({ url: '/no/such/route', remoteAddress: '198.51.100.9' });
      expect(unknown.statusCode).toBe(404);
      expect(hasNoLimitHeaders(unknown)).toBe(true);
    }
  });
});

describe('window reset', () => {
  it('admits again once the window has passed, as t announced', async () => {
    const limited = await buildLimitedApp(database, { perCredential: 2, perAddress: 2, windowSeconds: 1 });
    try {
      const key = await acme.key('agent');
      await awayFromWindowEnd(1, 400);
      const statuses = [];
      for (let index = 0; index < 3; index += 1) statuses.push((await limited.inject({ url: '/v1/auth/principal', headers: bearer(key) })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
      const refused = await limited.inject({ url: '/v1/auth/principal', headers: bearer(key) });
      const { retryAfter, t } = limitHeaders(refused.headers);
      expect([retryAfter, t]).toEqual([1, 1]);
      await new Promise((resolve) => setTimeout(resolve, retryAfter! * 1000));
      const again = await limited.inject({ url: '/v1/auth/principal', headers: bearer(key) });
      expect(again.statusCode).toBe(200);
      expect(limitHeaders(again.headers).r).toBe(1);
    } finally {
      await limited.close();
    }
  });
});

describe('two server processes on one database', () => {
  let servers: ServerProcess[] = [];

  beforeAll(async () => {
    servers = await Promise.all(
      [1, 2].map(() =>
        startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_RATE_LIMIT_PER_MINUTE: '7', SVC_RATE_LIMIT_PUBLIC_PER_MINUTE: '4' }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('share one budget per key: alternating requests, exactly the quota admitted', async () => {
    const key = await acme.key('agent');
    await awayFromWindowEnd(60, 5_000);
    const answers = [];
    for (let index = 0; index < 14; index += 1) answers.push(await call(servers[index % 2]!.baseUrl, key, 'GET', '/v1/auth/principal'));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(7).fill(200), ...Array(7).fill(429)]);
    expect(answers.slice(0, 7).map((answer) => Number(answer.headers.get('x-ratelimit-remaining')))).toEqual([6, 5, 4, 3, 2, 1, 0]);
    for (const answer of answers.slice(7)) {
      expect(answer.headers.get('ratelimit-policy')).toBe('"credential";q=7;w=60');
      expect(answer.headers.get('ratelimit')).toMatch(/^"credential";r=0;t=\d+$/);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.json.error.code).toBe('rate_limit.exceeded');
    }
  });

  it('share one budget under a concurrent flood split across both', async () => {
    const key = await acme.key('agent');
    await awayFromWindowEnd(60, 5_000);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => call(servers[index % 2]!.baseUrl, key, 'GET', '/v1/auth/principal')));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(7);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(33);
  });

  it('share one budget per address on public routes', async () => {
    await awayFromWindowEnd(60, 5_000);
    const statuses = [];
    for (let index = 0; index < 8; index += 1) statuses.push((await fetch(`${servers[index % 2]!.baseUrl}/.well-known/jwks.json`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    expect((await fetch(`${servers[0]!.baseUrl}/healthz`)).status).toBe(200);
  });
});

// ---- The Redis store (REDIS_URL). Redis must be reachable: these tests fail, never skip, without it. ----

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('the Redis store', () => {
  /** Every key these tests make lives under this prefix (or is named below) and is deleted afterwards. */
  const keyPrefix = `svc:rl:test-${randomUUID()}:`;
  const windowSeconds = 3600;
  let redis: RedisClientType;
  const stores: RedisRateLimitStore[] = [];
  const apps: FastifyInstance[] = [];
  const newStore = (options: Partial<RedisRateLimitStoreOptions> = {}) => {
    const store = new RedisRateLimitStore({ url: redisUrl, keyPrefix, ...options });
    stores.push(store);
    return store;
  };
  const limitedApp = async (settings: Omit<RateLimitSettings, 'store' | 'windowSeconds'>, store: RateLimitStore) => {
    const instance = await buildLimitedApp(database, { ...settings, windowSeconds, store });
    apps.push(instance);
    return instance;
  };
  const keysMatching = async (pattern: string) => {
    const keys: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: pattern, COUNT: 1000 })) keys.push(...batch);
    return keys;
  };

  beforeAll(async () => {
    redis = createClient({ url: redisUrl, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
    redis.on('error', () => {});
    await redis.connect();
    expect(await redis.ping()).toBe('PONG');
  });
  afterAll(async () => {
    await Promise.all(apps.map((instance) => instance.close()));
    await Promise.all(stores.map((store) => store.close()));
    if (redis?.isOpen) {
      const keys = await keysMatching(`${keyPrefix}*`);
      if (keys.length > 0) await redis.del(keys);
      await redis.close();
    }
  });

  it('counts per bucket and window, and names keys svc:rl:<bucket>:<windowStartMs> by default', async () => {
    const store = newStore();
    expect(store.key('credential:key_x', 3_600_000)).toBe(`${keyPrefix}credential:key_x:3600000`);
    const unprefixed = new RedisRateLimitStore({ url: redisUrl });
    expect(unprefixed.key('ip:192.0.2.1', 0)).toBe('svc:rl:ip:192.0.2.1:0');
    await unprefixed.close();
    const windowStartMs = Date.now() - (Date.now() % 60_000);
    expect(await store.increment('credential:key_x', windowStartMs, 60_000)).toBe(1);
    expect(await store.increment('credential:key_x', windowStartMs, 60_000, 4)).toBe(5);
    expect(await store.increment('credential:key_x', windowStartMs + 60_000, 60_000)).toBe(1);
    expect(await store.increment('credential:key_y', windowStartMs, 60_000)).toBe(1);
    await expect(store.increment('credential:key_x', windowStartMs, 60_000, 1.5)).rejects.toThrow(/safe integers/);
  });

  it('lets keys expire: the first increment sets a PTTL that covers the window plus a margin, later ones keep it', async () => {
    const store = newStore();
    const windowMs = 10_000;
    const windowStartMs = Date.now() - (Date.now() % windowMs);
    await store.increment('ip:198.51.100.7', windowStartMs, windowMs);
    const key = store.key('ip:198.51.100.7', windowStartMs);
    const first = await redis.pTTL(key);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeGreaterThan(windowStartMs + windowMs - Date.now());
    expect(first).toBeLessThanOrEqual(windowMs + 60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store.increment('ip:198.51.100.7', windowStartMs, windowMs, 3);
    // NX: the second increment did not push the expiry further out.
    expect(await redis.pTTL(key)).toBeLessThan(first);
    expect(await redis.get(key)).toBe('4');
    // A window that ended long ago still gets a short, positive expiry.
    await store.increment('ip:198.51.100.7', 60_000, 60_000);
    expect(await redis.pTTL(store.key('ip:198.51.100.7', 60_000))).toBeGreaterThan(0);
  });

  it('admits exactly the quota from a concurrent burst through the limiter', async () => {
    const limiter = new RateLimiter(newStore());
    const policy: RateLimitPolicy = { name: 'credential', quota: 20, windowSeconds };
    await awayFromWindowEnd(windowSeconds);
    const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.hit(policy, 'key_redis_burst')));
    expect(decisions.filter((decision) => decision.allowed).map((decision) => decision.remaining).sort((a, b) => a - b))
      .toEqual(Array.from({ length: 20 }, (_, index) => index));
  });

  it('takes a flood to 429 with all six headers and the envelope', async () => {
    const limited = await limitedApp({ perCredential: 5, perAddress: 3 }, newStore());
    const key = await acme.key('agent');
    await awayFromWindowEnd(windowSeconds);
    const answers: LightMyRequestResponse[] = [];
    for (let index = 0; index < 8; index += 1) answers.push(await limited.inject({ url: '/v1/auth/principal', headers: bearer(key) }));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.slice(0, 5).map((answer) => limitHeaders(answer.headers).r)).toEqual([4, 3, 2, 1, 0]);
    for (const answer of answers.slice(5)) {
      const headers = limitHeaders(answer.headers);
      expect(headers).toMatchObject({ name: 'credential', q: 5, w: windowSeconds, r: 0 });
      expect(headers.retryAfter).toBeGreaterThanOrEqual(headers.t);
      expect(answer.json().error).toEqual({
        code: 'rate_limit.exceeded',
        message: 'Too many requests for this credential or client address; retry after the seconds in Retry-After.',
        details: { policy: 'credential', retry_after_seconds: headers.retryAfter },
      });
    }
    // The counter is in Redis, under the key's bucket, with an expiry.
    const [counter] = await keysMatching(`${keyPrefix}credential:key_${key.split('_')[3]}:*`);
    expect(counter).toBeDefined();
    expect(Number(await redis.get(counter!))).toBeGreaterThanOrEqual(5);
    expect(await redis.pTTL(counter!)).toBeGreaterThan(0);
  });

  it('gives two app instances on one Redis one budget per key and per address', async () => {
    const pair = [await limitedApp({ perCredential: 7, perAddress: 4 }, newStore()), await limitedApp({ perCredential: 7, perAddress: 4 }, newStore())];
    const key = await acme.key('agent');
    await awayFromWindowEnd(windowSeconds);
    const statuses = [];
    for (let index = 0; index < 14; index += 1) statuses.push((await pair[index % 2]!.inject({ url: '/v1/auth/principal', headers: bearer(key) })).statusCode);
    expect(statuses).toEqual([...Array(7).fill(200), ...Array(7).fill(429)]);

    const flooded = await acme.key('agent');
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => pair[index % 2]!.inject({ url: '/v1/auth/principal', headers: bearer(flooded) })));
    expect(answers.filter((answer) => answer.statusCode === 200)).toHaveLength(7);
    expect(answers.filter((answer) => answer.statusCode === 429)).toHaveLength(33);

    const publicStatuses = [];
    for (let index = 0; index < 8; index += 1) publicStatuses.push((await pair[index % 2]!.inject({ url: '/.well-known/jwks.json' })).statusCode);
    expect(publicStatuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
  });

  it('answers 503 within its timeout when Redis is unreachable, without crashing, and closes cleanly', async () => {
    const errors: Error[] = [];
    const down = newStore({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 200, commandTimeoutMs: 300, onError: (error) => errors.push(error) });
    const startedAt = Date.now();
    await expect(down.increment('credential:key_down', 0, 60_000)).rejects.toThrow(/timed out/);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    const limited = await limitedApp({ perCredential: 5, perAddress: 3 }, down);
    const answer = await limited.inject({ url: '/v1/auth/principal', headers: bearer(await acme.key('agent')) });
    expect(answer.statusCode).toBe(503);
    expect(answer.json().error.code).toBe('internal.unavailable');
    expect(answer.headers['retry-after']).toBe('1');
    // Reported once, not once per reconnect attempt.
    expect(errors).toHaveLength(1);
    await down.close();
    await expect(down.increment('credential:key_down', 0, 60_000)).rejects.toThrow(/closed/);
  });
});

describe('two server processes with REDIS_URL', () => {
  let servers: ServerProcess[] = [];
  let redis: RedisClientType;
  const keyIds: string[] = [];

  beforeAll(async () => {
    redis = createClient({ url: redisUrl, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
    redis.on('error', () => {});
    await redis.connect();
    servers = await Promise.all(
      [1, 2].map(() => startServerProcess({ DATABASE_URL: database.url, REDIS_URL: redisUrl, LOG_LEVEL: 'info', SVC_RATE_LIMIT_PER_MINUTE: '7' })),
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    if (redis?.isOpen) {
      for (const keyId of keyIds) {
        const keys: string[] = [];
        for await (const batch of redis.scanIterator({ MATCH: `svc:rl:credential:${keyId}:*` })) keys.push(...batch);
        if (keys.length > 0) await redis.del(keys);
      }
      await redis.close();
    }
  });

  it('start, and share one budget per key through Redis', async () => {
    for (const server of servers) expect(server.output()).toContain('rate-limit counters live in Redis');
    const key = await acme.key('agent');
    const keyId = `key_${key.split('_')[3]}`;
    keyIds.push(keyId);
    await awayFromWindowEnd(60, 5_000);
    const statuses = [];
    for (let index = 0; index < 14; index += 1) statuses.push((await call(servers[index % 2]!.baseUrl, key, 'GET', '/v1/auth/principal')).status);
    expect(statuses).toEqual([...Array(7).fill(200), ...Array(7).fill(429)]);
    const windowStartMs = Date.now() - (Date.now() % 60_000);
    expect(Number(await redis.get(`svc:rl:credential:${keyId}:${windowStartMs}`))).toBeGreaterThanOrEqual(7);
    // Not in Postgres: the counters table has no row for this key.
    const db = new Database(database.connection);
    try {
      const rows = await db.system(async (tx) => (await tx.query('SELECT 1 FROM rate_limit_counters WHERE bucket = $1', [`credential:${keyId}`])).rows);
      expect(rows).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('shut down cleanly on SIGTERM', async () => {
    expect(await Promise.all(servers.map((server) => server.stop()))).toEqual([0, 0]);
  });
});
