// Canonical JSON, the bytes behind every client-signed digest: its exact output (keys sorted by UTF-16 code units,
// compact, JSON.stringify's strings and numbers), what it refuses, and byte-identity with the plain recursive
// definition below on random values, including every kind of value it must refuse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonNestingDepthMax } from '../../src/limits.ts';
import { canonicalJson, CanonicalJsonError, quoteJsonString } from '../../src/signing/canonical-json.ts';

/** The definition, written as plainly as possible (the implementation before it was made faster). */
function referenceCanonicalJson(value: unknown, depth = 0): string {
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
  if (depth >= jsonNestingDepthMax) throw new CanonicalJsonError(`JSON nesting deeper than ${jsonNestingDepthMax} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => referenceCanonicalJson(item, depth + 1)).join(',')}]`;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new CanonicalJsonError('only plain objects and arrays have a canonical JSON form');
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    members.push(`${JSON.stringify(key)}:${referenceCanonicalJson(member, depth + 1)}`);
  }
  return `{${members.join(',')}}`;
}

/** "ok:<text>" or "error:<message>", for comparing outcomes. */
function outcome(serialize: (value: unknown) => string, value: unknown): string {
  try {
    return `ok:${serialize(value)}`;
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalJsonError);
    return `error:${(error as Error).message}`;
  }
}

const anyString = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.string({ maxLength: 10, unit: 'binary' }),
  fc.string({ maxLength: 80, unit: 'grapheme-ascii' }),
  fc.constantFrom('', '"', '\\', '\u0000\b\t\n\f\r\u001f\u007f', 'é', '😀', '\ud800', '\udc00', '\u2028', '__proto__', '10', '9', 'Z', 'a'.repeat(65)),
);
const key = fc.oneof(anyString, fc.constantFrom('a', 'b', 'A', '0', '1', '10', '9', '-1', '1.5', 'é', '__proto__'));
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(-0, 1e21, 1e-7, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE),
    anyString,
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(key, tie('json'), { maxKeys: 6 }),
    fc.dictionary(key, tie('json'), { maxKeys: 3, noNullPrototype: false }),
  ),
}));

describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code units at every level, and writes strings and numbers as JSON.stringify does', () => {
    const value = { b: 1, a: [{ z: null, y: true }], 10: 'x', 9: -0, Z: 1e21, é: '\u2028"\\\u0001😀', '': 0.5 };
    expect(canonicalJson(value)).toBe('{"":0.5,"10":"x","9":0,"Z":1e+21,"a":[{"y":true,"z":null}],"b":1,"é":"\u2028\\"\\\\\\u0001😀"}');
    expect(canonicalJson(JSON.parse('{"__proto__":{"b":1,"a":2}}'))).toBe('{"__proto__":{"a":2,"b":1}}');
    expect(canonicalJson(Object.assign(Object.create(null) as object, { b: 2, a: 1 }))).toBe('{"a":1,"b":2}');
    expect(canonicalJson({ a: undefined, b: [] })).toBe('{"b":[]}');
    expect(canonicalJson('\ud800')).toBe('"\\ud800"');
  });

  it.each([
    ['NaN', Number.NaN, 'a non-finite number has no JSON form'],
    ['Infinity inside an array', [1, Number.POSITIVE_INFINITY], 'a non-finite number has no JSON form'],
    ['an undefined element', [undefined], 'a undefined has no JSON form'],
    ['a function member', { f: () => 1 }, 'a function has no JSON form'],
    ['a bigint', 1n, 'a bigint has no JSON form'],
    ['a symbol', Symbol('s'), 'a symbol has no JSON form'],
    ['a Date', { at: new Date(0) }, 'only plain objects and arrays have a canonical JSON form'],
    ['a Map', new Map(), 'only plain objects and arrays have a canonical JSON form'],
    ['a class instance', new (class Point { x = 1 })(), 'only plain objects and arrays have a canonical JSON form'],
    ['a boxed string', Object('s') as unknown, 'only plain objects and arrays have a canonical JSON form'],
  ])('refuses %s', (_name, value, message) => {
    expect(() => canonicalJson(value)).toThrow(new CanonicalJsonError(message));
  });

  it(`accepts ${jsonNestingDepthMax} levels of nesting, refuses one more, and stops a cycle`, () => {
    const nested = (levels: number, arrays: boolean): unknown => {
      let value: unknown = 1;
      for (let index = 0; index < levels; index += 1) value = arrays ? [value] : { k: value };
      return value;
    };
    for (const arrays of [true, false]) {
      expect(canonicalJson(nested(jsonNestingDepthMax, arrays))).toHaveLength(jsonNestingDepthMax * (arrays ? 2 : 6) + 1);
      expect(() => canonicalJson(nested(jsonNestingDepthMax + 1, arrays))).toThrow(`JSON nesting deeper than ${jsonNestingDepthMax} levels`);
    }
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(() => canonicalJson(cycle)).toThrow(CanonicalJsonError);
  });

  it('is byte-identical to the plain definition on random JSON values', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('gives the same output or the same error as the plain definition on arbitrary values', () => {
    const holey = fc.array(json, { maxLength: 3 }).map((elements) => {
      const array = [...elements];
      array.length += 2; // two holes at the end: the plain definition writes them as empty
      return array;
    });
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withNullPrototype: true,
      withObjectString: true,
      withSet: true,
      withSparseArray: true,
      withTypedArray: true,
      maxDepth: 4,
    });
    fc.assert(
      fc.property(fc.oneof(anything, json, holey), (value) => {
        expect(outcome(canonicalJson, value)).toBe(outcome(referenceCanonicalJson, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('quotes any string exactly as JSON.stringify does', () => {
    fc.assert(
      fc.property(anyString, (text) => {
        expect(quoteJsonString(text)).toBe(JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
  });
});
