# Ledger flows: the signed tip, the signing authority, the rows as events, and `verify_chain`, which recomputes the
# tenant's hash chain on the client and checks it against the gateway-signed checkpoint, so the answer does not
# rest on trusting the server's word.
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .core import ClientCore
from .defaults import LEDGER_EVENTS_PAGE_SIZE
from .ledger_chain import ChainWalk, verify_ledger_checkpoint
from .transport import Flow


@dataclass(frozen=True)
class LedgerVerification:
    # Chain, bodies, sequence, balanced transactions and the signed checkpoint all check out.
    ok: bool
    rows: int
    transactions: int
    tip_seq: int
    tip_row_hash_hex: str
    checkpoint_ledger_seq: int
    checkpoint_row_hash_hex: str
    checkpoint_kid: str
    checkpoint_signature_valid: bool
    checkpoint_chain_matches: bool
    # Debits − credits per account, in cents; they sum to 0.
    balances: dict[str, int]
    problems: list[str]


def tip_flow(core: ClientCore) -> Flow[dict[str, Any]]:
    body, response = yield from core.get("/harbor/ledger/v1/tip")
    core.check_echo(body, response)
    core.require_fields(body, response, {"ledger_seq": int, "row_hash_hex": str, "checkpoint": dict})
    return body


def authority_flow(core: ClientCore) -> Flow[dict[str, Any]]:
    body, response = yield from core.get("/harbor/ledger/v1/authority")
    core.check_echo(body, response)
    core.require_fields(body, response, {"public_key_hex": str, "verification_keys": list})
    return body


def events_flow(core: ClientCore, after_seq: int | None = None, limit: int | None = None) -> Flow[dict[str, Any]]:
    body, response = yield from core.get("/harbor/ledger/v1/events", {"after_seq": after_seq, "limit": limit})
    core.check_echo(body, response)
    core.require_fields(body, response, {"events": list})
    return body


def verify_chain_flow(core: ClientCore, trusted_public_keys_hex: Sequence[str] | None = None) -> Flow[LedgerVerification]:
    """Reads the signed tip, checks its signature with a trusted key (the caller's, else those /authority
    publishes), walks every event from genesis re-encoding each body and recomputing each hash, and checks the
    chain reaches the checkpoint's hash at its seq."""
    tip = yield from tip_flow(core)
    checkpoint = tip["checkpoint"]
    if trusted_public_keys_hex is None:
        authority = yield from authority_flow(core)
        trusted = [key.get("public_key_hex", "") for key in authority["verification_keys"]]
    else:
        trusted = list(trusted_public_keys_hex)
    checkpoint_problems = verify_ledger_checkpoint(checkpoint, trusted)
    if checkpoint.get("tenant_id") != core.tenant_id:
        checkpoint_problems.append(f"checkpoint: names tenant {checkpoint.get('tenant_id')}")
    walk = ChainWalk(core.tenant_id, checkpoint["ledger_seq"])
    after_seq = 0
    while True:
        page = yield from events_flow(core, after_seq, LEDGER_EVENTS_PAGE_SIZE)
        for event in page["events"]:
            walk.add(event)
        if page.get("next_after_seq") is None or not page["events"]:
            break
        after_seq = page["next_after_seq"]
    walk.finish()
    chain_matches = walk.hash_at_checkpoint == checkpoint["row_hash_hex"]
    if not chain_matches:
        walk.problems.append(f"checkpoint: the chain does not reach row_hash {checkpoint['row_hash_hex']} at ledger_seq {checkpoint['ledger_seq']}")
    problems = checkpoint_problems + walk.problems
    return LedgerVerification(
        ok=not problems, rows=walk.rows, transactions=walk.transactions, tip_seq=walk.last_seq, tip_row_hash_hex=walk.previous_hash_hex,
        checkpoint_ledger_seq=checkpoint["ledger_seq"], checkpoint_row_hash_hex=checkpoint["row_hash_hex"], checkpoint_kid=checkpoint.get("kid", ""),
        checkpoint_signature_valid=not checkpoint_problems, checkpoint_chain_matches=chain_matches, balances=dict(walk.balances), problems=problems,
    )
