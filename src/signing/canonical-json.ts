// Canonical JSON: compact, object keys sorted recursively, numbers and strings formatted as JavaScript's
// JSON.stringify formats them. This is the byte form behind every BLAKE3 digest a client signs
// (client-wire.md §12.3) and behind the predicate size limit.
import { jsonNestingDepthMax } from '../limits.ts';

export class CanonicalJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalJsonError';
  }
}

/** Serializes a JSON value canonically. Throws CanonicalJsonError for values JSON cannot carry
 * (non-finite numbers, undefined, functions, bigint, cycles, non-plain objects) and for nesting deeper than the
 * limit (which is also what stops a cycle). */
export function canonicalJson(value: unknown): string {
  return serialize(value, 0);
}

function serialize(value: unknown, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError('a non-finite number has no JSON form');
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new CanonicalJsonError(`a ${typeof value} has no JSON form`);
  }
  if (depth >= jsonNestingDepthMax) {
    throw new CanonicalJsonError(`JSON nesting deeper than ${jsonNestingDepthMax} levels`);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => serialize(item, depth + 1)).join(',')}]`;
  }
  // A Date, Map or class instance would not serialize as JSON.stringify does (toJSON, no own keys): refuse it
  // rather than digest something the client never sent.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new CanonicalJsonError('only plain objects and arrays have a canonical JSON form');
  }
  // JavaScript's default sort compares UTF-16 code units, which is what the public client does.
  const keys = Object.keys(value).sort();
  const members: string[] = [];
  for (const key of keys) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue; // JSON.stringify drops undefined members; so do we.
    members.push(`${JSON.stringify(key)}:${serialize(member, depth + 1)}`);
  }
  return `{${members.join(',')}}`;
}
