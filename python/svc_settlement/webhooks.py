"""Webhook deliveries (docs/events.md#signatures): verify a delivery's Standard Webhooks signature and timestamp.

A delivery carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and ``webhook-signature``: space-separated
``v1,<base64 HMAC-SHA256>`` of ``id.timestamp.body`` under the endpoint secret (the base64 after ``whsec_``), one per
secret during a rotation's overlap, and ``v1a,<base64 Ed25519>`` by the gateway's signing key. python/tests/test_webhooks.py
checks it against the standard computed by hand and against signatures the server's code made.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from typing import Any, Literal, Mapping, Sequence, TypedDict, Union

from .keys import verify_ed25519

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
        key = base64.b64decode(encoded, validate=True)
    except ValueError as error:
        raise WebhookVerificationError("the webhook secret is not whsec_ followed by base64") from error
    if not key:
        raise WebhookVerificationError("the webhook secret is not whsec_ followed by base64")
    return key


def _signed_content(message_id: str, timestamp: int, body: Union[str, bytes]) -> bytes:
    """The bytes every signature covers: ``id.timestamp.body``, the body exactly as received."""
    raw = body if isinstance(body, bytes) else body.encode()
    return f"{message_id}.{timestamp}.".encode() + raw


def sign_webhook(secret: str, message_id: str, timestamp: int, body: Union[str, bytes]) -> str:
    """The ``v1,`` signature of a delivery under ``secret``."""
    digest = hmac.new(_key(secret), _signed_content(message_id, timestamp, body), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(
    *,
    secret: Union[str, Sequence[str]],
    headers: Mapping[str, Any],
    body: Union[str, bytes],
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: Union[float, None] = None,
    ed25519_keys: Sequence[bytes] = (),
) -> Event:
    """Check a delivery (its raw body, exactly as received) and answer the event it carries.

    Raises WebhookVerificationError when a header is missing, the timestamp is more than ``tolerance_seconds`` from
    ``now``, or no ``v1,`` signature matches one of the secrets (compared in constant time) and no ``v1a,`` signature
    verifies by one of ``ed25519_keys`` (the gateway's public keys, 32 bytes each, from /.well-known/jwks.json).
    """
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not timestamp or not signatures:
        raise WebhookVerificationError("webhook-id, webhook-timestamp and webhook-signature are required")
    if not re.fullmatch(r"[0-9]{1,12}", timestamp):
        raise WebhookVerificationError("webhook-timestamp is not Unix seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError(f"webhook-timestamp is more than {tolerance_seconds} s from now")
    presented = [part for part in signatures.split(" ") if part]
    for candidate_secret in [secret] if isinstance(secret, str) else list(secret):
        expected = sign_webhook(candidate_secret, message_id, int(timestamp), body)
        if any(hmac.compare_digest(expected.encode(), part.encode()) for part in presented):
            return _event(body)
    if ed25519_keys:
        content = _signed_content(message_id, int(timestamp), body)
        for part in presented:
            if not part.startswith("v1a,"):
                continue
            try:
                signature = base64.b64decode(part[len("v1a,"):], validate=True)
            except ValueError:
                continue
            if any(verify_ed25519(bytes(key), content, signature) for key in ed25519_keys):
                return _event(body)
    raise WebhookVerificationError("no signature of the delivery matches")


def _event(body: Union[str, bytes]) -> Event:
    event: Event = json.loads(body)
    return event
