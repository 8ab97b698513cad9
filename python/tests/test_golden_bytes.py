# The golden vectors of the protocol reproduced in Python: the digests and the full v6 creation bytes, v7 with its
# policy binding, the completion-contract tail, EvidenceSignV1 (bytes and a signature with a fixed seed), RFC 3339
# re-writing, canonical JSON and the recognition-proof layout.
from __future__ import annotations

import base64
import json

import pytest

from svc_settlement.canonical_json import canonical_json, compact_json
from svc_settlement.digests import allowed_tools_digest, artifacts_digest, json_digest_blake3, sha256
from svc_settlement.errors import SvcSigningError
from svc_settlement.keys import key_from_seed, verify_ed25519
from svc_settlement.recognition import create_recognition_proof
from svc_settlement.rfc3339 import normalize_rfc3339
from svc_settlement.signed_structs import evidence_signing_bytes, intent_creation_signing_bytes

GOLDEN = dict(
    tenant_id="tenant-golden",
    intent_id="7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401",
    principal_did="did:principal:1",
    payee_did="did:payee:1",
    amount_cents=100,
    currency="usd",
    deadline="2030-01-02T15:04:05Z",
    budget={"max": 100, "a": 1},
    evidence_schema={"type": "object"},
    predicate={"version": 1, "root": {"op": "true"}},
    predicate_ref="",
    allowed_tools=["Harbor.Evidence_Submit", "harbor.describe"],
    settlement_rail="stripe_connect",
    payee_pubkey=b"\x42" * 32,
)
GOLDEN_V6_HEX = (
    "060d74656e616e742d676f6c64656e107f2a9b1e2f664f4f9c6e8f4b8e85c4010f6469643a7072696e636970616c3a310b6469643a70617965653a31"
    "c80375736414323033302d30312d30325431353a30343a30355afe9931de397b3817d06aeeb9877163cea9964adc4609fd0f1d715542a7f9c657"
    "69b254eacefe89c7b9b29305b06ec5983871a03cc20db0b4747905ecdddd7f29c366a1c38aad99370b12e7197e0fe5590e2d20763c9b4550a738"
    "313f484757e5006ba1f5bfb6266e05ed626dd8a1a318e8f9a38272186eb855bf717cede2c5b1040e7374726970655f636f6e6e656374"
    + "42" * 32
)
GOLDEN_EVIDENCE_HEX = (
    "020d74656e616e742d676f6c64656e107f2a9b1e2f664f4f9c6e8f4b8e85c4010b6469643a70617965653a31d47eab2c358ed1a44f6b17913549"
    "30e903d6656d15ab673c0a5425f1af2d63abaf1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f326214323033302d3031"
    "2d30325431353a30343a30355a"
)


def short_string(text: str) -> str:
    data = text.encode("utf-8")
    return f"{len(data):02x}{data.hex()}"


def test_digests():
    assert json_digest_blake3(GOLDEN["budget"]).hex() == "fe9931de397b3817d06aeeb9877163cea9964adc4609fd0f1d715542a7f9c657"
    assert json_digest_blake3(GOLDEN["evidence_schema"]).hex() == "69b254eacefe89c7b9b29305b06ec5983871a03cc20db0b4747905ecdddd7f29"
    assert json_digest_blake3(GOLDEN["predicate"]).hex() == "c366a1c38aad99370b12e7197e0fe5590e2d20763c9b4550a738313f484757e5"
    assert allowed_tools_digest(GOLDEN["allowed_tools"]).hex() == "6ba1f5bfb6266e05ed626dd8a1a318e8f9a38272186eb855bf717cede2c5b104"
    assert artifacts_digest([]).hex() == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"


def test_allowed_tools_are_held_to_the_limit_once_lowercased():
    # "İ" lowercases to "i" and a combining dot: 128 of them are 256 characters once normalized.
    with pytest.raises(SvcSigningError, match=r"allowed_tools\[1\]: must not be longer than 128"):
        allowed_tools_digest(["ok", "\u0130" * 128])
    assert allowed_tools_digest([" " + "\U0001F600" * 128 + " "]) == allowed_tools_digest(["\U0001F600" * 128])


def test_v6_creation_bytes():
    assert intent_creation_signing_bytes(signing_version=6, **GOLDEN).hex() == GOLDEN_V6_HEX


def test_v7_creation_bytes_add_the_policy_binding_before_the_payee_key():
    policy = {"policy_template_id": "completion_v1", "policy_version_seq": 3, "policy_content_digest": b"\xab" * 32}
    v7 = intent_creation_signing_bytes(signing_version=7, policy=policy, **GOLDEN).hex()
    rail_end = GOLDEN_V6_HEX.index("0e7374726970655f636f6e6e656374") + len("0e7374726970655f636f6e6e656374")
    assert v7 == "07" + GOLDEN_V6_HEX[2:rail_end] + short_string("completion_v1") + "03" + "ab" * 32 + "42" * 32


