# The same inputs through the Python SDK and the TypeScript signing core give identical bytes and signatures:
# random byte strings (BLAKE3), random JSON (canonical form), random v6 and v7 intents, evidence and recognition
# proofs. The TypeScript side is test/python/signing-oracle.ts, run with node.
from __future__ import annotations

import json
import random
import shutil
import string
import subprocess
import uuid

import pytest

from svc_settlement.canonical_json import canonical_json
from svc_settlement.digests import blake3_digest
from svc_settlement.keys import key_from_seed
from svc_settlement.recognition import create_recognition_proof
from svc_settlement.signed_structs import evidence_signing_bytes, intent_creation_signing_bytes

from .conftest import REPOSITORY_ROOT

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is needed for the cross-check")
RANDOM = random.Random(20261125)
ALPHABET = string.ascii_letters + string.digits + " _-.:\"\\\n\t\u00e9\u03a9\u2028\u20ac\U0001f600\uff61\x01"


def oracle(cases: list[dict]) -> list[dict]:
    completed = subprocess.run(
        ["node", "--import", "tsx", "test/python/signing-oracle.ts"],
        input=json.dumps(cases), capture_output=True, text=True, cwd=REPOSITORY_ROOT, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def random_text(low: int = 0, high: int = 12) -> str:
    return "".join(RANDOM.choice(ALPHABET) for _ in range(RANDOM.randint(low, high)))


def random_number():
    choice = RANDOM.randint(0, 4)
    if choice == 0:
        return RANDOM.randint(-(2**53), 2**53)
    if choice == 1:
        return RANDOM.uniform(-1e6, 1e6)
    if choice == 2:
        return RANDOM.choice([1e21, 1e-7, 1.5e-7, 123e-20, 5e-324, 0.1, 1e300, -0.0, 2.5])
    return RANDOM.randint(-1000, 1000)


def random_json(depth: int = 0):
    choice = RANDOM.randint(0, 6 if depth < 3 else 3)
    if choice == 0:
        return random_text()
    if choice == 1:
        return random_number()
    if choice == 2:
        return RANDOM.choice([True, False, None])
    if choice == 3:
        return random_text(1, 4)
    if choice == 4:
        return [random_json(depth + 1) for _ in range(RANDOM.randint(0, 4))]
    return {random_text(0, 6): random_json(depth + 1) for _ in range(RANDOM.randint(0, 5))}


def random_intent(version: int) -> dict:
    intent = {
        "signing_version": version,
        "tenant_id": random_text(1, 20),
        "intent_id": str(uuid.UUID(int=RANDOM.getrandbits(128), version=4)),
        "principal_did": "did:" + random_text(1, 30),
        "payee_did": "did:" + random_text(1, 30),
        "amount_cents": RANDOM.choice([1, 250, 251, 65535, 65536, 2**32, 2**53 - 1, -5]),
        "currency": RANDOM.choice(["usd", "eur", "jpy"]),
        "deadline": RANDOM.choice(["2030-01-02T15:04:05Z", "2031-06-30T23:59:59.5+02:00", "2029-12-31 00:00:00.000000001z"]),
        "budget": {"max": RANDOM.randint(1, 10**6), random_text(1, 5): random_json()},
        "evidence_schema": random_json(),
        "predicate": {"version": 1, "root": random_json()},
        "predicate_ref": RANDOM.choice(["", "completion_budget_v1@3"]),
        "allowed_tools": [RANDOM.choice(["\ufeff", " ", "\x1c", ""]) + "t" + random_text(0, 10) for _ in range(RANDOM.randint(1, 5))],
        "settlement_rail": RANDOM.choice(["x402_usdc_base", "processor_mpp", "stripe_connect"]),
        "payee_pubkey": key_from_seed(RANDOM.randbytes(32)).public_key_base64,
        "seed_hex": RANDOM.randbytes(32).hex(),
    }
    if version == 7:
        intent["policy"] = {"policy_template_id": "completion_budget_v1", "policy_version_seq": RANDOM.randint(1, 10**9), "policy_content_digest": RANDOM.randbytes(32).hex()}
    return intent


def python_intent(case: dict) -> tuple[bytes, bytes]:
    arguments = {key: value for key, value in case.items() if key not in ("seed_hex", "payee_pubkey", "policy")}
    if "policy" in case:
        arguments["policy"] = {**case["policy"], "policy_content_digest": bytes.fromhex(case["policy"]["policy_content_digest"])}
    import base64

    signed = intent_creation_signing_bytes(payee_pubkey=base64.b64decode(case["payee_pubkey"]), **arguments)
    return signed, key_from_seed(case["seed_hex"]).sign(signed)


def test_blake3_and_canonical_json_on_random_inputs():
    data = [RANDOM.randbytes(RANDOM.choice([0, 1, 63, 64, 65, 1023, 1024, 1025, 2049, 5000])) for _ in range(40)]
    values = [random_json() for _ in range(200)]
    cases = [{"kind": "blake3", "input": {"data_hex": item.hex()}} for item in data]
    cases += [{"kind": "canonical_json", "input": {"value": value}} for value in values]
    answers = oracle(cases)
    for item, answer in zip(data, answers[: len(data)]):
        assert blake3_digest(item).hex() == answer["hex"]
    for value, answer in zip(values, answers[len(data) :]):
        assert canonical_json(value) == answer["text"], value


def test_intents_evidence_and_proofs_sign_identically():
    intents = [random_intent(RANDOM.choice([6, 7])) for _ in range(60)]
    evidence = [
        {
            "tenant_id": random_text(1, 20),
            "intent_id": str(uuid.uuid4()),
            "payee_did": "did:" + random_text(1, 20),
            "payload": {random_text(1, 6): random_json() for _ in range(3)},
            "artifacts": [RANDOM.randbytes(32).hex() for _ in range(RANDOM.randint(0, 3))],
            "submitted_at": RANDOM.choice(["2030-01-02T15:04:05Z", "2030-01-02T15:04:05.250+01:00"]),
            "seed_hex": RANDOM.randbytes(32).hex(),
        }
        for _ in range(30)
    ]
    proofs = [
        {
            "seed_hex": RANDOM.randbytes(32).hex(), "key_id": "agent-" + str(index), "purpose": "harbor.intent.create",
            "tenant_id": "acme", "path": f"/harbor/intents/{uuid.uuid4()}/fund", "body": json.dumps(random_json(), ensure_ascii=False),
            "now_seconds": RANDOM.randint(1_800_000_000, 2_000_000_000), "nonce": str(uuid.uuid4()),
        }
        for index in range(20)
    ]
    cases = [{"kind": "intent", "input": case} for case in intents]
    cases += [{"kind": "evidence", "input": case} for case in evidence]
    cases += [{"kind": "recognition", "input": case} for case in proofs]
    answers = oracle(cases)
    for case, answer in zip(intents, answers):
        signed, signature = python_intent(case)
        assert (signed.hex(), signature.hex()) == (answer["hex"], answer["signature_hex"])
    for case, answer in zip(evidence, answers[len(intents) :]):
        signed = evidence_signing_bytes(**{key: value for key, value in case.items() if key != "seed_hex"})
        assert (signed.hex(), key_from_seed(case["seed_hex"]).sign(signed).hex()) == (answer["hex"], answer["signature_hex"])
    for case, answer in zip(proofs, answers[len(intents) + len(evidence) :]):
        _, header = create_recognition_proof(
            key=key_from_seed(case["seed_hex"]), key_id=case["key_id"], purpose=case["purpose"], tenant_id=case["tenant_id"],
            method="POST", path=case["path"], body=case["body"].encode("utf-8"), now_seconds=case["now_seconds"], nonce=case["nonce"],
        )
        assert header == answer["header"]
