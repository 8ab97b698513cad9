# Whole lifecycles through the Python SDK against the real server on a real Postgres (started by
# test/python/sdk.test.ts): v6 on x402 to released, MPP to refunded, v7 bound to the policy head, v6 by reference,
# funding pending and declined on both rails, capability verify and deny, typed errors from the engine, recognition
# proofs (sandbox and live), and the ledger verified by the client-side chain check.
from __future__ import annotations

import datetime

import pytest

from svc_settlement import (
    FundingFailedError,
    FundingPendingError,
    GatewayAuthError,
    PayeeParty,
    PolicyBinding,
    SigningParty,
    SvcCapabilityError,
    SvcClient,
    SvcInvalidStateError,
    SvcNotFoundError,
    SvcRecognitionError,
    SvcUnprocessableError,
    AgentIdentity,
    generate_key,
    sandbox_credential,
)

PRINCIPAL = SigningParty("did:principal:py-alice", generate_key()[1])
PAYEE = SigningParty("did:payee:py-tools", generate_key()[1])
PREDICATE = {
    "version": 1,
    "root": {"op": "and", "clauses": [{"op": "completion", "path": ["status"], "value": "completed"}, {"op": "budget_cap", "path": ["cost_cents"]}]},
}


def intent_params(**overrides):
    params = dict(
        principal=PRINCIPAL,
        payee=PayeeParty(PAYEE.did, PAYEE.key),
        amount_cents=500,
        deadline=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
        settlement_rail="x402_usdc_base",
        allowed_tools=["search.web"],
        evidence_schema={"type": "object", "properties": {"status": {"type": "string"}, "cost_cents": {"type": "integer"}}, "required": ["status"]},
        predicate=PREDICATE,
    )
    params.update(overrides)
    return params


@pytest.fixture(scope="module")
def client(live_server):
    with SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], expected_environment="sandbox") as opened:
        yield opened


def expect_ledger_verified(client):
    verification = client.ledger.verify_chain()
    assert verification.problems == []
    assert verification.ok and verification.checkpoint_signature_valid and verification.checkpoint_chain_matches
    assert sum(verification.balances.values()) == 0
    return verification


def test_session_resolves_the_tenant_from_the_credential(client, live_server):
    assert client.tenant_id == live_server["sandbox_tenant"]
    assert client.environment == "sandbox"
    assert client.gateway_base_url == live_server["base_url"]


def test_v6_x402_released(client):
    intent = client.intents.create(**intent_params())
    assert intent["state"] == "open" and intent["signing_version"] == 6 and intent["amount_cents"] == 500
    funded = client.intents.fund(intent["intent_id"], sandbox_credential())
    assert funded.requests == 2
    assert funded.intent["state"] == "funded" and funded.intent["funding"]["status"] == "authorization_succeeded"
    assert funded.payment_response

    def tool(decision):
        assert decision["allow"] is True and decision["remaining_cents"] == 380
        return {"results": 3, "cost_cents": 120}

    result = client.capabilities.guard(tool, intent["intent_id"], funded.capability_token, "search.web", requested_spend_cents=120)
    recorded = client.intents.submit_evidence(intent["intent_id"], payee=PAYEE, payload={"status": "completed", "cost_cents": result["cost_cents"]})
    assert recorded["state"] == "evidence_recorded" and recorded["predicate_passed"] is True
    settled = client.intents.confirm(intent["intent_id"], expected_action="release")
    assert settled["state"] == "released" and settled["settlement"]["action"] == "release"
    assert client.intents.get(intent["intent_id"])["state"] == "released"
    revoked = client.capabilities.verify(intent["intent_id"], funded.capability_token, "search.web", throw_on_deny=False)
    assert revoked["allow"] is False and revoked["code"] == "capability.revoked"
    verification = expect_ledger_verified(client)
    assert verification.balances[f"payee:{PAYEE.did}:payable"] >= 500


def test_mpp_failing_evidence_refunded(client):
    intent = client.intents.create(**intent_params(settlement_rail="processor_mpp"))
    funded = client.intents.fund(intent["intent_id"], sandbox_credential())
    assert funded.intent["funding"]["status"] == "payment_succeeded" and funded.payment_receipt
    recorded = client.intents.submit_evidence(intent["intent_id"], payee=PAYEE, payload={"status": "failed"})
    assert recorded["predicate_passed"] is False
    settled = client.intents.confirm(intent["intent_id"])
    assert settled["state"] == "refunded" and settled["settlement"]["reason"] == "predicate_failed"
    expect_ledger_verified(client)


