# The retry rules as pure functions, so the transport stays a loop and the rules can be read and tested alone:
# 401 once after a key refresh; 429 after Retry-After (else backoff) for any request; network failures and
# 500/502/503/504 with backoff only for retry-safe requests; 409 `idempotency.request_in_progress` with backoff,
# for retry-safe requests, for a bounded time; everything else never.
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Literal

from .defaults import (
    REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX,
    RETRY_AFTER_MAX_SECONDS,
    RETRY_BACKOFF_BASE_SECONDS,
    RETRY_BACKOFF_JITTER_SECONDS,
    RETRY_BACKOFF_MAX_SECONDS,
)

# The engine's answer for a request whose key another request still holds: retry shortly, the same request.
REQUEST_IN_PROGRESS_CODE = "idempotency.request_in_progress"

_SECONDS_PATTERN = re.compile(r"^\d+(\.\d+)?$")


@dataclass(frozen=True)
class AttemptOutcome:
    """What one attempt ended with: a network failure (status None) or a status with its Retry-After and the error
    envelope's code, when the answer has one."""

    status: int | None
    retry_after_seconds: float | None = None
    code: str | None = None


@dataclass(frozen=True)
class RetryState:
    # A GET, a POST carrying an idempotency key (same key and body on every attempt), or a POST the server treats
    # as pure. Policy-registry and key-registry POSTs are not: they honour no idempotency key.
    retry_safe: bool
    # Attempts so far, this one included, not counting those answered 409 `idempotency.request_in_progress`.
    attempts: int
    attempts_max: int
    refreshed: bool
    can_refresh: bool
    # Answers 409 `idempotency.request_in_progress` so far, this one included, and the time since the first.
    in_progress_answers: int = 0
    in_progress_elapsed_seconds: float = 0.0


@dataclass(frozen=True)
class RetryDecision:
    action: Literal["stop", "retry", "refresh_and_retry"]
    delay_seconds: float = 0.0


def backoff_delay_seconds(retry_index: int, random: Callable[[], float]) -> float:
    """min(0.2 · 2^retry_index + U[0, 0.1), 5) seconds; retry_index 0 is the first retry."""
    jitter = math.floor(random() * RETRY_BACKOFF_JITTER_SECONDS * 1000) / 1000
    return min(RETRY_BACKOFF_BASE_SECONDS * 2**retry_index + jitter, RETRY_BACKOFF_MAX_SECONDS)


def parse_retry_after_seconds(value: str | None, now_epoch_seconds: float) -> float | None:
    """delay-seconds (a float is accepted) or an HTTP-date, capped at 30 s; None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if _SECONDS_PATTERN.match(text):
        delay = float(text)
    else:
        try:
            delay = parsedate_to_datetime(text).timestamp() - now_epoch_seconds
        except (TypeError, ValueError, IndexError):
            return None
    return min(max(0.0, delay), RETRY_AFTER_MAX_SECONDS)


def decide_retry(outcome: AttemptOutcome, state: RetryState, random: Callable[[], float]) -> RetryDecision:
    """Whether and when to try again, within the attempt bound but for the in-progress answers, which have their own
    time bound (the caller also enforces the budget)."""
    if outcome.status == 409 and outcome.code == REQUEST_IN_PROGRESS_CODE:
        # The same request (a retry-safe one carries its key) is still running or being taken over: retry shortly.
        if not state.retry_safe:
            return RetryDecision("stop")
        delay = outcome.retry_after_seconds
        if delay is None:
            delay = backoff_delay_seconds(state.in_progress_answers - 1, random)
        if state.in_progress_elapsed_seconds + delay > REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX:
            return RetryDecision("stop")
        return RetryDecision("retry", delay)
    if state.attempts >= state.attempts_max:
        return RetryDecision("stop")
    backoff = RetryDecision("retry", backoff_delay_seconds(state.attempts - 1, random))
    if outcome.status is None:
        return backoff if state.retry_safe else RetryDecision("stop")
    if outcome.status == 401:
        # The request was not processed: one refresh of the key, when the caller gave a way to refresh.
        return RetryDecision("refresh_and_retry") if state.can_refresh and not state.refreshed else RetryDecision("stop")
    if outcome.status == 429:
        # A rate-limited request was not processed, so any request may be repeated.
        return backoff if outcome.retry_after_seconds is None else RetryDecision("retry", outcome.retry_after_seconds)
    if outcome.status in (500, 502, 503, 504):
        if not state.retry_safe:
            return RetryDecision("stop")
        return backoff if outcome.retry_after_seconds is None else RetryDecision("retry", outcome.retry_after_seconds)
    return RetryDecision("stop")
