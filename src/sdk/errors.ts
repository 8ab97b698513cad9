// The SDK's error hierarchy (stripe-node style): one base class, HTTP errors chosen by status class and refined by
// a known error code, and the SDK's own failures (configuration, network, signing, echo checks, funding, denies).
import type { FundAnswer } from '../contracts/intents.ts';
import type { CapabilityVerdict as VerifyResult } from '../contracts/spend-decisions.ts';

/** Base of every error the SDK throws on purpose. */
export class SvcError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/** The client was configured wrongly (a base URL, an option out of range). Nothing was sent. */
export class SvcConfigurationError extends SvcError {}

/** The gateway base URL is plain http on a host that is not loopback (docs/wire-compatibility.md#transport). */
export class InsecureGatewayUrlError extends SvcConfigurationError {
  readonly gatewayBaseUrl: string;
  constructor(gatewayBaseUrl: string) {
    super(`The gateway base URL must use https (plain http is allowed only for loopback hosts): ${gatewayBaseUrl}`);
    this.gatewayBaseUrl = gatewayBaseUrl;
  }
}

/** A method was called with an argument the SDK refuses before sending anything (a non-UUID intent id, an
 * idempotency key of the wrong length, a missing signer). */
export class SvcArgumentError extends SvcError {}

/** A value the SDK was asked to sign cannot be signed (a malformed deadline, a non-UUID intent id, …). */
export class SvcSigningError extends SvcError {
  /** The signing core's code, e.g. `signing.value_invalid`. */
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(message: string, code: string, details?: Record<string, unknown>, cause?: unknown) {
    super(message, { cause });
    this.code = code;
    this.details = details;
  }
}

/** No HTTP answer: the connection failed, or the attempt timed out. Retried for retry-safe requests. */
export class SvcConnectionError extends SvcError {
  readonly url: string;
  readonly timedOut: boolean;
  constructor(url: string, timedOut: boolean, cause?: unknown) {
    super(timedOut ? `The request to ${url} timed out.` : `The request to ${url} failed before an answer arrived.`, { cause });
    this.url = url;
    this.timedOut = timedOut;
  }
}

/** An answer arrived but is not what the route promises (not JSON, a field missing or of the wrong type). */
export class SvcResponseError extends SvcError {
  readonly url: string;
  readonly status_code: number;
  readonly body_text: string;
  constructor(message: string, url: string, statusCode: number, bodyText: string) {
    super(message);
    this.url = url;
    this.status_code = statusCode;
    this.body_text = bodyText;
  }
}

/** The answer names another tenant or intent than the one asked about (the reference client's echo checks). */
export class TenantBindingError extends SvcResponseError {}

/** Where an answer differs from its contract: a JSON Pointer into the answer (`/` for the whole) and what is wrong. */
export interface ContractProblem {
  readonly path: string;
  readonly message: string;
}

/** A 2xx answer its route's contract does not allow (a member missing or of another type, a value outside its enum):
 * the server and this SDK disagree on the wire, so the answer is refused rather than handed on as a type it does not
 * have. `contract` names the contract (`Intent`, `LedgerTip`, …), `problems` says where (at most 8). */
export class SvcContractError extends SvcResponseError {
  readonly contract: string;
  readonly problems: readonly ContractProblem[];
  constructor(contract: string, problems: readonly ContractProblem[], url: string, statusCode: number, bodyText: string) {
    const where = problems.map((problem) => `${problem.path} ${problem.message}`).join('; ');
    super(`The answer from ${url} does not match the ${contract} contract: ${where}.`, url, statusCode, bodyText);
    this.contract = contract;
    this.problems = problems;
  }
}

export interface EngineHttpErrorInit {
  readonly statusCode: number;
  readonly url: string;
  readonly bodyText: string;
  readonly code: string | undefined;
  readonly message: string | undefined;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterMs?: number | undefined;
}

