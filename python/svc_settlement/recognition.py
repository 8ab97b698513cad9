# Agent recognition proofs (`svc.agent_recognition_proof_v1`, an `ed25519-sha256-json-v1` artifact, see artifacts.py)
# for engine mutations. The header carries unpadded base64url of the proof JSON.
from __future__ import annotations

import base64
import time
import uuid
from typing import Any

from .artifacts import sign_artifact
from .canonical_json import compact_json
from .digests import sha256
from .keys import SvcSigningKey
from .rfc3339 import format_rfc3339_seconds_utc

RECOGNITION_PROOF_HEADER_NAME = "x-svc-agent-recognition-proof"
RECOGNITION_PROOF_KIND = "svc.agent_recognition_proof_v1"
RECOGNITION_VERIFIER_ID_DEFAULT = "svc-gateway"
# Issued a minute before now (clock skew between client and gateway), valid for four minutes: the gateway refuses
# windows longer than ten minutes.
RECOGNITION_ISSUED_BEFORE_SECONDS = 60
RECOGNITION_VALIDITY_SECONDS = 240


class RecognitionPurposes:
    INTENT_CREATE = "harbor.intent.create"
    INTENT_FUND = "harbor.intent.fund"
    EVIDENCE_SUBMIT = "harbor.intent.evidence.submit"
    SETTLEMENT_CONFIRM = "harbor.intent.settlement.confirm"


def create_recognition_proof(
    *,
    key: SvcSigningKey,
    key_id: str,
    purpose: str,
    tenant_id: str,
    method: str,
    path: str,
    body: bytes,
    verifier_id: str = RECOGNITION_VERIFIER_ID_DEFAULT,
    now_seconds: float | None = None,
    nonce: str | None = None,
) -> tuple[dict[str, Any], str]:
    """Builds and signs a proof over the exact request body bytes; answers the proof and its header value."""
    issued_at = int(time.time() if now_seconds is None else now_seconds) - RECOGNITION_ISSUED_BEFORE_SECONDS
    signed: dict[str, Any] = {
        "key_id": key_id,
        "issued_at": format_rfc3339_seconds_utc(issued_at),
        "expires_at": format_rfc3339_seconds_utc(issued_at + RECOGNITION_VALIDITY_SECONDS),
        "nonce": nonce or str(uuid.uuid4()),
        "purpose": purpose,
        "verifier_context": {"tenant_id": tenant_id, "verifier_id": verifier_id},
        "request_envelope": {"method": method.upper(), "path": path, "body_digest_sha256_hex": sha256(body).hex()},
    }
    proof = sign_artifact(RECOGNITION_PROOF_KIND, signed, key)
    header_value = base64.urlsafe_b64encode(compact_json(proof).encode("utf-8")).decode("ascii").rstrip("=")
    return proof, header_value
