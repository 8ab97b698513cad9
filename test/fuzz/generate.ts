// Request generation for the boundary fuzzer: values derived from a route's own JSON schema, then mutated with the
// hostile input the boundary must refuse cleanly (U+0000, lone surrogates, 1 MB strings, deep nesting, numbers past
// 2^53, wrong types, extra and missing fields, prototype keys, oversized keys), strings of every troublesome Unicode
// class at each field's length limit (controls, characters that grow when case-mapped or normalised), plus hostile
// path parameters, queries, bodies and content codings.
import fc from 'fast-check';
import { requestBodyBytesMax, requestJsonNestingDepthMax } from '../../src/limits.ts';

type Schema = Record<string, unknown>;

/** JSON text put into the body exactly as given: numbers JSON.stringify cannot spell (1e400, 2^53+1), and values
 * too big or too deep to keep as objects (fast-check prints counterexamples, and would overflow on them). */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `${rawMarker}${this.text}${rawMarker}`;
  }
  [fc.toStringMethod](): string {
    return this.text.length <= 64 ? `RawJson(${this.text})` : `RawJson(${this.text.slice(0, 24)}… ${this.text.length} characters)`;
  }
}
const rawMarker = '\u0007raw\u0007';
/** The marker as JSON.stringify writes it (escaped), and the raw text between two of them, itself escaped. */
const escapedMarker = JSON.stringify(rawMarker).slice(1, -1).replaceAll('\\', '\\\\');
const rawPattern = new RegExp(`"${escapedMarker}(.*?)${escapedMarker}"`, 'gs');

/** JSON text of a generated value: lone surrogates come out as \u escapes (JSON.stringify is well-formed). */
export function toJsonText(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(rawPattern, (_match, text: string) => JSON.parse(`"${text}"`) as string);
}

const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/** Characters of each Unicode class a string field may meet, which a check, a normalisation or a database CHECK
 * may treat differently: the classes a column's CHECK refuses (controls), those that make a string longer when
 * lowercased, uppercased or normalised (so a limit checked before normalising is passed after it), those JavaScript
 * trims and Postgres may not, invisible and bidirectional formatting, combining marks, astral characters (two UTF-16
 * units, one code point), noncharacters, and markup. */
export const unicodeClasses = {
  c0Control: ['\u0001', '\u0009', '\u000a', '\u001f', '\u007f'],
  c1Control: ['\u0080', '\u0085', '\u009b', '\u009f'],
  growsWhenLowercased: ['\u0130'],
  growsWhenUppercased: ['ß', '\u0149', '\u01f0', '\u0390', '\u0587', '\ufb00', '\ufb03', '\ufb06'],
  growsWhenNormalized: ['\u0344', '\u0958', '\ufb2c', '\u{1d160}', '\ufdfa', '\u3300', '\u2474'],
  whitespace: ['\u00a0', '\u1680', '\u2000', '\u2028', '\u2029', '\u202f', '\u3000', '\ufeff', '\u180e'],
  invisible: ['\u200b', '\u200d', '\u2060', '\u00ad', '\u034f'],
  bidirectional: ['\u202e', '\u2066', '\u2069', '\u061c', '\u200f'],
  combining: ['\u0301', '\u0307', '\u20dd'],
  astral: ['\u{1f600}', '\u{10ffff}', '\u{e0001}', '\u{f0000}', '\u{1d11e}'],
  noncharacter: ['\ufffe', '\uffff', '\ufdd0', '\ufffd'],
  markup: ['<', '"', "'", '\\', '&', '%', '/', '~', '@', '+'],
} as const;

export const unicodeCharacter: fc.Arbitrary<string> = fc.constantFrom(...Object.values(unicodeClasses).flat());

/** The longest string the fuzzer builds to a field's limit; longer limits (1 MB fields) have their own values. */
const limitProbeLengthMax = 4_096;

/** `sample` padded with `character` to `length` code points (or `sample` alone when already as long), the padding
 * before, after or around it: a value the field's pattern may still take, at its limit. */
