// The digests signed structures commit to: BLAKE3-256 over canonical JSON (docs/signing.md#digests), the allowed-tools
// and artifacts digests, and SHA-256 (node:crypto) for artifacts, proofs, request bodies and the ledger chain.
import { createHash } from 'node:crypto';
import { blake3 } from '@noble/hashes/blake3.js';
import { allowedToolLengthMax } from '../limits.ts';
import { canonicalJson, CanonicalJsonError } from './canonical-json.ts';
import { hexToBytes, valueInvalid } from './encoding.ts';

export const digestByteLength = 32;

export function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest());
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function blake3Digest(bytes: Uint8Array): Uint8Array {
  return blake3(bytes);
}

/** The canonical JSON text of a caller's value, as UTF-8; a value JSON cannot carry is a typed error on `field`. */
export function canonicalJsonBytes(value: unknown, field: string): Uint8Array {
  try {
    return new Uint8Array(Buffer.from(canonicalJson(value), 'utf8'));
  } catch (error) {
    if (error instanceof CanonicalJsonError) valueInvalid(field, error.message);
    throw error;
  }
}

/** BLAKE3-256 of canonical JSON: `budget_digest`, `evidence_schema_digest`, `predicate_dsl_digest`, payload digests. */
export function jsonDigestBlake3(value: unknown, field = 'value'): Uint8Array {
  return blake3(canonicalJsonBytes(value, field));
}

/** A tool name as allowed tools and operations are compared: trimmed (JavaScript's whitespace) and lowercased. */
export function normalizedToolName(tool: string): string {
  return tool.trim().toLowerCase();
}

/**
 * The set of allowed tools as the client commits to it: each name trimmed and lowercased, sorted (UTF-16 code unit
 * order, JavaScript's default), duplicates removed, then the BLAKE3 digest of that canonical JSON array. The limit
 * on a name holds after normalizing: lowercasing can lengthen a name ("İ" becomes "i" and a combining dot).
 */
export function normalizedAllowedTools(tools: unknown, field = 'allowed_tools'): string[] {
  if (!Array.isArray(tools)) valueInvalid(field, 'must be an array of strings');
  const names = tools.map((tool: unknown, index) => {
    if (typeof tool !== 'string') valueInvalid(`${field}[${index}]`, 'must be a string');
    const name = normalizedToolName(tool);
    if (name === '') valueInvalid(`${field}[${index}]`, 'must not be empty');
    // Counted in code points, as the contract's maxLength counts them.
    if ([...name].length > allowedToolLengthMax) valueInvalid(`${field}[${index}]`, `must not be longer than ${allowedToolLengthMax} characters once trimmed and lowercased`);
    return name;
  });
  return [...new Set(names)].sort();
}

export function allowedToolsDigest(tools: unknown, field = 'allowed_tools'): Uint8Array {
  return jsonDigestBlake3(normalizedAllowedTools(tools, field), field);
}

/** BLAKE3 of the artifact hashes (each 32 bytes, given as lowercase hex or bytes) concatenated in list order. */
export function artifactsDigest(artifacts: unknown, field = 'artifacts'): Uint8Array {
  if (!Array.isArray(artifacts)) valueInvalid(field, 'must be an array of 32-byte hashes');
  const concatenated = new Uint8Array(artifacts.length * digestByteLength);
  artifacts.forEach((artifact: unknown, index) => {
    const itemField = `${field}[${index}]`;
    const bytes = artifact instanceof Uint8Array ? artifact : hexToBytes(artifact, itemField, digestByteLength);
    if (bytes.length !== digestByteLength) valueInvalid(itemField, `must be exactly ${digestByteLength} bytes`);
    concatenated.set(bytes, index * digestByteLength);
  });
  return blake3(concatenated);
}
