// JSON helpers the parser and the evaluator share: own-property reads (never the prototype chain), JSON types,
// JSON equality compiled from the expected value, and the two ways a path is written (pointer, human text).
import type { EvidencePath, JsonTypeName, JsonValue } from './ast.ts';

export type JsonObject = { readonly [key: string]: unknown };

/** True for a JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The member `key` of `object` only if it is the object's own property, so `__proto__` or `constructor`
 * never reach Object.prototype. An own `__proto__` member (JSON.parse makes one) is read as data. */
export function ownMember(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** The evidence at `path`, or undefined when any segment is missing or crosses a non-object (arrays included). */
export function readPath(evidence: unknown, path: EvidencePath): unknown {
  let current = evidence;
  for (let index = 0; index < path.length; index += 1) {
    if (!isJsonObject(current)) return undefined;
    current = ownMember(current, path[index] as string);
  }
  return current;
}

/** The JSON type of a value with integers told apart from other numbers; undefined when it is not JSON. */
export function jsonTypeOf(value: unknown): JsonTypeName | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'number':
      if (!Number.isFinite(value)) return undefined;
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'object':
      return Array.isArray(value) ? 'array' : 'object';
    default:
      return undefined;
  }
}

/** Own enumerable members whose value is not undefined, counted up to `stopAfter` (no allocation). */
function countOwnMembers(object: JsonObject, stopAfter: number): number {
  let count = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key) || object[key] === undefined) continue;
    count += 1;
    if (count > stopAfter) break;
  }
  return count;
}

export type EqualityMatcher = (observed: unknown) => boolean;

/** Compiles JSON equality against a fixed expected value: numbers by value (1 equals 1.0, -0 equals 0),
 * objects by their set of keys in any order, arrays element by element in order. The work done per call is
 * bounded by the expected value, never by the observed one. */
export function compileEqualityMatcher(expected: JsonValue): EqualityMatcher {
  if (expected === null || typeof expected !== 'object') {
    return (observed) => observed === expected;
  }
  if (Array.isArray(expected)) {
    const elementMatchers = (expected as readonly JsonValue[]).map(compileEqualityMatcher);
    const length = elementMatchers.length;
    return (observed) => {
      if (!Array.isArray(observed) || observed.length !== length) return false;
      for (let index = 0; index < length; index += 1) {
        if (!(elementMatchers[index] as EqualityMatcher)(observed[index])) return false;
      }
      return true;
    };
  }
  const expectedObject = expected as { readonly [key: string]: JsonValue };
  const keys = Object.keys(expectedObject);
  const memberMatchers = keys.map((key) => compileEqualityMatcher(expectedObject[key] as JsonValue));
  return (observed) => {
    if (!isJsonObject(observed)) return false;
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index] as string;
      if (!Object.hasOwn(observed, key)) return false;
      if (!(memberMatchers[index] as EqualityMatcher)(observed[key])) return false;
    }
    return countOwnMembers(observed, keys.length) === keys.length;
  };
}

/** RFC 6901 JSON Pointer of an evidence path: `["a","b/c"]` → `/a/b~1c`. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  let pointer = '';
  for (const segment of segments) {
    const text = String(segment);
    const needsEscape = text.includes('~') || text.includes('/');
    pointer += '/' + (needsEscape ? text.replaceAll('~', '~0').replaceAll('/', '~1') : text);
  }
  return pointer;
}

const plainSegmentPattern = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A path for a human sentence: `status`, `payload.http_status`, `payload["a.b"]`. */
export function humanPath(path: EvidencePath): string {
  let text = '';
  for (const segment of path) {
    if (plainSegmentPattern.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** Freezes an object and every object or array inside it, so shared constants cannot be changed by a caller. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