export function padToLength(sample: string, character: string, length: number, where: 'before' | 'after' | 'around'): string {
  const missing = Math.max(0, length - [...sample].length);
  const half = Math.floor(missing / 2);
  if (where === 'before') return character.repeat(missing) + sample;
  if (where === 'after') return sample + character.repeat(missing);
  return character.repeat(half) + sample + character.repeat(missing - half);
}

/** A string at (or one past) a field's limit made of a troublesome character, or a schema-shaped sample padded to the
 * limit with it, or with it inserted: what tests that a limit holds after normalising, and that no class reaches a
 * CHECK first. */
function troublesomeStringFor(schema: Schema, sample: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const declared = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const limit = Math.min(declared ?? 256, limitProbeLengthMax);
  return fc.oneof(
    fc.tuple(unicodeCharacter, fc.constantFrom(limit, limit + 1, Math.max(1, Math.floor(limit / 2)))).map(([character, length]) => character.repeat(length)),
    fc.tuple(sample, unicodeCharacter, fc.constantFrom('before', 'after', 'around') as fc.Arbitrary<'before' | 'after' | 'around'>).map(([text, character, where]) => padToLength(text, character, limit, where)),
    // Inserted between code points, so that no surrogate pair of the sample is split.
    fc.tuple(sample, unicodeCharacter, fc.nat()).map(([text, character, at]) => {
      const characters = [...text];
      characters.splice(at % (characters.length + 1), 0, character);
      return characters.join('');
    }),
  );
}

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const sample = schemaShapedString(schema);
  return fc.oneof({ weight: 6, arbitrary: sample }, { weight: 1, arbitrary: troublesomeStringFor(schema, sample) });
}

/** A string the schema takes, as far as fast-check can tell (patterns it can invert, formats, lengths up to 40). */
export function schemaShapedString(schema: Schema): fc.Arbitrary<string> {
  const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 40, 40);
  const minLength = Math.min(typeof schema.minLength === 'number' ? schema.minLength : 0, maxLength);
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
  }
  if (typeof schema.pattern === 'string') {
    // The validator reads patterns as Unicode regular expressions; fast-check inverts some only without the flag.
    for (const flags of ['u', '']) {
      try {
        return fc.stringMatching(new RegExp(schema.pattern, flags)).map((text) => text.slice(0, Math.max(maxLength, 64)));
      } catch {
        // A pattern fast-check cannot invert: plain strings still exercise the route.
      }
    }
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function numberFor(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000_000;
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000;
  if (integer) return fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectFor(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const entries = Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, valueFor(child, depth + 1)]));
  for (const key of required) entries[key] ??= anyJson;
  return fc.record(entries, { requiredKeys: [...required].filter((key) => key in entries) });
}

/** A value that mostly satisfies the schema (patterns, enums, bounds, required keys), so requests reach handlers. */
export function valueFor(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (schema === null || typeof schema !== 'object' || depth > 6) return anyJson;
  const node = schema as Schema;
  if ('const' in node) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  const choices = (node.oneOf ?? node.anyOf) as unknown[] | undefined;
  if (Array.isArray(choices) && choices.length > 0) return fc.oneof(...choices.map((choice) => valueFor(choice, depth + 1)));
  const types = [node.type].flat().filter((type): type is string => typeof type === 'string');
  if (types.length > 1) return fc.oneof(...types.map((type) => valueFor({ ...node, type }, depth)));
  switch (types[0]) {
    case 'string': return stringFor(node);
    case 'integer': return numberFor(node, true);
    case 'number': return numberFor(node, false);
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': {
      const maxLength = Math.min(typeof node.maxItems === 'number' ? node.maxItems : 4, 4);
      const minLength = Math.min(typeof node.minItems === 'number' ? node.minItems : 0, maxLength);
      return fc.array(valueFor(node.items, depth + 1), { minLength, maxLength });
    }
    case 'object': return objectFor(node, depth);
    default: return anyJson;
  }
}

/** Arrays and objects nested `depth` levels around a leaf (JSON text). */
const nested = (depth: number, leaf: string): RawJson => {
  const half = Math.floor(depth / 2);
  return new RawJson(`${'[{"n":'.repeat(half)}${'['.repeat(depth % 2)}${leaf}${']'.repeat(depth % 2)}${'}]'.repeat(half)}`);
};

