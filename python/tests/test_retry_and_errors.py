# The retry rules, the error types and the headers, against a local server that scripts 429, 5xx, timeouts and
# dropped connections. The client's sleep is recorded instead of waited, so delays are exact and the tests fast.
from __future__ import annotations

import asyncio
import datetime
import email.utils
import uuid

import pytest

from svc_settlement import (
    AsyncSvcClient,
    EngineHttpError,
    GatewayAuthError,
    PayeeParty,
    SigningParty,
    SvcAuthenticationError,
    SvcClient,
    SvcConflictError,
    SvcConnectionError,
    SvcIdempotencyError,
    SvcInvalidRequestError,
    SvcInvalidStateError,
    SvcNotFoundError,
    SvcPaymentRequiredError,
    SvcPermissionError,
    SvcResponseError,
    SvcArgumentError,
    SvcSigningError,
    SvcRateLimitError,
    SvcRecognitionError,
    SvcServerError,
    SvcUnprocessableError,
    TenantBindingError,
    AgentIdentity,
    generate_key,
    is_retryable_error,
    parse_error_body,
)

from svc_settlement.defaults import REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX
from svc_settlement.retry import AttemptOutcome, RetryDecision, RetryState, decide_retry

from .scripted_server import DESTROY, Answer, ScriptedServer

INTENT_PATH = "/harbor/intents"
POLICY = {"version": 1, "root": {"op": "true"}}


@pytest.fixture
def server():
    created: list[ScriptedServer] = []

    def start(script, principal=None):
        created.append(ScriptedServer(script, principal))
        return created[-1]

    yield start
    for each in created:
        each.close()


def open_client(url: str, delays: list[float], **options):
    options.setdefault("random", lambda: 0.5)
    return SvcClient.open("svc_sk_test", gateway_base_url=url, sleep=delays.append, **options)


def intent_answer(request, **fields):
    body = request.json()
    return Answer(200, {"tenant": "acme", "intent_id": body["intent_id"], "state": "open", "amount_cents": body["amount_cents"], "settlement_rail": body["settlement_rail"], **fields})


def create(client, **overrides):
    params = dict(
        principal=SigningParty("did:p", generate_key()[1]), payee=PayeeParty("did:q", generate_key()[1]), amount_cents=100,
        deadline="2030-01-02T15:04:05Z", settlement_rail="x402_usdc_base", allowed_tools=["t"], predicate=POLICY,
    )
    params.update(overrides)
    return client.intents.create(**params)


def test_get_is_retried_on_503_honouring_retry_after(server):
    answers = iter([Answer(503, {"error": {"code": "x"}}, {"retry-after": "2"}), Answer(503, None, {"retry-after": "0.5"}), Answer(200, {"tenant": "acme", "events": []})])
    scripted = server(lambda request, index: next(answers))
    delays: list[float] = []
    with open_client(scripted.url, delays) as client:
        assert client.ledger.events() == {"tenant": "acme", "events": []}
    assert delays == [2.0, 0.5]
    assert len(scripted.to("/harbor/ledger/v1/events")) == 3


def test_backoff_without_retry_after_and_the_attempt_bound(server):
    scripted = server(lambda request, index: Answer(502, {"error": {"code": "gateway.bad", "message": "upstream"}}))
    delays: list[float] = []
    with open_client(scripted.url, delays) as client, pytest.raises(SvcServerError) as raised:
        client.ledger.tip()
    # min(0.2 · 2^retry + jitter, 5) with jitter U[0, 0.1) drawn as 0.05.
    assert delays == [0.25, 0.45]
    assert len(scripted.to("/harbor/ledger/v1/tip")) == 3
    assert raised.value.status_code == 502 and raised.value.code == "gateway.bad" and str(raised.value) == "upstream"
    assert is_retryable_error(raised.value)


def test_retry_after_is_capped_and_read_as_an_http_date(server):
    later = email.utils.format_datetime(datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=10), usegmt=True)
    answers = iter([Answer(429, None, {"retry-after": "120"}), Answer(429, None, {"retry-after": later}), Answer(200, {"tenant": "acme", "events": []})])
    scripted = server(lambda request, index: next(answers))
    delays: list[float] = []
    with open_client(scripted.url, delays, retry_budget_seconds=300) as client:
        client.ledger.events()
    assert delays[0] == 30.0
    assert 7.0 <= delays[1] <= 10.0


