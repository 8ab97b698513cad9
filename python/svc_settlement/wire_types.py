# The wire objects the SDK returns, as the service sends them (snake_case), as TypedDicts: answers are plain dicts,
# so fields the server adds later pass through. The same shapes as the TypeScript SDK's src/sdk/types.ts.
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


JsonObject = dict[str, Any]

# Every state an intent can be in, as the service's lifecycle table declares them (docs/engine.md#states); the
# service's tests hold this list to that table.
IntentState = Literal["open", "funded", "evidence_recorded", "held", "released", "refunded", "resolved_split"]


class Principal(TypedDict):
    tenant_id: str
    environment: str
    tenant_uuid: NotRequired[str]
    service_account_role: NotRequired[str]
    roles: NotRequired[list[str]]


class PolicyBindingAnswer(TypedDict):
    template_id: str
    version_seq: int
    content_digest: str | None


class Intent(TypedDict):
    object: Literal["intent"]
    tenant: str
    tenant_id: str
    intent_id: str
    state: IntentState
    funded: bool
    signing_version: int
    principal_did: str
    principal_key_registered: bool
    payee_did: str
    amount_cents: int
    currency: str
    budget: Any
    evidence_schema: JsonObject
    deadline: str
    predicate_dsl: JsonObject | None
    predicate_ref: str | None
    policy_binding: PolicyBindingAnswer | None
    settlement_rail: str
    allowed_tools: list[str]
    completion_preset_id: str | None
    predicate_passed: bool | None
    created_at: str
    funded_at: str | None
    evidence_recorded_at: str | None
    settled_at: str | None
    release_mode: Literal["full", "metered"]
    # Once settled: the part paid to the payee and the part returned (their sum is amount_cents); None before.
    released_cents: int | None
    refunded_cents: int | None


class IntentList(TypedDict):
    object: Literal["list"]
    data: list[Intent]
    has_more: bool
    next_cursor: str | None


class FundAnswer(TypedDict):
    tenant: str
    intent_id: str
    state: IntentState
    settlement_rail: str
    currency: str
    amount_cents: int
    funded: bool
    funding: NotRequired[JsonObject | None]
    capability_token: NotRequired[str]
    # RFC 9457 fields, present when a credential was refused.
    type: NotRequired[str]
    title: NotRequired[str]
    detail: NotRequired[str]


class PredicateEvaluation(TypedDict):
    passed: bool
    trace: list[JsonObject]


class EvidenceAnswer(TypedDict):
    tenant: str
    intent_id: str
    state: IntentState
    predicate_passed: bool
    predicate_evaluation: PredicateEvaluation
    payload_digest: NotRequired[str]
    artifacts_digest: NotRequired[str]


class Settlement(TypedDict):
    action: Literal["release", "refund", "split"]
    reason: str
    transaction_id: str
    released_cents: int
    refunded_cents: int


class SettlementAnswer(Intent):
    settlement: Settlement


class VerifyResult(TypedDict):
    allow: bool
    tenant: str
    intent_id: str
    audit_id: str
    decision_id: NotRequired[str]
    code: NotRequired[str | None]
    message: NotRequired[str | None]
    reason_codes: NotRequired[list[str]]
    remaining_cents: NotRequired[int]
    operation: NotRequired[str]
    requested_spend_cents: NotRequired[int]


class SpendDecision(TypedDict):
    decision_id: str
    intent_id: str
    status: str
    requested_spend_cents: int
    completed_at: str | None


class PolicyVersion(TypedDict):
    object: Literal["policy_version"]
    template_id: str
    version_seq: int
    parameters: JsonObject
    materialized_predicate: JsonObject
    human_summary: str
    content_digest: str
    created_at: str
    is_head: bool


class PolicyVersionList(TypedDict):
    template_id: str
    current_head_seq: int | None
    current_head_digest: str | None
    versions: list[PolicyVersion]
    has_more: bool
    next_cursor: int | None


class LedgerCheckpoint(TypedDict):
    tenant_id: str
    ledger_seq: int
    row_hash_hex: str
    issued_at: str
    signing_public_key_ed25519_hex: str
    message_digest_sha256_hex: str
    ed25519_signature_hex: str
    kid: str


class LedgerTip(TypedDict):
    tenant: str
    tenant_id: str
    ledger_seq: int
    row_hash_hex: str
    checkpoint: LedgerCheckpoint


class VerificationKey(TypedDict):
    kid: str
    public_key_hex: str


class LedgerAuthority(TypedDict):
    tenant: str
    tenant_id: str
    algorithm: Literal["ed25519"]
    public_key_hex: str
    kid: str
    verification_keys: list[VerificationKey]


class LedgerEvent(TypedDict):
    ledger_seq: int
    transaction_id: str
    intent_id: str
    entry_index: int
    account: str
    side: Literal["debit", "credit"]
    amount_cents: int
    currency: str
    event_kind: str
    recorded_at: str
    body_hex: str
    prev_row_hash_hex: str
    row_hash_hex: str


class LedgerEventsPage(TypedDict):
    tenant: str
    tenant_id: str
    events: list[LedgerEvent]
    next_after_seq: int | None


class RegisteredKey(TypedDict):
    object: Literal["registered_key"]
    id: str
    kind: str
    subject: str
    public_key_ed25519_hex: str
    created_at: str
    revoked_at: str | None


class RegisteredKeyList(TypedDict):
    object: Literal["list"]
    data: list[RegisteredKey]
    has_more: bool
    next_cursor: str | None