/** A non-2xx answer from the gateway or the engine (spec "SDK error types"). Subclasses name the status class. */
export class EngineHttpError extends SvcError {
  readonly status_code: number;
  readonly url: string;
  readonly body_text: string;
  /** The envelope's `error.code` (or the older `{error: "<code>"}` form); undefined when the body has none. */
  readonly code: string | undefined;
  readonly request_id: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(init: EngineHttpErrorInit) {
    super(init.message ?? `HTTP ${init.statusCode} from ${init.url}`);
    this.status_code = init.statusCode;
    this.url = init.url;
    this.body_text = init.bodyText;
    this.code = init.code;
    this.request_id = init.requestId;
    this.details = init.details;
  }
}

/** 400: malformed or missing fields; not retried. */
export class SvcInvalidRequestError extends EngineHttpError {}
/** 401: the credential is missing, expired or not of this tenant; retried once after `refreshApiKey`. */
export class SvcAuthenticationError extends EngineHttpError {}
/** 401 `recognition.*`: the agent recognition proof was refused (key unknown, expired, replayed, …). */
export class SvcRecognitionError extends SvcAuthenticationError {}
/** 402 where the SDK did not expect a funding handshake. */
export class SvcPaymentRequiredError extends EngineHttpError {}
/** 403: authenticated, but the role or scope does not allow the route; not retried. */
export class SvcPermissionError extends EngineHttpError {}
/** 404: absent in this tenant (also another tenant's resource); not retried. */
export class SvcNotFoundError extends EngineHttpError {}
/** 409: a conflict with the current state; not retried. */
export class SvcConflictError extends EngineHttpError {}
/** 409 `idempotency.*`: the key was used for another body, or its first request is still running. */
export class SvcIdempotencyError extends SvcConflictError {}
/** 409 `intent.invalid_state` / `intent.deadline_passed`: the intent is not in a state for this operation. */
export class SvcInvalidStateError extends SvcConflictError {}
/** 422: valid JSON the business rules refuse (evidence shape, rail not configured, …); not retried. */
export class SvcUnprocessableError extends EngineHttpError {}
/** 429: rate limited; retried after `Retry-After`. */
export class SvcRateLimitError extends EngineHttpError {
  /** The server's `Retry-After`, in ms (capped), when it sent one. */
  readonly retry_after_ms: number | undefined;
  constructor(init: EngineHttpErrorInit) {
    super(init);
    this.retry_after_ms = init.retryAfterMs;
  }
}
/** 5xx: the server failed; retried with backoff for retry-safe requests. */
export class SvcServerError extends EngineHttpError {}

/** Opening a session failed: the principal lookup was refused or answered something unusable (spec). */
export class GatewayAuthError extends SvcError {
  readonly status_code: number | undefined;
  readonly body_text: string | undefined;
  constructor(message: string, statusCode?: number, bodyText?: string, cause?: unknown) {
    super(message, { cause });
    this.status_code = statusCode;
    this.body_text = bodyText;
  }
}

/** Capability verification denied the call (`allow: false`): invalid signature, wrong tenant, expired, revoked, … */
export class SvcCapabilityError extends SvcError {
  /** The deny code, e.g. `capability.revoked`. */
  readonly code: string | null;
  readonly reason_codes: readonly string[];
  /** The whole /verify answer. */
  readonly result: VerifyResult;
  constructor(result: VerifyResult) {
    super(result.message ?? `Capability denied: ${result.code ?? 'no reason given'}`);
    this.code = result.code ?? null;
    this.reason_codes = result.reason_codes ?? [];
    this.result = result;
  }
}

interface FundingErrorInit {
  readonly intentId: string;
  readonly lastResult: FundAnswer;
  readonly attempts: number;
}

/** The rail declined or refused the credential (a 402 after a credential, or a terminal `funding.status`). */
export class FundingFailedError extends SvcError {
  readonly intentId: string;
  /** The last fund answer; `funding.status` (and for refused credentials the problem `type`) say why. */
  readonly lastResult: FundAnswer;
  readonly attempts: number;
  constructor(init: FundingErrorInit) {
    const status = init.lastResult.funding?.status ?? 'unknown';
    super(init.lastResult.detail ?? `Funding of intent ${init.intentId} failed: ${status}.`);
    this.intentId = init.intentId;
    this.lastResult = init.lastResult;
    this.attempts = init.attempts;
  }
}

