// The compiled form: the canonical size counted during validation (never by building the canonical JSON) equals
// the UTF-8 length of canonicalJson on random documents; the document and canonical JSON built on first read;
// clauses reading the same path share one evidence location, read once per evaluation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { PredicateError } from '../../src/predicate/errors.ts';
import { serviceErrorOfPredicate } from '../../src/errors/pure-error-mapping.ts';
import { jsonNestingDepthMax, predicateDocumentBytesMax } from '../../src/limits.ts';
import { compilePredicate, type CompiledPredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { parsePredicate } from '../../src/predicate/parse.ts';
import { canonicalJson, CanonicalJsonError, jsonNumberByteLength, jsonStringByteLength } from '../../src/signing/canonical-json.ts';
import { doc, thrownServiceError } from './support.ts';

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

// Strings of every kind: any UTF-16 code units (lone surrogates included), escapes, control characters,
// multi-byte characters and pairs, and keys that mean something to JavaScript.
const anyString = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ maxLength: 8, unit: 'binary' }),
  fc.string({ maxLength: 4, unit: 'grapheme' }),
  fc.constantFrom('', '"', '\\', '/', '\u0000\b\t\n\f\r\u001f\u007f', 'é', '€', '😀', '\ud800', '\udc00x', '\u2028\u2029', '__proto__', 'constructor', '10', '9'),
);
const finiteNumber = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 0.1, 1e21, -1e21, 1e-7, 123456789012345, 2 ** 53, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE),
);
const { jsonValue } = fc.letrec<{ jsonValue: unknown }>((tie) => ({
  jsonValue: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    finiteNumber,
    anyString,
    fc.array(tie('jsonValue'), { maxLength: 4 }),
    fc.dictionary(anyString, tie('jsonValue'), { maxKeys: 4 }),
  ),
}));
const segment = anyString.filter((text) => text.length <= 256);
const path = fc.array(segment, { minLength: 1, maxLength: 4 });
const field = segment.filter((text) => text.length > 0);
const leaf = fc.oneof(
  fc.constant({ op: 'true' }),
  fc.record({ op: fc.constantFrom('eq', 'completion'), path, value: jsonValue }),
  fc.record({ op: fc.constant('lte'), path, limit_source: fc.constant('amount_cents') }),
  fc.record({ op: fc.constant('budget_cap'), path }),
  fc.record({ op: fc.constantFrom('schema_field', 'array_nonempty'), field }),
);
const { clause } = fc.letrec<{ clause: unknown; combinator: unknown; negation: unknown }>((tie) => ({
  clause: fc.oneof({ depthSize: 'small', maxDepth: 4 }, leaf, tie('combinator'), tie('negation')),
  combinator: fc.record({ op: fc.constantFrom('and', 'or'), clauses: fc.array(tie('clause'), { minLength: 1, maxLength: 5 }) }),
  negation: fc.record({ op: fc.constant('not'), clause: tie('clause') }),
}));

function compileOrServiceError(document: unknown): CompiledPredicate | ServiceError {
  try {
    return compilePredicate(document);
  } catch (error) {
    if (error instanceof PredicateError) return serviceErrorOfPredicate(error);
    throw error;
  }
}

