# Signed artifacts (receipts, mandates, audit manifests): the Python field table equals the service's, artifacts the
# TypeScript signing core signs verify in Python and Python signs the same wire byte for byte, and any change to a
# signed field, a refused version, kind, algorithm or key is reported with the service's code.
from __future__ import annotations

import json

import pytest

from svc_settlement.artifact_kinds import ARTIFACT_KINDS
from svc_settlement.artifacts import ArtifactError, sign_artifact, verify_artifact
from svc_settlement.keys import key_from_seed

from .test_cross_check import oracle

SEED = "07" * 32
OTHER_KEY = key_from_seed("08" * 32)
INTENT_ID = "7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401"
AUTHORIZATION = {"kind": "principal", "tenant_id": "tenant-a", "principal_subject": "user:alice", "principal_type": "user"}
AGENT = {"subject": "agent:shopper", "issuer": "https://issuer.example/?a=1&b=<2>", "key_id": "key-1", "display_name": "Shopper\u2028One"}
MANDATE_CORE = {
    "spend_ceiling": {"amount_minor": 5000, "currency": "usd"},
    "settlement": {"default_rail": "x402_usdc_base", "allowed_rails": ["stripe_connect", "x402_usdc_base"]},
    "constraint": {"kind": "policy", "id": "completion_v1", "version": "3", "digest_sha256_hex": "ab" * 32, "uri": ""},
    "expires_at": "2030-01-02T15:04:05Z",
    "nonce": "nonce-1",
    "human_presence_mode": "human_not_present",
}
SAMPLES = {
    "svc.agent_mandate_v1": {
        "authorization": AUTHORIZATION, "agent": AGENT, "allowed_actions": ["purchase"],
        "allowed_tools": ["harbor.describe", "harbor.evidence_submit"], **MANDATE_CORE,
    },
    "svc.protocol_authorization_receipt_v1": {
        "receipt_id": "auth-rcpt-1", "issued_at": "2026-11-22T15:04:05Z", "status": "authorized", "intent_id": INTENT_ID,
        "tenant_id": "tenant-a", "verifier_id": "svc-gateway", "transport_binding": {"source_protocol": "ap2", "request_id": "req<1>"},
        "mandate_digest_sha256_hex": "cd" * 32, "imported_mandate_signing_public_key_ed25519_hex": OTHER_KEY.public_key_hex,
        "authorization": AUTHORIZATION, "agent": AGENT, "allowed_actions": [], "allowed_tools": ["harbor.describe"], **MANDATE_CORE,
    },
    "svc.protocol_settlement_receipt_v1": {
        "receipt_id": INTENT_ID, "issued_at": "2026-11-22T15:04:05Z", "intent_id": INTENT_ID, "tenant_id": "tenant-a",
        "verifier_id": "svc-gateway", "transport_binding": {"source_protocol": "acp", "partner_platform": "shop & co"},
        "authorization_receipt_id": "auth-rcpt-1", "mandate_digest_sha256_hex": "cd" * 32, "harbor_state": "refunded",
        "predicate_passed": False, "settlement_rail": "x402_usdc_base", "settlement_mode": "simulated", "principal_did": "did:principal:1",
        "payee_did": "did:payee:1", "currency": "usd", "amount_cents": 100, "terminal_observed_at": "2026-11-22T15:05:00Z",
    },
    "svc.agent_receipt_v1": {
        "scope": "intent_terminal", "receipt_id": INTENT_ID, "issued_at": "2026-11-22T15:04:05Z", "tenant_id": "tenant-a",
        "authorization": {
            "principal_did": "did:principal:1", "actor_subject": "agent <shopper> & co",
            "agent": {"operator_did": "did:operator:1", "model_family": "gpt", "config_hash_sha256_hex": "11" * 32, "prompt_hash_sha256_hex": "22" * 32},
            "decision_id": "00000000-0000-4000-8000-000000000001",
            "policy": {"template_id": "completion_v1", "version_seq": 3, "content_digest_sha256_hex": "33" * 32},
            "authorized_at": "2026-11-22T15:00:00Z", "requested_spend_cents": 100, "currency": "usd", "reason_codes": ["within_budget"],
        },
        "outcome": {"harbor_state": "released", "predicate_passed": True, "settlement_outcome": "SETTLED"},
        "references": {"intent_id": INTENT_ID, "ledger_seq": 42, "settlement_receipt_id": None},
        "external_attestations": [],
    },
    "svc.audit_export_manifest_v1": {
        "tenant_realm_id": "tenant-a", "job_id": "job_0123", "generated_at_rfc3339": "2026-11-22T15:04:05Z", "gateway_build_version": "0.1.0",
        "disclosure_tier": "standard", "checkpoint_last_ledger_seq": 0, "export_filter": {"intent_id": INTENT_ID, "includes": ["disputes"]},
        "artifacts": [{"path": "ledger.jsonl", "sha256_hex": "44" * 32, "size_bytes": 10}],
    },
}


