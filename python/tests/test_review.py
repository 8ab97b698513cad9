# The release gate and review holds through the Python SDK against the real server (docs/release-gate.md): the gate
# set to critical_hold, a v6 lifecycle held at confirm (a first release to a new payee), the hold in the queue, a
# reviewer's finding, an operator's resolution with its signed receipt, the metrics; the gate restored after.
from __future__ import annotations

import datetime
import uuid

from svc_settlement import PayeeParty, SigningParty, SvcClient, generate_key, sandbox_credential

PRINCIPAL = SigningParty("did:principal:py-review", generate_key()[1])


def test_held_and_resolved(live_server):
    payee = SigningParty(f"did:payee:py-review-{uuid.uuid4()}", generate_key()[1])
    with SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], expected_environment="sandbox") as client:
        before = client.review.gate()
        try:
            gate = client.review.set_gate("critical_hold", first_settlement=True, amount_limit_cents=None)
            assert gate["config"]["mode"] == "critical_hold" and gate["tenant_id"] == client.tenant_id
            intent = client.intents.create(
                principal=PRINCIPAL, payee=PayeeParty(payee.did, payee.key), amount_cents=400,
                deadline=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1), settlement_rail="x402_usdc_base",
                allowed_tools=["search.web"], predicate={"version": 1, "root": {"op": "completion", "path": ["status"], "value": "completed"}},
            )
            client.intents.fund(intent["intent_id"], sandbox_credential("success"))
            client.intents.submit_evidence(intent["intent_id"], payee=payee, payload={"status": "completed"})
            held = client.intents.confirm(intent["intent_id"], expected_action="release")
            assert held["state"] == "held" and "settlement" not in held
            assert [signal["code"] for signal in held["review_hold"]["signals"]] == ["first_settlement_with_payee"]

            queued = [item for item in client.review.queue()["items"] if item["intent_id"] == intent["intent_id"]]
            assert len(queued) == 1 and queued[0]["review_state"] == "open" and queued[0]["operator_did"] == payee.did
            event = client.review.record_event(payee.did, "confirmed_risk", "Unknown vendor.", intent_id=intent["intent_id"])
            assert event["recorded_event_type"] == "review_outcome_recorded" and event["review_outcome"] == "confirmed_risk"
            assert client.review.status(payee.did)["review_state"] == "in_review"

            resolved = client.review.resolve(intent["intent_id"], "refund", note="Confirmed risk.")
            assert resolved["state"] == "refunded"
            assert resolved["resolution"]["refunded_cents"] == 400 and resolved["resolution"]["released_cents"] == 0
            receipt = resolved["resolution"]["receipt"]
            assert receipt["kind"] == "svc.review_resolution_receipt_v1" and receipt["harbor_state"] == "refunded"
            assert receipt["signal_codes"] == ["first_settlement_with_payee"]
            metrics = client.review.metrics("24h")
            assert metrics["holds_placed_count"] >= 1 and metrics["holds_resolved"]["refund"] >= 1
        finally:
            config = before["config"]
            client.review.set_gate(config["mode"], standing_score_min=config["standing_score_min"],
                                   amount_limit_cents=config["amount_limit_cents"], first_settlement=config["first_settlement"])