def test_v4_has_no_payee_key_and_v5_v7_need_their_parts():
    assert intent_creation_signing_bytes(signing_version=4, **{**GOLDEN, "payee_pubkey": None}).hex() == "04" + GOLDEN_V6_HEX[2:-64]
    with pytest.raises(SvcSigningError, match="policy_template_id: is missing"):
        intent_creation_signing_bytes(signing_version=7, **GOLDEN)
    with pytest.raises(SvcSigningError) as raised:
        intent_creation_signing_bytes(signing_version=8, **GOLDEN)
    assert raised.value.code == "signing.version_unsupported"


def test_completion_contract_tail():
    contract = {
        "completion_preset_id": "stripe_charge",
        "vendor_contract_provider": "stripe",
        "vendor_api_version": "2024-10-28.acacia",
        "vendor_schema_digest": b"\xed" * 32,
        "canonical_schema_digest": b"\x95" * 32,
    }
    tail = "02" + short_string("stripe_charge") + short_string("stripe") + short_string("2024-10-28.acacia") + "ed" * 32 + "95" * 32
    assert intent_creation_signing_bytes(signing_version=6, completion_contract=contract, **GOLDEN).hex() == GOLDEN_V6_HEX + tail


def test_evidence_sign_v1_bytes_and_signature():
    signed = evidence_signing_bytes(
        tenant_id="tenant-golden",
        intent_id=GOLDEN["intent_id"],
        payee_did="did:payee:1",
        payload={"status": "completed", "cost_cents": 10},
        artifacts=[],
        submitted_at="2030-01-02T15:04:05Z",
    )
    assert signed.hex() == GOLDEN_EVIDENCE_HEX
    key = key_from_seed(b"\x09" * 32)
    assert key.public_key_base64 == "/RckOFqgx1tk+3jNYC+h2ZH96/drE8WO1wLqyDXp9hg="
    signature = key.sign(signed)
    assert base64.b64encode(signature).decode() == "HEmBpjccxPpPJIck9neBeMLdqmFiEKnN0IoGKkGboo/2t5egKHsIXHWVjsvkoaImtuveVsM8buyti4TLODPUCw=="
    assert verify_ed25519(key.public_key, signed, signature)
    assert not verify_ed25519(key.public_key, signed + b"\x00", signature)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("2030-01-02T15:04:05Z", "2030-01-02T15:04:05Z"),
        ("2030-01-02t15:04:05.120000z", "2030-01-02T15:04:05.12Z"),
        ("2030-01-02 15:04:05+00:00", "2030-01-02T15:04:05Z"),
        ("2030-01-02T15:04:05-00:00", "2030-01-02T15:04:05Z"),
        ("2030-01-02T15:04:05.1234567891+05:30", "2030-01-02T15:04:05.123456789+05:30"),
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999999Z"),
    ],
)
def test_rfc3339_as_a_rust_server_rewrites_it(text, normalized):
    assert normalize_rfc3339(text, "deadline") == normalized


@pytest.mark.parametrize("text", ["2030-02-30T00:00:00Z", "2030-01-02T15:04:60Z", "2030-01-02", "2030-01-02T24:00:00Z"])
def test_rfc3339_refusals(text):
    with pytest.raises(SvcSigningError):
        normalize_rfc3339(text, "deadline")


def test_canonical_json_matches_javascript():
    assert canonical_json({"b": [1.0, 1e21, 1.5e-7, -0.0], "a": {"z": None, "é": "\u2028\n"}, "B": True}) == (
        '{"B":true,"a":{"z":null,"é":"\u2028\\n"},"b":[1,1e+21,1.5e-7,0]}'
    )
    # UTF-16 code unit order puts U+FF61 after U+1F600 (a surrogate pair starts with 0xD83D).
    assert canonical_json({"\uff61": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uff61":1}'
    assert compact_json({"b": 1, "a": 2}) == '{"b":1,"a":2}'
    with pytest.raises(SvcSigningError):
        canonical_json({"x": float("nan")})


def test_recognition_proof_layout_and_signature():
    key = key_from_seed(b"\x07" * 32)
    body = b'{"a":1}'
    proof, header = create_recognition_proof(
        key=key, key_id="agent-1", purpose="harbor.intent.fund", tenant_id="acme", method="post",
        path="/harbor/intents/x/fund", body=body, now_seconds=1_900_000_060, nonce="n-1",
    )
    assert list(proof) == [
        "schema_version", "kind", "key_id", "signature_algorithm", "issued_at", "expires_at", "nonce", "purpose",
        "verifier_context", "request_envelope", "message_digest_sha256_hex", "signing_public_key_ed25519_hex", "ed25519_signature_hex",
    ]
    assert proof["issued_at"] == "2030-03-17T17:46:40Z" and proof["expires_at"] == "2030-03-17T17:50:40Z"
    assert proof["request_envelope"] == {"method": "POST", "path": "/harbor/intents/x/fund", "body_digest_sha256_hex": sha256(body).hex()}
    signed = {name: value for name, value in proof.items() if name not in ("message_digest_sha256_hex", "signing_public_key_ed25519_hex", "ed25519_signature_hex")}
    digest = sha256(compact_json(signed).encode())
    assert proof["message_digest_sha256_hex"] == digest.hex()
    assert verify_ed25519(key.public_key, digest, bytes.fromhex(proof["ed25519_signature_hex"]))
    assert "=" not in header
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))) == proof