@pytest.fixture(scope="module")
def typescript_wires() -> dict[str, str]:
    answers = oracle([{"kind": "artifact", "input": {"kind": kind, "body": body, "seed_hex": SEED}} for kind, body in SAMPLES.items()])
    return {kind: answer["wire"] for kind, answer in zip(SAMPLES, answers)}


def test_the_field_table_is_the_services():
    [answer] = oracle([{"kind": "artifact_kinds", "input": {}}])
    assert ARTIFACT_KINDS == json.loads(answer["table"])


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_typescript_signed_artifacts_verify_and_python_signs_the_same_wire(kind, typescript_wires):
    wire = json.loads(typescript_wires[kind])
    verified = verify_artifact(wire, [key_from_seed(SEED).public_key_hex])
    assert verified.kind == kind
    python_wire = sign_artifact(kind, SAMPLES[kind], key_from_seed(SEED))
    assert json.dumps(python_wire, ensure_ascii=False, separators=(",", ":")) == typescript_wires[kind]


def leaf_paths(value, path=()):
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaf_paths(item, (*path, key))]
    if isinstance(value, list) and value:
        return [leaf for index, item in enumerate(value) for leaf in leaf_paths(item, (*path, index))]
    return [path]


def changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + ("b" if value[-1] == "a" else "a")
    return "x"


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_every_changed_signed_leaf_is_refused(kind, typescript_wires):
    wire = json.loads(typescript_wires[kind])
    material = {"signing_algorithm", "signature_algorithm", "signing_public_key_ed25519_hex", "ed25519_signature_hex", "message_digest_sha256_hex", "signed_payload_sha256_hex"}
    for path in leaf_paths(wire):
        if path[0] in material or path[0] in ("schema_version", "kind"):
            continue
        copy = json.loads(typescript_wires[kind])
        target = copy
        for step in path[:-1]:
            target = target[step]
        if path == ():
            continue
        target[path[-1]] = changed(target[path[-1]])
        with pytest.raises(ArtifactError) as raised:
            verify_artifact(copy)
        assert raised.value.code in ("artifact.signature_invalid", "artifact.malformed"), path


def test_refusals_carry_the_services_codes(typescript_wires):
    wire = json.loads(typescript_wires["svc.agent_mandate_v1"])
    cases = [
        ({**wire, "schema_version": 2}, "artifact.schema_version_unsupported"),
        ({**wire, "kind": "svc.unknown_v1"}, "artifact.kind_unknown"),
        ({**wire, "signing_algorithm": "rsa"}, "artifact.algorithm_unsupported"),
        ({**wire, "extra": 1}, "artifact.malformed"),
        ({**wire, "signing_public_key_ed25519_hex": OTHER_KEY.public_key_hex}, "artifact.signature_invalid"),
    ]
    for changed_wire, code in cases:
        with pytest.raises(ArtifactError) as raised:
            verify_artifact(changed_wire)
        assert raised.value.code == code
    with pytest.raises(ArtifactError) as untrusted:
        verify_artifact(wire, [OTHER_KEY.public_key_hex])
    assert untrusted.value.code == "artifact.key_untrusted"