/** Values no route should take, each of which must still be a 4xx. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udbff\u0000', '\u0000'.repeat(64), 'é\u0000'),
  fc.string({ maxLength: 8 }).map((text) => `${text}\u0000`),
  fc.tuple(unicodeCharacter, fc.constantFrom(1, 64, 65, 128, 129, 254, 255, 256, 257, 1_024, 4_097)).map(([character, length]) => character.repeat(length)),
  fc.tuple(unicodeCharacter, fc.constantFrom(60, 125, 127)).map(([character, length]) => `${character.repeat(length)}@x.io`),
  fc.constantFrom(requestBodyBytesMax - 1024, requestBodyBytesMax + 1).map((length) => new RawJson(`"${'x'.repeat(length)}"`)),
  fc.tuple(fc.constantFrom(60, 70, requestJsonNestingDepthMax - 4, requestJsonNestingDepthMax + 1, 5_000), fc.constantFrom('1', '"\\u0000"'))
    .map(([depth, leaf]) => nested(depth, leaf)),
  fc.constantFrom('9007199254740993', '-9007199254740993', '1e400', '-1e400', '1e-400', '-0', '123456789012345678901234567890', '0.1e1')
    .map((text) => new RawJson(text)),
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), '', 'text', [], {}, [null], { a: {} }),
  fc.constantFrom(
    () => JSON.parse('{"__proto__":{"admin":true}}') as unknown,
    () => ({ constructor: { prototype: { admin: true } } }),
  ).map((make) => make()),
);

/** A key no schema names, sometimes hostile itself (an oversized key must not be echoed whole in a refusal). */
const extraKey = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('__proto__', 'constructor', '\u0000', '\ud800', 'x'.repeat(300), 'k'.repeat(5_000), 'a/b~c', '\u0130'.repeat(200)),
  unicodeCharacter,
);

/** Where in a value a mutation lands: the position, in visiting order, of an object or array. */
function containers(value: unknown): Array<Record<string, unknown> | unknown[]> {
  const found: Array<Record<string, unknown> | unknown[]> = [];
  const visit = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== 'object' || node instanceof RawJson || depth > 20) return;
    found.push(node as Record<string, unknown>);
    for (const child of Object.values(node)) visit(child, depth + 1);
  };
  visit(value, 0);
  return found;
}

export type Mutation =
  | { readonly kind: 'none' }
  | { readonly kind: 'replace'; readonly at: number; readonly child: number; readonly value: unknown }
  | { readonly kind: 'add'; readonly at: number; readonly key: string; readonly value: unknown }
  | { readonly kind: 'delete'; readonly at: number; readonly child: number }
  | { readonly kind: 'whole'; readonly value: unknown };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' } as const) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), child: fc.nat(), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.nat(), key: extraKey, value: fc.oneof(hostileValue, anyJson) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), child: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('whole' as const), value: hostileValue }) },
);

