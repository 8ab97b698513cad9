# The release gate and review holds (docs/release-gate.md): read and set the gate, list the review queue, record a
# reviewer's finding, read an operator's review status and the fraud metrics, and resolve a held intent.
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .canonical_json import compact_json
from .core import ClientCore, check_idempotency_key, intent_path
from .errors import SvcArgumentError
from .transport import Flow, RequestSpec, request_flow

_GATE = "/signal/v1/fraud/release-gate"
_UNSET: Any = object()


def _operator_path(operator_did: str, suffix: str) -> str:
    if not isinstance(operator_did, str) or operator_did == "":
        raise SvcArgumentError("operator_did is a non-empty DID.")
    return f"/signal/v1/operators/{quote(operator_did, safe='')}{suffix}"


def gate_flow(core: ClientCore) -> Flow[dict[str, Any]]:
    body, _ = yield from core.get(_GATE)
    return body


def set_gate_flow(
    core: ClientCore, mode: str, standing_score_min: Any = _UNSET, amount_limit_cents: Any = _UNSET, first_settlement: Any = _UNSET,
) -> Flow[dict[str, Any]]:
    """Sets the gate (admin). A signal setting left out keeps its value; None turns it off. Safe to retry."""
    body: dict[str, Any] = {"mode": mode}
    if standing_score_min is not _UNSET:
        body["standing_score_min"] = standing_score_min
    if amount_limit_cents is not _UNSET:
        body["amount_limit_cents"] = amount_limit_cents
    if first_settlement is not _UNSET:
        body["first_settlement"] = first_settlement
    headers = {"x-tenant-id": core.tenant_id}
    response = yield from request_flow(core.config, RequestSpec("PUT", _GATE, True, body_text=compact_json(body), headers=headers))
    return response.json_object()


def queue_flow(core: ClientCore, state: str | None = None, severity: str | None = None, limit: int | None = None) -> Flow[dict[str, Any]]:
    body, _ = yield from core.get("/signal/v1/review-queue", {"state": state, "fraud_severity": severity, "limit": limit})
    return body


def record_event_flow(
    core: ClientCore, operator_did: str, event_type: str, summary: str, review_outcome: str | None = None, intent_id: str | None = None,
    signal_code: str | None = None, provider_event_id: str | None = None,
) -> Flow[dict[str, Any]]:
    """Records a reviewer's finding about an operator (a payee). Not retried on 5xx: each call records one event."""
    body: dict[str, Any] = {"event_type": event_type}
    for name, value in (("review_outcome", review_outcome), ("intent_id", intent_id), ("signal_code", signal_code), ("provider_event_id", provider_event_id)):
        if value is not None:
            body[name] = value
    body["summary"] = summary
    answer, _ = yield from core.post(_operator_path(operator_did, "/review-events"), body, False)
    return answer


def status_flow(core: ClientCore, operator_did: str) -> Flow[dict[str, Any]]:
    body, _ = yield from core.get(_operator_path(operator_did, "/review-status"))
    return body


def metrics_flow(core: ClientCore, window: str = "24h") -> Flow[dict[str, Any]]:
    body, _ = yield from core.get("/signal/v1/fraud/metrics", {"window": window})
    return body


def resolve_flow(
    core: ClientCore, intent_id: str, resolution: str, note: str | None = None, idempotency_key: str | None = None, released_cents: int | None = None,
) -> Flow[dict[str, Any]]:
    """Resolves a held intent as `release`, `refund` or `split` (with `released_cents`, the payee's part), with a signed
    resolution receipt; idempotent under its key."""
    body: dict[str, Any] = {"resolution": resolution}
    if released_cents is not None:
        body["released_cents"] = released_cents
    if note is not None:
        body["note"] = note
    headers = {"x-tenant-id": core.tenant_id, "idempotency-key": check_idempotency_key(idempotency_key)}
    spec = RequestSpec("POST", intent_path(intent_id, "/review/resolve"), True, body_text=compact_json(body), headers=headers)
    response = yield from request_flow(core.config, spec)
    return response.json_object()
