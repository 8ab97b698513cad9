# Intent flows: build and sign creation envelopes (v6 with a predicate, v7 bound to the policy head), fund through
# the 402 handshake, submit payee-signed evidence, confirm settlement, and read intents. Written once as flows
# (see transport.py); client.py runs them synchronously or with asyncio.
from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

import httpx

from .core import ClientCore, check_idempotency_key, intent_path
from .defaults import FUND_POLL_INTERVAL_SECONDS_DEFAULT, FUND_POLLS_MAX_DEFAULT
from .errors import FundingFailedError, FundingPendingError, SvcArgumentError
from .keys import SvcSigningKey
from .policies import policy_version_flow
from .recognition import RecognitionPurposes
from .rfc3339 import format_rfc3339_seconds_utc
from .signed_structs import evidence_signing_bytes, intent_creation_signing_bytes
from .transport import Call, Flow, Response, Sleep

_PREDICATE_REF = re.compile(r"^([a-z0-9_]{1,64})@([1-9][0-9]{0,8})$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class SigningParty:
    did: str
    key: SvcSigningKey


@dataclass(frozen=True)
class PayeeParty:
    """The payee's public key: its SvcSigningKey, 32 raw bytes, or standard base64."""

    did: str
    public_key: SvcSigningKey | bytes | str


@dataclass(frozen=True)
class PolicyBinding:
    """A v7 binding: the head of `template_id` (or `version_seq`), read before signing."""

    template_id: str
    version_seq: int | None = None


@dataclass(frozen=True)
class FundChallenge:
    """What a 402 asked for, handed to the credential callback."""

    intent_id: str
    rail: str
    # x402: the PAYMENT-REQUIRED header (standard base64 of the PaymentRequired JSON).
    payment_required: str | None
    # MPP: the WWW-Authenticate value(s).
    www_authenticate: str | None
    body: dict[str, Any]
    headers: httpx.Headers


@dataclass(frozen=True)
class FundResult:
    intent: dict[str, Any]
    capability_token: str
    requests: int
    replayed: bool
    payment_response: str | None
    payment_receipt: str | None


# `funding.status` values after which the rail will not fund on this credential.
FUNDING_FAILURE_STATUSES = (
    "authorization_failed", "capture_failed", "void_failed", "credential_rejected", "payment_failed", "charge_failed", "session_open_failed",
)
# Headers a credential callback must not set: they belong to the SDK.
_RESERVED_HEADERS = {"authorization", "idempotency-key", "x-tenant-id", "x-svc-agent-recognition-proof", "content-type", "accept"}


def _rfc3339_of(value: str | datetime, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        return format_rfc3339_seconds_utc(value)
    raise SvcArgumentError(f"{field} must be RFC 3339 text or a datetime.")


def _payee_public_key_base64(public_key: SvcSigningKey | bytes | str) -> str:
    if isinstance(public_key, SvcSigningKey):
        return public_key.public_key_base64
    if isinstance(public_key, (bytes, bytearray)):
        return base64.b64encode(bytes(public_key)).decode("ascii")
    return public_key


def _decode_payee_key(text: str) -> bytes:
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raw = b""
    if len(raw) != 32 or base64.b64encode(raw).decode("ascii") != text:
        raise SvcArgumentError("payee.public_key must be 32 bytes (standard padded base64).")
    return raw


def _rule_flow(core: ClientCore, predicate: Any, predicate_ref: str | None, policy_binding: Any) -> Flow[tuple[int, Any, str, dict | None]]:
    """The rule the principal signs: (version, predicate, predicate_ref, policy version or None)."""
    given = sum(value is not None for value in (predicate, predicate_ref, policy_binding))
    if given != 1:
        raise SvcArgumentError("Give exactly one of predicate (v6), predicate_ref (v6) and policy_binding (v7).")
    if predicate is not None:
        return 6, predicate, "", None
    if predicate_ref is not None:
        match = _PREDICATE_REF.match(predicate_ref)
        if not match:
            raise SvcArgumentError('predicate_ref is "<template_id>@<version_seq>".')
        version = yield from policy_version_flow(core, match.group(1), int(match.group(2)))
        return 6, version["materialized_predicate"], predicate_ref, None
    if isinstance(policy_binding, Mapping) and policy_binding.get("object") == "policy_version":
        version = dict(policy_binding)
    elif isinstance(policy_binding, PolicyBinding):
        version = yield from policy_version_flow(core, policy_binding.template_id, policy_binding.version_seq)
    else:
        raise SvcArgumentError("policy_binding is a PolicyBinding or a policy version already read.")
    return 7, version["materialized_predicate"], "", version


def create_flow(
    core: ClientCore,
    *,
    principal: SigningParty,
    payee: PayeeParty,
    amount_cents: int,
    deadline: str | datetime,
    settlement_rail: str,
    allowed_tools: Sequence[str],
    currency: str = "usd",
    evidence_schema: Mapping[str, Any] | None = None,
    budget: Mapping[str, Any] | None = None,
    predicate: Mapping[str, Any] | None = None,
    predicate_ref: str | None = None,
    policy_binding: PolicyBinding | Mapping[str, Any] | None = None,
    intent_id: str | None = None,
    idempotency_key: str | None = None,
) -> Flow[dict[str, Any]]:
    version, rule, rule_ref, policy = yield from _rule_flow(core, predicate, predicate_ref, policy_binding)
    intent_id = intent_id or str(uuid.uuid4())
    budget = dict(budget) if budget is not None else {"max": amount_cents}
    evidence_schema = dict(evidence_schema) if evidence_schema is not None else {"type": "object"}
    deadline_text = _rfc3339_of(deadline, "deadline")
    tools = list(allowed_tools)
    payee_pubkey = _payee_public_key_base64(payee.public_key)
    policy_sign = None
    if policy is not None:
        if not isinstance(policy.get("content_digest"), str) or not _HEX64.match(policy["content_digest"]):
            raise SvcArgumentError("The policy version has no 64-hex content_digest.")
        policy_sign = {
            "policy_template_id": policy["template_id"],
            "policy_version_seq": policy["version_seq"],
            "policy_content_digest": bytes.fromhex(policy["content_digest"]),
        }
    signed = intent_creation_signing_bytes(
        signing_version=version, tenant_id=core.tenant_id, intent_id=intent_id, principal_did=principal.did, payee_did=payee.did,
        amount_cents=amount_cents, currency=currency, deadline=deadline_text, budget=budget, evidence_schema=evidence_schema,
        predicate=rule, predicate_ref=rule_ref, allowed_tools=tools, settlement_rail=settlement_rail, policy=policy_sign,
        payee_pubkey=_decode_payee_key(payee_pubkey),
    )
    # Field order as the reference client sends it; the recognition proof hashes these exact bytes.
    body: dict[str, Any] = {
        "intent_id": intent_id,
        "principal_did": principal.did,
        "principal_pubkey": principal.key.public_key_base64,
        "principal_signature": base64.b64encode(principal.key.sign(signed)).decode("ascii"),
        "payee_did": payee.did,
        "payee_pubkey": payee_pubkey,
        "budget": budget,
        "currency": currency,
        "amount_cents": amount_cents,
        "evidence_schema": evidence_schema,
        "deadline": deadline_text,
    }
    if version == 6 and rule_ref == "":
        body["predicate_dsl"] = rule
    body["settlement_rail"] = settlement_rail
    body["signing_version"] = version
    body["policy_binding"] = None if policy is None else {"template_id": policy["template_id"], "version_seq": policy["version_seq"]}
    body["allowed_tools"] = tools
    if rule_ref != "":
        body["predicate_ref"] = rule_ref
    response = yield from core.mutate("/harbor/intents", RecognitionPurposes.INTENT_CREATE, body, idempotency_key)
    return _intent_of(core, response, intent_id)


def _intent_of(core: ClientCore, response: Response, intent_id: str) -> dict[str, Any]:
    body = response.json_object()
    core.check_echo(body, response, intent_id)
    core.require_fields(body, response, {"state": str, "amount_cents": int, "settlement_rail": str})
    return body


def fund_flow(
    core: ClientCore,
    intent_id: str,
    credential: Callable[[FundChallenge], Any],
    idempotency_key: str | None = None,
    poll_interval_seconds: float = FUND_POLL_INTERVAL_SECONDS_DEFAULT,
    polls_max: int = FUND_POLLS_MAX_DEFAULT,
) -> Flow[FundResult]:
    """Ask, answer the rail's 402 challenge with the credential the callback supplies, then poll while the rail is
    pending. One idempotency key for the whole call; each step is a new request with a fresh recognition proof."""
    if not callable(credential):
        raise SvcArgumentError("fund needs a credential callback (see sandbox_credential()).")
    path = intent_path(intent_id, "/fund")
    key = check_idempotency_key(idempotency_key)
    credential_headers: dict[str, str] | None = None
    requests = 0
    polls = 0
    while True:
        response = yield from core.mutate(path, RecognitionPurposes.INTENT_FUND, {}, key, credential_headers, (202, 402))
        requests += 1
        answer = response.json_object()
        core.check_echo(answer, response, intent_id)
        core.require_fields(answer, response, {"intent_id": str, "state": str, "settlement_rail": str, "funded": bool})
        status = (answer.get("funding") or {}).get("status")
        if response.status == 402:
            # A 402 after a credential is the rail's refusal or decline.
            if credential_headers is not None:
                raise FundingFailedError(intent_id, answer, requests)
            challenge = FundChallenge(
                intent_id, answer["settlement_rail"], response.headers.get("payment-required"), response.headers.get("www-authenticate"),
                answer, response.headers,
            )
            supplied = yield Call(credential, (challenge,))
            credential_headers = _credential_headers(supplied)
            continue
        if status in FUNDING_FAILURE_STATUSES:
            raise FundingFailedError(intent_id, answer, requests)
        token = answer.get("capability_token")
        if response.status == 200 and answer["funded"] and isinstance(token, str) and token != "":
            return FundResult(
                answer, token, requests, response.headers.get("idempotent-replayed") == "true",
                response.headers.get("payment-response"), response.headers.get("payment-receipt"),
            )
        # 202, or a 200 not funded yet: the same request again is a poll.
        if polls >= polls_max:
            raise FundingPendingError(intent_id, answer, requests)
        polls += 1
        yield Sleep(poll_interval_seconds)


def _credential_headers(supplied: Any) -> dict[str, str]:
    if not isinstance(supplied, Mapping) or not supplied:
        raise SvcArgumentError('The credential callback must return the credential header(s), e.g. {"payment-signature": "…"}.')
    headers: dict[str, str] = {}
    for raw_name, value in supplied.items():
        name = str(raw_name).lower()
        if name in _RESERVED_HEADERS:
            raise SvcArgumentError(f"The credential callback may not set {name}.")
        if not isinstance(value, str) or value.strip() == "" or re.search(r"[\r\n]", value):
            raise SvcArgumentError(f"The credential header {name} must be a non-empty single-line string.")
        text = value.strip()
        if name == "x-svc-payment-authorization" and not text.lower().startswith("payment "):
            text = f"Payment {text}"
        headers[name] = text
    return headers


def submit_evidence_flow(
    core: ClientCore,
    intent_id: str,
    *,
    payee: SigningParty,
    payload: Mapping[str, Any],
    artifacts: Sequence[str] = (),
    submitted_at: str | datetime | None = None,
    idempotency_key: str | None = None,
) -> Flow[dict[str, Any]]:
    """Signs EvidenceSignV1 with the payee key and submits it; the answer says whether the rule passed."""
    path = intent_path(intent_id, "/evidence")
    submitted = format_rfc3339_seconds_utc(core.now()) if submitted_at is None else _rfc3339_of(submitted_at, "submitted_at")
    artifact_list = list(artifacts)
    signed = evidence_signing_bytes(
        tenant_id=core.tenant_id, intent_id=intent_id, payee_did=payee.did, payload=dict(payload), artifacts=artifact_list, submitted_at=submitted,
    )
    body = {
        "payload": dict(payload),
        "artifacts": artifact_list,
        "payee_did": payee.did,
        "payee_pubkey": payee.key.public_key_base64,
        "payee_signature": base64.b64encode(payee.key.sign(signed)).decode("ascii"),
        "submitted_at": submitted,
    }
    response = yield from core.mutate(path, RecognitionPurposes.EVIDENCE_SUBMIT, body, idempotency_key)
    answer = response.json_object()
    core.check_echo(answer, response, intent_id)
    core.require_fields(answer, response, {"state": str, "predicate_passed": bool, "predicate_evaluation": dict})
    return answer


def confirm_flow(core: ClientCore, intent_id: str, expected_action: str | None = None, idempotency_key: str | None = None) -> Flow[dict[str, Any]]:
    """Carries out what the stored evaluation implies: release (rule passed), a split (a metered rule), or refund (failed,
    or deadline passed); a release the release gate holds answers the intent held, with `review_hold`.
    `expected_action` is a guard: the engine refuses (409, nothing moved) when the rule implies the other action."""
    path = intent_path(intent_id, "/settlement/confirm")
    body = {} if expected_action is None else {"expected_action": expected_action}
    response = yield from core.mutate(path, RecognitionPurposes.SETTLEMENT_CONFIRM, body, idempotency_key)
    intent = _intent_of(core, response, intent_id)
    # A release the tenant's release gate held for review answers `review_hold` instead of `settlement`.
    core.require_fields(intent, response, {"review_hold": dict} if "review_hold" in intent else {"settlement": dict})
    return intent


def get_flow(core: ClientCore, intent_id: str) -> Flow[dict[str, Any]]:
    _, response = yield from core.get(intent_path(intent_id))
    return _intent_of(core, response, intent_id)


def list_flow(core: ClientCore, limit: int | None = None, state: str | None = None, cursor: str | None = None) -> Flow[dict[str, Any]]:
    """Newest first; pass `next_cursor` back as `cursor` for the next page."""
    body, response = yield from core.get("/harbor/intents", {"limit": limit, "state": state, "cursor": cursor})
    core.require_fields(body, response, {"data": list, "has_more": bool})
    for intent in body["data"]:
        core.check_echo(intent, response)
    return body