/** A deep copy of a generated value that keeps own `__proto__` keys and RawJson instances as they are. */
function clone(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof RawJson) return value;
  if (Array.isArray(value)) return value.map(clone);
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    Object.defineProperty(copy, key, { value: clone(child), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** Applies a mutation to a copy of the value; positions wrap, so every mutation lands somewhere. */
export function applyMutation(value: unknown, change: Mutation): unknown {
  if (change.kind === 'none') return value;
  if (change.kind === 'whole') return change.value;
  const copy = clone(value);
  const targets = containers(copy);
  if (targets.length === 0) return change.kind === 'replace' ? change.value : copy;
  const target = targets[change.at % targets.length]!;
  const keys = Object.keys(target);
  if (change.kind === 'add') {
    if (Array.isArray(target)) target.push(change.value);
    else Object.defineProperty(target, change.key, { value: change.value, enumerable: true, writable: true, configurable: true });
    return copy;
  }
  if (keys.length === 0) return copy;
  const key = keys[change.child % keys.length]!;
  if (change.kind === 'delete') {
    if (Array.isArray(target)) target.splice(Number(key), 1);
    else delete target[key];
  } else {
    (target as Record<string, unknown>)[key] = change.value;
  }
  return copy;
}

/** A path parameter: a real id of the tenant's (chosen at send time from ids seen so far), a schema-shaped id of
 * nothing, or text no id looks like, sent encoded or as raw URL text. */
export type ParamChoice =
  | { readonly kind: 'real'; readonly index: number }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'raw'; readonly text: string };

export function paramChoice(schema: unknown): fc.Arbitrary<ParamChoice> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('real' as const), index: fc.nat() }) },
    // JSON text for a value that is no string: a route without a parameter schema gets any JSON, and String() of an
    // object with its own `toString` member throws.
    { weight: 3, arbitrary: valueFor(schema).map((value) => ({ kind: 'text' as const, text: typeof value === 'string' ? value : JSON.stringify(value) })) },
    {
      weight: 3,
      arbitrary: fc
        .oneof(fc.string({ maxLength: 20, unit: 'binary' }), fc.constantFrom('\u0000', 'key_\u0000', '..', '/', ' ', 'x'.repeat(199), 'x'.repeat(201)))
        .map((text) => ({ kind: 'text' as const, text })),
    },
    { weight: 1, arbitrary: fc.constantFrom('%zz', '%', '%ED%A0%80', '%C0%AF', '%00', '%2F..%2F', '%F0%9F%98').map((text) => ({ kind: 'raw' as const, text })) },
  );
}

/** A query: schema-shaped values, some replaced by hostile text or raw bad escapes, some unknown keys. */
export function queryFor(schema: unknown): fc.Arbitrary<string> {
  const hostileText = fc.constantFrom('%00', '%zz', '%ED%A0%80', '%', encodeURIComponent('\u{1f600}'), 'x'.repeat(5_000), '-1', '1e400', '9007199254740993');
  const pair = fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return fc
    .tuple(
      valueFor(schema ?? { type: 'object' }),
      fc.array(fc.oneof(pair, hostileText.map((text) => `cursor=${text}`), hostileText.map((text) => `limit=${text}`)), { maxLength: 2 }),
      fc.boolean(),
    )
    .map(([value, extras, keepSchemaValues]) => {
      const parts = keepSchemaValues && value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value).map(([key, item]) => `${encodeURIComponent(key)}=${encodeURIComponent(typeof item === 'string' ? item : JSON.stringify(item) ?? '')}`)
        : [];
      return [...parts, ...extras].join('&');
    });
}

/** How the body goes on the wire: usually JSON of the (mutated) value, sometimes bytes no JSON parser takes. */
export type BodyEncoding =
  | { readonly kind: 'json'; readonly contentType: string }
  | { readonly kind: 'bytes'; readonly contentType: string | undefined; readonly bytes: readonly number[] }
  | { readonly kind: 'none' };

/** A Content-Encoding header on the body, and whether the body is really coded that way: the service decodes no
 * coding, so either way a coded body is a 415, never read as JSON. */
export type ContentEncoding = { readonly coding: string; readonly compressed: boolean } | null;

export const contentEncoding: fc.Arbitrary<ContentEncoding> = fc.oneof(
  { weight: 30, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.record({ coding: fc.constantFrom('gzip', 'br', 'deflate', 'zstd', 'x-unknown', 'identity', 'GZIP', 'identity, gzip', ''), compressed: fc.boolean() }) },
);

export const bodyEncoding: fc.Arbitrary<BodyEncoding> = fc.oneof(
  { weight: 16, arbitrary: fc.constant({ kind: 'json', contentType: 'application/json' } as const) },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded').map((contentType) => ({ kind: 'json' as const, contentType })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bytes' as const),
      contentType: fc.constantFrom<string | undefined>('application/json', 'text/plain', undefined),
      bytes: fc.oneof(
        fc.constantFrom([0xed, 0xa0, 0x80], [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d], [0xef, 0xbb, 0xbf, 0x7b, 0x7d], [], [0x7b], [0x00]),
        fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 32 }),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' } as const) },
);