def test_a_delay_past_the_time_budget_is_not_started(server):
    scripted = server(lambda request, index: Answer(429, {"error": "rate_limited", "message": "slow down"}, {"retry-after": "5"}))
    delays: list[float] = []
    with open_client(scripted.url, delays, retry_budget_seconds=1) as client, pytest.raises(SvcRateLimitError) as raised:
        client.ledger.tip()
    assert delays == [] and len(scripted.to("/harbor/ledger/v1/tip")) == 1
    assert raised.value.retry_after_seconds == 5.0 and raised.value.code == "rate_limited" and str(raised.value) == "slow down"


def test_engine_posts_are_retried_with_identical_bytes_key_and_proof(server):
    answers = iter([Answer(500), DESTROY])

    def script(request, index):
        return next(answers, None) or intent_answer(request)

    scripted = server(script)
    delays: list[float] = []
    _, agent_key = generate_key()
    with open_client(scripted.url, delays, agent=AgentIdentity("agent-1", agent_key)) as client:
        create(client)
    attempts = scripted.to(INTENT_PATH)
    assert len(attempts) == 3
    assert len({request.body for request in attempts}) == 1
    keys = {request.headers["idempotency-key"] for request in attempts}
    proofs = {request.headers["x-svc-agent-recognition-proof"] for request in attempts}
    assert len(keys) == 1 and len(proofs) == 1
    uuid.UUID(keys.pop())
    assert all(request.headers["x-tenant-id"] == "acme" and request.headers["content-type"] == "application/json" for request in attempts)


def test_the_four_engine_posts_carry_an_idempotency_key_and_registry_posts_do_not(server):
    intent_id = str(uuid.uuid4())

    def script(request, index):
        if request.path == INTENT_PATH:
            return intent_answer(request)
        if request.path.endswith("/fund"):
            return Answer(200, {"tenant": "acme", "intent_id": intent_id, "state": "funded", "settlement_rail": "x402_usdc_base", "funded": True, "capability_token": "cap"})
        if request.path.endswith("/evidence"):
            return Answer(200, {"tenant": "acme", "intent_id": intent_id, "state": "evidence_recorded", "predicate_passed": True, "predicate_evaluation": {}})
        if request.path.endswith("/confirm"):
            return Answer(200, {"tenant": "acme", "intent_id": intent_id, "state": "released", "amount_cents": 1, "settlement_rail": "x", "settlement": {}})
        return Answer(200, {"version_seq": 1, "versions": [], "current_head_digest": None})

    scripted = server(script)
    payee = SigningParty("did:q", generate_key()[1])
    with open_client(scripted.url, []) as client:
        create(client, intent_id=intent_id, idempotency_key="create-1")
        client.intents.fund(intent_id, lambda challenge: {"payment-signature": "x"}, idempotency_key="fund-1")
        client.intents.submit_evidence(intent_id, payee=payee, payload={"status": "completed"})
        client.intents.confirm(intent_id)
        client.policies.publish("completion_budget_v1")
    engine = [request for request in scripted.requests if request.path.startswith(INTENT_PATH)]
    assert [request.headers.get("idempotency-key") is not None for request in engine] == [True] * 4
    assert engine[0].headers["idempotency-key"] == "create-1" and engine[1].headers["idempotency-key"] == "fund-1"
    registry_posts = [request for request in scripted.requests if request.path.startswith("/harbor/policy/v1/") and request.method == "POST"]
    assert [request.path for request in registry_posts] == ["/harbor/policy/v1/drafts", "/harbor/policy/v1/rollout"]
    assert all("idempotency-key" not in request.headers for request in registry_posts)
    principal = scripted.to("/v1/auth/principal")[0]
    assert "x-tenant-id" not in principal.headers and principal.headers["authorization"] == "Bearer svc_sk_test"


@pytest.mark.parametrize("failure", [Answer(503), Answer(500), DESTROY])
def test_policy_registry_posts_are_never_retried_on_5xx_or_network_failures(server, failure):
    scripted = server(lambda request, index: failure)
    with open_client(scripted.url, []) as client, pytest.raises((SvcServerError, SvcConnectionError)):
        client.policies.draft("completion_budget_v1")
    assert len(scripted.to("/harbor/policy/v1/drafts")) == 1


