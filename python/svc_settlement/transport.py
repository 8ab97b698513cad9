# One HTTP request with the SDK's retry rules, written once as a generator ("flow") that yields what it needs done
# (an attempt, a sleep, a caller's callback) and is driven either synchronously or with asyncio (drivers below).
# Identical bytes on every attempt; only `authorization` changes after a refresh.
from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Mapping, TypeVar
from urllib.parse import urlencode

import httpx

from .defaults import SDK_USER_AGENT
from .errors import SvcArgumentError, SvcConfigurationError, SvcConnectionError, SvcResponseError, engine_http_error_for
from .retry import REQUEST_IN_PROGRESS_CODE, AttemptOutcome, RetryState, decide_retry, parse_retry_after_seconds

T = TypeVar("T")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e\x80-\xff\t]*$")


@dataclass(frozen=True)
class RequestSpec:
    method: str
    # Below the base URL, starting with `/`, segments already safe.
    path: str
    # May the request be repeated on a network failure or a 5xx? See retry.py.
    retry_safe: bool
    query: Mapping[str, Any] | None = None
    # The exact JSON text to send, serialized once so the bytes (and any proof over them) never change.
    body_text: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # Non-2xx statuses returned to the caller instead of raised (fund's 402 and 202).
    expect_statuses: tuple[int, ...] = ()
    # A bearer token other than the API key, for the one route that takes another credential (an audit bundle's
    # download token).
    bearer_token: str | None = None


