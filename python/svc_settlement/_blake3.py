# BLAKE3 in pure Python, written from the BLAKE3 paper's specification (hash, keyed_hash and derive_key modes, any
# output length). No BLAKE3 package is packaged for Debian; digests.py prefers the `blake3` package when installed.
from __future__ import annotations

_MASK = 0xFFFFFFFF
_OUT_LEN = 32
_KEY_LEN = 32
_BLOCK_LEN = 64
_CHUNK_LEN = 1024

_CHUNK_START = 1 << 0
_CHUNK_END = 1 << 1
_PARENT = 1 << 2
_ROOT = 1 << 3
_KEYED_HASH = 1 << 4
_DERIVE_KEY_CONTEXT = 1 << 5
_DERIVE_KEY_MATERIAL = 1 << 6

# The initialization vector is SHA-256's, as the paper specifies.
_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
_MESSAGE_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)


def _rotate_right(value: int, count: int) -> int:
    return ((value >> count) | (value << (32 - count))) & _MASK


def _mix(state: list[int], a: int, b: int, c: int, d: int, x: int, y: int) -> None:
    state[a] = (state[a] + state[b] + x) & _MASK
    state[d] = _rotate_right(state[d] ^ state[a], 16)
    state[c] = (state[c] + state[d]) & _MASK
    state[b] = _rotate_right(state[b] ^ state[c], 12)
    state[a] = (state[a] + state[b] + y) & _MASK
    state[d] = _rotate_right(state[d] ^ state[a], 8)
    state[c] = (state[c] + state[d]) & _MASK
    state[b] = _rotate_right(state[b] ^ state[c], 7)


def _round(state: list[int], m: list[int]) -> None:
    # Columns, then diagonals.
    _mix(state, 0, 4, 8, 12, m[0], m[1])
    _mix(state, 1, 5, 9, 13, m[2], m[3])
    _mix(state, 2, 6, 10, 14, m[4], m[5])
    _mix(state, 3, 7, 11, 15, m[6], m[7])
    _mix(state, 0, 5, 10, 15, m[8], m[9])
    _mix(state, 1, 6, 11, 12, m[10], m[11])
    _mix(state, 2, 7, 8, 13, m[12], m[13])
    _mix(state, 3, 4, 9, 14, m[14], m[15])


def _compress(chaining_value: list[int], block_words: list[int], counter: int, block_length: int, flags: int) -> list[int]:
    """The compression function: seven rounds, the message words permuted between rounds; 16 words out."""
    state = [
        *chaining_value,
        *_IV[:4],
        counter & _MASK,
        (counter >> 32) & _MASK,
        block_length,
        flags,
    ]
    words = list(block_words)
    for round_index in range(7):
        _round(state, words)
        if round_index < 6:
            words = [words[index] for index in _MESSAGE_PERMUTATION]
    for index in range(8):
        state[index] ^= state[index + 8]
        state[index + 8] ^= chaining_value[index]
    return state


def _words_of(block: bytes) -> list[int]:
    padded = block + bytes(_BLOCK_LEN - len(block))
    return [int.from_bytes(padded[offset : offset + 4], "little") for offset in range(0, _BLOCK_LEN, 4)]


class _Output:
    """What the last compression of a chunk or parent needs, kept so the root can be squeezed to any length."""

    __slots__ = ("input_chaining_value", "block_words", "counter", "block_length", "flags")

    def __init__(self, input_chaining_value: list[int], block_words: list[int], counter: int, block_length: int, flags: int):
        self.input_chaining_value = input_chaining_value
        self.block_words = block_words
        self.counter = counter
        self.block_length = block_length
        self.flags = flags

    def chaining_value(self) -> list[int]:
        return _compress(self.input_chaining_value, self.block_words, self.counter, self.block_length, self.flags)[:8]

    def root_bytes(self, length: int) -> bytes:
        out = bytearray()
        output_block_counter = 0
        while len(out) < length:
            words = _compress(self.input_chaining_value, self.block_words, output_block_counter, self.block_length, self.flags | _ROOT)
            out += b"".join(word.to_bytes(4, "little") for word in words)
            output_block_counter += 1
        return bytes(out[:length])


def _chunk_output(key_words: list[int], chunk: bytes, chunk_counter: int, flags: int) -> _Output:
    chaining_value = list(key_words)
    blocks = [chunk[offset : offset + _BLOCK_LEN] for offset in range(0, len(chunk), _BLOCK_LEN)] or [b""]
    for index, block in enumerate(blocks[:-1]):
        block_flags = flags | (_CHUNK_START if index == 0 else 0)
        chaining_value = _compress(chaining_value, _words_of(block), chunk_counter, _BLOCK_LEN, block_flags)[:8]
    last = blocks[-1]
    last_flags = flags | _CHUNK_END | (_CHUNK_START if len(blocks) == 1 else 0)
    return _Output(chaining_value, _words_of(last), chunk_counter, len(last), last_flags)


def _parent_output(left: list[int], right: list[int], key_words: list[int], flags: int) -> _Output:
    return _Output(list(key_words), left + right, 0, _BLOCK_LEN, flags | _PARENT)


def _hash(data: bytes, key_words: list[int], flags: int, length: int) -> bytes:
    chunks = [data[offset : offset + _CHUNK_LEN] for offset in range(0, len(data), _CHUNK_LEN)] or [b""]
    # The chaining-value stack merges completed subtrees the way the paper's incremental hasher does: after chunk n
    # (counted from 1), merge once for every trailing zero bit of n. The last chunk is merged lazily below.
    stack: list[list[int]] = []
    for chunk_counter, chunk in enumerate(chunks[:-1]):
        chaining_value = _chunk_output(key_words, chunk, chunk_counter, flags).chaining_value()
        total_chunks = chunk_counter + 1
        while total_chunks & 1 == 0:
            chaining_value = _parent_output(stack.pop(), chaining_value, key_words, flags).chaining_value()
            total_chunks >>= 1
        stack.append(chaining_value)
    output = _chunk_output(key_words, chunks[-1], len(chunks) - 1, flags)
    while stack:
        output = _parent_output(stack.pop(), output.chaining_value(), key_words, flags)
    return output.root_bytes(length)


def _key_words(key: bytes) -> list[int]:
    if len(key) != _KEY_LEN:
        raise ValueError(f"a BLAKE3 key is exactly {_KEY_LEN} bytes")
    return [int.from_bytes(key[offset : offset + 4], "little") for offset in range(0, _KEY_LEN, 4)]


def blake3(data: bytes, length: int = _OUT_LEN) -> bytes:
    """The default hash mode."""
    return _hash(bytes(data), list(_IV), 0, length)


def blake3_keyed(key: bytes, data: bytes, length: int = _OUT_LEN) -> bytes:
    """keyed_hash mode with a 32-byte key."""
    return _hash(bytes(data), _key_words(key), _KEYED_HASH, length)


def blake3_derive_key(context: str, material: bytes, length: int = _OUT_LEN) -> bytes:
    """derive_key mode: the context string is hashed first, its output keys the hash of the material."""
    context_key = _hash(context.encode("utf-8"), list(_IV), _DERIVE_KEY_CONTEXT, _KEY_LEN)
    return _hash(bytes(material), _key_words(context_key), _DERIVE_KEY_MATERIAL, length)
