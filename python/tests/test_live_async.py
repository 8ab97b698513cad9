# The asyncio client against the real server: a whole v6 lifecycle on MPP with an async credential callback and an
# async guarded tool, and the ledger verified on the client.
from __future__ import annotations

import asyncio
import datetime

from svc_settlement import AsyncSvcClient, PayeeParty, SigningParty, generate_key, sandbox_credential

PRINCIPAL = SigningParty("did:principal:py-async", generate_key()[1])
PAYEE = SigningParty("did:payee:py-async", generate_key()[1])


def test_async_lifecycle(live_server):
    async def credential(challenge):
        await asyncio.sleep(0)
        return sandbox_credential("pending")(challenge)

    async def tool(decision):
        await asyncio.sleep(0)
        return {"cost_cents": 90, "allowed": decision["allow"]}

    async def run():
        async with await AsyncSvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"], expected_environment="sandbox") as client:
            intent = await client.intents.create(
                principal=PRINCIPAL, payee=PayeeParty(PAYEE.did, PAYEE.key), amount_cents=300,
                deadline=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1), settlement_rail="processor_mpp",
                allowed_tools=["search.web"], predicate={"version": 1, "root": {"op": "completion", "path": ["status"], "value": "completed"}},
            )
            funded = await client.intents.fund(intent["intent_id"], credential, poll_interval_seconds=0.01)
            result = await client.capabilities.guard(tool, intent["intent_id"], funded.capability_token, "search.web", requested_spend_cents=90)
            evidence = await client.intents.submit_evidence(intent["intent_id"], payee=PAYEE, payload={"status": "completed", "cost_cents": result["cost_cents"]})
            settled = await client.intents.confirm(intent["intent_id"], expected_action="release")
            verification = await client.ledger.verify_chain()
            return funded, result, evidence, settled, verification

    funded, result, evidence, settled, verification = asyncio.run(run())
    assert funded.requests == 3 and funded.intent["state"] == "funded"
    assert result == {"cost_cents": 90, "allowed": True}
    assert evidence["predicate_passed"] is True
    assert settled["state"] == "released"
    assert verification.ok, verification.problems
