# The digests signed structures commit to: BLAKE3-256 over canonical JSON, the allowed-tools and artifacts digests,
# and SHA-256 for proofs, request bodies and the ledger chain. BLAKE3 comes from the `blake3` package when it is
# installed, else from the pure-Python module (same bytes, slower).
from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

from ._blake3 import blake3 as _pure_blake3
from .bincode import value_invalid
from .canonical_json import canonical_json

DIGEST_BYTE_LENGTH = 32
# The service's limit on one allowed tool name, held after trimming and lowercasing ("İ" lowercases to two
# characters), in code points as Python's len counts them.
ALLOWED_TOOL_LENGTH_MAX = 128
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# What JavaScript's String.prototype.trim removes (WhiteSpace and LineTerminator); Python's str.strip() would also
# remove U+001C-U+001F and U+0085 and keep U+FEFF, which would change the digest.
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _blake3_backend() -> tuple[Callable[[bytes], bytes], str]:
    try:
        import blake3 as blake3_package  # type: ignore[import-not-found]
    except ImportError:
        return _pure_blake3, "svc_settlement._blake3"
    return (lambda data: blake3_package.blake3(data).digest()), "blake3"


blake3_digest, BLAKE3_BACKEND = _blake3_backend()


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def canonical_json_bytes(value: Any, field: str = "value") -> bytes:
    try:
        return canonical_json(value).encode("utf-8", "surrogatepass")
    except Exception as error:  # noqa: BLE001 - any refusal of the serializer is a refusal of this field
        raise value_invalid(field, str(error)) from None


def json_digest_blake3(value: Any, field: str = "value") -> bytes:
    """`budget_digest`, `evidence_schema_digest`, `predicate_dsl_digest`, payload digests."""
    return blake3_digest(canonical_json_bytes(value, field))


def normalized_allowed_tools(tools: Any, field: str = "allowed_tools") -> list[str]:
    """Each name trimmed and lowercased (then at most ALLOWED_TOOL_LENGTH_MAX characters), duplicates removed, sorted
    by UTF-16 code units (JavaScript's sort)."""
    if not isinstance(tools, (list, tuple)):
        raise value_invalid(field, "must be a list of strings")
    names = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, str):
            raise value_invalid(f"{field}[{index}]", "must be a string")
        name = tool.strip(_JS_WHITESPACE).lower()
        if name == "":
            raise value_invalid(f"{field}[{index}]", "must not be empty")
        if len(name) > ALLOWED_TOOL_LENGTH_MAX:
            raise value_invalid(
                f"{field}[{index}]", f"must not be longer than {ALLOWED_TOOL_LENGTH_MAX} characters once trimmed and lowercased"
            )
        names.append(name)
    return sorted(set(names), key=lambda name: name.encode("utf-16-be", "surrogatepass"))


def allowed_tools_digest(tools: Any, field: str = "allowed_tools") -> bytes:
    return json_digest_blake3(normalized_allowed_tools(tools, field), field)


def artifacts_digest(artifacts: Any, field: str = "artifacts") -> bytes:
    """BLAKE3 of the artifact hashes (32 bytes each, lowercase hex or bytes) concatenated in list order."""
    if not isinstance(artifacts, (list, tuple)):
        raise value_invalid(field, "must be a list of 32-byte hashes")
    joined = bytearray()
    for index, artifact in enumerate(artifacts):
        if isinstance(artifact, (bytes, bytearray)):
            if len(artifact) != DIGEST_BYTE_LENGTH:
                raise value_invalid(f"{field}[{index}]", "must be exactly 32 bytes")
            joined += artifact
        elif isinstance(artifact, str) and _HEX64.match(artifact):
            joined += bytes.fromhex(artifact)
        else:
            raise value_invalid(f"{field}[{index}]", "must be 64 lowercase hex digits")
    return blake3_digest(bytes(joined))
