# Client-side ledger verification: the row body (format_version 2, bincode 2), the per-tenant hash chain
# row_hash = SHA-256(prev_row_hash ‖ body) from 32 zero bytes, and the gateway-signed tip checkpoint.
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import bincode as t
from .canonical_json import compact_json
from .digests import sha256
from .keys import verify_ed25519

LEDGER_ROW_FORMAT_VERSION = 2
LEDGER_GENESIS_ROW_HASH = bytes(32)
LEDGER_SIDES = {"debit": 0, "credit": 1}
LEDGER_ROW_BODY_LAYOUT = t.struct_of([
    ("format_version", t.U8),
    ("tenant_id", t.STRING),
    ("ledger_seq", t.U64),
    ("transaction_id", t.UUID),
    ("intent_id", t.UUID),
    ("entry_index", t.U32),
    ("account", t.STRING),
    ("side", t.U8),
    ("amount_cents", t.I64),
    ("currency", t.STRING),
    ("event_kind", t.STRING),
    ("recorded_at", t.STRING),
])
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX128 = re.compile(r"^[0-9a-f]{128}$")
_EVEN_HEX = re.compile(r"^(?:[0-9a-f]{2})+$")


def encode_ledger_row_body(tenant_id: str, event: dict[str, Any]) -> bytes:
    """The bytes of LedgerRowBodyV2 for an event of `GET /harbor/ledger/v1/events`."""
    return t.encode_bincode(
        LEDGER_ROW_BODY_LAYOUT,
        {
            "format_version": LEDGER_ROW_FORMAT_VERSION,
            "tenant_id": tenant_id,
            "ledger_seq": event["ledger_seq"],
            "transaction_id": event["transaction_id"],
            "intent_id": event["intent_id"],
            "entry_index": event["entry_index"],
            "account": event["account"],
            "side": LEDGER_SIDES[event["side"]],
            "amount_cents": event["amount_cents"],
            "currency": event["currency"],
            "event_kind": event["event_kind"],
            "recorded_at": event["recorded_at"],
        },
    )


def verify_ledger_checkpoint(checkpoint: dict[str, Any], trusted_public_keys_hex: list[str]) -> list[str]:
    """The digest of the checkpoint's four signed fields, then Ed25519 over it with one of the trusted keys (never
    the key the checkpoint names by itself). Answers the problems found (empty when valid)."""
    signed = {key: checkpoint.get(key) for key in ("tenant_id", "ledger_seq", "row_hash_hex", "issued_at")}
    digest = sha256(compact_json(signed).encode("utf-8"))
    if digest.hex() != checkpoint.get("message_digest_sha256_hex"):
        return ["checkpoint: the digest does not match its fields"]
    signature_hex = checkpoint.get("ed25519_signature_hex")
    if not isinstance(signature_hex, str) or not _HEX128.match(signature_hex):
        return ["checkpoint: the signature is not 64 bytes of hex"]
    signature = bytes.fromhex(signature_hex)
    valid = any(_HEX64.match(key) and verify_ed25519(bytes.fromhex(key), digest, signature) for key in trusted_public_keys_hex)
    return [] if valid else ["checkpoint: the signature does not verify with any trusted key"]


@dataclass
class ChainWalk:
    """Running state of the walk over the events, from genesis."""

    tenant_id: str
    checkpoint_seq: int
    previous_hash_hex: str = LEDGER_GENESIS_ROW_HASH.hex()
    last_seq: int = 0
    rows: int = 0
    transactions: int = 0
    hash_at_checkpoint: str | None = None
    balances: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _open: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.checkpoint_seq == 0:
            self.hash_at_checkpoint = self.previous_hash_hex

    def add(self, event: dict[str, Any]) -> None:
        seq = event.get("ledger_seq")
        if seq != self.last_seq + 1:
            self.problems.append(f"row {seq}: expected ledger_seq {self.last_seq + 1}")
        row_hash_hex = self._check_row(event)
        # Continue from the stored hash, as the server's verifier does, so one broken link is reported once.
        self.previous_hash_hex = event.get("row_hash_hex", "")
        self.last_seq = seq if isinstance(seq, int) else self.last_seq
        self.rows += 1
        if seq == self.checkpoint_seq:
            self.hash_at_checkpoint = row_hash_hex
        amount = event.get("amount_cents") if isinstance(event.get("amount_cents"), int) else 0
        signed_amount = amount if event.get("side") == "debit" else -amount
        account = event.get("account", "")
        self.balances[account] = self.balances.get(account, 0) + signed_amount
        if self._open is None or self._open["id"] != event.get("transaction_id"):
            self._close_transaction(event.get("transaction_id"))
        assert self._open is not None
        self._open["entries"] += 1
        self._open["debits" if event.get("side") == "debit" else "credits"] += amount

    def finish(self) -> None:
        self._close_transaction(None)
        total = sum(self.balances.values())
        if total != 0:
            self.problems.append(f"balances sum to {total}, not 0")

    def _check_row(self, event: dict[str, Any]) -> str:
        seq = event.get("ledger_seq")
        row_hash_hex, body_hex = event.get("row_hash_hex"), event.get("body_hex")
        if not (isinstance(row_hash_hex, str) and _HEX64.match(row_hash_hex) and isinstance(body_hex, str) and _EVEN_HEX.match(body_hex)):
            self.problems.append(f"row {seq}: hashes or body are not lowercase hex")
            return ""
        if event.get("prev_row_hash_hex") != self.previous_hash_hex:
            self.problems.append(f"row {seq}: prev_row_hash does not link to the previous row")
        try:
            if encode_ledger_row_body(self.tenant_id, event).hex() != body_hex:
                self.problems.append(f"row {seq}: body does not match the row's fields")
        except Exception as error:  # noqa: BLE001 - any unencodable field is a problem to report, not a crash
            self.problems.append(f"row {seq}: fields cannot be encoded ({error})")
        recomputed = sha256(bytes.fromhex(self.previous_hash_hex) + bytes.fromhex(body_hex)).hex() if _HEX64.match(self.previous_hash_hex) else ""
        if recomputed != row_hash_hex:
            self.problems.append(f"row {seq}: row_hash is not SHA-256(prev_row_hash ‖ body)")
        return recomputed

    def _close_transaction(self, next_id: str | None) -> None:
        if self._open is not None:
            self.transactions += 1
            if self._open["entries"] < 2:
                self.problems.append(f"transaction {self._open['id']} has {self._open['entries']} entry")
            if self._open["debits"] != self._open["credits"]:
                self.problems.append(f"transaction {self._open['id']} is unbalanced: debits {self._open['debits']}, credits {self._open['credits']}")
        self._open = None if next_id is None else {"id": next_id, "debits": 0, "credits": 0, "entries": 0}
