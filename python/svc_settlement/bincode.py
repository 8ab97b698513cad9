# A strict bincode 2 encoder (`config::standard()`: little endian, varint integers) for the bytes clients sign.
# Types are described as data (tuples built by the constructors below); every value is checked before it is written.
from __future__ import annotations

import math
import re
import struct
from typing import Any, Sequence

from .errors import SvcSigningError

BincodeType = tuple  # ("u32",), ("fixed_bytes", 32), ("vec", element), ("struct", fields), ...

_INTEGER_BITS = {
    "u8": (False, 8), "u16": (False, 16), "u32": (False, 32), "u64": (False, 64), "u128": (False, 128), "usize": (False, 64),
    "i8": (True, 8), "i16": (True, 16), "i32": (True, 32), "i64": (True, 64), "i128": (True, 128), "isize": (True, 64),
}
_UUID_PATTERN = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.IGNORECASE)


# Type constructors, named after the Rust types they stand for.
def primitive(name: str) -> BincodeType:
    if name not in _INTEGER_BITS and name not in ("bool", "f32", "f64", "char", "unit", "string", "bytes", "uuid"):
        raise ValueError(f"unknown bincode type {name}")
    return (name,)


U8, U16, U32, U64, I64 = primitive("u8"), primitive("u16"), primitive("u32"), primitive("u64"), primitive("i64")
STRING, BYTES, UUID, BOOL = primitive("string"), primitive("bytes"), primitive("uuid"), primitive("bool")


def fixed_bytes(length: int) -> BincodeType:
    return ("fixed_bytes", length)


def array(element: BincodeType, length: int) -> BincodeType:
    return ("array", element, length)


def vec(element: BincodeType) -> BincodeType:
    return ("vec", element)


def option(inner: BincodeType) -> BincodeType:
    return ("option", inner)


def tuple_of(*elements: BincodeType) -> BincodeType:
    return ("tuple", tuple(elements))


def struct_of(fields: Sequence[tuple[str, BincodeType]]) -> BincodeType:
    return ("struct", tuple(fields))


def enum_of(variants: Sequence[tuple[str, str, Any]]) -> BincodeType:
    """Variants as (name, "unit" | "tuple" | "struct", element types | fields | None), in declaration order."""
    return ("enum", tuple(variants))


def result_of(ok: BincodeType, err: BincodeType) -> BincodeType:
    return enum_of([("Ok", "tuple", (ok,)), ("Err", "tuple", (err,))])


def value_invalid(field: str, reason: str) -> SvcSigningError:
    return SvcSigningError("signing.value_invalid", f"{field}: {reason}", {"field": field, "reason": reason})


def encode_bincode(type_: BincodeType, value: Any, field: str = "value") -> bytes:
    """Encodes `value` as `type_`. Raises SvcSigningError `signing.value_invalid` naming the field."""
    out = bytearray()
    _write(out, type_, value, field)
    return bytes(out)


def _write_varint(out: bytearray, value: int) -> None:
    """bincode 2 varint: one byte up to 250, else a marker (fb/fc/fd/fe) and the value as u16/u32/u64/u128 LE."""
    if value <= 250:
        out.append(value)
    elif value <= 0xFFFF:
        out += b"\xfb" + value.to_bytes(2, "little")
    elif value <= 0xFFFF_FFFF:
        out += b"\xfc" + value.to_bytes(4, "little")
    elif value <= 0xFFFF_FFFF_FFFF_FFFF:
        out += b"\xfd" + value.to_bytes(8, "little")
    else:
        out += b"\xfe" + value.to_bytes(16, "little")


