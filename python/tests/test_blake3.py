# BLAKE3 against all 35 official test vectors, in hash, keyed_hash and derive_key modes, at their full extended
# output length; and the digest the SDK uses (package or pure module) against the pure module.
from __future__ import annotations

import pytest

from svc_settlement._blake3 import blake3, blake3_derive_key, blake3_keyed
from svc_settlement.digests import blake3_digest

from .conftest import load_vectors

VECTORS = load_vectors("blake3-test-vectors.json")
CASES = VECTORS["cases"]


def _input(length: int) -> bytes:
    return bytes(index % 251 for index in range(length))


def test_has_all_35_cases():
    assert len(CASES) == 35


@pytest.mark.parametrize("case", CASES, ids=lambda case: str(case["input_len"]))
def test_hash_mode(case):
    assert blake3(_input(case["input_len"]), len(case["hash"]) // 2).hex() == case["hash"]
    assert blake3_digest(_input(case["input_len"])).hex() == case["hash"][:64]


@pytest.mark.parametrize("case", CASES, ids=lambda case: str(case["input_len"]))
def test_keyed_hash_mode(case):
    key = VECTORS["key"].encode("ascii")
    assert blake3_keyed(key, _input(case["input_len"]), len(case["keyed_hash"]) // 2).hex() == case["keyed_hash"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: str(case["input_len"]))
def test_derive_key_mode(case):
    output = blake3_derive_key(VECTORS["context_string"], _input(case["input_len"]), len(case["derive_key"]) // 2)
    assert output.hex() == case["derive_key"]


def test_keyed_mode_refuses_a_short_key():
    with pytest.raises(ValueError):
        blake3_keyed(b"short", b"")


def test_an_installed_blake3_package_is_preferred(monkeypatch):
    import importlib
    import sys
    import types

    import svc_settlement.digests as digests

    class PackageHash:
        def __init__(self, data: bytes):
            self.data = data

        def digest(self) -> bytes:
            return b"package:" + self.data

    fake = types.ModuleType("blake3")
    fake.blake3 = PackageHash
    monkeypatch.setitem(sys.modules, "blake3", fake)
    try:
        reloaded = importlib.reload(digests)
        assert reloaded.BLAKE3_BACKEND == "blake3"
        assert reloaded.blake3_digest(b"x") == b"package:x"
    finally:
        monkeypatch.delitem(sys.modules, "blake3")
        importlib.reload(digests)
    assert digests.BLAKE3_BACKEND == "svc_settlement._blake3"
