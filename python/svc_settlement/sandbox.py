# Sandbox test credentials: like card-network test numbers, the payer address (x402) or token (MPP) picks the
# simulator's outcome. For sandbox tenants, tests and the example only; the signature is a placeholder.
from __future__ import annotations

import base64
import json
import os
import re
import time
from typing import Any, Callable, Literal

from .errors import SvcArgumentError

SandboxOutcome = Literal["success", "decline", "pending"]
# x402 payers: success funds at once, decline is refused (402), pending answers 202 until the next poll.
SANDBOX_X402_PAYERS: dict[str, str] = {
    "success": "0x0000000000000000000000000000000000000001",
    "decline": "0x0000000000000000000000000000000000000002",
    "pending": "0x0000000000000000000000000000000000000003",
}
# MPP tokens: the same three outcomes; any other token is refused as unverifiable.
SANDBOX_MPP_TOKENS: dict[str, str] = {"success": "tok_sandbox_success", "decline": "tok_sandbox_decline", "pending": "tok_sandbox_pending"}


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def decode_x402_payment_required(header_value: str) -> dict[str, Any]:
    """A `PAYMENT-REQUIRED` header value (standard base64 JSON) with at least one offered requirement."""
    decoded = json.loads(base64.b64decode(header_value).decode("utf-8"))
    if not isinstance(decoded, dict) or not isinstance(decoded.get("accepts"), list) or not decoded["accepts"]:
        raise SvcArgumentError("PAYMENT-REQUIRED offers no requirement.")
    return decoded


def sandbox_x402_payment_signature(challenge_header_value: str, payer: str, now_seconds: float | None = None) -> str:
    """The `payment-signature` answering a challenge: an x402 v2 PaymentPayload copying the first requirement as
    `accepted`, with an EIP-3009 authorization from `payer`."""
    payment_required = decode_x402_payment_required(challenge_header_value)
    accepted = payment_required["accepts"][0]
    now = int(time.time() if now_seconds is None else now_seconds)
    offered_timeout = accepted.get("maxTimeoutSeconds")
    timeout = int(offered_timeout) if isinstance(offered_timeout, (int, float)) and not isinstance(offered_timeout, bool) else 300
    payload: dict[str, Any] = {"x402Version": 2}
    if payment_required.get("resource"):
        payload["resource"] = payment_required["resource"]
    payload["accepted"] = accepted
    payload["payload"] = {
        "signature": "0x" + "00" * 65,
        "authorization": {
            "from": payer,
            "to": accepted.get("payTo"),
            "value": accepted.get("amount"),
            "validAfter": str(now - 60),
            "validBefore": str(now + timeout),
            "nonce": "0x" + os.urandom(32).hex(),
        },
    }
    return base64.b64encode(_json_text(payload).encode("utf-8")).decode("ascii")


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"


def parse_www_authenticate(value: str) -> list[tuple[str, dict[str, str]]]:
    """Challenges with their auth-params (`name="quoted"` or `name=token`, RFC 9110 §11)."""
    challenges: list[tuple[str, dict[str, str]]] = []
    position = 0
    pattern = re.compile(rf'[\s,]*({_TOKEN})[ \t]*(?:=[ \t]*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN})))?')
    while position < len(value):
        match = pattern.match(value, position)
        if not match or match.end() == position:
            break
        name, quoted, token = match.group(1), match.group(2), match.group(3)
        if (quoted is not None or token is not None) and challenges:
            challenges[-1][1][name.lower()] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else token
        else:
            challenges.append((name, {}))
        position = match.end()
    return challenges


def sandbox_mpp_authorization(www_authenticate: str, token: str) -> str:
    """`Payment ` + unpadded base64url of `{challenge: {…the challenge's params}, payload: {token}}`, for the first
    `Payment` challenge with method `stripe` and intent `charge`."""
    for scheme, params in parse_www_authenticate(www_authenticate):
        if scheme.lower() == "payment" and params.get("method") == "stripe" and params.get("intent") == "charge":
            credential = _json_text({"challenge": params, "payload": {"token": token}}).encode("utf-8")
            return "Payment " + base64.urlsafe_b64encode(credential).decode("ascii").rstrip("=")
    raise SvcArgumentError('No Payment challenge with method="stripe" and intent="charge".')


def sandbox_credential(outcome: SandboxOutcome = "success") -> Callable[[Any], dict[str, str]]:
    """A `fund` credential callback for sandbox tenants answering either rail's challenge with the test credential
    for `outcome`: `payment-signature` for x402, `x-svc-payment-authorization` for MPP."""

    def credential(challenge: Any) -> dict[str, str]:
        if challenge.rail == "x402_usdc_base":
            if not challenge.payment_required:
                raise SvcArgumentError("The x402 challenge has no PAYMENT-REQUIRED header.")
            return {"payment-signature": sandbox_x402_payment_signature(challenge.payment_required, SANDBOX_X402_PAYERS[outcome])}
        if challenge.rail in ("processor_mpp", "stripe_mpp"):
            if not challenge.www_authenticate:
                raise SvcArgumentError("The MPP challenge has no WWW-Authenticate header.")
            return {"x-svc-payment-authorization": sandbox_mpp_authorization(challenge.www_authenticate, SANDBOX_MPP_TOKENS[outcome])}
        raise SvcArgumentError(f"No sandbox credential for rail {challenge.rail}.")

    return credential
