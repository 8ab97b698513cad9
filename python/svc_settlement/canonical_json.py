# JSON text exactly as JavaScript's JSON.stringify writes it: compact, strings escaped the same way, numbers in
# ECMAScript's Number::toString form. `canonical_json` also sorts object keys (UTF-16 code unit order), which is the
# byte form behind every BLAKE3 digest a client signs; `compact_json` keeps key order, for request bodies.
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from .errors import SvcSigningError

# Deeper nesting is refused, as the server refuses it; it also stops a cyclic value.
JSON_NESTING_DEPTH_MAX = 64

_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def quote_json_string(text: str) -> str:
    """JSON.stringify(text): `"`, `\\` and control characters escaped, lone surrogates as \\uXXXX, the rest raw."""
    parts = ['"']
    for character in text:
        code = ord(character)
        if code in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[code])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(character)
    parts.append('"')
    return "".join(parts)


def format_js_number(value: int | float) -> str:
    """String(value) in JavaScript for a finite number. Integers beyond 2^53 are first rounded to a double, as
    JSON.parse would on the server."""
    if isinstance(value, int) and abs(value) <= 2**53:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        raise SvcSigningError("signing.value_invalid", "a non-finite number has no JSON form")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript requires; only the layout differs.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    all_digits = "".join(str(digit) for digit in digit_tuple)
    point = len(all_digits) + int(exponent)
    digits = all_digits.strip("0")
    point -= len(all_digits) - len(all_digits.lstrip("0"))
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    exponent_sign = "+" if exponent >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{head}e{exponent_sign}{abs(exponent)}"


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


def _javascript_property_order(keys: list[str]) -> list[str]:
    """The order JSON.stringify writes an object parsed by JSON.parse: array-index keys ascending, then the rest as
    inserted."""
    indexes = sorted((key for key in keys if _is_array_index(key)), key=int)
    return indexes + [key for key in keys if not _is_array_index(key)]


def _serialize(value: Any, depth: int, sort_keys: bool) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote_json_string(value)
    if isinstance(value, (int, float)):
        return format_js_number(value)
    if depth >= JSON_NESTING_DEPTH_MAX:
        raise SvcSigningError("signing.value_invalid", f"JSON nesting deeper than {JSON_NESTING_DEPTH_MAX} levels")
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_serialize(item, depth + 1, sort_keys) for item in value) + "]"
    if isinstance(value, dict):
        keys = list(value.keys())
        if any(not isinstance(key, str) for key in keys):
            raise SvcSigningError("signing.value_invalid", "JSON object keys must be strings")
        if sort_keys:
            keys.sort(key=_utf16_order)
        else:
            keys = _javascript_property_order(keys)
        members = (quote_json_string(key) + ":" + _serialize(value[key], depth + 1, sort_keys) for key in keys)
        return "{" + ",".join(members) + "}"
    raise SvcSigningError("signing.value_invalid", f"a {type(value).__name__} has no JSON form")


def canonical_json(value: Any) -> str:
    """Compact JSON with object keys sorted recursively by UTF-16 code units (JavaScript's default sort)."""
    return _serialize(value, 0, True)


def compact_json(value: Any) -> str:
    """JSON.stringify(value) of the value JSON.parse would give: compact, keys in the order given (array-index keys
    first, as JavaScript orders them)."""
    return _serialize(value, 0, False)