describe('canonical size, counted while validating', () => {
  it('jsonStringByteLength is the UTF-8 length of JSON.stringify for any string', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, fc.string({ maxLength: 64, unit: 'binary' })), (text) => {
        expect(jsonStringByteLength(text)).toBe(utf8Bytes(JSON.stringify(text)));
      }),
      { numRuns: 5000 },
    );
  });

  it('jsonNumberByteLength is the length of JSON.stringify for any finite number', () => {
    fc.assert(
      fc.property(fc.oneof(finiteNumber, fc.maxSafeInteger(), fc.integer()), (value) => {
        expect(jsonNumberByteLength(value)).toBe(JSON.stringify(value).length);
      }),
      { numRuns: 5000 },
    );
  });

  it('equals the UTF-8 length of the canonical JSON of the document and of the input, on random valid documents', () => {
    fc.assert(
      fc.property(clause, (root) => {
        const input = doc(root);
        const compiled = compileOrServiceError(input);
        if (compiled instanceof ServiceError) {
          // Only the size can refuse these documents; the bytes it reports are the canonical bytes.
          expect(compiled.code).toBe('predicate.document_too_large');
          if (compiled.details?.['bytes'] !== undefined) expect(compiled.details['bytes']).toBe(utf8Bytes(canonicalJson(input)));
          return;
        }
        expect(compiled.canonicalBytes).toBe(utf8Bytes(canonicalJson(compiled.document)));
        expect(compiled.canonicalBytes).toBe(utf8Bytes(canonicalJson(input)));
        expect(compiled.canonicalBytes).toBe(utf8Bytes(compiled.canonicalJson));
      }),
      { numRuns: 2000 },
    );
  });

  it('reports the exact canonical size of documents around the limit, whatever their characters', () => {
    // Paths do not count towards the early lower bound, so these documents are always measured exactly.
    const document = fc
      .record({ clauses: fc.integer({ min: 1, max: 32 }), segments: fc.integer({ min: 1, max: 16 }), unit: fc.constantFrom('x', 'é', '€', '😀', '"', '\u0001', '\ud800'), length: fc.integer({ min: 1, max: 60 }) })
      .map(({ clauses, segments, unit, length }) => doc({
        op: 'or',
        clauses: Array.from({ length: clauses }, (_, index) => ({ op: 'budget_cap', path: Array.from({ length: segments }, () => `${index}${unit.repeat(length)}`.slice(0, 256)) })),
      }));
    let refused = 0;
    fc.assert(
      fc.property(document, (input) => {
        const bytes = utf8Bytes(canonicalJson(input));
        const compiled = compileOrServiceError(input);
        if (bytes > predicateDocumentBytesMax) {
          refused += 1;
          expect(compiled).toBeInstanceOf(ServiceError);
          expect((compiled as ServiceError).details).toEqual({ pointer: '', limit: predicateDocumentBytesMax, bytes });
        } else {
          expect((compiled as CompiledPredicate).canonicalBytes).toBe(bytes);
        }
      }),
      { numRuns: 300 },
    );
    expect(refused).toBeGreaterThan(0);
  });

  it('refuses nesting past the JSON limit exactly when canonicalJson of the document would', () => {
    const deep = fc.record({ ands: fc.integer({ min: 0, max: 24 }), levels: fc.integer({ min: 0, max: jsonNestingDepthMax - 1 }), arrays: fc.boolean() });
    fc.assert(
      fc.property(deep, ({ ands, levels, arrays }) => {
        let value: unknown = 'v';
        for (let index = 0; index < levels; index += 1) value = arrays ? [value] : { k: value };
        let root: unknown = { op: 'eq', path: ['a'], value };
        for (let index = 0; index < ands; index += 1) root = { op: 'and', clauses: [root] };
        let canonicalError: string | undefined;
        try {
          canonicalJson(doc(root));
        } catch (error) {
          expect(error).toBeInstanceOf(CanonicalJsonError);
          canonicalError = (error as Error).message;
        }
        const compiled = compileOrServiceError(doc(root));
        if (canonicalError === undefined) {
          expect(compiled).not.toBeInstanceOf(ServiceError);
        } else {
          expect((compiled as ServiceError).details).toEqual({ pointer: '', reason: canonicalError });
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('the compiled predicate', () => {
  it('is frozen, and builds its document on first read: frozen, equal to the input, then the same object', () => {
    fc.assert(
      fc.property(clause, (root) => {
        const input = JSON.parse(JSON.stringify(doc(root))) as unknown;
        const compiled = compileOrServiceError(input);
        fc.pre(!(compiled instanceof ServiceError));
        const predicate = compiled as CompiledPredicate;
        expect(Object.isFrozen(predicate)).toBe(true);
        const document = predicate.document;
        expect(document).toEqual(input);
        expect(JSON.stringify(document)).toBe(JSON.stringify(input));
        expect(document).not.toBe(input);
        expect(predicate.document).toBe(document);
        expect(predicate.canonicalJson).toBe(canonicalJson(document));
        const frozen = (value: unknown): boolean =>
          value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(frozen));
        expect(frozen(document)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('parsePredicate answers the same size, counts and canonical JSON as compilePredicate', () => {
    const input = doc({ op: 'and', clauses: [{ op: 'eq', path: ['a', 'é'], value: { b: [1, '\u2028'] } }, { op: 'not', clause: { op: 'schema_field', field: 'f' } }] });
    const parsed = parsePredicate(input);
    const compiled = compilePredicate(input);
    expect([parsed.nodeCount, parsed.depth, parsed.canonicalBytes, parsed.canonicalJson]).toEqual([compiled.nodeCount, compiled.depth, compiled.canonicalBytes, compiled.canonicalJson]);
    expect(parsed.canonicalJson).toBe('{"root":{"clauses":[{"op":"eq","path":["a","é"],"value":{"b":[1,"\u2028"]}},{"clause":{"field":"f","op":"schema_field"},"op":"not"}],"op":"and"},"version":1}');
  });

  it('reads a path that several clauses share once per evaluation; each step still gets its own copy of what it observed', () => {
    let reads = 0;
    const evidence = {
      get state() {
        reads += 1;
        return { done: true };
      },
    };
    const compiled = compilePredicate(doc({
      op: 'or',
      clauses: [
        { op: 'eq', path: ['state'], value: { done: false } },
        { op: 'completion', path: ['state'], value: 'x' },
        { op: 'schema_field', field: 'state' },
        { op: 'eq', path: ['state'], value: { done: true } },
      ],
    }));
    const result = evaluate(compiled, { evidence, evidenceSchema: { properties: { state: { type: 'string' } } }, amountCents: 0 });
    expect(reads).toBe(1);
    expect(result.passed).toBe(true);
    expect(result.trace.map((step) => step.data.path)).toEqual([undefined, '/state', '/state', '/state', '/state']);
    expect(result.trace[1]?.data.observed).toEqual({ done: true });
    expect(result.trace[1]?.data.observed).not.toBe(result.trace[2]?.data.observed);
    evaluate(compiled, { evidence, evidenceSchema: undefined, amountCents: 0 });
    expect(reads).toBe(2);
  });

  it('writes the same trace on the first evaluation (which builds the sentences) and on later ones', () => {
    const input = { evidence: { a: { 'b/c': 5 }, s: 'x'.repeat(200) }, evidenceSchema: undefined, amountCents: 4 };
    const root = { op: 'and', clauses: [{ op: 'budget_cap', path: ['a', 'b/c'] }, { op: 'eq', path: ['s'], value: 'y' }] };
    const first = JSON.stringify(evaluate(compilePredicate(doc(root)), input));
    const compiled = compilePredicate(doc(root));
    evaluate(compiled, input);
    expect(JSON.stringify(evaluate(compiled, input))).toBe(first);
    expect(first).toBe(
      '{"passed":false,"trace":[{"kind":"and","detail":"clause 1 of 2 failed, so the and failed; later clauses were not evaluated","data":{"passed":false}},' +
        '{"kind":"budget_cap","detail":"a[\\"b/c\\"] is greater than amount_cents","data":{"path":"/a/b~1c","passed":false,"expected":4,"observed":5}}]}',
    );
  });

  it('shows an eq value in its sentence as the start of its JSON.stringify, written while validating', () => {
    const shown = (value: unknown): string => {
      const text = JSON.stringify(value);
      return text.length <= 64 ? text : `${text.slice(0, 63)}…`;
    };
    fc.assert(
      fc.property(jsonValue, (value) => {
        const input = JSON.parse(JSON.stringify(doc({ op: 'eq', path: ['v'], value }))) as unknown;
        const expected = (input as { root: { value: unknown } }).root.value;
        const compiled = compileOrServiceError(input);
        fc.pre(!(compiled instanceof ServiceError));
        const step = evaluate(compiled as CompiledPredicate, { evidence: { v: { never: 'equal' } }, evidenceSchema: undefined, amountCents: 0 }).trace[0];
        expect(step?.detail).toBe(`v does not equal ${shown(expected)}`);
      }),
      { numRuns: 1000 },
    );
  });

  it('gives every step its own copy of the expected value: changing one changes neither the rule nor later steps', () => {
    const compiled = compilePredicate(doc({ op: 'or', clauses: [{ op: 'eq', path: ['a'], value: { k: [1] } }, { op: 'eq', path: ['b'], value: { k: [1] } }] }));
    const input = { evidence: { a: { k: [2] } }, evidenceSchema: undefined, amountCents: 0 };
    const first = evaluate(compiled, input);
    const [missing, failing] = [first.trace[2]?.data.expected, first.trace[1]?.data.expected] as { k: number[] }[];
    expect(missing).not.toBe(failing);
    (failing as { k: number[] }).k.push(3);
    (missing as { k: number[] }).k = [];
    expect(JSON.stringify(evaluate(compiled, input).trace)).toBe(JSON.stringify(evaluate(compilePredicate(compiled.document), input).trace));
    expect(compiled.document.root).toEqual({ op: 'or', clauses: [{ op: 'eq', path: ['a'], value: { k: [1] } }, { op: 'eq', path: ['b'], value: { k: [1] } }] });
    expect(evaluate(compiled, { ...input, evidence: { b: { k: [1] } } }).passed).toBe(true);
  });

  it('writes the right sentence for each op reading a path they share, whichever reads it first', () => {
    const clauses = [
      { op: 'lte', path: ['f'], limit_source: 'amount_cents' },
      { op: 'budget_cap', path: ['f'] },
      { op: 'schema_field', field: 'f' },
      { op: 'array_nonempty', field: 'f' },
      { op: 'eq', path: ['f'], value: 1 },
      { op: 'completion', path: ['f'], value: 1 },
    ];
    const details = (evidence: unknown, order: readonly unknown[]) =>
      evaluate(compilePredicate(doc({ op: 'and', clauses: order.map((clause) => ({ op: 'not', clause: { op: 'not', clause } })) })), { evidence, evidenceSchema: { properties: { f: { type: 'integer' } } }, amountCents: 5 })
        .trace.filter((step) => step.kind !== 'and' && step.kind !== 'not')
        .map((step) => `${step.kind}: ${step.detail}`);
    // Short-circuit stops at the first failing clause, so each evidence is run against every rotation of the order.
    const cases: [unknown, Record<string, string>][] = [
      [{}, { lte: 'evidence has no value at f', budget_cap: 'evidence has no value at f', schema_field: 'evidence has no field f', array_nonempty: 'evidence has no field f', eq: 'evidence has no value at f', completion: 'evidence has no value at f' }],
      [{ f: 1 }, { lte: 'f is at most amount_cents', budget_cap: 'f is at most amount_cents', schema_field: 'field f has a type evidence_schema declares', array_nonempty: 'field f is not an array', eq: 'f equals 1', completion: 'f equals 1' }],
      [{ f: 9 }, { lte: 'f is greater than amount_cents', budget_cap: 'f is greater than amount_cents', schema_field: 'field f has a type evidence_schema declares', array_nonempty: 'field f is not an array', eq: 'f does not equal 1', completion: 'f does not equal 1' }],
      [{ f: [] }, { lte: 'f is not a safe integer, so it cannot be compared with amount_cents', budget_cap: 'f is not a safe integer, so it cannot be compared with amount_cents', schema_field: 'field f does not have a type evidence_schema declares', array_nonempty: 'field f is an empty array', eq: 'f does not equal 1', completion: 'f does not equal 1' }],
    ];
    for (const [evidence, sentences] of cases) {
      for (let shift = 0; shift < clauses.length; shift += 1) {
        const order = [...clauses.slice(shift), ...clauses.slice(0, shift)];
        const written = details(evidence, order);
        expect(written.length).toBeGreaterThan(0);
        for (const line of written) expect(line).toBe(`${line.split(':')[0]}: ${sentences[line.split(':')[0] as string]}`);
      }
    }
  });

  it('still reads each path once when a rule reads more paths than are compared one by one', () => {
    const reads = new Map<string, number>();
    const evidence: Record<string, unknown> = {};
    const inner: Record<string, unknown> = {};
    for (let index = 0; index < 20; index += 1) {
      Object.defineProperty(inner, `p${index}`, {
        enumerable: true,
        get: () => {
          reads.set(`p${index}`, (reads.get(`p${index}`) ?? 0) + 1);
          return index;
        },
      });
    }
    // 20 distinct paths, more than a rule's first locations compared one by one, each read by one or two clauses.
    const clauses = Array.from({ length: 30 }, (_, index) => ({ op: 'eq', path: ['q', `p${index % 20}`], value: -1 }));
    const result = evaluate(compilePredicate(doc({ op: 'or', clauses })), { evidence: { q: inner }, evidenceSchema: undefined, amountCents: 0 });
    expect(result.trace).toHaveLength(31);
    expect(reads.size).toBe(20);
    expect([...reads.values()].every((count) => count === 1)).toBe(true);
    expect(result.trace.slice(1).map((step) => [step.data.path, step.data.observed])).toEqual(clauses.map((clause, index) => [`/q/${clause.path[1]}`, index % 20]));
  });

  it('refuses a document over the byte limit with the exact size, measured without building its canonical JSON', () => {
    const clauses = Array.from({ length: 32 }, (_, index) => ({ op: 'budget_cap', path: Array.from({ length: 16 }, () => `${index}`.padEnd(40, '€')) }));
    const error = thrownServiceError(() => compilePredicate(doc({ op: 'and', clauses })));
    expect(error.details).toEqual({ pointer: '', limit: predicateDocumentBytesMax, bytes: utf8Bytes(canonicalJson(doc({ op: 'and', clauses }))) });
  });
});
