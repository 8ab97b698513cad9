// The retry rules as pure functions (spec "Retry rules", docs/sdk.md#retries), so the transport stays a loop and
// the rules can be read and tested on their own.
import { requestInProgressRetryMsMax, retryAfterMaxMs, retryBackoffBaseMs, retryBackoffJitterMs, retryBackoffMaxMs } from './defaults.ts';

/** What one attempt ended with; `code` is the error envelope's code, when the answer has one. */
export type AttemptOutcome =
  | { readonly kind: 'network' }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterMs?: number | undefined; readonly code?: string | undefined };

/** The engine's answer for a request whose key another request still holds: retry shortly, the same request. */
export const requestInProgressCode = 'idempotency.request_in_progress';

export interface RetryState {
  /** The request may be repeated: a GET, a POST carrying an idempotency key (same key and body on every attempt),
   * or a POST the server treats as pure. */
  readonly retrySafe: boolean;
  /** Attempts made so far, this one included, not counting those answered 409 `idempotency.request_in_progress`. */
  readonly attempts: number;
  readonly attemptsMax: number;
  /** Answers 409 `idempotency.request_in_progress` so far, this one included, and the time since the first. */
  readonly inProgressAnswers: number;
  readonly inProgressElapsedMs: number;
  /** Whether a 401 was already answered by refreshing the API key (only once per request). */
  readonly refreshed: boolean;
  /** Whether the client has a `refreshApiKey` callback. */
  readonly canRefresh: boolean;
}

export type RetryDecision =
  | { readonly action: 'stop' }
  | { readonly action: 'retry'; readonly delayMs: number }
  | { readonly action: 'refresh_and_retry' };

/** Exponential backoff with jitter: min(200 · 2^retryIndex + U[0, 100), 5000) ms; retryIndex 0 is the first retry. */
export function backoffDelayMs(retryIndex: number, random: () => number = Math.random): number {
  const jitter = Math.floor(random() * retryBackoffJitterMs);
  return Math.min(retryBackoffBaseMs * 2 ** retryIndex + jitter, retryBackoffMaxMs);
}

/** `Retry-After` as delay-seconds (a float is accepted, as the reference client does) or an HTTP-date, capped at
 * 30 s. Undefined when absent or unreadable, so the caller falls back to backoff. */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  let delayMs: number;
  if (/^\d+(\.\d+)?$/.test(text)) delayMs = Number(text) * 1000;
  else {
    const dateMs = Date.parse(text);
    if (Number.isNaN(dateMs)) return undefined;
    delayMs = dateMs - nowMs;
  }
  return Math.min(Math.max(0, Math.ceil(delayMs)), retryAfterMaxMs);
}

/**
 * Whether and when to try again:
 * - 401: once, after refreshing the API key, when the client can refresh (the request was not processed);
 * - 429: after `Retry-After` (else backoff), for any request (a rate-limited request was not processed);
 * - network failures and 500/502/503/504: with backoff, only when the request is retry-safe;
 * - 409 `idempotency.request_in_progress`: with backoff (or `Retry-After`), only when the request is retry-safe (it
 *   carries its key: the same request), for at most `requestInProgressRetryMsMax` from the first such answer,
 *   outside the attempt bound;
 * - everything else (400, 402, 403, 404, other 409s, 422, …): never.
 * Always within the attempt bound (but for the in-progress answers); the caller also enforces the time budget.
 */
export function decideRetry(outcome: AttemptOutcome, state: RetryState, random: () => number = Math.random): RetryDecision {
  if (outcome.kind === 'status' && outcome.status === 409 && outcome.code === requestInProgressCode) {
    if (!state.retrySafe) return { action: 'stop' };
    const delayMs = outcome.retryAfterMs ?? backoffDelayMs(state.inProgressAnswers - 1, random);
    return state.inProgressElapsedMs + delayMs > requestInProgressRetryMsMax ? { action: 'stop' } : { action: 'retry', delayMs };
  }
  if (state.attempts >= state.attemptsMax) return { action: 'stop' };
  const backoff = { action: 'retry', delayMs: backoffDelayMs(state.attempts - 1, random) } as const;
  if (outcome.kind === 'network') return state.retrySafe ? backoff : { action: 'stop' };
  switch (outcome.status) {
    case 401:
      return state.canRefresh && !state.refreshed ? { action: 'refresh_and_retry' } : { action: 'stop' };
    case 429:
      return outcome.retryAfterMs === undefined ? backoff : { action: 'retry', delayMs: outcome.retryAfterMs };
    case 500:
    case 502:
    case 503:
    case 504:
      if (!state.retrySafe) return { action: 'stop' };
      return outcome.retryAfterMs === undefined ? backoff : { action: 'retry', delayMs: outcome.retryAfterMs };
    default:
      return { action: 'stop' };
  }
}