/** The rail was still pending after the last poll. Calling `fund` again with the same credential keeps polling. */
export class FundingPendingError extends SvcError {
  readonly intentId: string;
  readonly lastResult: FundAnswer;
  readonly attempts: number;
  constructor(init: FundingErrorInit) {
    super(`Funding of intent ${init.intentId} is still pending after ${init.attempts} requests.`);
    this.intentId = init.intentId;
    this.lastResult = init.lastResult;
    this.attempts = init.attempts;
  }
}

const statusClasses: Record<number, new (init: EngineHttpErrorInit) => EngineHttpError> = {
  400: SvcInvalidRequestError,
  401: SvcAuthenticationError,
  402: SvcPaymentRequiredError,
  403: SvcPermissionError,
  404: SvcNotFoundError,
  409: SvcConflictError,
  422: SvcUnprocessableError,
  429: SvcRateLimitError,
};

/** Codes that refine a status class; any other code (known to the server or not) falls back to the status class. */
function refinedClass(status: number, code: string | undefined): (new (init: EngineHttpErrorInit) => EngineHttpError) | undefined {
  if (code === undefined) return undefined;
  if (status === 401 && code.startsWith('recognition.')) return SvcRecognitionError;
  if (status === 409 && code.startsWith('idempotency.')) return SvcIdempotencyError;
  if (status === 409 && (code === 'intent.invalid_state' || code === 'intent.deadline_passed')) return SvcInvalidStateError;
  return undefined;
}

export interface ParsedErrorBody {
  readonly code: string | undefined;
  readonly message: string | undefined;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
}

const asString = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
const asObject = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** Reads the spec's envelope `{error: {code, message, details?}, request_id}`, the older `{error: "<code>",
 * message}`, `{code, message}`, and RFC 9457 problems `{type, title, detail}`. Anything else: all undefined. */
export function parseErrorBody(bodyText: string): ParsedErrorBody {
  let body: Record<string, unknown> | undefined;
  try {
    body = asObject(JSON.parse(bodyText));
  } catch {
    body = undefined;
  }
  if (!body) return { code: undefined, message: undefined, requestId: undefined, details: undefined };
  const requestId = asString(body['request_id']);
  const nested = asObject(body['error']);
  if (nested) {
    return { code: asString(nested['code']), message: asString(nested['message']), requestId, details: asObject(nested['details']) };
  }
  if (typeof body['error'] === 'string') {
    return { code: asString(body['error']), message: asString(body['message']) ?? asString(body['error_description']), requestId, details: undefined };
  }
  if (typeof body['type'] === 'string' || typeof body['title'] === 'string') {
    return { code: undefined, message: asString(body['detail']) ?? asString(body['title']), requestId, details: undefined };
  }
  return { code: asString(body['code']), message: asString(body['message']), requestId, details: undefined };
}

/** The typed error for a non-2xx answer: the class of its status (5xx → SvcServerError), refined by a known code. */
export function engineHttpErrorFor(statusCode: number, url: string, bodyText: string, headerRequestId?: string | null, retryAfterMs?: number): EngineHttpError {
  const parsed = parseErrorBody(bodyText);
  const init: EngineHttpErrorInit = {
    statusCode,
    url,
    bodyText,
    code: parsed.code,
    message: parsed.message ?? `HTTP ${statusCode} from ${url}`,
    requestId: parsed.requestId ?? headerRequestId ?? undefined,
    details: parsed.details,
    retryAfterMs,
  };
  const errorClass = refinedClass(statusCode, parsed.code) ?? statusClasses[statusCode] ?? (statusCode >= 500 ? SvcServerError : EngineHttpError);
  return new errorClass(init);
}

/** Statuses worth retrying for a request that is safe to repeat (spec Retry rules, docs/sdk.md#retries). */
export const retryableStatusCodes: readonly number[] = [429, 500, 502, 503, 504];

/** True for errors a retry-safe request may be retried on: network failures, 429 and 500/502/503/504. The SDK
 * already retried such requests up to its bound before throwing; this helps callers that retry at a higher level. */
export function isRetryableError(error: unknown): boolean {
  if (error instanceof SvcConnectionError) return true;
  return error instanceof EngineHttpError && retryableStatusCodes.includes(error.status_code);
}
