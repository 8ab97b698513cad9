// One HTTP request with the SDK's retry rules: identical bytes on every attempt (method, URL, body, idempotency
// key, recognition proof; only `authorization` changes after a refresh), a per-attempt timeout, an attempt bound
// (answers "request in progress" have their own time bound) and a time budget. Non-2xx answers become typed errors unless the caller expects them (fund's 402 and 202).
import { sdkUserAgent } from './defaults.ts';
import { engineHttpErrorFor, parseErrorBody, SvcArgumentError, SvcConfigurationError, SvcConnectionError, SvcResponseError } from './errors.ts';
import { decideRetry, parseRetryAfterMs, requestInProgressCode, type AttemptOutcome } from './retry.ts';

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly refreshApiKey?: (() => Promise<string> | string) | undefined;
  readonly fetch: FetchFunction;
  readonly attemptsMax: number;
  readonly timeoutMs: number;
  readonly retryBudgetMs: number;
  /** Injectable for tests; the default is setTimeout, so fake timers drive it too. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
  readonly random: () => number;
}

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the base URL, starting with `/`, segments already encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** The exact JSON text to send; serialized once by the caller so the bytes (and any proof over them) never change. */
  readonly bodyText?: string;
  /** May the request be repeated on a network failure or a 5xx? See retry.ts. */
  readonly retrySafe: boolean;
  readonly headers?: Readonly<Record<string, string>>;
  /** Non-2xx statuses returned to the caller instead of thrown. */
  readonly expectStatuses?: readonly number[];
}

export interface TransportResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
  readonly url: string;
  readonly attempts: number;
}

type AttemptResult = { readonly kind: 'response'; readonly response: TransportResponse } | { readonly kind: 'network'; readonly error: SvcConnectionError };

export const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class Transport {
  readonly baseUrl: string;
  #apiKey: string;
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl;
    this.#apiKey = options.apiKey;
    this.#options = options;
  }

  async request(spec: RequestSpec): Promise<TransportResponse> {
    const options = this.#options;
    const url = buildUrl(this.baseUrl, spec.path, spec.query);
    try {
      // fetch refuses header values that are not single-line Latin-1 with a TypeError, which would otherwise look
      // like a network failure and be retried; it is the caller's input, so say so before sending.
      new Headers(this.#headers(spec));
    } catch (error) {
      throw new SvcArgumentError(`A request header is not a valid HTTP header value: ${(error as Error).message}`);
    }
    const startedMs = options.now();
    let attempts = 0;
    let inProgressAnswers = 0;
    let inProgressSinceMs = 0;
    let refreshed = false;
    for (;;) {
      attempts += 1;
      const remainingMs = options.retryBudgetMs - (options.now() - startedMs);
      const result = await this.#attempt(spec, url, Math.max(1, Math.min(options.timeoutMs, remainingMs)), attempts);
      let outcome: AttemptOutcome;
      if (result.kind === 'response') {
        const { response } = result;
        if ((response.status >= 200 && response.status < 300) || spec.expectStatuses?.includes(response.status)) return response;
        const code = response.status === 409 ? parseErrorBody(response.bodyText).code : undefined;
        outcome = { kind: 'status', status: response.status, retryAfterMs: parseRetryAfterMs(response.headers.get('retry-after'), options.now()), code };
        if (code === requestInProgressCode && (inProgressAnswers += 1) === 1) inProgressSinceMs = options.now();
      } else {
        outcome = { kind: 'network' };
      }
      const decision = decideRetry(
        outcome,
        {
          retrySafe: spec.retrySafe,
          attempts: attempts - inProgressAnswers,
          attemptsMax: options.attemptsMax,
          inProgressAnswers,
          inProgressElapsedMs: inProgressAnswers === 0 ? 0 : options.now() - inProgressSinceMs,
          refreshed,
          canRefresh: options.refreshApiKey !== undefined,
        },
        options.random,
      );
      const failure = () => (result.kind === 'network' ? result.error : errorFor(result.response, outcome));
      if (decision.action === 'stop') throw failure();
      if (decision.action === 'refresh_and_retry') {
        const refreshedKey = await options.refreshApiKey!();
        if (typeof refreshedKey !== 'string' || refreshedKey.trim() === '' || /\s/.test(refreshedKey.trim())) {
          throw new SvcConfigurationError('refreshApiKey answered something that is not an API key.');
        }
        this.#apiKey = refreshedKey.trim();
        refreshed = true;
        continue;
      }
      // A delay that would end past the budget is not worth starting: the caller gets the failure now.
      if (options.now() - startedMs + decision.delayMs >= options.retryBudgetMs) throw failure();
      await options.sleep(decision.delayMs);
    }
  }

  async #attempt(spec: RequestSpec, url: string, timeoutMs: number, attempts: number): Promise<AttemptResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const response = await this.#options.fetch(url, {
        method: spec.method,
        headers: this.#headers(spec),
        ...(spec.bodyText === undefined ? {} : { body: spec.bodyText }),
        signal: controller.signal,
        redirect: 'error',
      });
      const bodyText = await response.text();
      return { kind: 'response', response: { status: response.status, headers: response.headers, bodyText, url, attempts } };
    } catch (error) {
      return { kind: 'network', error: new SvcConnectionError(url, timedOut, error) };
    } finally {
      clearTimeout(timer);
    }
  }

  #headers(spec: RequestSpec): Record<string, string> {
    return {
      accept: 'application/json',
      'user-agent': sdkUserAgent,
      ...(spec.bodyText === undefined ? {} : { 'content-type': 'application/json' }),
      ...spec.headers,
      authorization: `Bearer ${this.#apiKey}`,
    };
  }
}

function errorFor(response: TransportResponse, outcome: AttemptOutcome) {
  const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
  return engineHttpErrorFor(response.status, response.url, response.bodyText, response.headers.get('x-request-id'), retryAfterMs);
}

export function buildUrl(baseUrl: string, path: string, query?: Readonly<Record<string, string | number | undefined>>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return `${baseUrl}${path}${text === '' ? '' : `?${text}`}`;
}

/** The answer's body as a JSON object, or `SvcResponseError`. */
export function jsonObjectOf(response: TransportResponse): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(response.bodyText);
  } catch {
    throw new SvcResponseError(`The answer from ${response.url} is not JSON.`, response.url, response.status, response.bodyText);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SvcResponseError(`The answer from ${response.url} is not a JSON object.`, response.url, response.status, response.bodyText);
  }
  return value as Record<string, unknown>;
}
