# The retry rules as pure functions, so the transport stays a loop and the rules can be read and tested alone:
# 401 once after a key refresh; 429 after Retry-After (else backoff) for any request; network failures and
# 500/502/503/504 with backoff only for retry-safe requests; everything else never.
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Literal

from .defaults import RETRY_AFTER_MAX_SECONDS, RETRY_BACKOFF_BASE_SECONDS, RETRY_BACKOFF_JITTER_SECONDS, RETRY_BACKOFF_MAX_SECONDS

_SECONDS_PATTERN = re.compile(r"^\d+(\.\d+)?$")


@dataclass(frozen=True)
class AttemptOutcome:
    """What one attempt ended with: a network failure (status None) or a status with its Retry-After."""

    status: int | None
    retry_after_seconds: float | None = None


@dataclass(frozen=True)
class RetryState:
    # A GET, a POST carrying an idempotency key (same key and body on every attempt), or a POST the server treats
    # as pure. Policy-registry and key-registry POSTs are not: they honour no idempotency key.
    retry_safe: bool
    attempts: int
    attempts_max: int
    refreshed: bool
    can_refresh: bool


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
    """Whether and when to try again, always within the attempt bound (the caller also enforces the budget)."""
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
