// Canonical JSON: compact, object keys sorted recursively, numbers and strings formatted as JavaScript's
// JSON.stringify formats them. This is the byte form behind every BLAKE3 digest a client signs
// (docs/signing.md#digests) and behind the predicate size limit.
import { jsonNestingDepthMax } from '../limits.ts';

export class CanonicalJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalJsonError';
  }
}

/** The message of the CanonicalJsonError for nesting deeper than the limit (the predicate validator, which
 * measures the canonical form without building it, reports the same). */
export const canonicalNestingErrorMessage = `JSON nesting deeper than ${jsonNestingDepthMax} levels`;

/** Serializes a JSON value canonically. Throws CanonicalJsonError for values JSON cannot carry
 * (non-finite numbers, undefined, functions, bigint, cycles, non-plain objects) and for nesting deeper than the
 * limit (which is also what stops a cycle). Values are visited depth-first in output order (sorted keys), so
 * the error reported is the first one in the output. */
export function canonicalJson(value: unknown): string {
  return serialize(value, 0);
}

function serialize(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quoteJsonString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError('a non-finite number has no JSON form');
      // For a finite number JSON.stringify writes exactly its JavaScript string ("1e+21", "0" for -0).
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      throw new CanonicalJsonError(`a ${typeof value} has no JSON form`);
  }
  if (depth >= jsonNestingDepthMax) throw new CanonicalJsonError(canonicalNestingErrorMessage);
  if (Array.isArray(value)) return serializeArray(value, depth);
  // A Date, Map or class instance would not serialize as JSON.stringify does (toJSON, no own keys): refuse it
  // rather than digest something the client never sent.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new CanonicalJsonError('only plain objects and arrays have a canonical JSON form');
  }
  return serializeObject(value as Record<string, unknown>, depth);
}

function serializeArray(array: readonly unknown[], depth: number): string {
  const length = array.length;
  let text = '[';
  for (let index = 0; index < length; index += 1) {
    if (index > 0) text += ',';
    const item = array[index];
    // A hole writes nothing between its commas: the form this serializer has always given a sparse array
    // (Array.prototype.map skips holes and join writes them as ""). JSON.parse never makes one.
    if (item === undefined && !(index in array)) continue;
    text += serialize(item, depth + 1);
  }
  return text + ']';
}

function serializeObject(object: Record<string, unknown>, depth: number): string {
  const keys = Object.keys(object);
  // JavaScript's default sort compares UTF-16 code units, which is what the public client does; `>` on strings
  // compares the same way, so keys that already come in order are not sorted again.
  for (let index = 1; index < keys.length; index += 1) {
    if ((keys[index - 1] as string) > (keys[index] as string)) {
      keys.sort();
      break;
    }
  }
  let text = '{';
  let first = true;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    const member = object[key];
    if (member === undefined) continue; // JSON.stringify drops undefined members; so do we.
    text += (first ? '' : ',') + quoteJsonString(key) + ':' + serialize(member, depth + 1);
    first = false;
  }
  return text + '}';
}

/** Longest string checked by hand before quoting; longer ones go straight to JSON.stringify. */
const quoteScanLengthMax = 64;

/** JSON.stringify(text), faster: a short string with nothing to escape is only wrapped in quotes. */
export function quoteJsonString(text: string): string {
  const length = text.length;
  if (length > quoteScanLengthMax) return JSON.stringify(text);
  for (let index = 0; index < length; index += 1) {
    const code = text.charCodeAt(index);
    // Control characters, '"', '\' and surrogates (a lone one is escaped) are left to JSON.stringify.
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return '"' + text + '"';
}

/** UTF-8 bytes of JSON.stringify(text), which is also the string's canonical form, without building it. */
export function jsonStringByteLength(text: string): number {
  const length = text.length;
  let bytes = length + 2; // one per UTF-16 code unit and the quotes; what each unit adds beyond one follows
  for (let index = 0; index < length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      if (code >= 0x20) {
        if (code === 0x22 || code === 0x5c) bytes += 1; // \" \\
      } else if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) {
        bytes += 1; // \b \t \n \f \r
      } else {
        bytes += 5; // \u00XX
      }
    } else if (code < 0x800) {
      bytes += 1;
    } else if (code < 0xd800 || code > 0xdfff) {
      bytes += 2;
    } else if (code <= 0xdbff && index + 1 < length && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: four bytes for two code units
      index += 1;
    } else {
      bytes += 5; // a lone surrogate is written as \uXXXX
    }
  }
  return bytes;
}

/** Bytes of JSON.stringify(value) for a finite number (ASCII), without building it for a safe integer. */
export function jsonNumberByteLength(value: number): number {
  if (!Number.isSafeInteger(value)) return String(value).length;
  let magnitude = value < 0 ? -value : value;
  let bytes = value < 0 ? 2 : 1;
  while (magnitude >= 10) {
    magnitude = Math.floor(magnitude / 10);
    bytes += 1;
  }
  return bytes;
}
