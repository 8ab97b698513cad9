// Gateway rate limits (docs/operations.md "Rate limits", docs/decisions.md "Rate limiting"). Authenticated routes
// are limited per API key (or session user), public routes per client address, except that a console page opened
// with a valid session counts against its user (docs/console.md); /healthz and /readyz never. The counters are
// fixed windows in Postgres (migrations/0007_rate_limits.sql), shared by every replica: nothing here decides
// from process memory what another replica could contradict.
//
// One process does not send one UPSERT per request: requests that arrive while an UPSERT is in flight wait and go
// together in the next one, every bucket in one multi-row statement (`hits = hits + n` per bucket), and each request
// learns its exact position in its shared counter from the returned total. So the budget stays exact across replicas (at most `quota` requests
// per window are admitted, and every admitted one is counted), while a busy key costs about one round trip per
// database latency instead of one per request. A bucket seen full in this window is refused locally until the
// window ends: counters only grow within a window, so that answer cannot become wrong.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type pg from 'pg';
import type { Principal } from '../credentials/principal.ts';
import { ServiceError } from '../errors/service-error.ts';
import { downloadGrantOf, principalOf } from './access.ts';
import type { Queryable } from '../infra/database.ts';

/** One quota policy: `quota` requests per `windowSeconds`, named in the RateLimit headers. */
export interface RateLimitPolicy {
  /** A Structured Field String: lowercase letters, digits and `-`. */
  readonly name: string;
  readonly quota: number;
  readonly windowSeconds: number;
}

export interface RateLimitSettings {
  /** Requests per window one API key may make to authenticated routes. */
  readonly perCredential: number;
  /** Requests per window one client address may make to public routes. */
  readonly perAddress: number;
  /** The window; the configuration is per minute (60), tests use shorter ones. */
  readonly windowSeconds?: number;
  /** Where the counters live; default Postgres through the app's pool. The caller owns (and closes) a store it passes. */
  readonly store?: RateLimitStore;
}

/** The shared counter behind the limiter: Postgres (below) by default, Redis with `REDIS_URL` (rate-limit-redis.ts). */
export interface RateLimitStore {
  /** Adds `hits` to the counter of `bucket` in the window `[windowStartMs, windowStartMs + windowMs)` and returns the
   * counter's value after the addition, as every replica sees it. */
  increment(bucket: string, windowStartMs: number, windowMs: number, hits?: number): Promise<number>;
  /** The same for several buckets at once, in one operation where the store can; answers each counter's value after
   * the addition, in the order given. */
  incrementMany?(increments: readonly CounterIncrement[]): Promise<number[]>;
}

/** `increments` through the store's incrementMany, or one increment each (concurrently) where it has none. */
function incrementAll(store: RateLimitStore, increments: readonly CounterIncrement[]): Promise<number[]> {
  if (increments.length === 1) {
    const [{ bucket, windowStartMs, windowMs, hits }] = increments as [CounterIncrement];
    return store.increment(bucket, windowStartMs, windowMs, hits).then((total) => [total]);
  }
  if (store.incrementMany !== undefined) return store.incrementMany(increments);
  return Promise.all(increments.map(({ bucket, windowStartMs, windowMs, hits }) => store.increment(bucket, windowStartMs, windowMs, hits)));
}

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests left in this window after this one (0 when refused). */
  readonly remaining: number;
  /** Whole seconds until the window ends and the quota is whole again, at least 1. */
  readonly resetSeconds: number;
}

/** Routes that are never limited: load balancers, orchestrators and the metrics scraper (whose token no guess finds,
 * docs/operations.md "Metrics") poll them, and they must answer under a flood. */
const unlimitedRoutes: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Buckets remembered as full for the rest of their window, per process. Only an optimization: forgetting one
 * costs a round trip, never a wrong answer. */
const exhaustedBucketsMax = 10_000;

const policyNamePattern = /^[a-z][a-z0-9-]{0,31}$/;
/** Subjects kept readable in the bucket key; anything else (a long or odd forwarded address) is hashed. */
const plainSubjectPattern = /^[A-Za-z0-9_.:%-]{1,64}$/;

export const defaultRateLimitWindowSeconds = 60;

