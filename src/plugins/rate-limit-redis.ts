// Rate-limit counters in Redis (`REDIS_URL`; docs/operations.md "Rate limits", docs/decisions.md "Rate limiting").
// The same fixed windows as the Postgres store: one key per bucket and window, `svc:rl:<bucket>:<windowStartMs>`,
// written in one round trip (`MULTI; INCRBY key hits; PEXPIRE key <until the window ends + margin> NX; EXEC`).
// `PEXPIRE … NX` needs Redis 7: it sets the expiry only on the key's first increment (or on a key that has none),
// so the key outlives its window by the margin and then disappears without a pruning pass.
//
// A Redis that is down or slow never crashes the process and never blocks a request for long: the client
// reconnects in the background, commands are not queued while it is offline, and an increment that cannot be
// answered within `commandTimeoutMs` throws, which the limiter answers with 503 (fail closed).
import { createClient } from 'redis';
import type { RateLimitStore } from './rate-limit.ts';

export interface RedisRateLimitStoreOptions {
  /** `redis://` or `rediss://` URL (user, password and database number as node-redis reads them). */
  readonly url: string;
  /** Prepended to every key; default `svc:rl:`. Tests use their own to keep (and clean up) their keys apart. */
  readonly keyPrefix?: string;
  /** Bound on opening one connection (TCP + TLS + AUTH); default 2,000 ms. */
  readonly connectTimeoutMs?: number;
  /** Bound on one increment, including the wait for a connection that is being (re)opened; default 2,000 ms. */
  readonly commandTimeoutMs?: number;
  /** Told about connection errors: the first after each successful connection, not every retry of an outage. */
  readonly onError?: (error: Error) => void;
}

/** How long a key outlives its window: replicas' clocks differ a little, and a late request of a window that has
 * just ended must still find its counter, not start a fresh one. */
const expiryMarginMs = 60_000;
const reconnectDelayMaxMs = 2_000;

export class RedisRateLimitStore implements RateLimitStore {
  readonly #client;
  readonly #keyPrefix: string;
  readonly #commandTimeoutMs: number;
  readonly #onError: (error: Error) => void;
  /** Whether the next connection error is news (none reported since the last successful connection). */
  #errorIsNews = true;
  #closed = false;
  #whenReady: Promise<void> | undefined;
  #resolveReady: (() => void) | undefined;

  constructor(options: RedisRateLimitStoreOptions) {
    this.#keyPrefix = options.keyPrefix ?? 'svc:rl:';
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
    this.#onError = options.onError ?? (() => {});
    this.#client = createClient({
      url: options.url,
      // Fail fast instead of queueing: an increment waits (bounded) for the connection itself, see #ready.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: options.connectTimeoutMs ?? 2_000,
        reconnectStrategy: (retries) => Math.min(50 * 2 ** Math.min(retries, 10), reconnectDelayMaxMs),
      },
    });
    // Without a listener an 'error' event would throw and end the process.
    this.#client.on('error', (error: unknown) => {
      if (this.#closed || !this.#errorIsNews) return;
      this.#errorIsNews = false;
      this.#onError(error instanceof Error ? error : new Error(String(error)));
    });
    this.#client.on('ready', () => {
      this.#errorIsNews = true;
      this.#settleReady();
    });
    // With a numeric reconnect strategy connect() retries until it is connected or closed; errors go to 'error'.
    this.#client.connect().catch(() => {});
  }

  /** The key of `bucket`'s counter in the window starting at `windowStartMs`. */
  key(bucket: string, windowStartMs: number): string {
    return `${this.#keyPrefix}${bucket}:${windowStartMs}`;
  }

  async increment(bucket: string, windowStartMs: number, windowMs: number, hits = 1): Promise<number> {
    for (const value of [windowStartMs, windowMs, hits]) {
      if (!Number.isSafeInteger(value) || value < 0) throw new Error('rate-limit increment needs non-negative safe integers');
    }
    if (this.#closed) throw new Error('the Redis rate-limit store is closed');
    const key = this.key(bucket, windowStartMs);
    const expiresInMs = Math.max(1, windowStartMs + windowMs - Date.now()) + expiryMarginMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis rate-limit increment timed out after ${this.#commandTimeoutMs} ms`)), this.#commandTimeoutMs);
    });
    try {
      return await Promise.race([this.#increment(key, hits, expiresInMs), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #increment(key: string, hits: number, expiresInMs: number): Promise<number> {
    await this.#ready();
    const [total] = await this.#client.multi().incrBy(key, hits).pExpire(key, expiresInMs, 'NX').exec();
    if (typeof total !== 'number') throw new Error('Redis rate-limit INCRBY returned no number');
    return total;
  }

  /** Resolves once the client is connected (or closed); the caller's deadline bounds the wait. One shared promise,
   * so a flood during an outage adds no listeners. */
  #ready(): Promise<void> {
    if (this.#client.isReady || this.#closed) return Promise.resolve();
    this.#whenReady ??= new Promise<void>((resolve) => (this.#resolveReady = resolve));
    return this.#whenReady;
  }

  #settleReady(): void {
    this.#resolveReady?.();
    this.#whenReady = undefined;
    this.#resolveReady = undefined;
  }

  /** Closes the connection: waits (bounded) for increments in flight, then drops the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#settleReady();
    if (!this.#client.isOpen) return;
    if (!this.#client.isReady) {
      this.#client.destroy();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const gracefully = this.#client.close().then(() => true);
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.#commandTimeoutMs)));
    try {
      if (!(await Promise.race([gracefully, late]))) this.#client.destroy();
    } finally {
      clearTimeout(timer);
    }
  }
}
