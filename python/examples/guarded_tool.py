# The one-minute example in Python (`python3 python/examples/guarded_tool.py`): a paid tool guarded by an escrowed
# intent on a sandbox tenant — open a session, create and sign an intent, fund it through the 402 handshake, verify
# the capability before the tool runs, submit signed evidence, confirm (metered: the cost to the payee, the rest
# back), and verify the ledger on the client.
# The same steps, printed the same way, as examples/guarded-tool.ts. Needs SVC_API_KEY.
from __future__ import annotations

import datetime
import os
import sys
import time

from svc_settlement import (
    FundChallenge,
    PayeeParty,
    SigningParty,
    SvcClient,
    SvcError,
    decode_x402_payment_required,
    generate_key,
    sandbox_credential,
)

# Decimals of the currencies the example may meet: the API counts minor units, people read major ones.
CURRENCY_DECIMALS = {"usd": 2, "eur": 2, "jpy": 0}
_step_number = 0


def step(title: str, *details: str) -> None:
    global _step_number
    _step_number += 1
    print(f"{_step_number}. {title}")
    for detail in details:
        print(f"   {detail}")


def amount_text(cents: int, currency: str) -> str:
    """An amount in minor units with its unit, e.g. "250 cents (2.50 usd)"."""
    decimals = CURRENCY_DECIMALS.get(currency, 2)
    return f"{cents} cents ({cents / 10**decimals:.{decimals}f} {currency})"


def paid_search(query: str) -> dict:
    """The paid tool: a search API that charges per call. Here it answers locally; a real one would call a vendor."""
    return {"results": [f"{query}: result 1", f"{query}: result 2"], "cost_cents": 120, "vendor_ref": f"srch_{int(time.time() * 1000)}"}


def main() -> None:
    api_key = os.environ.get("SVC_API_KEY")
    if not api_key:
        print("Set SVC_API_KEY to a sandbox tenant's key: npx svc tenant create --tenant-id example --environment sandbox --json", file=sys.stderr)
        sys.exit(2)
    # Base URL: SVC_GATEWAY_URL, else SVC_GATEWAY_BASE_URL, else http://127.0.0.1:8080. The tenant comes from the key.
    with SvcClient.open(api_key, expected_environment="sandbox") as client:
        step("Session opened", f"tenant {client.tenant_id} ({client.environment}) at {client.gateway_base_url}")

        # The principal pays; the payee (the tool's vendor) is paid on release. Each signs with its own Ed25519 key.
        principal = SigningParty("did:example:principal-alice", generate_key()[1])
        payee = SigningParty("did:example:search-vendor", generate_key()[1])
        # The release rule, metered: release only if the search completed within the escrowed amount, and then only
        # what the payee's evidence says it cost; the rest goes back. The principal signs the version's digest.
        rule = client.policies.publish("completion_budget_v1", {"release_mode": "metered"})
        step("Metered release rule published", f"{rule['template_id']} version {rule['version_seq']}: {rule['human_summary']}")
        intent = client.intents.create(
            principal=principal,
            payee=PayeeParty(payee.did, payee.key),
            amount_cents=250,
            currency="usd",
            deadline=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
            settlement_rail="x402_usdc_base",
            allowed_tools=["search.web"],
            evidence_schema={
                "type": "object",
                "properties": {"status": {"type": "string"}, "cost_cents": {"type": "integer"}, "vendor_ref": {"type": "string"}},
                "required": ["status", "cost_cents"],
            },
            policy_binding=rule,
        )
        step(
            "Intent created and signed by the principal (signing v7, bound to the rule)",
            f"intent {intent['intent_id']}: {amount_text(intent['amount_cents'], intent['currency'])} on {intent['settlement_rail']}, state {intent['state']}",
        )

        def credential(challenge: FundChallenge) -> dict[str, str]:
            offer = decode_x402_payment_required(challenge.payment_required or "")["accepts"][0]
            print(f"   402 challenge: pay {offer['amount']} USDC base units on {offer['network']} to {offer['payTo']}")
            return sandbox_credential("success")(challenge)

        funded = client.intents.fund(intent["intent_id"], credential)
        step(
            "Intent funded through the x402 402 handshake",
            f"state {funded.intent['state']}, funding {(funded.intent.get('funding') or {}).get('status')}, capability token {funded.capability_token[:16]}…",
        )

        def guarded(decision: dict) -> dict:
            step(
                "Capability verified before the tool runs",
                f"allow {str(decision['allow']).lower()}, decision {decision['decision_id']}, {amount_text(decision.get('remaining_cents') or 0, intent['currency'])} left",
            )
            return paid_search("escrow for agents")

        search = client.capabilities.guard(guarded, intent["intent_id"], funded.capability_token, "search.web", requested_spend_cents=120)
        step(
            "Paid tool ran; its spend decision was completed as consumed",
            f"{len(search['results'])} results, cost {amount_text(search['cost_cents'], intent['currency'])}, vendor ref {search['vendor_ref']}",
        )

        evidence = client.intents.submit_evidence(
            intent["intent_id"], payee=payee, payload={"status": "completed", "cost_cents": search["cost_cents"], "vendor_ref": search["vendor_ref"]},
        )
        step("Evidence signed by the payee and evaluated", f"predicate passed: {str(evidence['predicate_passed']).lower()}, state {evidence['state']}")

        settled = client.intents.confirm(intent["intent_id"], expected_action="split")
        settlement = settled["settlement"]
        step(
            "Settlement confirmed",
            f"state {settled['state']}: {settlement['action']} ({settlement['reason']}), ledger transaction {settlement['transaction_id']}",
            f"released {amount_text(settled['released_cents'] or 0, intent['currency'])} to the payee, "
            f"refunded {amount_text(settled['refunded_cents'] or 0, intent['currency'])} to the principal",
        )

        ledger = client.ledger.verify_chain()
        step(
            "Ledger verified on the client",
            f"{ledger.rows} rows, {ledger.transactions} transactions, tip {ledger.tip_seq} {ledger.tip_row_hash_hex}",
            f"checkpoint at {ledger.checkpoint_ledger_seq} signed by {ledger.checkpoint_kid}: signature "
            f"{'valid' if ledger.checkpoint_signature_valid else 'INVALID'}, chain {'matches' if ledger.checkpoint_chain_matches else 'DOES NOT MATCH'}",
            f"payee payable {amount_text(ledger.balances.get(f'payee:{payee.did}:payable', 0), intent['currency'])}, "
            f"principal refund {amount_text(ledger.balances.get(f'payer:{principal.did}:refund', 0), intent['currency'])}",
        )
        if not ledger.ok:
            raise SvcError(f"ledger problems: {'; '.join(ledger.problems)}")
        print("ledger verified")


if __name__ == "__main__":
    try:
        main()
    except SvcError as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
