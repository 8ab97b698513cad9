# Offline verification of an audit bundle (the ZIP of POST /v1/compliance/audit-exports/{job_id}/bundle): the signed
# `svc.audit_export_manifest_v1` manifest, every listed file's SHA-256 and size, no unlisted file, the ledger chain
# of ledger.jsonl from genesis, the signed checkpoint naming its tip, and each intents.jsonl line's settled parts
# (released_cents, refunded_cents) against what the ledger paid its payee. The same checks as `svc audit verify`.
from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from .artifacts import ArtifactError, verify_artifact
from .canonical_json import compact_json
from .digests import sha256
from .keys import verify_ed25519
from .ledger_chain import LEDGER_GENESIS_ROW_HASH, encode_ledger_row_body

AUDIT_MANIFEST_KIND = "svc.audit_export_manifest_v1"
MANIFEST_PATH, INTENTS_PATH, LEDGER_PATH, CHECKPOINT_PATH = "manifest.json", "intents.jsonl", "ledger.jsonl", "ledger-checkpoint.json"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX128 = re.compile(r"^[0-9a-f]{128}$")
@dataclass
class AuditBundleReport:
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    # Which key the manifest was checked against: the one given, or the one embedded in the manifest.
    key_source: str = "embedded"
    signing_public_key_hex: str | None = None
    tenant_id: str | None = None
    job_id: str | None = None
    files: int = 0
    ledger_rows: int = 0
    checkpoint_ledger_seq: int | None = None


def _verify_manifest(manifest: dict[str, Any], public_key_hex: str | None, problems: list[str]) -> str | None:
    if manifest.get("kind") != AUDIT_MANIFEST_KIND:
        problems.append(f"{MANIFEST_PATH} has kind {manifest.get('kind')!r}, expected {AUDIT_MANIFEST_KIND}")
    try:
        return verify_artifact(manifest, [public_key_hex] if public_key_hex else None).signing_public_key_hex
    except ArtifactError as error:
        problems.append(f"manifest signature: {error.code} ({error.field}{f': {error.reason}' if error.reason else ''})")
        return None


