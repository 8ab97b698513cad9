# Every vector printed by the real Rust bincode 2 crate (config::standard()) must come out of the Python encoder byte
# for byte. The test reads each vector's Rust type descriptor, builds the encoder's type from it and compares hex.
from __future__ import annotations

import re

import pytest

from svc_settlement import bincode as t
from svc_settlement.errors import SvcSigningError

from .conftest import load_vectors

VECTORS = load_vectors("bincode2-standard.json")


class TypeReader:
    """A small reader of Rust type syntax, enough for the descriptors in the vector file."""

    def __init__(self, text: str):
        self.text = text
        self.position = 0

    def read_all(self):
        type_ = self.read_type()
        self._skip()
        assert self.position == len(self.text), f"trailing text in {self.text}"
        return type_

    def _skip(self):
        while self.position < len(self.text) and self.text[self.position] == " ":
            self.position += 1

    def _peek(self, token: str) -> bool:
        self._skip()
        return self.text.startswith(token, self.position)

    def _expect(self, token: str):
        assert self._peek(token), f"expected {token} at {self.position} in {self.text}"
        self.position += len(token)

    def _word(self) -> str:
        self._skip()
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.position)
        assert match, self.text
        self.position = match.end()
        return match.group(0)

    def _number(self) -> int:
        self._skip()
        match = re.compile(r"\d+").match(self.text, self.position)
        assert match
        self.position = match.end()
        return int(match.group(0))

    def read_type(self):
        for token, type_ in (("&str", t.STRING), ("&[u8]", t.BYTES), ("()", t.primitive("unit"))):
            if self._peek(token):
                self.position += len(token)
                return type_
        if self._peek("("):
            return self._tuple()
        if self._peek("["):
            self._expect("[")
            element = self.read_type()
            self._expect(";")
            length = self._number()
            self._expect("]")
            return t.fixed_bytes(length) if element == t.U8 else t.array(element, length)
        name = self._word()
        if name == "enum":
            return self._enum()
        if name == "String":
            return t.STRING
        if name in ("Vec", "Option", "Result"):
            self._expect("<")
            inner = self.read_type()
            if name == "Result":
                self._expect(",")
                err = self.read_type()
                self._expect(">")
                return t.result_of(inner, err)
            self._expect(">")
            if name == "Vec":
                return t.BYTES if inner == t.U8 else t.vec(inner)
            return t.option(inner)
        return t.primitive(name)

    def _tuple(self):
        self._expect("(")
        elements = [self.read_type()]
        while self._peek(","):
            self._expect(",")
            elements.append(self.read_type())
        self._expect(")")
        return t.tuple_of(*elements)

    def _enum(self):
        self._word()
        self._expect("{")
        variants = []
        while not self._peek("}"):
            name = self._word()
            if self._peek("("):
                variants.append((name, "tuple", self._tuple()[1]))
            elif self._peek("{"):
                self._expect("{")
                fields = []
                while not self._peek("}"):
                    field_name = self._word()
                    self._expect(":")
                    fields.append((field_name, self.read_type()))
                    if self._peek(","):
                        self._expect(",")
                self._expect("}")
                variants.append((name, "struct", tuple(fields)))
            else:
                # An explicit discriminant (`X = 5`) does not change the encoding: bincode writes the position.
                if self._peek("="):
                    self._expect("=")
                    self._number()
                variants.append((name, "unit", None))
            if self._peek(","):
                self._expect(",")
        self._expect("}")
        return t.enum_of(variants)


def type_from_descriptor(descriptor):
    """Struct descriptors are lists of [field, type]; a type is a Rust type string, a struct, or ["Vec", struct]."""
    if isinstance(descriptor, str):
        return TypeReader(descriptor).read_all()
    if descriptor[0] == "Vec":
        return t.vec(type_from_descriptor(descriptor[1]))
    return t.struct_of([(name, type_from_descriptor(type_)) for name, type_ in descriptor])


def value_for_type(type_, value):
    """Turns a vector's JSON value into what the encoder takes (ints, bytes, enum values)."""
    kind = type_[0]
    if kind in ("u64", "u128", "usize", "i64", "i128", "isize"):
        return int(value)
    if kind in ("bytes", "fixed_bytes"):
        return bytes.fromhex(value)
    if kind == "option":
        return None if value is None else value_for_type(type_[1], value)
    if kind in ("vec", "array"):
        return [value_for_type(type_[1], item) for item in value]
    if kind == "tuple":
        return [value_for_type(element, item) for element, item in zip(type_[1], value)]
    if kind == "struct":
        return {name: value_for_type(field_type, value[name]) for name, field_type in type_[1]}
    if kind == "enum":
        variants = type_[1]
        for result_name in ("Ok", "Err"):
            if result_name in value:
                payload = next(v for v in variants if v[0] == result_name)[2]
                return {"variant": result_name, "fields": [value_for_type(payload[0], value[result_name])]}
        index = [name for name, _, _ in variants].index(value["variant"])
        assert index == value["index"], "the vector names the declaration index"
        name, shape, payload = variants[index]
        if shape == "tuple":
            return {"variant": name, "fields": [value_for_type(p, item) for p, item in zip(payload, value["fields"])]}
        if shape == "struct":
            return {"variant": name, "fields": value_for_type(t.struct_of(payload), value["fields"])}
        return {"variant": name}
    return value


def test_has_all_93_vectors():
    assert len(VECTORS) == 93


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_vector(vector):
    type_ = type_from_descriptor(vector["type"])
    assert t.encode_bincode(type_, value_for_type(type_, vector["value"])).hex() == vector["hex"]


@pytest.mark.parametrize(
    ("type_", "value"),
    [(t.U8, 256), (t.U32, -1), (t.I64, 2**63), (t.U32, True), (t.STRING, b"x"), (t.fixed_bytes(32), b"\x00" * 31), (t.UUID, "not-a-uuid"), (t.STRING, "\ud800")],
)
def test_refuses_values_outside_their_type(type_, value):
    with pytest.raises(SvcSigningError) as raised:
        t.encode_bincode(type_, value)
    assert raised.value.code == "signing.value_invalid"


def test_struct_refuses_missing_and_undeclared_fields():
    layout = t.struct_of([("a", t.U8)])
    with pytest.raises(SvcSigningError, match="a: is missing"):
        t.encode_bincode(layout, {})
    with pytest.raises(SvcSigningError, match="b: is not a field"):
        t.encode_bincode(layout, {"a": 1, "b": 2})