def test_a_rate_limited_registry_post_is_retried_because_it_was_not_processed(server):
    answers = iter([Answer(429, None, {"retry-after": "0"}), Answer(200, {"version_seq": 2})])
    scripted = server(lambda request, index: next(answers))
    delays: list[float] = []
    with open_client(scripted.url, delays) as client:
        assert client.policies.draft("completion_budget_v1") == {"version_seq": 2}
    assert delays == [0.0]


def test_timeouts_are_network_failures_and_retried(server):
    answers = iter([Answer(200, {"tenant": "acme", "events": []}, delay_seconds=1.0), Answer(200, {"tenant": "acme", "events": []})])
    scripted = server(lambda request, index: next(answers))
    with open_client(scripted.url, [], timeout_seconds=0.2) as client:
        assert client.ledger.events()["events"] == []
    assert len(scripted.to("/harbor/ledger/v1/events")) == 2

    slow = server(lambda request, index: Answer(200, {}, delay_seconds=1.0))
    with open_client(slow.url, [], timeout_seconds=0.2, attempts_max=2) as client, pytest.raises(SvcConnectionError) as raised:
        client.ledger.tip()
    assert raised.value.timed_out is True and len(slow.to("/harbor/ledger/v1/tip")) == 2


@pytest.mark.parametrize(
    ("answer", "error_class", "code"),
    [
        (Answer(400, {"error": {"code": "request.invalid", "message": "bad"}, "request_id": "req_1"}), SvcInvalidRequestError, "request.invalid"),
        (Answer(404, {"error": "intent.not_found", "message": "gone"}), SvcNotFoundError, "intent.not_found"),
        (Answer(409, {"error": {"code": "idempotency.key_reused"}}), SvcIdempotencyError, "idempotency.key_reused"),
        (Answer(409, {"error": {"code": "intent.invalid_state"}}), SvcInvalidStateError, "intent.invalid_state"),
        (Answer(409, {"code": "other.conflict", "message": "m"}), SvcConflictError, "other.conflict"),
        (Answer(422, {"type": "about:blank", "title": "Unprocessable", "detail": "no"}), SvcUnprocessableError, None),
        (Answer(401, {"error": {"code": "recognition.expired"}}), SvcRecognitionError, "recognition.expired"),
        (Answer(402, {"error": {"code": "funding.required"}}), SvcPaymentRequiredError, "funding.required"),
        (Answer(403, {"error": {"code": "auth.forbidden"}}), SvcPermissionError, "auth.forbidden"),
        (Answer(418, "not json"), EngineHttpError, None),
    ],
)
def test_errors_are_typed_by_status_and_code_and_never_retried(server, answer, error_class, code):
    scripted = server(lambda request, index: answer)
    with open_client(scripted.url, []) as client, pytest.raises(EngineHttpError) as raised:
        client.ledger.tip()
    assert type(raised.value) is error_class
    assert raised.value.code == code and raised.value.status_code == answer.status
    assert raised.value.url == f"{scripted.url}/harbor/ledger/v1/tip"
    assert raised.value.body_text == (answer.body if isinstance(answer.body, str) else __import__("json").dumps(answer.body))
    assert len(scripted.to("/harbor/ledger/v1/tip")) == 1


IN_PROGRESS = Answer(409, {"error": {"code": "idempotency.request_in_progress", "message": "retry shortly"}, "request_id": "req_1"})


def test_a_request_in_progress_is_retried_with_backoff_and_the_same_bytes_past_the_attempt_bound(server):
    answers = iter([IN_PROGRESS, IN_PROGRESS, IN_PROGRESS, Answer(503), IN_PROGRESS])

    def script(request, index):
        return next(answers, None) or intent_answer(request)

    scripted = server(script)
    delays: list[float] = []
    _, agent_key = generate_key()
    with open_client(scripted.url, delays, agent=AgentIdentity("agent-1", agent_key)) as client:
        assert create(client, idempotency_key="create-after-crash")["state"] == "open"
    attempts = scripted.to(INTENT_PATH)
    assert len(attempts) == 6
    # Exponential backoff with jitter, counted by in-progress answers; the 503 between them backs off as a 5xx does.
    assert delays == pytest.approx([0.25, 0.45, 0.85, 0.25, 1.65])
    assert {request.headers["idempotency-key"] for request in attempts} == {"create-after-crash"}
    assert len({request.body for request in attempts}) == 1
    assert len({request.headers["x-svc-agent-recognition-proof"] for request in attempts}) == 1


