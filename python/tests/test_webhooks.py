# verify_webhook (docs/events.md#signatures) against Standard Webhooks as the test computes it by hand (hmac, hashlib
# and PyNaCl here, nothing of the SDK's signing): `v1,` is base64 HMAC-SHA256 of `id.timestamp.body` keyed by the
# base64-decoded secret after `whsec_`; `v1a,` is base64 Ed25519 of the same bytes. And against a delivery signed by
# the server's own code (src/signing/webhook-signature.ts), committed as a fixed vector.
from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from nacl.signing import SigningKey

from svc_settlement.webhooks import DEFAULT_TOLERANCE_SECONDS, WebhookVerificationError, sign_webhook, verify_webhook

KEY_BYTES = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY_BYTES).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(bytes(range(100, 132))).decode()
EVENT = {
    "object": "event",
    "id": "evt_0123456789abcdef0123456789abcdef",
    "type": "intent.released",
    "created_at": "2026-12-02T12:00:00.000Z",
    "data": {"object": {"object": "intent", "intent_id": "7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401", "state": "released", "note": "é ✓"}},
    "ledger_transaction_id": "ltx_1",
    "receipt_ids": ["rcpt_1"],
}
BODY = json.dumps(EVENT, separators=(",", ":"), ensure_ascii=False)
NOW = 1_800_000_000


def hmac_signature(key: bytes, message_id: str, timestamp: int | str, body: str) -> str:
    """The standard's `v1,` signature, by hand."""
    content = f"{message_id}.{timestamp}.{body}".encode("utf-8")
    return "v1," + base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode("ascii")


def delivery(key: bytes = KEY_BYTES, message_id: str = EVENT["id"], timestamp: int = NOW, body: str = BODY) -> dict[str, str]:
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": hmac_signature(key, message_id, timestamp, body)}


def refused(headers, body=BODY, secret=SECRET, now=NOW, **options):
    with pytest.raises(WebhookVerificationError) as raised:
        verify_webhook(secret=secret, headers=headers, body=body, now=now, **options)
    return str(raised.value)


def test_a_valid_v1_signature_is_accepted_and_answers_the_event():
    assert verify_webhook(secret=SECRET, headers=delivery(), body=BODY, now=NOW) == EVENT
    # The raw body as bytes, header names in any case, a header given as a list (as some frameworks hand them).
    headers = {"Webhook-Id": EVENT["id"], "WEBHOOK-TIMESTAMP": [str(NOW)], "webhook-signature": delivery()["webhook-signature"]}
    assert verify_webhook(secret=SECRET, headers=headers, body=BODY.encode("utf-8"), now=NOW) == EVENT
    # The SDK's own signer writes the same signature as the hand-made one.
    assert sign_webhook(SECRET, EVENT["id"], NOW, BODY) == hmac_signature(KEY_BYTES, EVENT["id"], NOW, BODY)


def test_a_tampered_body_timestamp_id_or_signature_is_refused():
    headers = delivery()
    assert "no signature" in refused(headers, body=BODY.replace("released", "refunded"))
    assert "no signature" in refused(headers, body=BODY + " ")
    assert "no signature" in refused({**headers, "webhook-timestamp": str(NOW - 1)})
    assert "no signature" in refused({**headers, "webhook-id": "evt_ffffffffffffffffffffffffffffffff"})
    signature = headers["webhook-signature"]
    flipped = signature[:-3] + ("A" if signature[-3] != "A" else "B") + signature[-2:]
    assert "no signature" in refused({**headers, "webhook-signature": flipped})
    # The digest under another scheme's label, or bare, is not a v1 signature.
    assert "no signature" in refused({**headers, "webhook-signature": "v2," + signature[3:]})
    assert "no signature" in refused({**headers, "webhook-signature": signature[3:]})
    # Another endpoint's secret.
    assert "no signature" in refused(delivery(key=base64.b64decode(OTHER_SECRET[6:])))


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused(missing):
    headers = {name: value for name, value in delivery().items() if name != missing}
    assert "required" in refused(headers)