@dataclass(frozen=True)
class Response:
    status: int
    headers: httpx.Headers
    body_text: str
    url: str
    attempts: int
    content: bytes = b""

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object, or SvcResponseError."""
        try:
            value = json.loads(self.body_text)
        except ValueError:
            raise SvcResponseError(f"The answer from {self.url} is not JSON.", self.url, self.status, self.body_text) from None
        if not isinstance(value, dict):
            raise SvcResponseError(f"The answer from {self.url} is not a JSON object.", self.url, self.status, self.body_text)
        return value


# What a flow asks its driver to do.
@dataclass(frozen=True)
class Attempt:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    timeout_seconds: float


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Call:
    """Run a caller's callback (a key refresh, a funding credential, a guarded tool); awaited when it is async.
    An exception it raises is thrown back into the flow."""

    function: Callable[..., Any]
    arguments: tuple[Any, ...] = ()


Action = Attempt | Sleep | Call
Flow = Generator[Action, Any, T]


@dataclass
class TransportConfig:
    base_url: str
    api_key: str
    attempts_max: int
    timeout_seconds: float
    retry_budget_seconds: float
    refresh_api_key: Callable[[], Any] | None
    random: Callable[[], float]
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time


def build_url(base_url: str, path: str, query: Mapping[str, Any] | None = None) -> str:
    pairs = [(name, str(value)) for name, value in (query or {}).items() if value is not None]
    return f"{base_url}{path}{'?' + urlencode(pairs) if pairs else ''}"


def _headers(config: TransportConfig, spec: RequestSpec) -> dict[str, str]:
    headers = {"accept": "application/json", "user-agent": SDK_USER_AGENT}
    if spec.body_text is not None:
        headers["content-type"] = "application/json"
    headers.update({name.lower(): value for name, value in spec.headers.items()})
    headers["authorization"] = f"Bearer {spec.bearer_token or config.api_key}"
    return headers


def request_flow(config: TransportConfig, spec: RequestSpec) -> Flow[Response]:
    """Attempts until a 2xx (or an expected status), a stop decision, the attempt bound or the time budget."""
    url = build_url(config.base_url, spec.path, spec.query)
    for name, value in spec.headers.items():
        # An invalid header value would fail inside httpx like a network failure and be retried; it is the
        # caller's input, so say so before sending.
        if not isinstance(value, str) or not _HEADER_VALUE.match(value):
            raise SvcArgumentError(f"The request header {name} is not a valid single-line HTTP header value.")
    body = None if spec.body_text is None else spec.body_text.encode("utf-8")
    started = config.clock()
    attempts = 0
    refreshed = False
    # Answers "request in progress" so far, when the first came, and the time waited since for them: their bound
    # counts at least the waits (a caller's sleep may not take the clock's time).
    in_progress_answers = 0
    in_progress_since = 0.0
    in_progress_waited = 0.0
    while True:
        attempts += 1
        remaining = config.retry_budget_seconds - (config.clock() - started)
        timeout = max(0.001, min(config.timeout_seconds, remaining))
        result = yield Attempt(spec.method, url, _headers(config, spec), body, timeout)
        if isinstance(result, Response):
            if 200 <= result.status < 300 or result.status in spec.expect_statuses:
                return Response(result.status, result.headers, result.body_text, url, attempts, result.content)
            retry_after = parse_retry_after_seconds(result.headers.get("retry-after"), config.wall_clock())
            failure: Exception = engine_http_error_for(result.status, url, result.body_text, result.headers.get("x-request-id"), retry_after)
            outcome = AttemptOutcome(result.status, retry_after, getattr(failure, "code", None))
            if outcome.status == 409 and outcome.code == REQUEST_IN_PROGRESS_CODE:
                in_progress_answers += 1
                if in_progress_answers == 1:
                    in_progress_since = config.clock()
        else:
            outcome = AttemptOutcome(None)
            failure = result
        in_progress_elapsed = max(config.clock() - in_progress_since, in_progress_waited) if in_progress_answers else 0.0
        decision = decide_retry(
            outcome,
            RetryState(
                spec.retry_safe, attempts - in_progress_answers, config.attempts_max, refreshed, config.refresh_api_key is not None,
                in_progress_answers, in_progress_elapsed,
            ),
            config.random,
        )
        if decision.action == "stop":
            raise failure
        if decision.action == "refresh_and_retry":
            assert config.refresh_api_key is not None
            key = yield Call(config.refresh_api_key)
            if not isinstance(key, str) or key.strip() == "" or re.search(r"\s", key.strip()):
                raise SvcConfigurationError("refresh_api_key answered something that is not an API key.")
            config.api_key = key.strip()
            refreshed = True
            continue
        # A delay that would end past the budget is not worth starting: the caller gets the failure now.
        if config.clock() - started + decision.delay_seconds >= config.retry_budget_seconds:
            raise failure
        if in_progress_answers and outcome.code == REQUEST_IN_PROGRESS_CODE:
            in_progress_waited += decision.delay_seconds
        yield Sleep(decision.delay_seconds)


def _response_of(answer: httpx.Response, url: str) -> Response:
    return Response(answer.status_code, answer.headers, answer.text, url, 0, answer.content)


def run_sync(flow: Flow[T], http: httpx.Client, sleep: Callable[[float], None]) -> T:
    """Drives a flow with blocking I/O."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            action = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            return stop.value
        send, error = None, None
        if isinstance(action, Attempt):
            try:
                answer = http.request(action.method, action.url, headers=action.headers, content=action.body, timeout=action.timeout_seconds)
                send = _response_of(answer, action.url)
            except httpx.TimeoutException:
                send = SvcConnectionError(action.url, True)
            except httpx.HTTPError:
                send = SvcConnectionError(action.url, False)
        elif isinstance(action, Sleep):
            sleep(action.seconds)
        else:
            try:
                send = action.function(*action.arguments)
            except Exception as raised:  # noqa: BLE001 - handed back to the flow, which decides
                error = raised


async def run_async(flow: Flow[T], http: httpx.AsyncClient, sleep: Callable[[float], Any]) -> T:
    """Drives a flow with asyncio; callbacks may be plain functions or coroutines."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            action = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            return stop.value
        send, error = None, None
        if isinstance(action, Attempt):
            try:
                answer = await http.request(action.method, action.url, headers=action.headers, content=action.body, timeout=action.timeout_seconds)
                send = _response_of(answer, action.url)
            except httpx.TimeoutException:
                send = SvcConnectionError(action.url, True)
            except httpx.HTTPError:
                send = SvcConnectionError(action.url, False)
        elif isinstance(action, Sleep):
            waited = sleep(action.seconds)
            if inspect.isawaitable(waited):
                await waited
        else:
            try:
                send = action.function(*action.arguments)
                if inspect.isawaitable(send):
                    send = await send
            except Exception as raised:  # noqa: BLE001 - handed back to the flow, which decides
                error = raised


async def async_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)