def _write_integer(out: bytearray, kind: str, value: Any, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise value_invalid(field, f"{kind} must be an integer")
    signed, bits = _INTEGER_BITS[kind]
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    if not low <= value <= high:
        raise value_invalid(field, f"out of range for {kind} ({low}..{high})")
    # u8 and i8 are single raw bytes; every wider integer is a varint, signed ones zigzag-mapped first.
    if bits == 8:
        out.append(value & 0xFF)
    elif not signed:
        _write_varint(out, value)
    else:
        _write_varint(out, value * 2 if value >= 0 else -value * 2 - 1)


def _utf8(value: Any, field: str) -> bytes:
    if not isinstance(value, str):
        raise value_invalid(field, "must be a string")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise value_invalid(field, "contains a lone surrogate") from None


def _bytes(value: Any, field: str, length: int | None = None) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise value_invalid(field, "must be bytes")
    data = bytes(value)
    if length is not None and len(data) != length:
        raise value_invalid(field, f"must be exactly {length} bytes, got {len(data)}")
    return data


def uuid_bytes(value: Any, field: str) -> bytes:
    """The 16 bytes of an RFC 4122 UUID in 8-4-4-4-12 text (either case; nil and max refused)."""
    if not isinstance(value, str) or not _UUID_PATTERN.match(value):
        raise value_invalid(field, "must be an RFC 4122 UUID (8-4-4-4-12 hex, version 1-8, variant 8/9/a/b)")
    return bytes.fromhex(value.replace("-", ""))


def _write_float(out: bytearray, kind: str, value: Any, field: str) -> None:
    # NaN has many bit patterns; refusing it keeps one value, one encoding.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise value_invalid(field, f"{kind} must be a number")
    if kind == "f32":
        packed = struct.pack("<f", value)
        if struct.unpack("<f", packed)[0] != value:
            raise value_invalid(field, "is not exactly representable as f32")
        out += packed
    else:
        out += struct.pack("<d", value)


def _write(out: bytearray, type_: BincodeType, value: Any, field: str) -> None:
    kind = type_[0]
    if kind in _INTEGER_BITS:
        _write_integer(out, kind, value, field)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise value_invalid(field, "must be a boolean")
        out.append(1 if value else 0)
    elif kind in ("f32", "f64"):
        _write_float(out, kind, value, field)
    elif kind == "char":
        if not isinstance(value, str) or len(value) != 1:
            raise value_invalid(field, "must be exactly one Unicode scalar value")
        out += _utf8(value, field)
    elif kind == "unit":
        if value is not None:
            raise value_invalid(field, "unit must be None")
    elif kind == "string":
        data = _utf8(value, field)
        _write_varint(out, len(data))
        out += data
    elif kind == "bytes":
        data = _bytes(value, field)
        _write_varint(out, len(data))
        out += data
    elif kind == "uuid":
        # uuid::Uuid through serde is a 16-byte slice: varint 16, then the bytes.
        _write_varint(out, 16)
        out += uuid_bytes(value, field)
    elif kind == "fixed_bytes":
        out += _bytes(value, field, type_[1])
    elif kind in ("array", "vec", "tuple"):
        _write_sequence(out, type_, value, field)
    elif kind == "option":
        if value is None:
            out.append(0)
        else:
            out.append(1)
            _write(out, type_[1], value, field)
    elif kind == "struct":
        _write_struct(out, type_[1], value, field)
    elif kind == "enum":
        _write_enum(out, type_[1], value, field)
    else:
        raise ValueError(f"unknown bincode type {kind}")


def _write_sequence(out: bytearray, type_: BincodeType, value: Any, field: str) -> None:
    if not isinstance(value, (list, tuple)):
        raise value_invalid(field, "must be a list")
    kind = type_[0]
    if kind == "vec":
        _write_varint(out, len(value))
    expected = type_[2] if kind == "array" else len(type_[1]) if kind == "tuple" else len(value)
    if len(value) != expected:
        raise value_invalid(field, f"must have exactly {expected} elements, got {len(value)}")
    for index, element in enumerate(value):
        element_type = type_[1][index] if kind == "tuple" else type_[1]
        _write(out, element_type, element, f"{field}[{index}]")


def _write_struct(out: bytearray, fields: Sequence[tuple[str, BincodeType]], value: Any, field: str) -> None:
    """Fields in declaration order; every declared field present, no undeclared one (a typo must not encode)."""
    if not isinstance(value, dict):
        raise value_invalid(field, "must be a dict")
    prefix = "" if field == "value" else f"{field}."
    for name, field_type in fields:
        if name not in value:
            raise value_invalid(f"{prefix}{name}", "is missing")
        _write(out, field_type, value[name], f"{prefix}{name}")
    declared = {name for name, _ in fields}
    for name in value:
        if name not in declared:
            raise value_invalid(f"{prefix}{name}", "is not a field of this struct")


def _write_enum(out: bytearray, variants: Sequence[tuple[str, str, Any]], value: Any, field: str) -> None:
    if not isinstance(value, dict) or not isinstance(value.get("variant"), str):
        raise value_invalid(field, "must be {'variant': name, 'fields': ...}")
    names = [name for name, _, _ in variants]
    if value["variant"] not in names:
        raise value_invalid(field, f"has no variant named {value['variant']!r}")
    index = names.index(value["variant"])
    name, shape, payload = variants[index]
    # The variant index is a u32 varint of the declaration position, never a Rust discriminant.
    _write_varint(out, index)
    path = f"{field}.{name}"
    if shape == "tuple":
        _write_sequence(out, ("tuple", tuple(payload)), value.get("fields"), path)
    elif shape == "struct":
        _write_struct(out, payload, value.get("fields"), path)
    elif value.get("fields") is not None:
        raise value_invalid(path, "a unit variant carries no fields")
