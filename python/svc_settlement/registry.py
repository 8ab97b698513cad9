# Key-registry flows (/v1/registry/keys). Live tenants need the principal's key registered for its DID, and every
# agent key registered under its recognition-proof key_id.
from __future__ import annotations

import re
from typing import Any

from .core import ClientCore
from .errors import SvcArgumentError
from .keys import SvcSigningKey
from .transport import Flow

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_REGISTERED_KEY_ID = re.compile(r"^rkey_[0-9a-f]{32}$")


def register_flow(core: ClientCore, kind: str, subject: str, public_key: SvcSigningKey | str) -> Flow[dict[str, Any]]:
    """Registers a public key (admin or operator). Not retried on 5xx: list the keys before trying again."""
    public_key_hex = public_key.public_key_hex if isinstance(public_key, SvcSigningKey) else public_key
    if not isinstance(public_key_hex, str) or not _HEX64.match(public_key_hex):
        raise SvcArgumentError("public_key is 64 lowercase hex digits (32 bytes).")
    body, _ = yield from core.post("/v1/registry/keys", {"kind": kind, "subject": subject, "public_key_ed25519_hex": public_key_hex}, False)
    return body


def list_keys_flow(core: ClientCore, kind: str | None = None, subject: str | None = None, limit: int | None = None, cursor: str | None = None) -> Flow[dict[str, Any]]:
    body, _ = yield from core.get("/v1/registry/keys", {"kind": kind, "subject": subject, "limit": limit, "cursor": cursor})
    return body


def revoke_flow(core: ClientCore, registered_key_id: str) -> Flow[dict[str, Any]]:
    """Revokes a registered key by its `rkey_…` id; revoking twice answers the same key."""
    if not isinstance(registered_key_id, str) or not _REGISTERED_KEY_ID.match(registered_key_id):
        raise SvcArgumentError("A registered key id is rkey_ and 32 hex digits.")
    body, _ = yield from core.delete(f"/v1/registry/keys/{registered_key_id}")
    return body
