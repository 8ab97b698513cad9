// Strict text encodings of signing material: lowercase hex, standard base64, base64url and canonical UUID text.
// Every decoder rejects what it cannot read back exactly, so one byte string has one accepted spelling.
import { SigningError } from './errors.ts';

const lowercaseHexPattern = /^(?:[0-9a-f]{2})*$/;
const standardBase64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// RFC 4122 text: version digit 1-8, variant 8/9/a/b. Either case is read; see uuidBytesFromText.
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Throws the one error every signing-value check raises, naming the field and why it was refused. */
export function valueInvalid(field: string, reason: string): never {
  throw new SigningError('signing.value_invalid', { field, reason });
}

export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Lowercase hex only; `byteLength` (when given) must match exactly. */
export function hexToBytes(text: unknown, field: string, byteLength?: number): Uint8Array {
  if (typeof text !== 'string') valueInvalid(field, 'must be a lowercase hex string');
  if (!lowercaseHexPattern.test(text)) valueInvalid(field, 'must be lowercase hex with an even number of digits');
  if (byteLength !== undefined && text.length !== byteLength * 2) {
    valueInvalid(field, `must be exactly ${byteLength} bytes (${byteLength * 2} hex digits)`);
  }
  return new Uint8Array(Buffer.from(text, 'hex'));
}

export function bytesToBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Standard base64 with its `=` padding, as the client sends keys and signatures in engine bodies. */
export function base64ToBytes(text: unknown, field: string, byteLength?: number): Uint8Array {
  if (typeof text !== 'string') valueInvalid(field, 'must be a standard base64 string');
  if (!standardBase64Pattern.test(text)) valueInvalid(field, 'must be standard padded base64');
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  // Unused low bits of the last character must be zero; otherwise two spellings would decode alike.
  if (bytesToBase64(bytes) !== text) valueInvalid(field, 'has non-zero padding bits');
  if (byteLength !== undefined && bytes.length !== byteLength) valueInvalid(field, `must decode to exactly ${byteLength} bytes`);
  return bytes;
}

/**
 * Base64url with or without `=` padding, and standard base64 too (the Python client's padding is not known, so every
 * form is accepted: docs/signing.md#recognition-proofs). The two alphabets may not be mixed in one value.
 */
export function base64UrlOrStandardToBytes(text: string, field: string): Uint8Array {
  const unpadded = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text;
  if (unpadded.length !== text.length && text.length % 4 !== 0) valueInvalid(field, 'has misplaced padding');
  const isUrlAlphabet = /^[A-Za-z0-9_-]*$/.test(unpadded);
  const isStandardAlphabet = /^[A-Za-z0-9+/]*$/.test(unpadded);
  if (!isUrlAlphabet && !isStandardAlphabet) valueInvalid(field, 'is not base64url or base64');
  if (unpadded.length % 4 === 1) valueInvalid(field, 'has an impossible base64 length');
  const bytes = new Uint8Array(Buffer.from(unpadded, isUrlAlphabet ? 'base64url' : 'base64'));
  const reencoded = Buffer.from(bytes).toString(isUrlAlphabet ? 'base64url' : 'base64').replace(/=+$/, '');
  if (reencoded !== unpadded) valueInvalid(field, 'has non-zero padding bits');
  return bytes;
}

/**
 * The 16 bytes of an RFC 4122 UUID in canonical 8-4-4-4-12 text. Uppercase hex is read too: the bytes are the
 * same, and both Rust's `uuid` crate and the client's `uuid` package accept it. Nil and max UUIDs are refused
 * (no version digit), as the client's parser refuses `aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa`.
 */
export function uuidBytesFromText(text: unknown, field: string): Uint8Array {
  if (typeof text !== 'string' || !uuidPattern.test(text)) {
    valueInvalid(field, 'must be an RFC 4122 UUID (8-4-4-4-12 hex, version 1-8, variant 8/9/a/b)');
  }
  return new Uint8Array(Buffer.from(text.replaceAll('-', ''), 'hex'));
}

/** The lowercase form under which a UUID is stored and compared; same validation as uuidBytesFromText. */
export function canonicalUuidText(text: unknown, field: string): string {
  uuidBytesFromText(text, field);
  return (text as string).toLowerCase();
}

export function isCanonicalUuidText(text: unknown): text is string {
  return typeof text === 'string' && uuidPattern.test(text) && text === text.toLowerCase();
}

/** True for strings without lone UTF-16 surrogates: only those have one UTF-8 encoding. */
export function isWellFormedText(text: string): boolean {
  return !/\p{Surrogate}/u.test(text);
}
