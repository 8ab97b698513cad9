# Signs and verifies `ed25519-sha256-json-v1` artifacts (receipts, mandates, recognition proofs, audit manifests)
# from the field-order table in artifact_kinds.py: canonical bytes = compact JSON in the kind's order, digest =
# SHA-256 of them, signature = Ed25519 over the digest. Byte-identical to the service's signing core.
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from .artifact_kinds import ARTIFACT_KINDS, ARTIFACT_SIGNATURE_ALGORITHM
from .canonical_json import JSON_NESTING_DEPTH_MAX, format_js_number, quote_json_string
from .digests import sha256
from .errors import SvcError
from .keys import SvcSigningKey, verify_ed25519
from .rfc3339 import normalize_rfc3339

_KINDS = {kind["kind"]: kind for kind in ARTIFACT_KINDS}
_KNOWN_SCHEMA_VERSIONS = {version for kind in ARTIFACT_KINDS for version in kind["schemaVersions"]}
_MATERIAL_FIELDS = ("signing_public_key_ed25519_hex", "ed25519_signature_hex")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX128 = re.compile(r"^[0-9a-f]{128}$")
_CANONICAL_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_SECONDS_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_FORMAT_PATTERNS = {
    "scope_token": re.compile(r"^[a-z0-9][a-z0-9._:/-]{0,127}$"),
    "tenant_id": re.compile(r"^[a-z0-9][a-z0-9._-]{0,255}$"),
    "hex64": _HEX64,
    "currency_mandate": re.compile(r"^[a-z0-9_]{3,16}$"),
    "currency_iso": re.compile(r"^[a-z]{3}$"),
}
# Go's HTML-safe escapes, for the kinds whose reference signer is written in Go.
_HTML_ESCAPES = {"&": "\\u0026", "<": "\\u003c", ">": "\\u003e", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class ArtifactError(SvcError):
    """An artifact was refused: `code` is the service's (`artifact.malformed`, `artifact.signature_invalid`, …)."""

    def __init__(self, code: str, field: str, reason: str = ""):
        super().__init__(f"{code}: {field}{f' ({reason})' if reason else ''}")
        self.code = code
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class VerifiedArtifact:
    kind: str
    # The signed fields, canonical: what the signature covers and nothing else.
    canonical_bytes: bytes
    message_digest_hex: str
    signing_public_key_hex: str


def _malformed(field: str, reason: str) -> ArtifactError:
    return ArtifactError("artifact.malformed", field, reason)


def _kind_of(value: dict[str, Any]) -> dict[str, Any]:
    """schema_version first (an unknown one is never hashed), then kind."""
    schema_version = value.get("schema_version")
    if isinstance(schema_version, bool) or schema_version not in _KNOWN_SCHEMA_VERSIONS:
        raise ArtifactError("artifact.schema_version_unsupported", "schema_version")
    kind = _KINDS.get(value.get("kind")) if isinstance(value.get("kind"), str) else None
    if kind is None:
        raise ArtifactError("artifact.kind_unknown", "kind")
    if schema_version not in kind["schemaVersions"]:
        raise ArtifactError("artifact.schema_version_unsupported", "schema_version")
    return kind


def _json_string(text: str, escape: bool, path: str) -> str:
    if any(0xD800 <= ord(character) <= 0xDFFF for character in text):
        raise _malformed(path, "contains a lone UTF-16 surrogate")
    quoted = quote_json_string(text)
    if escape:
        quoted = "".join(_HTML_ESCAPES.get(character, character) for character in quoted)
    return quoted


def _matches_format(format_name: str, value: str) -> bool:
    if format_name == "uuid":
        return bool(_CANONICAL_UUID.match(value))
    if format_name == "hex64_or_uuid":
        return bool(_HEX64.match(value) or _CANONICAL_UUID.match(value))
    if format_name == "rfc3339_seconds":
        try:
            return bool(_SECONDS_UTC.match(value)) and normalize_rfc3339(value, "timestamp") == value
        except SvcError:
            return False
    return bool(_FORMAT_PATTERNS[format_name].match(value))


def _write_string(field: dict[str, Any], value: Any, path: str, escape: bool) -> str:
    if not isinstance(value, str):
        raise _malformed(path, "must be a string")
    if field.get("nonEmpty") and value == "":
        raise _malformed(path, "must not be empty")
    if "values" in field and value not in field["values"]:
        raise _malformed(path, f"must be one of {', '.join(field['values'])}")
    # `emptyAllowed`: "" is accepted besides the format (a settlement receipt of an intent without an imported mandate).
    if field.get("format") and not (field.get("emptyAllowed") and value == "") and not _matches_format(field["format"], value):
        raise _malformed(path, f"must be a {field['format']}")
    return _json_string(value, escape, path)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**53 - 1


def _is_empty(field: dict[str, Any], value: Any) -> bool:
    if value is None:
        return True
    if field["type"] == "string":
        return value == ""
    if field["type"] == "integer":
        return _is_integer(value) and value == 0
    return field["type"] == "string_list" and isinstance(value, list) and not value


def _write_json_as_received(value: Any, path: str, escape: bool, depth: int) -> str:
    """Nested values written in the order received, as JSON.stringify re-serializes a parsed value."""
    if depth > JSON_NESTING_DEPTH_MAX:
        raise _malformed(path, f"nests deeper than {JSON_NESTING_DEPTH_MAX} levels")
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return format_js_number(value)
        except SvcError:
            raise _malformed(path, "must be a finite number") from None
    if isinstance(value, str):
        return _json_string(value, escape, path)
    if isinstance(value, list):
        return "[" + ",".join(_write_json_as_received(item, f"{path}[{index}]", escape, depth + 1) for index, item in enumerate(value)) + "]"
    if not isinstance(value, dict):
        raise _malformed(path, "must be JSON")
    indexes = sorted((key for key in value if key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1), key=int)
    keys = indexes + [key for key in value if key not in indexes]
    members = (f"{_json_string(key, escape, path)}:{_write_json_as_received(value[key], f'{path}.{key}', escape, depth + 1)}" for key in keys)
    return "{" + ",".join(members) + "}"


def _write_field(field: dict[str, Any], present: bool, value: Any, path: str, escape: bool) -> str | None:
    """The JSON text of one field, or None when the field is left out of the bytes."""
    presence = field.get("presence", "required")
    if presence == "omit_empty" and (not present or _is_empty(field, value)):
        return None
    if presence == "optional" and not present:
        return None
    kind = field["type"]
    if kind == "const":
        if not present or value != field["value"] or isinstance(value, bool):
            raise _malformed(path, f"must be {field['value']!r}")
        return _write_json_as_received(field["value"], path, escape, 0)
    if kind == "string":
        return _write_string(field, value, path, escape)
    if kind == "integer":
        if not _is_integer(value) or value < field.get("min", -(2**53 - 1)):
            raise _malformed(path, "must be an integer" + ("" if "min" not in field else f" >= {field['min']}"))
        return str(value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _malformed(path, "must be a boolean")
        return "true" if value else "false"
    if kind == "string_set":
        return _write_string_set(value, path, escape, field.get("emptyAsNull", False))
    if kind == "string_list":
        if not isinstance(value, list):
            raise _malformed(path, "must be an array of strings")
        item = {"name": field["name"], "type": "string", "format": field.get("format")}
        return "[" + ",".join(_write_string(item, element, f"{path}[{index}]", escape) for index, element in enumerate(value)) + "]"
    if kind == "object":
        if not isinstance(value, dict):
            raise _malformed(path, "must be an object")
        return _write_object(field["fields"], value, path, escape, ())
    if kind == "object_list":
        if field.get("emptyAsNull") and (value is None or value == []):
            return "null"
        if not isinstance(value, list) or not all(isinstance(element, dict) for element in value):
            raise _malformed(path, "must be an array of objects")
        return "[" + ",".join(_write_object(field["fields"], element, f"{path}[{index}]", escape, ()) for index, element in enumerate(value)) + "]"
    if kind == "json":
        return _write_json_as_received(value, path, escape, 0)
    if kind == "string_or_null":
        if value is None:
            return "null"
        return _write_string({"name": field["name"], "type": "string", "format": field.get("format")}, value, path, escape)
    raise AssertionError(f"unknown field type {kind}")


def _write_string_set(value: Any, path: str, escape: bool, empty_as_null: bool) -> str:
    """A set as signers write it: scope tokens, strictly ascending (sorted, no duplicates)."""
    if value is None and empty_as_null:
        return "null"
    if not isinstance(value, list):
        raise _malformed(path, "must be an array of strings")
    if not value:
        return "null" if empty_as_null else "[]"
    for index, item in enumerate(value):
        if not isinstance(item, str) or not _FORMAT_PATTERNS["scope_token"].match(item):
            raise _malformed(f"{path}[{index}]", "must be a lowercase scope token")
        if index > 0 and not value[index - 1] < item:
            raise _malformed(path, "must be sorted without duplicates")
    return "[" + ",".join(_json_string(item, escape, path) for item in value) + "]"


def _write_object(fields: Sequence[dict[str, Any]], value: dict[str, Any], path: str, escape: bool, allowed_extra: Sequence[str]) -> str:
    """`{"a":…,"b":…}` in the order of `fields`; fields not in the table (besides `allowed_extra`) are refused."""
    members = []
    for field in fields:
        field_path = field["name"] if path == "" else f"{path}.{field['name']}"
        written = _write_field(field, field["name"] in value, value.get(field["name"]), field_path, escape)
        if written is not None:
            members.append(f"{_json_string(field['name'], escape, field_path)}:{written}")
    known = {field["name"] for field in fields} | set(allowed_extra)
    for key in value:
        if key not in known:
            raise _malformed(key if path == "" else f"{path}.{key}", "is not a field of this artifact")
    return "{" + ",".join(members) + "}"


def canonical_artifact_bytes(body: dict[str, Any]) -> bytes:
    """The canonical bytes of `body` (which carries schema_version and kind) for its kind."""
    if not isinstance(body, dict):
        raise _malformed("artifact", "must be a JSON object")
    kind = _kind_of(body)
    return _write_object(kind["fields"], body, "", kind["htmlEscape"], ()).encode("utf-8")


def sign_artifact(kind_name: str, body: dict[str, Any], key: SvcSigningKey) -> dict[str, Any]:
    """Signs `body` as an artifact of `kind_name`; constant fields are filled in when absent. Answers the wire object:
    the canonical fields in their order, then the material fields."""
    kind = _KINDS.get(kind_name)
    if kind is None:
        raise ArtifactError("artifact.kind_unknown", "kind")
    constants = {field["name"]: field["value"] for field in kind["fields"] if field["type"] == "const"}
    value = {**constants, **body}
    text = _write_object(kind["fields"], value, "", kind["htmlEscape"], ())
    digest = sha256(text.encode("utf-8"))
    # The wire is the canonical text read back: fields left out of the bytes are left out of the wire too.
    wire = json.loads(text)
    if kind["algorithmField"] == "signing_algorithm":
        wire["signing_algorithm"] = ARTIFACT_SIGNATURE_ALGORITHM
    wire[kind["digestField"]] = digest.hex()
    wire["signing_public_key_ed25519_hex"] = key.public_key_hex
    wire["ed25519_signature_hex"] = key.sign(digest).hex()
    return wire


def _lowercase_hex(value: Any, pattern: re.Pattern[str], field: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise _malformed(field, "must be lowercase hex of its length")
    return value


def verify_artifact(wire: dict[str, Any], trusted_public_keys_hex: Sequence[str] | None = None) -> VerifiedArtifact:
    """Verifies a received artifact. Order: schema_version, kind, algorithm (all before any hashing or key use),
    material shape, trusted keys, the signed fields' shape, digest, signature (and an agent receipt's operator
    counter-signature when present). Raises ArtifactError with the service's code."""
    if not isinstance(wire, dict):
        raise _malformed("artifact", "must be a JSON object")
    kind = _kind_of(wire)
    if wire.get(kind["algorithmField"]) != ARTIFACT_SIGNATURE_ALGORITHM:
        raise ArtifactError("artifact.algorithm_unsupported", kind["algorithmField"])
    digest_hex = _lowercase_hex(wire.get(kind["digestField"]), _HEX64, kind["digestField"])
    public_key_hex = _lowercase_hex(wire.get("signing_public_key_ed25519_hex"), _HEX64, "signing_public_key_ed25519_hex")
    signature_hex = _lowercase_hex(wire.get("ed25519_signature_hex"), _HEX128, "ed25519_signature_hex")
    if trusted_public_keys_hex and public_key_hex not in [key.lower() for key in trusted_public_keys_hex]:
        raise ArtifactError("artifact.key_untrusted", "signing_public_key_ed25519_hex")
    allowed_extra = (kind["algorithmField"], kind["digestField"], *_MATERIAL_FIELDS, *kind.get("unsignedFields", ()))
    text = _write_object(kind["fields"], wire, "", kind["htmlEscape"], allowed_extra)
    digest = sha256(text.encode("utf-8"))
    if digest.hex() != digest_hex:
        raise ArtifactError("artifact.signature_invalid", kind["digestField"], "digest does not match the signed fields")
    if not verify_ed25519(bytes.fromhex(public_key_hex), digest, bytes.fromhex(signature_hex)):
        raise ArtifactError("artifact.signature_invalid", "ed25519_signature_hex", "Ed25519 signature does not verify")
    if wire.get("operator_attestation") is not None:
        _verify_operator_attestation(wire["operator_attestation"], wire, digest_hex, digest)
    return VerifiedArtifact(kind["kind"], text.encode("utf-8"), digest_hex, public_key_hex)


def _verify_operator_attestation(attestation: Any, wire: dict[str, Any], digest_hex: str, digest: bytes) -> None:
    """An agent receipt's operator counter-signature: same digest, the operator's key."""
    field = "operator_attestation"
    if not isinstance(attestation, dict):
        raise _malformed(field, "must be an object")
    if attestation.get("operator_did") != wire["authorization"]["agent"]["operator_did"]:
        raise _malformed(f"{field}.operator_did", "must equal authorization.agent.operator_did")
    key_hex = _lowercase_hex(attestation.get("signing_public_key_ed25519_hex"), _HEX64, f"{field}.signing_public_key_ed25519_hex")
    signature_hex = _lowercase_hex(attestation.get("ed25519_signature_hex"), _HEX128, f"{field}.ed25519_signature_hex")
    if attestation.get("message_digest_sha256_hex") != digest_hex:
        raise ArtifactError("artifact.signature_invalid", f"{field}.message_digest_sha256_hex", "digest does not match")
    if not verify_ed25519(bytes.fromhex(key_hex), digest, bytes.fromhex(signature_hex)):
        raise ArtifactError("artifact.signature_invalid", f"{field}.ed25519_signature_hex", "Ed25519 signature does not verify")

