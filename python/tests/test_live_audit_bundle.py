# An audit bundle built by the real server, downloaded and verified offline by the Python SDK (manifest signature
# over its canonical bytes, file digests, the ledger chain, the checkpoint); tampered copies are refused.
from __future__ import annotations

import datetime
import io
import json
import zipfile

import pytest

from svc_settlement import PayeeParty, SigningParty, SvcClient, generate_key, sandbox_credential, verify_audit_bundle


@pytest.fixture(scope="module")
def bundle(live_server):
    with SvcClient.open(live_server["sandbox_key"], gateway_base_url=live_server["base_url"]) as client:
        principal, payee = SigningParty("did:p:audit", generate_key()[1]), SigningParty("did:q:audit", generate_key()[1])
        intent = client.intents.create(
            principal=principal, payee=PayeeParty(payee.did, payee.key), amount_cents=200,
            deadline=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1), settlement_rail="x402_usdc_base",
            allowed_tools=["t"], predicate={"version": 1, "root": {"op": "completion", "path": ["status"], "value": "completed"}},
        )
        client.intents.fund(intent["intent_id"], sandbox_credential())
        job = client.audit_exports.create(disclosure_tier="standard")
        zip_bytes = client.audit_exports.download(job)
        authority = client.ledger.authority()
        return zip_bytes, authority["public_key_hex"], client.tenant_id, job["job_id"]


def rezip(zip_bytes: bytes, change) -> bytes:
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    change(entries)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_server_bundle_verifies_against_the_gateway_key(bundle):
    zip_bytes, gateway_key, tenant_id, job_id = bundle
    report = verify_audit_bundle(zip_bytes, gateway_key)
    assert report.problems == [] and report.ok
    assert (report.tenant_id, report.job_id, report.key_source, report.signing_public_key_hex) == (tenant_id, job_id, "given", gateway_key)
    # intents, ledger, checkpoint, and the transparency log's tree head and leaves.
    assert report.files == 5 and report.ledger_rows >= 2 and report.checkpoint_ledger_seq == report.ledger_rows
    assert verify_audit_bundle(zip_bytes).ok


def test_another_key_is_refused(bundle):
    report = verify_audit_bundle(bundle[0], generate_key()[1].public_key_hex)
    assert not report.ok
    assert report.problems[0] == "manifest signature: artifact.key_untrusted (signing_public_key_ed25519_hex)"
    assert "checkpoint: signed by another key than the manifest" in report.problems


def test_a_changed_ledger_row_is_found(bundle):
    def change(entries):
        lines = entries["ledger.jsonl"].decode().splitlines()
        row = json.loads(lines[0])
        row["amount_cents"] += 1
        lines[0] = json.dumps(row)
        entries["ledger.jsonl"] = ("\n".join(lines) + "\n").encode()

    report = verify_audit_bundle(rezip(bundle[0], change), bundle[1])
    assert not report.ok
    assert any("ledger.jsonl: SHA-256 does not match" in problem for problem in report.problems)
    assert any("body_hex does not match" in problem for problem in report.problems)


def test_a_changed_manifest_field_breaks_its_signature(bundle):
    def change(entries):
        manifest = json.loads(entries["manifest.json"])
        manifest["disclosure_tier"] = "extended"
        entries["manifest.json"] = json.dumps(manifest).encode()

    report = verify_audit_bundle(rezip(bundle[0], change), bundle[1])
    assert report.problems == ["manifest signature: artifact.signature_invalid (signed_payload_sha256_hex: digest does not match the signed fields)"]


def test_an_unlisted_file_and_garbage_are_reported(bundle):
    report = verify_audit_bundle(rezip(bundle[0], lambda entries: entries.update({"extra.txt": b"x"})), bundle[1])
    assert report.problems == ["extra.txt: in the bundle but not listed in the manifest"]
    assert verify_audit_bundle(b"not a zip").problems[0].startswith("not a readable ZIP")


def test_an_intent_line_whose_parts_disagree_with_the_ledger_is_found(bundle):
    def change(entries):
        lines = entries["intents.jsonl"].decode().splitlines()
        number = next(index for index, line in enumerate(lines) if json.loads(line)["released_cents"] is None)
        intent = json.loads(lines[number])
        # An unsettled intent said to have paid its payee everything: the ledger paid it nothing.
        intent["released_cents"], intent["refunded_cents"] = intent["amount_cents"], 0
        lines[number] = json.dumps(intent)
        entries["intents.jsonl"] = ("\n".join(lines) + "\n").encode()
        changed.append((number + 1, intent["amount_cents"]))

    changed: list[tuple[int, int]] = []
    report = verify_audit_bundle(rezip(bundle[0], change), bundle[1])
    line, amount = changed[0]
    assert not report.ok
    assert f"intents.jsonl line {line}: ledger.jsonl paid the payee 0, the intent records released_cents {amount}" in report.problems
