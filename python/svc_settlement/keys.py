# Ed25519 keys for the three signers of the protocol: the principal (signs intent creation), the payee (signs
# evidence) and the agent (signs recognition proofs). Raw 32-byte seeds in, PyNaCl (libsodium) underneath.
from __future__ import annotations

import base64
import os
import re

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .errors import SvcSigningError

ED25519_SEED_LENGTH = 32
ED25519_PUBLIC_KEY_LENGTH = 32
ED25519_SIGNATURE_LENGTH = 64
_SEED_HEX = re.compile(r"^[0-9a-fA-F]{64}$")


class SvcSigningKey:
    """A private signing key. Raw Ed25519 (RFC 8032, no pre-hash) over the bytes given to `sign`."""

    def __init__(self, seed: bytes):
        if not isinstance(seed, (bytes, bytearray)) or len(seed) != ED25519_SEED_LENGTH:
            raise SvcSigningError("signing.value_invalid", f"an Ed25519 seed is exactly {ED25519_SEED_LENGTH} bytes", {"field": "seed"})
        self._signing_key = SigningKey(bytes(seed))
        self.public_key: bytes = bytes(self._signing_key.verify_key)
        # Standard base64 with padding, as engine bodies carry keys (`principal_pubkey`, `payee_pubkey`).
        self.public_key_base64: str = base64.b64encode(self.public_key).decode("ascii")
        # Lowercase hex, as the key registry and signed artifacts carry keys.
        self.public_key_hex: str = self.public_key.hex()

    def sign(self, message: bytes) -> bytes:
        return self._signing_key.sign(bytes(message)).signature

    def __repr__(self) -> str:
        # Never the seed: a key printed in a log must not leak.
        return f"SvcSigningKey(public_key_hex={self.public_key_hex!r})"


def key_from_seed(seed: bytes | str) -> SvcSigningKey:
    """A key from a 32-byte seed, given as bytes or as 64 hex digits."""
    if isinstance(seed, str):
        if not _SEED_HEX.match(seed):
            raise SvcSigningError("signing.value_invalid", "A seed given as text must be 64 hex digits (32 bytes).", {"field": "seed"})
        seed = bytes.fromhex(seed)
    return SvcSigningKey(seed)


principal_key_from_seed = key_from_seed
payee_key_from_seed = key_from_seed
agent_key_from_seed = key_from_seed


def generate_key() -> tuple[str, SvcSigningKey]:
    """A fresh random key, with its seed (hex) so the caller can store it."""
    seed = os.urandom(ED25519_SEED_LENGTH)
    return seed.hex(), SvcSigningKey(seed)


def verify_ed25519(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """True when `signature` is a valid Ed25519 signature of `message` by `public_key`; never raises for a bad one."""
    if len(public_key) != ED25519_PUBLIC_KEY_LENGTH or len(signature) != ED25519_SIGNATURE_LENGTH:
        return False
    try:
        VerifyKey(bytes(public_key)).verify(bytes(message), bytes(signature))
    except (BadSignatureError, ValueError, TypeError):
        return False
    except Exception:  # noqa: BLE001 - libsodium refuses some malformed keys with its own error type
        return False
    return True