@pytest.mark.parametrize("timestamp", ["", "-5", "1.5", "1e9", " 1800000000", "\u0661\u0662", "\u00b2", "1" * 13])
def test_a_timestamp_that_is_not_unix_seconds_is_refused(timestamp):
    headers = {**delivery(), "webhook-timestamp": timestamp}
    message = refused(headers)
    assert "Unix seconds" in message or "required" in message


def test_a_timestamp_outside_the_tolerance_is_refused_either_way():
    assert DEFAULT_TOLERANCE_SECONDS == 300
    for skew in (-DEFAULT_TOLERANCE_SECONDS, DEFAULT_TOLERANCE_SECONDS):
        timestamp = NOW + skew
        assert verify_webhook(secret=SECRET, headers=delivery(timestamp=timestamp), body=BODY, now=NOW) == EVENT
    for skew in (-DEFAULT_TOLERANCE_SECONDS - 1, DEFAULT_TOLERANCE_SECONDS + 1, -86_400):
        assert "from now" in refused(delivery(timestamp=NOW + skew))
    # A replay an hour later, signature intact, is refused under the default tolerance, accepted under a wider one.
    replayed = delivery(timestamp=NOW - 3_600)
    assert "from now" in refused(replayed)
    assert verify_webhook(secret=SECRET, headers=replayed, body=BODY, now=NOW, tolerance_seconds=7_200) == EVENT
    # The wall clock by default: a delivery signed in 2001 is stale.
    assert "from now" in refused(delivery(timestamp=1_000_000_000), now=None)


def test_during_a_rotation_two_signatures_one_matching_is_accepted():
    old_key = base64.b64decode(OTHER_SECRET[6:])
    both = " ".join([hmac_signature(KEY_BYTES, EVENT["id"], NOW, BODY), hmac_signature(old_key, EVENT["id"], NOW, BODY)])
    headers = {**delivery(), "webhook-signature": both}
    # A receiver still on the old secret, one already on the new, one holding both.
    assert verify_webhook(secret=OTHER_SECRET, headers=headers, body=BODY, now=NOW) == EVENT
    assert verify_webhook(secret=SECRET, headers=headers, body=BODY, now=NOW) == EVENT
    assert verify_webhook(secret=[OTHER_SECRET, SECRET], headers=headers, body=BODY, now=NOW) == EVENT
    # A receiver holding both, given a delivery signed by one of them alone (after the overlap).
    assert verify_webhook(secret=[OTHER_SECRET, SECRET], headers=delivery(), body=BODY, now=NOW) == EVENT
    # Neither secret matching: refused, however many signatures.
    third = "whsec_" + base64.b64encode(b"\x07" * 32).decode()
    assert "no signature" in refused(headers, secret=third)
    assert "no signature" in refused(headers, secret=[third])
    assert "no signature" in refused(headers, secret=[])
    # Extra spaces between signatures are tolerated.
    assert verify_webhook(secret=OTHER_SECRET, headers={**headers, "webhook-signature": both.replace(" ", "   ") + " "}, body=BODY, now=NOW) == EVENT


def test_the_secret_is_the_base64_after_whsec():
    headers = delivery()
    # The prefix is optional: the bare base64 is the same secret.
    assert verify_webhook(secret=SECRET[len("whsec_"):], headers=headers, body=BODY, now=NOW) == EVENT
    # The key is the decoded bytes, never the secret's text: a signature keyed by the text is refused.
    keyed_by_text = delivery(key=SECRET.encode("ascii"))
    assert "no signature" in refused(keyed_by_text)
    keyed_by_base64_text = delivery(key=SECRET[len("whsec_"):].encode("ascii"))
    assert "no signature" in refused(keyed_by_base64_text)
    # A secret that is not base64 is an error of its own, not a silent mismatch.
    for broken in ("whsec_not base64!", "whsec_%%%%", "whsec_AAA", "whsec_", ""):
        assert "not whsec_ followed by base64" in refused(headers, secret=broken)