export function rateLimitPolicies(settings: RateLimitSettings): { readonly credential: RateLimitPolicy; readonly address: RateLimitPolicy } {
  const windowSeconds = settings.windowSeconds ?? defaultRateLimitWindowSeconds;
  return {
    credential: checkedPolicy({ name: 'credential', quota: settings.perCredential, windowSeconds }),
    address: checkedPolicy({ name: 'ip', quota: settings.perAddress, windowSeconds }),
  };
}

function checkedPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  if (!policyNamePattern.test(policy.name)) throw new Error(`rate-limit policy name ${JSON.stringify(policy.name)} is not a plain token`);
  if (!Number.isSafeInteger(policy.quota) || policy.quota < 1) throw new Error(`rate-limit quota of ${policy.name} must be a positive integer`);
  if (!Number.isSafeInteger(policy.windowSeconds) || policy.windowSeconds < 1) {
    throw new Error(`rate-limit window of ${policy.name} must be a positive whole number of seconds`);
  }
  return Object.freeze({ ...policy });
}

/** The counter key of a subject under a policy: `credential:key_…`, `ip:203.0.113.7`. */
export function bucketKey(policy: RateLimitPolicy, subject: string): string {
  const readable = plainSubjectPattern.test(subject) ? subject : `sha256-${createHash('sha256').update(subject).digest('hex')}`;
  return `${policy.name}:${readable}`;
}

/** Whose budget an authenticated request spends: the API key's id (`key_…`), or for a session the user's id
 * (`usr_…`), so that signing in again does not buy a fresh budget. */
export function credentialSubject(principal: Principal): string {
  return principal.credential.type === 'api_key' ? principal.credential.keyId : principal.credential.userId;
}

/** The five headers every limited answer carries (draft-ietf-httpapi-ratelimit-headers-10 plus the X- trio);
 * a 429 adds Retry-After. `X-RateLimit-Reset` is delta seconds like `t`, not an epoch time. */