def test_v7_bound_to_the_policy_head_and_v6_by_reference(client):
    templates = client.policies.templates()
    assert "completion_budget_v1" in [template["template_id"] for template in templates]
    preview = client.policies.preview("completion_budget_v1")
    tested = client.policies.test(template_id="completion_budget_v1", evidence={"status": "completed", "cost_cents": 10}, amount_cents=100)
    assert tested["predicate_evaluation"]["passed"] is True
    head = client.policies.publish("completion_budget_v1")
    assert head["is_head"] is True and head["materialized_predicate"] == preview["materialized_dsl"]

    bound = client.intents.create(**intent_params(predicate=None, policy_binding=PolicyBinding("completion_budget_v1")))
    assert bound["signing_version"] == 7
    assert bound["policy_binding"]["template_id"] == "completion_budget_v1"
    assert bound["policy_binding"]["version_seq"] == head["version_seq"]
    assert bound["policy_binding"]["content_digest"] == head["content_digest"]
    client.intents.fund(bound["intent_id"], sandbox_credential())
    assert client.intents.submit_evidence(bound["intent_id"], payee=PAYEE, payload={"status": "completed", "cost_cents": 500})["predicate_passed"]
    assert client.intents.confirm(bound["intent_id"])["state"] == "released"

    reference = f"completion_budget_v1@{head['version_seq']}"
    by_reference = client.intents.create(**intent_params(predicate=None, predicate_ref=reference, settlement_rail="processor_mpp"))
    assert by_reference["signing_version"] == 6 and by_reference["predicate_ref"] == reference
    client.intents.fund(by_reference["intent_id"], sandbox_credential())
    assert not client.intents.submit_evidence(by_reference["intent_id"], payee=PAYEE, payload={"status": "completed", "cost_cents": 501})["predicate_passed"]
    assert client.intents.confirm(by_reference["intent_id"])["state"] == "refunded"
    expect_ledger_verified(client)


@pytest.mark.parametrize("rail", ["x402_usdc_base", "processor_mpp"])
def test_pending_polls_then_the_same_key_replays(client, rail):
    intent = client.intents.create(**intent_params(settlement_rail=rail))
    key = f"fund-{intent['intent_id']}"
    funded = client.intents.fund(intent["intent_id"], sandbox_credential("pending"), idempotency_key=key, poll_interval_seconds=0.01)
    assert funded.requests == 3 and funded.replayed is False and funded.intent["state"] == "funded"
    replay = client.intents.fund(intent["intent_id"], sandbox_credential(), idempotency_key=key)
    assert replay.requests == 1 and replay.replayed is True and replay.capability_token == funded.capability_token
    expect_ledger_verified(client)


@pytest.mark.parametrize(("rail", "status"), [("x402_usdc_base", "authorization_failed"), ("processor_mpp", "payment_failed")])
def test_declined_funding_moves_nothing_and_a_later_fund_succeeds(client, rail, status):
    intent = client.intents.create(**intent_params(settlement_rail=rail))
    with pytest.raises(FundingFailedError) as raised:
        client.intents.fund(intent["intent_id"], sandbox_credential("decline"))
    assert raised.value.last_result["funding"]["status"] == status
    assert client.intents.get(intent["intent_id"])["state"] == "open"
    assert client.intents.fund(intent["intent_id"], sandbox_credential()).intent["state"] == "funded"
    expect_ledger_verified(client)


def test_still_pending_after_the_last_poll_is_funding_pending_error(client):
    intent = client.intents.create(**intent_params(settlement_rail="processor_mpp"))
    with pytest.raises(FundingPendingError) as raised:
        client.intents.fund(intent["intent_id"], sandbox_credential("pending"), idempotency_key=f"pending-{intent['intent_id']}", polls_max=0)
    assert raised.value.attempts == 2 and raised.value.last_result["funded"] is False
    # Calling fund again with the same key keeps polling, and the sandbox rail settles on the next poll.
    funded = client.intents.fund(intent["intent_id"], sandbox_credential("pending"), idempotency_key=f"pending-{intent['intent_id']}", poll_interval_seconds=0.01)
    assert funded.intent["state"] == "funded"


def test_capability_denies_with_the_reason(client):
    intent = client.intents.create(**intent_params())
    token = client.intents.fund(intent["intent_id"], sandbox_credential()).capability_token
    with pytest.raises(SvcCapabilityError) as raised:
        client.capabilities.verify(intent["intent_id"], token, "wire.transfer")
    assert raised.value.code == "capability.operation_not_allowed"
    assert raised.value.reason_codes == ["capability.operation_not_allowed"]
    too_much = client.capabilities.verify(intent["intent_id"], token, "search.web", requested_spend_cents=501, throw_on_deny=False)
    assert too_much["allow"] is False and too_much["code"] == "capability.budget_exceeded"
    allowed = client.capabilities.verify(intent["intent_id"], token, "search.web", requested_spend_cents=100)
    assert client.spend.complete(allowed["decision_id"], "released")["status"] == "released"