def verify_audit_bundle(zip_bytes: bytes, public_key_hex: str | None = None) -> AuditBundleReport:
    """Verifies a bundle offline against `public_key_hex` (the gateway's, from GET /harbor/ledger/v1/authority) when
    given, else against the key embedded in the manifest. Never raises for a bad bundle: every finding is a problem."""
    report = AuditBundleReport(key_source="embedded" if public_key_hex is None else "given")
    problems = report.problems
    try:
        with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
            entries = {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        problems.append(f"not a readable ZIP ({error})")
        return report
    if MANIFEST_PATH not in entries:
        problems.append(f"no {MANIFEST_PATH} in the bundle")
        return report
    try:
        manifest = json.loads(entries[MANIFEST_PATH].decode("utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
    except ValueError as error:
        problems.append(f"{MANIFEST_PATH} is not a JSON object ({error})")
        return report
    if public_key_hex is not None and not _HEX64.match(public_key_hex):
        problems.append("the given public key is not 64 lowercase hex digits")
        return report
    report.signing_public_key_hex = _verify_manifest(manifest, public_key_hex, problems)
    report.tenant_id = manifest.get("tenant_realm_id") if isinstance(manifest.get("tenant_realm_id"), str) else None
    report.job_id = manifest.get("job_id") if isinstance(manifest.get("job_id"), str) else None
    listed = _check_files(manifest, entries, problems)
    report.files = len(listed)
    rows, checkpoint_seq, paid_to_payee = _check_ledger(entries, report.tenant_id, report.signing_public_key_hex or public_key_hex, problems)
    report.ledger_rows, report.checkpoint_ledger_seq = rows, checkpoint_seq
    _check_intent_outcomes(entries, paid_to_payee, problems)
    manifest_seq = manifest.get("checkpoint_last_ledger_seq") if isinstance(manifest.get("checkpoint_last_ledger_seq"), int) else 0
    if checkpoint_seq is not None and checkpoint_seq != manifest_seq:
        problems.append(f"manifest checkpoint_last_ledger_seq is {manifest_seq}, the checkpoint names {checkpoint_seq}")
    report.ok = not problems
    return report


def _check_files(manifest: dict[str, Any], entries: dict[str, bytes], problems: list[str]) -> set[str]:
    """Every listed file is present with its digest and size; nothing else is in the ZIP."""
    listed: set[str] = set()
    artifacts = manifest.get("artifacts")
    if not isinstance(artifacts, list):
        problems.append("manifest artifacts is not a list")
        artifacts = []
    for artifact in artifacts:
        artifact = artifact if isinstance(artifact, dict) else {}
        path = artifact.get("path")
        if not isinstance(path, str) or path == MANIFEST_PATH or path in listed:
            problems.append(f"manifest lists an invalid or repeated path {path!r}")
            continue
        listed.add(path)
        if path not in entries:
            problems.append(f"{path}: listed in the manifest but missing from the bundle")
            continue
        if len(entries[path]) != artifact.get("size_bytes"):
            problems.append(f"{path}: {len(entries[path])} bytes, the manifest says {artifact.get('size_bytes')}")
        if sha256(entries[path]).hex() != artifact.get("sha256_hex"):
            problems.append(f"{path}: SHA-256 does not match the manifest")
    for path in entries:
        if path != MANIFEST_PATH and path not in listed:
            problems.append(f"{path}: in the bundle but not listed in the manifest")
    return listed


def _is_payee_account(account: Any) -> bool:
    return isinstance(account, str) and account.startswith("payee:") and account.endswith(":payable")


def _check_intent_outcomes(entries: dict[str, bytes], paid_to_payee: dict[str, int] | None, problems: list[str]) -> None:
    """The outcome each line of intents.jsonl states, against the bundle's ledger: a settled intent's parts
    (`released_cents`, `refunded_cents`) add up to its amount, and what the ledger's rows of the intent paid its payee
    is its `released_cents` (0 before it settles). `paid_to_payee` is None when the ledger could not be read to its
    end. Lines of bundles made before the fields existed have no `released_cents`: unchecked."""
    if INTENTS_PATH not in entries:
        return
    lines = [line for line in entries[INTENTS_PATH].decode("utf-8", "replace").split("\n") if line != ""]
    for number, text in enumerate(lines, start=1):
        where = f"{INTENTS_PATH} line {number}"
        try:
            line = json.loads(text)
            if not isinstance(line, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            problems.append(f"{where}: unreadable line ({error})")
            continue
        if "released_cents" not in line:
            continue
        amount, released, refunded = line.get("amount_cents"), line.get("released_cents"), line.get("refunded_cents")
        settled = all(isinstance(part, int) and not isinstance(part, bool) for part in (released, refunded))
        if not settled and not (released is None and refunded is None):
            problems.append(f"{where}: released_cents and refunded_cents are not both integers or both null")
            continue
        if settled and released + refunded != amount:
            problems.append(f"{where}: released_cents {released} and refunded_cents {refunded} do not add up to amount_cents {amount}")
        if paid_to_payee is not None:
            paid = paid_to_payee.get(str(line.get("intent_id")), 0)
            if paid != (released or 0):
                problems.append(f"{where}: {LEDGER_PATH} paid the payee {paid}, the intent records released_cents {'null' if released is None else released}")


def _check_ledger(entries: dict[str, bytes], tenant_id: str | None, signing_key_hex: str | None, problems: list[str]) -> tuple[int, int | None, dict[str, int] | None]:
    """ledger.jsonl from genesis (sequence, links, hashes, each body against its columns), then the checkpoint. Also
    answers what the rows paid each intent's payee (None when a row could not be read)."""
    if LEDGER_PATH not in entries or CHECKPOINT_PATH not in entries:
        problems.append(f"the bundle needs {LEDGER_PATH} and {CHECKPOINT_PATH}")
        return 0, None, None
    last_seq, last_hash, rows = 0, LEDGER_GENESIS_ROW_HASH, 0
    paid_to_payee: dict[str, int] = {}
    lines = [line for line in entries[LEDGER_PATH].decode("utf-8", "replace").split("\n") if line != ""]
    for number, text in enumerate(lines, start=1):
        where = f"{LEDGER_PATH} line {number}"
        try:
            line = json.loads(text)
            body, previous = bytes.fromhex(line["body_hex"]), bytes.fromhex(line["prev_row_hash_hex"])
            rows += 1
            if line["ledger_seq"] != last_seq + 1:
                problems.append(f"{where}: ledger_seq {line['ledger_seq']}, expected {last_seq + 1}")
            if previous != last_hash:
                problems.append(f"{where}: prev_row_hash is not {'the genesis hash' if last_seq == 0 else f'the row_hash of row {last_seq}'}")
            if sha256(previous + body).hex() != line["row_hash_hex"]:
                problems.append(f"{where}: row_hash is not SHA-256(prev_row_hash ‖ body)")
            if encode_ledger_row_body(tenant_id or "", line) != body:
                problems.append(f"{where}: body_hex does not match the row's columns and the manifest's tenant")
            last_seq, last_hash = line["ledger_seq"], bytes.fromhex(line["row_hash_hex"])
            if line["side"] == "debit" and _is_payee_account(line["account"]):
                paid_to_payee[line["intent_id"]] = paid_to_payee.get(line["intent_id"], 0) + line["amount_cents"]
        except Exception as error:  # noqa: BLE001 - an unreadable row ends the walk with a finding
            problems.append(f"{where}: unreadable row ({error})")
            return rows, None, None
    try:
        checkpoint = json.loads(entries[CHECKPOINT_PATH].decode("utf-8"))
        if not isinstance(checkpoint, dict):
            raise ValueError("not a JSON object")
    except ValueError as error:
        problems.append(f"{CHECKPOINT_PATH} is not JSON ({error})")
        return rows, None, paid_to_payee
    signed = {name: checkpoint.get(name) for name in ("tenant_id", "ledger_seq", "row_hash_hex", "issued_at")}
    digest = sha256(compact_json(signed).encode("utf-8"))
    if digest.hex() != checkpoint.get("message_digest_sha256_hex"):
        problems.append("checkpoint: message_digest_sha256_hex does not match its fields")
    key_hex, signature_hex = checkpoint.get("signing_public_key_ed25519_hex"), checkpoint.get("ed25519_signature_hex")
    if signing_key_hex is not None and key_hex != signing_key_hex:
        problems.append("checkpoint: signed by another key than the manifest")
    if not (isinstance(key_hex, str) and _HEX64.match(key_hex) and isinstance(signature_hex, str) and _HEX128.match(signature_hex)):
        problems.append("checkpoint: signing_public_key_ed25519_hex is not an Ed25519 public key")
    elif not verify_ed25519(bytes.fromhex(key_hex), digest, bytes.fromhex(signature_hex)):
        problems.append("checkpoint: Ed25519 signature does not verify")
    if checkpoint.get("tenant_id") != tenant_id:
        problems.append(f"checkpoint: tenant {checkpoint.get('tenant_id')}, the manifest names {tenant_id}")
    if checkpoint.get("ledger_seq") != last_seq or checkpoint.get("row_hash_hex") != last_hash.hex():
        problems.append(f"checkpoint names seq {checkpoint.get('ledger_seq')} ({checkpoint.get('row_hash_hex')}), {LEDGER_PATH} ends at seq {last_seq} ({last_hash.hex()})")
    return rows, (checkpoint.get("ledger_seq") if isinstance(checkpoint.get("ledger_seq"), int) else None), paid_to_payee