def test_a_request_in_progress_is_given_up_after_its_time_bound_and_retry_after_is_honoured(server):
    scripted = server(lambda request, index: IN_PROGRESS)
    delays: list[float] = []
    with open_client(scripted.url, delays) as client, pytest.raises(SvcIdempotencyError) as raised:
        create(client)
    assert raised.value.code == "idempotency.request_in_progress" and raised.value.status_code == 409
    assert delays == pytest.approx([0.25, 0.45, 0.85, 1.65, 3.25, 5.0, 5.0])
    assert sum(delays) <= REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX
    assert len(scripted.to(INTENT_PATH)) == 8

    answers = iter([Answer(409, {"error": {"code": "idempotency.request_in_progress"}}, {"retry-after": "2"})])
    polite = server(lambda request, index: next(answers, None) or intent_answer(request))
    polite_delays: list[float] = []
    with open_client(polite.url, polite_delays) as client:
        create(client)
    assert polite_delays == [2.0]


def test_a_request_in_progress_is_not_retried_when_the_request_is_not_retry_safe(server):
    scripted = server(lambda request, index: IN_PROGRESS)
    delays: list[float] = []
    with open_client(scripted.url, delays) as client, pytest.raises(SvcIdempotencyError):
        client.policies.draft("completion_budget_v1")
    assert delays == [] and len(scripted.to("/harbor/policy/v1/drafts")) == 1


def test_the_in_progress_rule_alone():
    in_progress = AttemptOutcome(409, None, "idempotency.request_in_progress")
    waiting = RetryState(True, 3, 3, False, False, 4, 3.0)
    assert decide_retry(in_progress, RetryState(False, 3, 3, False, False, 4, 3.0), lambda: 0.0).action == "stop"
    assert decide_retry(in_progress, waiting, lambda: 0.0) == RetryDecision("retry", 1.6)
    assert decide_retry(AttemptOutcome(409, 0.7, "idempotency.request_in_progress"), waiting, lambda: 0.0) == RetryDecision("retry", 0.7)
    assert decide_retry(in_progress, RetryState(True, 3, 3, False, False, 4, REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX - 1.6), lambda: 0.0).action == "retry"
    assert decide_retry(in_progress, RetryState(True, 3, 3, False, False, 4, REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX - 1.5), lambda: 0.0).action == "stop"
    assert decide_retry(AttemptOutcome(409, None, "idempotency.key_reused"), waiting, lambda: 0.0).action == "stop"


def test_parse_error_body_reads_both_forms_of_the_spec():
    nested = parse_error_body('{"error":{"code":"a.b","message":"m","details":{"f":1}},"request_id":"r"}')
    assert (nested.code, nested.message, nested.details, nested.request_id) == ("a.b", "m", {"f": 1}, "r")
    flat = parse_error_body('{"error":"a.c","message":"n"}')
    assert (flat.code, flat.message) == ("a.c", "n")
    assert parse_error_body("<html>").code is None


def test_401_refreshes_the_key_once(server):
    answers = iter([Answer(401, {"error": {"code": "auth.expired"}}), Answer(200, {"tenant": "acme", "events": []})])
    scripted = server(lambda request, index: next(answers))
    with open_client(scripted.url, [], refresh_api_key=lambda: "svc_sk_fresh") as client:
        client.ledger.events()
    assert [request.headers["authorization"] for request in scripted.to("/harbor/ledger/v1/events")] == ["Bearer svc_sk_test", "Bearer svc_sk_fresh"]

    always = server(lambda request, index: Answer(401, {"error": {"code": "auth.invalid"}}))
    with open_client(always.url, [], refresh_api_key=lambda: "svc_sk_fresh") as client, pytest.raises(SvcAuthenticationError):
        client.ledger.tip()
    assert len(always.to("/harbor/ledger/v1/tip")) == 2
    with open_client(always.url, []) as client, pytest.raises(SvcAuthenticationError):
        client.ledger.tip()
    assert len(always.to("/harbor/ledger/v1/tip")) == 3