def test_guard_releases_the_reservation_when_the_tool_raises(client):
    intent = client.intents.create(**intent_params())
    token = client.intents.fund(intent["intent_id"], sandbox_credential()).capability_token

    def failing_tool(decision):
        raise RuntimeError("vendor down")

    with pytest.raises(RuntimeError, match="vendor down"):
        client.capabilities.guard(failing_tool, intent["intent_id"], token, "search.web", requested_spend_cents=500)
    # The 500 cents were released, so the whole amount can be reserved again.
    again = client.capabilities.verify(intent["intent_id"], token, "search.web", requested_spend_cents=500)
    assert again["allow"] is True


def test_engine_refusals_are_typed_errors(client):
    with pytest.raises(SvcNotFoundError) as not_found:
        client.intents.get("00000000-0000-4000-8000-000000000001")
    assert not_found.value.code == "intent.not_found" and not_found.value.status_code == 404
    assert not_found.value.url.endswith("/harbor/intents/00000000-0000-4000-8000-000000000001")
    assert '"intent.not_found"' in not_found.value.body_text and not_found.value.request_id
    open_intent = client.intents.create(**intent_params())
    with pytest.raises(SvcInvalidStateError) as invalid_state:
        client.intents.submit_evidence(open_intent["intent_id"], payee=PAYEE, payload={"status": "completed"})
    assert invalid_state.value.status_code == 409
    listed = client.intents.list(limit=2, state="open")
    assert listed["data"] and all(intent["state"] == "open" for intent in listed["data"])


def test_opening_with_a_bad_key_or_the_wrong_environment_is_a_gateway_auth_error(live_server):
    with pytest.raises(GatewayAuthError) as refused:
        SvcClient.open("svc_sk_not_a_real_key", gateway_base_url=live_server["base_url"])
    assert refused.value.status_code == 401
    with pytest.raises(GatewayAuthError, match="sandbox tenant, not live"):
        SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], expected_environment="live")


def test_sandbox_recognition_proofs(client, live_server):
    agent_seed, agent_key = generate_key()
    client.registry.register("agent", "agent-py-1", agent_key)
    with SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], agent=AgentIdentity("agent-py-1", agent_key)) as agent:
        intent = agent.intents.create(**intent_params())
        agent.intents.fund(intent["intent_id"], sandbox_credential("pending"), poll_interval_seconds=0.01)
        agent.intents.submit_evidence(intent["intent_id"], payee=PAYEE, payload={"status": "completed", "cost_cents": 1})
        assert agent.intents.confirm(intent["intent_id"])["state"] == "released"
    # A registered key_id is never re-bound to another key.
    with SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], agent=AgentIdentity("agent-py-1", generate_key()[1])) as stranger:
        with pytest.raises(SvcRecognitionError) as raised:
            stranger.intents.create(**intent_params())
        assert raised.value.code == "recognition.key_mismatch"
    expect_ledger_verified(client)


def test_live_tenant_requires_proofs(live_server):
    with SvcClient.open(live_server["live_key"], gateway_base_url=live_server["base_url"], expected_environment="live") as admin:
        with pytest.raises(SvcRecognitionError) as raised:
            admin.intents.create(**intent_params())
        assert raised.value.code == "recognition.required"
        _, agent_key = generate_key()
        admin.registry.register("agent", "agent-py-live", agent_key)
        admin.registry.register("principal", PRINCIPAL.did, PRINCIPAL.key)
        with SvcClient.open(live_server["live_key"], gateway_base_url=live_server["base_url"], agent=AgentIdentity("agent-py-live", agent_key)) as agent:
            intent = agent.intents.create(**intent_params())
            assert intent["state"] == "open" and intent["principal_key_registered"] is True
            with pytest.raises(SvcUnprocessableError) as unconfigured:
                agent.intents.fund(intent["intent_id"], sandbox_credential())
            assert unconfigured.value.code == "funding.rail_not_configured"
        assert [key["subject"] for key in admin.registry.list(kind="agent")["data"]] == ["agent-py-live"]
        expect_ledger_verified(admin)


def test_ledger_checkpoint_against_an_untrusted_key_fails(client):
    untrusted = client.ledger.verify_chain([generate_key()[1].public_key_hex])
    assert untrusted.ok is False and untrusted.checkpoint_signature_valid is False and untrusted.checkpoint_chain_matches is True
    authority = client.ledger.authority()
    assert client.ledger.verify_chain([authority["public_key_hex"]]).ok is True
