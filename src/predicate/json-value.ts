// JSON helpers the parser and the evaluator share: own-property reads (never the prototype chain), JSON types,
// JSON equality against a rule's expected value, and the two ways a path is written (pointer, human text).
import { quoteJsonString } from '../signing/canonical-json.ts';
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
    const key = path[index] as string;
    // ownMember, spelled out: this loop runs for every path an evaluation reads.
    current = Object.hasOwn(current, key) ? current[key] : undefined;
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

/** JSON equality of an observed value with a rule's expected value (a validated copy: plain, finite):
 * numbers by value (1 equals 1.0, -0 equals 0), objects by their set of own keys in any order, arrays element
 * by element in order. The work is bounded by the expected value, never by the observed one, and nothing is
 * allocated. Small, with arrays and objects apart, so that scalar members are compared without a call. */
export function equalsExpected(expected: JsonValue, observed: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return observed === expected;
  if (typeof observed !== 'object' || observed === null) return false;
  return Array.isArray(expected) ? equalsExpectedArray(expected as readonly JsonValue[], observed) : equalsExpectedObject(expected as { readonly [key: string]: JsonValue }, observed);
}

function equalsExpectedArray(expected: readonly JsonValue[], observed: object): boolean {
  if (!Array.isArray(observed)) return false;
  const length = expected.length;
  if (observed.length !== length) return false;
  for (let index = 0; index < length; index += 1) {
    if (!equalsExpected(expected[index] as JsonValue, observed[index])) return false;
  }
  return true;
}

function equalsExpectedObject(expected: { readonly [key: string]: JsonValue }, observed: object): boolean {
  if (Array.isArray(observed)) return false;
  let keyCount = 0;
  for (const key in expected) {
    // The copy has only own members; the check keeps a polluted Object.prototype out.
    if (!Object.hasOwn(expected, key)) continue;
    keyCount += 1;
    if (!Object.hasOwn(observed, key)) return false;
    if (!equalsExpected(expected[key] as JsonValue, (observed as JsonObject)[key])) return false;
  }
  return countOwnMembers(observed as JsonObject, keyCount) === keyCount;
}

/** A fresh deep copy of a rule's expected value (validated: plain, finite), for a trace step, so that no step
 * shares an object with the rule or with another step. */
export function copyExpected(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const elements = value as readonly JsonValue[];
    const copy: JsonValue[] = [];
    for (let index = 0; index < elements.length; index += 1) copy.push(copyExpected(elements[index] as JsonValue));
    return copy;
  }
  const object = value as { readonly [key: string]: JsonValue };
  const copy: { [key: string]: JsonValue } = {};
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const member = copyExpected(object[key] as JsonValue);
    // As in the rule's own copy (parse.ts): an own "__proto__", or a key Object.prototype has a setter for, is
    // defined rather than assigned.
    if (key === '__proto__' || key in copy) Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return copy;
}

/** RFC 6901 JSON Pointer of an evidence path: `["a","b/c"]` → `/a/b~1c`. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  let pointer = '';
  for (let index = 0; index < segments.length; index += 1) pointer += '/' + pointerSegment(String(segments[index]));
  return pointer;
}

/** One JSON Pointer reference token: `~` → `~0`, `/` → `~1`. */
export function pointerSegment(text: string): string {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 0x7e || code === 0x2f) return text.replaceAll('~', '~0').replaceAll('/', '~1');
  }
  return text;
}

/** A path for a human sentence: `status`, `payload.http_status`, `payload["a.b"]`. */
export function humanPath(path: EvidencePath): string {
  let text = '';
  for (let index = 0; index < path.length; index += 1) text += humanSegment(path[index] as string, text === '');
  return text;
}

/** One segment of humanPath: `name` (`.name` after a segment) when it is a plain name, else `["…"]`. */
export function humanSegment(segment: string, first: boolean): string {
  if (!isPlainSegment(segment)) return '[' + quoteJsonString(segment) + ']';
  return first ? segment : '.' + segment;
}

/** True for a segment matching /^[A-Za-z_][A-Za-z0-9_-]*$/, checked without a regular expression. */
function isPlainSegment(segment: string): boolean {
  const length = segment.length;
  if (length === 0) return false;
  for (let index = 0; index < length; index += 1) {
    const code = segment.charCodeAt(index);
    if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f) continue; // a-z A-Z _
    if (index > 0 && ((code >= 0x30 && code <= 0x39) || code === 0x2d)) continue; // 0-9 - after the first
    return false;
  }
  return true;
}

/** Freezes an object and every object or array inside it, so shared constants cannot be changed by a caller. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