export function rateLimitHeaders(policy: RateLimitPolicy, decision: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`,
    ratelimit: `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`,
    'x-ratelimit-limit': String(policy.quota),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
  };
}

interface Waiter {
  resolve(position: number): void;
  reject(error: unknown): void;
}

interface Slot {
  readonly bucket: string;
  readonly windowStartMs: number;
  readonly windowMs: number;
  waiting: Waiter[];
}

/** One bucket's share of a shared increment: `hits` added to its counter in its window. */
export interface CounterIncrement {
  readonly bucket: string;
  readonly windowStartMs: number;
  readonly windowMs: number;
  readonly hits: number;
}

/** Decides one request at a time against the shared store, coalescing concurrent requests: every bucket with
 * requests waiting goes into one increment of the store (one statement for all of them), and what arrives while it
 * is in flight goes into the next. */
export class RateLimiter {
  readonly #store: RateLimitStore;
  readonly #now: () => number;
  /** Buckets with requests waiting, by window and bucket; empty when nothing waits. */
  readonly #slots = new Map<string, Slot>();
  #inFlight = false;
  /** Bucket → end of the window in which it was seen full. */
  readonly #exhausted = new Map<string, number>();

  constructor(store: RateLimitStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  async hit(policy: RateLimitPolicy, subject: string): Promise<RateLimitDecision> {
    const windowMs = policy.windowSeconds * 1000;
    const startedAt = this.#now();
    const windowStartMs = startedAt - (startedAt % windowMs);
    const windowEndMs = windowStartMs + windowMs;
    const bucket = bucketKey(policy, subject);
    const position = this.#exhausted.get(bucket) === windowEndMs ? Number.POSITIVE_INFINITY : await this.#enqueue(bucket, windowStartMs, windowMs);
    if (position >= policy.quota && Number.isFinite(position)) this.#rememberExhausted(bucket, windowEndMs);
    // Seconds until the window this request was counted in ends; at least 1, also when it ended meanwhile.
    const resetSeconds = Math.max(1, Math.ceil((windowEndMs - this.#now()) / 1000));
    const allowed = position <= policy.quota;
    return { allowed, remaining: allowed ? policy.quota - position : 0, resetSeconds };
  }

  #enqueue(bucket: string, windowStartMs: number, windowMs: number): Promise<number> {
    const slotKey = `${windowStartMs}|${windowMs}|${bucket}`;
    let slot = this.#slots.get(slotKey);
    if (slot === undefined) {
      slot = { bucket, windowStartMs, windowMs, waiting: [] };
      this.#slots.set(slotKey, slot);
    }
    const position = new Promise<number>((resolve, reject) => slot.waiting.push({ resolve, reject }));
    if (!this.#inFlight) this.#flush();
    return position;
  }

  /** Sends everything waiting, every bucket, as one increment; what arrives meanwhile goes in the next one. */
  #flush(): void {
    const slots = [...this.#slots.values()];
    this.#slots.clear();
    this.#inFlight = true;
    const increments = slots.map(({ bucket, windowStartMs, windowMs, waiting }) => ({ bucket, windowStartMs, windowMs, hits: waiting.length }));
    incrementAll(this.#store, increments)
      .then(
        (totals) => {
          slots.forEach((slot, index) => {
            const before = totals[index]! - slot.waiting.length;
            slot.waiting.forEach((waiter, position) => waiter.resolve(before + position + 1));
          });
        },
        (error: unknown) => {
          for (const slot of slots) for (const waiter of slot.waiting) waiter.reject(error);
        },
      )
      .finally(() => {
        this.#inFlight = false;
        if (this.#slots.size > 0) this.#flush();
      });
  }

  #rememberExhausted(bucket: string, windowEndMs: number): void {
    if (this.#exhausted.size >= exhaustedBucketsMax) {
      const now = this.#now();
      for (const [key, end] of this.#exhausted) if (end <= now) this.#exhausted.delete(key);
      if (this.#exhausted.size >= exhaustedBucketsMax) this.#exhausted.clear();
    }
    this.#exhausted.set(bucket, windowEndMs);
  }
}

/** The role the counter statement runs as (migrations/0001_init.sql); the table grants nothing to svc_app. */
const counterRole = 'svc_system';

/** Counters in Postgres (`rate_limit_counters`). One round trip per increment, of one bucket or of many: the
 * transaction, its role, one UPSERT of every bucket's row and the commit travel as one simple-protocol query, with
 * asynchronous commit (a counter is not worth an fsync; the table is unlogged anyway). The rows go in the order of
 * their key, so that two replicas' statements lock shared counters in the same order and never deadlock. */
export class PostgresRateLimitStore implements RateLimitStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async increment(bucket: string, windowStartMs: number, windowMs: number, hits = 1): Promise<number> {
    const [total] = await this.incrementMany([{ bucket, windowStartMs, windowMs, hits }]);
    return total!;
  }

  async incrementMany(increments: readonly CounterIncrement[]): Promise<number[]> {
    for (const { windowStartMs, windowMs, hits } of increments) {
      for (const value of [windowStartMs, windowMs, hits]) {
        // They are written into the statement as literals, so they must be plain integers.
        if (!Number.isSafeInteger(value) || value < 0) throw new Error('rate-limit increment needs non-negative safe integers');
      }
    }
    const keyOf = ({ bucket, windowStartMs, windowMs }: { bucket: string; windowStartMs: number; windowMs: number }): string =>
      `${bucket}\u0000${windowStartMs}\u0000${windowStartMs + windowMs}`;
    // One row per counter (a row may not be updated twice by one statement), in key order.
    const merged = new Map<string, CounterIncrement>();
    for (const increment of increments) {
      const key = keyOf(increment);
      const before = merged.get(key);
      merged.set(key, before === undefined ? increment : { ...before, hits: before.hits + increment.hits });
    }
    const rows = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, increment]) => increment);
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      const values = rows
        .map(({ bucket, windowStartMs, windowMs, hits }) => `(${client.escapeLiteral(bucket)}, ${windowStartMs}, ${windowStartMs + windowMs}, ${hits})`)
        .join(', ');
      const statement =
        `BEGIN; SET LOCAL ROLE ${counterRole}; SET LOCAL synchronous_commit = off; ` +
        `INSERT INTO rate_limit_counters AS c (bucket, window_start_ms, window_end_ms, hits) VALUES ${values} ` +
        `ON CONFLICT (bucket, window_start_ms, window_end_ms) DO UPDATE SET hits = c.hits + EXCLUDED.hits ` +
        `RETURNING c.bucket, c.window_start_ms, c.window_end_ms, c.hits; COMMIT`;
      // A multi-statement query answers with one result per statement.
      const results = (await client.query(statement)) as unknown as Array<pg.QueryResult<{ bucket: string; window_start_ms: string; window_end_ms: string; hits: string }>>;
      const returned = results.find((result) => result.command === 'INSERT')?.rows ?? [];
      const totals = new Map(returned.map((row) => [`${row.bucket}\u0000${row.window_start_ms}\u0000${row.window_end_ms}`, Number(row.hits)]));
      // A counter's total after this statement, less what the increments after this one (of the same counter, in
      // the order given) added: each increment learns its own place.
      const later = new Map<string, number>();
      const answers: number[] = new Array<number>(increments.length);
      for (let index = increments.length - 1; index >= 0; index -= 1) {
        const key = keyOf(increments[index]!);
        const total = totals.get(key);
        if (total === undefined) throw new Error('rate-limit UPSERT returned no row for a counter');
        const after = later.get(key) ?? 0;
        answers[index] = total - after;
        later.set(key, after + increments[index]!.hits);
      }
      return answers;
    } catch (error) {
      // The statement may have failed inside its BEGIN: the connection's transaction state is unknown, drop it.
      broken = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** On a public route that a signed-in person also reaches with a session cookie (the console's pages): reads the
     * session token from the request. A token the authenticator accepts as a session spends its user's
     * per-credential budget, as the API calls made with it do; none, or one it refuses, spends the address's. */
    sessionTokenOf?: (request: FastifyRequest) => string | undefined;
  }
  interface FastifyInstance {
    /** Headers for a request the process sends to itself on behalf of a request already counted (an MCP tool call
     * runs its route through `inject`): the rate limiter does not count it again. */
    readonly alreadyCountedHeaders: Readonly<Record<string, string>>;
  }
}

/** The header that marks a request as already counted, with a value only this process knows. */
export const alreadyCountedHeader = 'x-svc-already-counted';

function isAlreadyCounted(value: string | string[] | undefined, token: Buffer): boolean {
  if (typeof value !== 'string') return false;
  const presented = Buffer.from(value);
  return presented.length === token.length && timingSafeEqual(presented, token);
}

export const rateLimit = fastifyPlugin(
  async (app: FastifyInstance, settings: RateLimitSettings) => {
    const policies = rateLimitPolicies(settings);
    const limiter = new RateLimiter(settings.store ?? new PostgresRateLimitStore(app.database.pool));
    // A fresh secret per process: a client that sends the header with any other value is counted as usual.
    const alreadyCountedToken = Buffer.from(randomBytes(32).toString('base64url'));
    app.decorate('alreadyCountedHeaders', { [alreadyCountedHeader]: alreadyCountedToken.toString() });

    /** Whose budget a request to a public route spends: the signed-in user's when the route reads a session the
     * authenticator accepts, else the client address's. Any refusal (bad, expired, revoked, not a session) falls back
     * to the address, so a made-up cookie buys no budget of its own. */
    async function publicSubject(request: FastifyRequest): Promise<[RateLimitPolicy, string]> {
      const token = request.routeOptions.config.sessionTokenOf?.(request);
      if (token !== undefined) {
        const principal = await app.authenticator.authenticate(`Bearer ${token}`).catch(() => undefined);
        if (principal?.credential.type === 'session') return [policies.credential, credentialSubject(principal)];
      }
      return [policies.address, request.ip];
    }

    // After `access`: an authenticated route has its principal by now, and a refused credential is not counted.
    app.addHook('onRequest', async (request, reply) => {
      const routeAccess = request.routeOptions.config.access;
      // Unknown routes (no access declared) answer 404 without touching the database; health checks are never limited.
      if (!routeAccess || unlimitedRoutes.has(request.routeOptions.url ?? '')) return;
      if (isAlreadyCounted(request.headers[alreadyCountedHeader], alreadyCountedToken)) return;
      const [policy, subject] =
        'public' in routeAccess
          ? await publicSubject(request)
          : 'download' in routeAccess
            ? [policies.credential, `download:${downloadGrantOf(request).tokenId}`]
            : [policies.credential, credentialSubject(principalOf(request))];
      let decision: RateLimitDecision;
      try {
        decision = await limiter.hit(policy, subject);
      } catch (error) {
        // Fail closed: without the shared counter no replica can tell whether the budget is spent.
        throw new ServiceError('internal.unavailable', { cause: error });
      }
      reply.headers(rateLimitHeaders(policy, decision));
      if (!decision.allowed) {
        reply.header('retry-after', String(decision.resetSeconds));
        throw new ServiceError('rate_limit.exceeded', { details: { policy: policy.name, retry_after_seconds: decision.resetSeconds } });
      }
    });
  },
  { name: 'rate-limit', dependencies: ['database', 'access'] },
);
