# Capability flows: verify a capability token before a paid tool runs (POST /verify), complete the spend decision
# afterwards, and `guard`, which does all three around a tool.
from __future__ import annotations

from typing import Any, Callable

from .core import ClientCore, check_idempotency_key, check_uuid
from .errors import SvcArgumentError, SvcCapabilityError
from .transport import Call, Flow

_OPTIONAL_TEXT = (
    "currency", "vendor_id", "task_id", "workflow_id", "tool_call_id", "tool_name", "agent_subject", "approval_token", "model_family",
)


def _verify_body(intent_id: str, token: str, operation: str, requested_spend_cents: int, key: str, options: dict[str, Any]) -> dict[str, Any]:
    """As the reference client builds it: optional strings trimmed and left out when empty, hashes lowercased."""
    unknown = set(options) - set(_OPTIONAL_TEXT) - {"config_hash_hex", "prompt_hash_hex"}
    if unknown:
        raise SvcArgumentError(f"verify does not take {sorted(unknown)}.")
    body: dict[str, Any] = {"intent_id": intent_id, "token": token, "operation": operation, "requested_spend_cents": requested_spend_cents}
    for name in _OPTIONAL_TEXT:
        value = options.get(name)
        if isinstance(value, str) and value.strip() != "":
            body[name] = value.strip()
    for name in ("config_hash_hex", "prompt_hash_hex"):
        if options.get(name):
            body[name] = str(options[name]).strip().lower()
    body["idempotency_key"] = key
    return body


def verify_flow(
    core: ClientCore, intent_id: str, token: str, operation: str, requested_spend_cents: int = 0,
    idempotency_key: str | None = None, throw_on_deny: bool = True, **options: Any,
) -> Flow[dict[str, Any]]:
    """Asks whether the token allows this call now. Allowed: the result, with a `decision_id` that reserves the
    spend. Denied: SvcCapabilityError (its `code` and `reason_codes` say why), unless `throw_on_deny=False`. The key
    goes in the header and the body, so a retry cannot reserve twice."""
    key = check_idempotency_key(idempotency_key)
    body, response = yield from core.post(
        "/verify", _verify_body(intent_id, token, operation, requested_spend_cents, key, options), True, {"idempotency-key": key}
    )
    core.check_echo(body, response, intent_id)
    core.require_fields(body, response, {"allow": bool, "audit_id": str})
    if not body["allow"] and throw_on_deny:
        raise SvcCapabilityError(body)
    return body


def complete_flow(core: ClientCore, decision_id: str, outcome: str) -> Flow[dict[str, Any]]:
    """Finalizes a /verify reservation: `consumed` after the tool ran, `released` when it did not. Completing again
    with the same outcome answers the same decision, so it is retried like an idempotent call."""
    check_uuid(decision_id, "decision_id")
    if outcome not in ("consumed", "released"):
        raise SvcArgumentError('outcome is "consumed" or "released".')
    body, response = yield from core.post(f"/v1/spend/decisions/{decision_id}/complete", {"outcome": outcome}, True)
    core.require_fields(body, response, {"decision_id": str, "status": str})
    return body


def guard_flow(core: ClientCore, tool: Callable[[dict[str, Any]], Any], **verify_arguments: Any) -> Flow[Any]:
    """Verify (SvcCapabilityError when denied), run `tool`, then complete the decision: `consumed` when the tool
    returned, `released` (best effort) when it raised, and re-raise."""
    decision = yield from verify_flow(core, **verify_arguments)
    decision_id = decision.get("decision_id")
    try:
        result = yield Call(tool, (decision,))
    except Exception:
        if decision_id:
            try:
                yield from complete_flow(core, decision_id, "released")
            except Exception:  # noqa: BLE001 - the tool's error is the one the caller needs
                pass
        raise
    if decision_id:
        yield from complete_flow(core, decision_id, "consumed")
    return result
