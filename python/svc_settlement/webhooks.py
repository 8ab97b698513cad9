"""Webhook deliveries (docs/events.md#signatures): verify a delivery's Standard Webhooks signature and timestamp.

A delivery carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and ``webhook-signature``: space-separated
``v1,<base64 HMAC-SHA256>`` of ``id.timestamp.body`` under the endpoint secret (the base64 after ``whsec_``), one per
secret during a rotation's overlap, and ``v1a,<base64 Ed25519>`` by the gateway's signing key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Literal, Mapping, Sequence, TypedDict, Union

EventType = Literal[
    "intent.created",
    "intent.funded",
    "intent.funding_declined",
    "intent.funding_pending",
    "intent.evidence_recorded",
    "intent.released",
    "intent.refunded",
    "intent.resolved_split",
    "intent.held",
    "intent.review_resolved",
    "payout.succeeded",
    "payout.failed",
    "refund.succeeded",
    "refund.failed",
    "api_key.created",
    "api_key.revoked",
    "api_key.rotated",
    "settlement_config.updated",
    "audit_export.ready",
    "webhook_endpoint.disabled",
]


class EventData(TypedDict):
    object: dict[str, Any]


class Event(TypedDict):
    """An event, as GET /v1/events answers it and every delivery carries it."""

    object: Literal["event"]
    id: str
    type: EventType
    created_at: str
    data: EventData
    ledger_transaction_id: Union[str, None]
    receipt_ids: list[str]


DEFAULT_TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The delivery is not signed by the secret, or its timestamp is too far from now."""


def _header(headers: Mapping[str, Any], name: str) -> Union[str, None]:
    for key, value in headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, (list, tuple)) else value
    return None


def _key(secret: str) -> bytes:
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(encoded, validate=True)
    except ValueError as error:
        raise WebhookVerificationError("the webhook secret is not whsec_ followed by base64") from error


def sign_webhook(secret: str, message_id: str, timestamp: int, body: str) -> str:
    """The ``v1,`` signature of a delivery under ``secret``."""
    digest = hmac.new(_key(secret), f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(
    *,
    secret: Union[str, Sequence[str]],
    headers: Mapping[str, Any],
    body: Union[str, bytes],
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: Union[float, None] = None,
) -> Event:
    """Check a delivery (its raw body, exactly as received) and answer the event it carries.

    Raises WebhookVerificationError when a header is missing, the timestamp is more than ``tolerance_seconds`` from
    ``now``, or no ``v1,`` signature matches one of the secrets (compared in constant time).
    """
    text = body.decode() if isinstance(body, bytes) else body
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not timestamp or not signatures:
        raise WebhookVerificationError("webhook-id, webhook-timestamp and webhook-signature are required")
    if not timestamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not Unix seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError(f"webhook-timestamp is more than {tolerance_seconds} s from now")
    presented = [part for part in signatures.split(" ") if part]
    for candidate_secret in [secret] if isinstance(secret, str) else list(secret):
        expected = sign_webhook(candidate_secret, message_id, int(timestamp), text)
        if any(hmac.compare_digest(expected.encode(), part.encode()) for part in presented):
            event: Event = json.loads(text)
            return event
    raise WebhookVerificationError("no signature of the delivery matches")