def test_a_v1a_ed25519_signature_by_a_key_of_the_jwks_is_accepted():
    gateway = SigningKey(bytes(range(200, 232)))
    public_key = bytes(gateway.verify_key)
    content = f"{EVENT['id']}.{NOW}.{BODY}".encode("utf-8")
    v1a = "v1a," + base64.b64encode(gateway.sign(content).signature).decode("ascii")
    unknown_hmac = hmac_signature(b"\x01" * 32, EVENT["id"], NOW, BODY)
    headers = {**delivery(), "webhook-signature": f"{unknown_hmac} {v1a}"}
    assert verify_webhook(secret=SECRET, headers=headers, body=BODY, now=NOW, ed25519_keys=[public_key]) == EVENT
    # Without the gateway's keys the v1a signature is not considered.
    assert "no signature" in refused(headers)
    # Another key, a tampered body, a signature under the v1 label, a signature that is not base64: refused.
    other = bytes(SigningKey(b"\x05" * 32).verify_key)
    assert "no signature" in refused(headers, ed25519_keys=[other])
    assert "no signature" in refused(headers, body=BODY.replace("released", "refunded"), ed25519_keys=[public_key])
    assert "no signature" in refused({**headers, "webhook-signature": "v1," + v1a[4:]}, ed25519_keys=[public_key])
    assert "no signature" in refused({**headers, "webhook-signature": "v1a,@@@"}, ed25519_keys=[public_key])
    # The timestamp is checked first, whichever signature would match.
    assert "from now" in refused(headers, now=NOW + 3_600, ed25519_keys=[public_key])


# A delivery signed by the server's code: webhookHeaders of src/signing/webhook-signature.ts with the secrets
# [SECRET, OTHER_SECRET] and the gateway signer ed25519SignerFromSeed(bytes 200..231) of src/signing/ed25519.ts,
# printed once by `node --import tsx` and pasted here.
SERVER_ID = "evt_0123456789abcdef0123456789abcdef"
SERVER_TIMESTAMP = 1_800_000_000
SERVER_BODY = (
    '{"object":"event","id":"evt_0123456789abcdef0123456789abcdef","type":"intent.released","created_at":"2026-12-02T12:00:00.000Z",'
    '"data":{"object":{"object":"intent","intent_id":"7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401","state":"released","note":"\u00e9 \u2713"}},'
    '"ledger_transaction_id":"ltx_1","receipt_ids":["rcpt_1"]}'
)
SERVER_SIGNATURE = (
    "v1,02ytdogcT0uciX0TeVg79Y6lKN3skIoaZOJTm/NMDNs= v1,7nh4Lj45W6Yu83jnKRPE5yzfavoQANfSj3/Lyn5g4lA= "
    "v1a,U7hIC3VZBhHSN5uuZO9LWqps33qkLj8ed3O3urT8Upr46CiuaxbVRCieYR1kWdx+pQwxguaMOpfFASqAFgCcBA=="
)


def test_a_delivery_signed_by_the_server_code_verifies():
    assert SERVER_BODY == BODY
    headers = {"webhook-id": SERVER_ID, "webhook-timestamp": str(SERVER_TIMESTAMP), "webhook-signature": SERVER_SIGNATURE}
    first, second, v1a = SERVER_SIGNATURE.split(" ")
    # The server's signatures are the hand-made ones, byte for byte.
    assert first == hmac_signature(KEY_BYTES, SERVER_ID, SERVER_TIMESTAMP, SERVER_BODY)
    assert second == hmac_signature(base64.b64decode(OTHER_SECRET[6:]), SERVER_ID, SERVER_TIMESTAMP, SERVER_BODY)
    gateway = SigningKey(bytes(range(200, 232)))
    expected_v1a = gateway.sign(f"{SERVER_ID}.{SERVER_TIMESTAMP}.{SERVER_BODY}".encode("utf-8")).signature
    assert v1a == "v1a," + base64.b64encode(expected_v1a).decode("ascii")
    # And the SDK accepts the delivery by either secret, or by the gateway key alone.
    for secret in (SECRET, OTHER_SECRET):
        assert verify_webhook(secret=secret, headers=headers, body=SERVER_BODY, now=SERVER_TIMESTAMP) == EVENT
    lone_v1a = {**headers, "webhook-signature": v1a}
    assert verify_webhook(secret=SECRET, headers=lone_v1a, body=SERVER_BODY, now=SERVER_TIMESTAMP, ed25519_keys=[bytes(gateway.verify_key)]) == EVENT