@pytest.mark.parametrize(
    "principal",
    [Answer(401, {"error": {"code": "auth.invalid"}}), Answer(403, {"error": "forbidden"}), Answer(200, "not json"), Answer(200, {"environment": "sandbox"})],
)
def test_principal_failures_are_gateway_auth_errors(server, principal):
    scripted = server(lambda request, index: Answer(200), principal)
    with pytest.raises(GatewayAuthError) as raised:
        open_client(scripted.url, [])
    assert raised.value.status_code == principal.status


def test_answers_naming_another_tenant_or_intent_are_refused(server):
    scripted = server(lambda request, index: Answer(200, {"tenant": "globex", "ledger_seq": 1, "row_hash_hex": "00", "checkpoint": {}}))
    with open_client(scripted.url, []) as client, pytest.raises(TenantBindingError):
        client.ledger.tip()
    wrong_intent = server(lambda request, index: Answer(200, {"tenant": "acme", "intent_id": str(uuid.uuid4()), "state": "open", "amount_cents": 1, "settlement_rail": "x"}))
    with open_client(wrong_intent.url, []) as client, pytest.raises(TenantBindingError):
        client.intents.get(str(uuid.uuid4()))


def test_the_async_client_follows_the_same_rules(server):
    answers = iter([Answer(503, None, {"retry-after": "0"}), DESTROY])

    def script(request, index):
        return next(answers, None) or intent_answer(request)

    scripted = server(script)
    delays: list[float] = []

    async def run():
        async with await AsyncSvcClient.open("svc_sk_test", gateway_base_url=scripted.url, sleep=delays.append, random=lambda: 0.0) as client:
            assert client.tenant_id == "acme"
            return await client.intents.create(
                principal=SigningParty("did:p", generate_key()[1]), payee=PayeeParty("did:q", generate_key()[1]), amount_cents=100,
                deadline="2030-01-02T15:04:05Z", settlement_rail="x402_usdc_base", allowed_tools=["t"], predicate=POLICY,
            )

    intent = asyncio.run(run())
    assert intent["state"] == "open"
    assert delays == [0.0, 0.4]
    attempts = scripted.to(INTENT_PATH)
    assert len(attempts) == 3 and len({request.body for request in attempts}) == 1


def test_an_answer_that_is_not_json_is_a_response_error(server):
    scripted = server(lambda request, index: Answer(200, "<html>ok</html>"))
    with open_client(scripted.url, []) as client, pytest.raises(SvcResponseError) as raised:
        client.ledger.tip()
    assert raised.value.status_code == 200 and raised.value.body_text == "<html>ok</html>"


def test_bad_arguments_are_refused_before_anything_is_sent(server):
    scripted = server(lambda request, index: Answer(500))
    with open_client(scripted.url, []) as client:
        with pytest.raises(SvcArgumentError):
            client.intents.get("not-a-uuid")
        with pytest.raises(SvcArgumentError):
            create(client, idempotency_key="x" * 257)
        with pytest.raises(SvcArgumentError):
            create(client, predicate=None)
        with pytest.raises(SvcSigningError) as raised:
            create(client, deadline="2030-02-30T00:00:00Z")
        assert raised.value.code == "signing.value_invalid" and raised.value.details["field"] == "deadline"
    assert scripted.requests == scripted.to("/v1/auth/principal")


def test_a_credential_callback_may_not_set_the_sdks_headers(server):
    intent_id = str(uuid.uuid4())
    challenge = {"tenant": "acme", "intent_id": intent_id, "state": "open", "settlement_rail": "x402_usdc_base", "funded": False}
    scripted = server(lambda request, index: Answer(402, challenge, {"payment-required": "e30="}))
    with open_client(scripted.url, []) as client, pytest.raises(SvcArgumentError, match="may not set authorization"):
        client.intents.fund(intent_id, lambda challenge: {"Authorization": "Bearer stolen"})
    assert len(scripted.to(f"/harbor/intents/{intent_id}/fund")) == 1
