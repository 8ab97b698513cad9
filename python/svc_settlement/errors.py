# The SDK's error hierarchy, the same as the TypeScript SDK's: one base class, HTTP errors chosen by status class and
# refined by a known error code, and the SDK's own failures (configuration, network, signing, echo checks, denies).
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class SvcError(Exception):
    """Base of every error the SDK raises on purpose."""


class SvcConfigurationError(SvcError):
    """The client was configured wrongly (a base URL, an option out of range). Nothing was sent."""


class InsecureGatewayUrlError(SvcConfigurationError):
    """The gateway base URL is plain http on a host that is not loopback."""

    def __init__(self, gateway_base_url: str):
        super().__init__(f"The gateway base URL must use https (plain http is allowed only for loopback hosts): {gateway_base_url}")
        self.gateway_base_url = gateway_base_url


class SvcArgumentError(SvcError):
    """A method was called with an argument the SDK refuses before sending anything."""


class SvcSigningError(SvcError):
    """A value the SDK was asked to sign cannot be signed; `code` is e.g. `signing.value_invalid`."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.details = details


class SvcConnectionError(SvcError):
    """No HTTP answer: the connection failed, or the attempt timed out. Retried for retry-safe requests."""

    def __init__(self, url: str, timed_out: bool):
        super().__init__(f"The request to {url} timed out." if timed_out else f"The request to {url} failed before an answer arrived.")
        self.url = url
        self.timed_out = timed_out


class SvcResponseError(SvcError):
    """An answer arrived but is not what the route promises (not JSON, a field missing or of the wrong type)."""

    def __init__(self, message: str, url: str, status_code: int, body_text: str):
        super().__init__(message)
        self.url = url
        self.status_code = status_code
        self.body_text = body_text


class TenantBindingError(SvcResponseError):
    """The answer names another tenant or intent than the one asked about."""


class EngineHttpError(SvcError):
    """A non-2xx answer from the gateway or the engine. Subclasses name the status class."""

    def __init__(
        self,
        status_code: int,
        url: str,
        body_text: str,
        code: str | None = None,
        message: str | None = None,
        request_id: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after_seconds: float | None = None,
    ):
        super().__init__(message or f"HTTP {status_code} from {url}")
        self.status_code = status_code
        self.url = url
        self.body_text = body_text
        self.code = code
        self.request_id = request_id
        self.details = details
        self.retry_after_seconds = retry_after_seconds


class SvcInvalidRequestError(EngineHttpError):
    """400: malformed or missing fields; not retried."""


class SvcAuthenticationError(EngineHttpError):
    """401: the credential is missing, expired or not of this tenant; retried once after `refresh_api_key`."""


class SvcRecognitionError(SvcAuthenticationError):
    """401 `recognition.*`: the agent recognition proof was refused."""


class SvcPaymentRequiredError(EngineHttpError):
    """402 where the SDK did not expect a funding handshake."""


class SvcPermissionError(EngineHttpError):
    """403: authenticated, but the role or scope does not allow the route."""


class SvcNotFoundError(EngineHttpError):
    """404: absent in this tenant (also another tenant's resource)."""


class SvcConflictError(EngineHttpError):
    """409: a conflict with the current state."""


class SvcIdempotencyError(SvcConflictError):
    """409 `idempotency.*`: the key was used for another body, or its first request is still running."""


class SvcInvalidStateError(SvcConflictError):
    """409 `intent.invalid_state` / `intent.deadline_passed`."""


class SvcUnprocessableError(EngineHttpError):
    """422: valid JSON the business rules refuse."""


class SvcRateLimitError(EngineHttpError):
    """429: rate limited; retried after `Retry-After`."""


class SvcServerError(EngineHttpError):
    """5xx: the server failed; retried with backoff for retry-safe requests."""


class GatewayAuthError(SvcError):
    """Opening a session failed: the principal lookup was refused or answered something unusable."""

    def __init__(self, message: str, status_code: int | None = None, body_text: str | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.body_text = body_text


class SvcCapabilityError(SvcError):
    """Capability verification denied the call (`allow: false`); `code` and `reason_codes` say why."""

    def __init__(self, result: dict[str, Any]):
        super().__init__(result.get("message") or f"Capability denied: {result.get('code') or 'no reason given'}")
        self.code: str | None = result.get("code")
        self.reason_codes: list[str] = list(result.get("reason_codes") or [])
        self.result = result


class FundingFailedError(SvcError):
    """The rail declined or refused the credential (a 402 after a credential, or a terminal `funding.status`)."""

    def __init__(self, intent_id: str, last_result: dict[str, Any], attempts: int):
        status = (last_result.get("funding") or {}).get("status", "unknown")
        super().__init__(last_result.get("detail") or f"Funding of intent {intent_id} failed: {status}.")
        self.intent_id = intent_id
        self.last_result = last_result
        self.attempts = attempts


class FundingPendingError(SvcError):
    """The rail was still pending after the last poll. Calling `fund` again with the same key keeps polling."""

    def __init__(self, intent_id: str, last_result: dict[str, Any], attempts: int):
        super().__init__(f"Funding of intent {intent_id} is still pending after {attempts} requests.")
        self.intent_id = intent_id
        self.last_result = last_result
        self.attempts = attempts


_STATUS_CLASSES: dict[int, type[EngineHttpError]] = {
    400: SvcInvalidRequestError,
    401: SvcAuthenticationError,
    402: SvcPaymentRequiredError,
    403: SvcPermissionError,
    404: SvcNotFoundError,
    409: SvcConflictError,
    422: SvcUnprocessableError,
    429: SvcRateLimitError,
}


def _refined_class(status: int, code: str | None) -> type[EngineHttpError] | None:
    if code is None:
        return None
    if status == 401 and code.startswith("recognition."):
        return SvcRecognitionError
    if status == 409 and code.startswith("idempotency."):
        return SvcIdempotencyError
    if status == 409 and code in ("intent.invalid_state", "intent.deadline_passed"):
        return SvcInvalidStateError
    return None


@dataclass(frozen=True)
class ParsedErrorBody:
    code: str | None
    message: str | None
    request_id: str | None
    details: dict[str, Any] | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def parse_error_body(body_text: str) -> ParsedErrorBody:
    """Reads both error forms of the spec, the envelope `{error: {code, message, details?}, request_id}` and the
    older `{error: "<code>", message}`, plus `{code, message}` and RFC 9457 problems. Anything else: all None."""
    try:
        body = json.loads(body_text)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return ParsedErrorBody(None, None, None, None)
    request_id = _text(body.get("request_id"))
    nested = body.get("error")
    if isinstance(nested, dict):
        details = nested.get("details")
        return ParsedErrorBody(_text(nested.get("code")), _text(nested.get("message")), request_id, details if isinstance(details, dict) else None)
    if isinstance(nested, str):
        return ParsedErrorBody(_text(nested), _text(body.get("message")) or _text(body.get("error_description")), request_id, None)
    if isinstance(body.get("type"), str) or isinstance(body.get("title"), str):
        return ParsedErrorBody(None, _text(body.get("detail")) or _text(body.get("title")), request_id, None)
    return ParsedErrorBody(_text(body.get("code")), _text(body.get("message")), request_id, None)


def engine_http_error_for(
    status_code: int, url: str, body_text: str, header_request_id: str | None = None, retry_after_seconds: float | None = None
) -> EngineHttpError:
    """The typed error for a non-2xx answer: the class of its status (5xx → SvcServerError), refined by a known code."""
    parsed = parse_error_body(body_text)
    error_class = _refined_class(status_code, parsed.code) or _STATUS_CLASSES.get(status_code) or (SvcServerError if status_code >= 500 else EngineHttpError)
    return error_class(
        status_code,
        url,
        body_text,
        code=parsed.code,
        message=parsed.message or f"HTTP {status_code} from {url}",
        request_id=parsed.request_id or header_request_id,
        details=parsed.details,
        retry_after_seconds=retry_after_seconds,
    )


RETRYABLE_STATUS_CODES = (429, 500, 502, 503, 504)


def is_retryable_error(error: BaseException) -> bool:
    """True for errors a retry-safe request may be retried on: network failures, 429 and 500/502/503/504."""
    if isinstance(error, SvcConnectionError):
        return True
    return isinstance(error, EngineHttpError) and error.status_code in RETRYABLE_STATUS_CODES
