// Every default and bound of the SDK in one place, each with its reason (the server's are in src/limits.ts; the
// SDK keeps its own so that it never imports server configuration).

/** Where a self-hosted gateway listens out of the box (`npm start`): loopback, so plain http is allowed. */
export const gatewayBaseUrlDefault = 'http://127.0.0.1:8080';

/** Total attempts of one request, the first included (docs/sdk.md#retries: 3). */
export const attemptsMaxDefault = 3;
/** A caller cannot ask for unbounded retries: more than this is a configuration error. */
export const attemptsMaxLimit = 10;

/** Per-attempt timeout (docs/wire-compatibility.md#transport): an answer slower than this is a network failure. */
export const requestTimeoutMsDefault = 30_000;
/** The time one request may take over all its attempts and backoff delays together. */
export const retryBudgetMsDefault = 60_000;

/** Backoff: min(base · 2^retry + U[0, jitter), max) ms (docs/sdk.md#retries). */
export const retryBackoffBaseMs = 200;
export const retryBackoffJitterMs = 100;
export const retryBackoffMaxMs = 5_000;
/** `Retry-After` is honoured up to this; a server asking for more is capped, not obeyed. */
export const retryAfterMaxMs = 30_000;
/** How long a request answered 409 `idempotency.request_in_progress` is retried (same key and body, with backoff),
 * from the first such answer: another request under its key is still running, or died mid-call and is taken over
 * once its claim's 3 s lease is over. These retries do not count against `attemptsMax`; the retry budget still
 * bounds them. */
export const requestInProgressRetryMsMax = 20_000;

/** Funding polls while the rail answers 202 (docs/sdk.md#intents-clientintents: every 2 s, up to 30). */
export const fundPollIntervalMsDefault = 2_000;
export const fundPollsMaxDefault = 30;

/** The engine's idempotency-key length (spec Limits: 1 to 256 characters). */
export const idempotencyKeyLengthMax = 256;

/** Ledger events per page when the SDK walks the chain (the route allows 1 to 256). */
export const ledgerEventsPageSize = 256;
/** Pages of policy versions read while looking for a head, so a corrupt cursor cannot loop forever. */
export const policyVersionPagesMax = 100;

/** Sent as `user-agent` so operators can tell SDK traffic apart in their logs. */
export const sdkUserAgent = 'svc-sdk-typescript/0.1.0';
