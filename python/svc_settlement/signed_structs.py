# The bincode layouts clients sign on the engine path: IntentCreationSign v4-v7 (6 and 7 are the fundable ones), the
# optional CompletionContractSignV1 tail, and EvidenceSignV1 version 2. Byte-identical to the TypeScript SDK.
from __future__ import annotations

from typing import Any, TypedDict

from . import bincode as t
from .bincode import value_invalid
from .digests import allowed_tools_digest, artifacts_digest, json_digest_blake3
from .errors import SvcSigningError
from .rfc3339 import normalize_rfc3339

INTENT_SIGNING_VERSIONS_KNOWN = (4, 5, 6, 7)
INTENT_SIGNING_VERSIONS_FUNDABLE = (6, 7)
COMPLETION_CONTRACT_SIGN_VERSION = 2
EVIDENCE_SIGN_VERSION = 2

_DIGEST = t.fixed_bytes(32)
_COMMON_FIELDS = [
    ("version", t.U8),
    ("tenant_id", t.STRING),
    ("intent_id", t.UUID),
    ("principal_did", t.STRING),
    ("payee_did", t.STRING),
    ("amount_cents", t.I64),
    ("currency", t.STRING),
    ("deadline", t.STRING),
    ("budget_digest", _DIGEST),
    ("evidence_schema_digest", _DIGEST),
    ("predicate_dsl_digest", _DIGEST),
    ("predicate_ref", t.STRING),
    ("allowed_tools_digest", _DIGEST),
    ("settlement_rail", t.STRING),
]
_POLICY_FIELDS = [("policy_template_id", t.STRING), ("policy_version_seq", t.U32), ("policy_content_digest", _DIGEST)]
_PAYEE_KEY_FIELDS = [("payee_pubkey", t.fixed_bytes(32))]

# Field order of each version, as the Rust structs IntentCreationSignV4..V7 declare it.
INTENT_CREATION_SIGN_LAYOUTS = {
    4: t.struct_of(_COMMON_FIELDS),
    5: t.struct_of(_COMMON_FIELDS + _POLICY_FIELDS),
    6: t.struct_of(_COMMON_FIELDS + _PAYEE_KEY_FIELDS),
    7: t.struct_of(_COMMON_FIELDS + _POLICY_FIELDS + _PAYEE_KEY_FIELDS),
}
COMPLETION_CONTRACT_SIGN_LAYOUT = t.struct_of([
    ("version", t.U8),
    ("completion_preset_id", t.STRING),
    ("vendor_contract_provider", t.STRING),
    ("vendor_api_version", t.STRING),
    ("vendor_schema_digest", _DIGEST),
    ("canonical_schema_digest", _DIGEST),
])
EVIDENCE_SIGN_LAYOUT = t.struct_of([
    ("version", t.U8),
    ("tenant_id", t.STRING),
    ("intent_id", t.UUID),
    ("payee_did", t.STRING),
    ("payload_digest", _DIGEST),
    ("artifacts_digest", _DIGEST),
    ("submitted_at", t.STRING),
])


class PolicyBindingSign(TypedDict):
    policy_template_id: str
    policy_version_seq: int
    policy_content_digest: bytes


class CompletionContractSign(TypedDict):
    completion_preset_id: str
    vendor_contract_provider: str
    vendor_api_version: str
    vendor_schema_digest: bytes
    canonical_schema_digest: bytes


def assert_known_signing_version(version: object) -> int:
    """Refuses an unknown version before anything else is looked at."""
    if isinstance(version, bool) or version not in INTENT_SIGNING_VERSIONS_KNOWN:
        raise SvcSigningError("signing.version_unsupported", f"signing_version {version!r} is not supported", {"field": "signing_version"})
    return int(version)  # type: ignore[arg-type]


def intent_creation_signing_bytes(
    *,
    signing_version: int,
    tenant_id: str,
    intent_id: str,
    principal_did: str,
    payee_did: str,
    amount_cents: int,
    currency: str,
    deadline: str,
    budget: Any,
    evidence_schema: Any,
    predicate: Any,
    predicate_ref: str,
    allowed_tools: Any,
    settlement_rail: str,
    policy: PolicyBindingSign | None = None,
    payee_pubkey: bytes | None = None,
    completion_contract: CompletionContractSign | None = None,
) -> bytes:
    """The exact bytes the principal signs: IntentCreationSign (+ CompletionContractSignV1 tail when given).
    `predicate` is `predicate_dsl` (v4/v6) or the bound policy version's materialized predicate (v5/v7)."""
    version = assert_known_signing_version(signing_version)
    sign: dict[str, Any] = {
        "version": version,
        "tenant_id": tenant_id,
        "intent_id": intent_id,
        "principal_did": principal_did,
        "payee_did": payee_did,
        "amount_cents": amount_cents,
        "currency": currency,
        "deadline": normalize_rfc3339(deadline, "deadline"),
        "budget_digest": json_digest_blake3(budget, "budget"),
        "evidence_schema_digest": json_digest_blake3(evidence_schema, "evidence_schema"),
        "predicate_dsl_digest": json_digest_blake3(predicate, "predicate_dsl"),
        "predicate_ref": predicate_ref,
        "allowed_tools_digest": allowed_tools_digest(allowed_tools),
        "settlement_rail": settlement_rail,
    }
    # Missing v5/v7 or v6/v7 parts surface from the struct encoder as `signing.value_invalid`, naming the field.
    if policy is not None:
        sign.update(policy)
    if payee_pubkey is not None:
        sign["payee_pubkey"] = payee_pubkey
    body = t.encode_bincode(INTENT_CREATION_SIGN_LAYOUTS[version], sign)
    if completion_contract is None:
        return body
    tail = t.encode_bincode(COMPLETION_CONTRACT_SIGN_LAYOUT, {"version": COMPLETION_CONTRACT_SIGN_VERSION, **completion_contract})
    return body + tail


def evidence_signing_bytes(*, tenant_id: str, intent_id: str, payee_did: str, payload: Any, artifacts: Any, submitted_at: str) -> bytes:
    """The exact bytes the payee signs for an evidence submission (EvidenceSignV1, version 2)."""
    if not isinstance(submitted_at, str):
        raise value_invalid("submitted_at", "must be RFC 3339 text")
    return t.encode_bincode(
        EVIDENCE_SIGN_LAYOUT,
        {
            "version": EVIDENCE_SIGN_VERSION,
            "tenant_id": tenant_id,
            "intent_id": intent_id,
            "payee_did": payee_did,
            "payload_digest": json_digest_blake3(payload, "payload"),
            "artifacts_digest": artifacts_digest(artifacts),
            "submitted_at": normalize_rfc3339(submitted_at, "submitted_at"),
        },
    )
