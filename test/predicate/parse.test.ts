// Validation of predicate documents: shape errors with their pointers, and every limit at its bound and one past.
import { describe, expect, it } from 'vitest';
import {
  predicateClausesMax,
  predicateDepthMax,
  predicateDocumentBytesMax,
  predicateFuelMax,
  predicateKeyLengthMax,
  predicatePathSegmentsMax,
} from '../../src/limits.ts';
import { compilePredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { parsePredicate } from '../../src/predicate/parse.ts';
import { canonicalJson } from '../../src/signing/canonical-json.ts';
import { TRUE, andChain, doc, notChain, thrownServiceError, treeOfNodes } from './support.ts';

const eqLeaf = { op: 'eq', path: ['status'], value: 'completed' };

describe('document shape', () => {
  const cases: { name: string; input: unknown; code: string; pointer: string }[] = [
    { name: 'null', input: null, code: 'predicate.invalid', pointer: '' },
    { name: 'an array', input: [1], code: 'predicate.invalid', pointer: '' },
    { name: 'a string', input: '{"version":1}', code: 'predicate.invalid', pointer: '' },
    { name: 'missing version', input: { root: TRUE }, code: 'predicate.invalid', pointer: '/version' },
    { name: 'version 2', input: { version: 2, root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'version 0', input: { version: 0, root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'version "1"', input: { version: '1', root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'version 1.5', input: { version: 1.5, root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'version true', input: { version: true, root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'version null', input: { version: null, root: TRUE }, code: 'predicate.version_unsupported', pointer: '/version' },
    { name: 'an unknown top-level field', input: { version: 1, root: TRUE, extra: 1 }, code: 'predicate.invalid', pointer: '/extra' },
    { name: 'an own __proto__ field', input: JSON.parse('{"version":1,"root":{"op":"true"},"__proto__":{}}'), code: 'predicate.invalid', pointer: '/__proto__' },
    { name: 'missing root', input: { version: 1 }, code: 'predicate.invalid', pointer: '/root' },
    { name: 'root not an object', input: doc('true'), code: 'predicate.invalid', pointer: '/root' },
    { name: 'root an array', input: doc([TRUE]), code: 'predicate.invalid', pointer: '/root' },
    { name: 'op missing', input: doc({}), code: 'predicate.invalid', pointer: '/root/op' },
    { name: 'op not a string', input: doc({ op: 1 }), code: 'predicate.invalid', pointer: '/root/op' },
    { name: 'op unknown', input: doc({ op: 'xor' }), code: 'predicate.op_unknown', pointer: '/root' },
    { name: 'op in another case', input: doc({ op: 'TRUE' }), code: 'predicate.op_unknown', pointer: '/root' },
    { name: 'op __proto__', input: doc({ op: '__proto__' }), code: 'predicate.op_unknown', pointer: '/root' },
    { name: 'op constructor', input: doc({ op: 'constructor' }), code: 'predicate.op_unknown', pointer: '/root' },
    { name: 'op toString', input: doc({ op: 'toString' }), code: 'predicate.op_unknown', pointer: '/root' },
    { name: 'a field true does not have', input: doc({ op: 'true', value: 1 }), code: 'predicate.invalid', pointer: '/root/value' },
    { name: 'a field eq does not have', input: doc({ ...eqLeaf, limit_source: 'amount_cents' }), code: 'predicate.invalid', pointer: '/root/limit_source' },
    { name: 'an unknown key with a slash', input: doc({ op: 'true', 'a/b~': 1 }), code: 'predicate.invalid', pointer: '/root/a~1b~0' },
    { name: 'and without clauses', input: doc({ op: 'and' }), code: 'predicate.invalid', pointer: '/root/clauses' },
    { name: 'and with clauses an object', input: doc({ op: 'and', clauses: { 0: TRUE } }), code: 'predicate.invalid', pointer: '/root/clauses' },
    { name: 'an empty and', input: doc({ op: 'and', clauses: [] }), code: 'predicate.invalid', pointer: '/root/clauses' },
    { name: 'an empty or', input: doc({ op: 'or', clauses: [] }), code: 'predicate.invalid', pointer: '/root/clauses' },
    { name: 'a non-clause in clauses', input: doc({ op: 'or', clauses: [TRUE, 5] }), code: 'predicate.invalid', pointer: '/root/clauses/1' },
    { name: 'not without clause', input: doc({ op: 'not' }), code: 'predicate.invalid', pointer: '/root/clause' },
    { name: 'not with a list', input: doc({ op: 'not', clause: [TRUE] }), code: 'predicate.invalid', pointer: '/root/clause' },
    { name: 'eq without value', input: doc({ op: 'eq', path: ['a'] }), code: 'predicate.invalid', pointer: '/root/value' },
    { name: 'eq without path', input: doc({ op: 'eq', value: 1 }), code: 'predicate.invalid', pointer: '/root/path' },
    { name: 'path a string', input: doc({ op: 'eq', path: 'status', value: 1 }), code: 'predicate.invalid', pointer: '/root/path' },
    { name: 'path empty', input: doc({ op: 'budget_cap', path: [] }), code: 'predicate.invalid', pointer: '/root/path' },
    { name: 'path segment a number', input: doc({ op: 'completion', path: ['a', 0], value: 1 }), code: 'predicate.invalid', pointer: '/root/path/1' },
    { name: 'path segment too long', input: doc({ op: 'budget_cap', path: ['x'.repeat(predicateKeyLengthMax + 1)] }), code: 'predicate.invalid', pointer: '/root/path/0' },
    { name: 'lte without limit_source', input: doc({ op: 'lte', path: ['a'] }), code: 'predicate.invalid', pointer: '/root/limit_source' },
    { name: 'lte on another limit', input: doc({ op: 'lte', path: ['a'], limit_source: 'balance_cents' }), code: 'predicate.invalid', pointer: '/root/limit_source' },
    { name: 'schema_field with an empty field', input: doc({ op: 'schema_field', field: '' }), code: 'predicate.invalid', pointer: '/root/field' },
    { name: 'schema_field with a path', input: doc({ op: 'schema_field', field: ['a'] }), code: 'predicate.invalid', pointer: '/root/field' },
    { name: 'array_nonempty field too long', input: doc({ op: 'array_nonempty', field: 'f'.repeat(predicateKeyLengthMax + 1) }), code: 'predicate.invalid', pointer: '/root/field' },
    { name: 'a deep shape error', input: doc({ op: 'and', clauses: [TRUE, { op: 'not', clause: { op: 'eq', path: [null], value: 1 } }] }), code: 'predicate.invalid', pointer: '/root/clauses/1/clause/path/0' },
    { name: 'a non-finite value', input: doc({ op: 'eq', path: ['a'], value: { n: [Number.NaN] } }), code: 'predicate.invalid', pointer: '/root/value/n/0' },
    { name: 'an undefined value member', input: doc({ op: 'eq', path: ['a'], value: { n: undefined } }), code: 'predicate.invalid', pointer: '/root/value/n' },
    { name: 'a function value', input: doc({ op: 'eq', path: ['a'], value: () => 1 }), code: 'predicate.invalid', pointer: '/root/value' },
    { name: 'a Date value', input: doc({ op: 'eq', path: ['a'], value: [new Date(0)] }), code: 'predicate.invalid', pointer: '/root/value/0' },
    { name: 'a Map value', input: doc({ op: 'eq', path: ['a'], value: new Map() }), code: 'predicate.invalid', pointer: '/root/value' },
  ];
  it.each(cases)('refuses $name with $code at "$pointer"', ({ input, code, pointer }) => {
    const error = thrownServiceError(() => compilePredicate(input));
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe(400);
    expect(error.details?.['pointer']).toBe(pointer);
  });

  it('tells apart ops of the same length, and refuses near misses of each', () => {
    expect(compilePredicate(doc({ op: 'true' })).nodeCount).toBe(1);
    const firstField = { or: 'clauses', and: 'clauses', not: 'clause', eq: 'path', lte: 'path', completion: 'path', budget_cap: 'path', schema_field: 'field', array_nonempty: 'field' };
    for (const [op, field] of Object.entries(firstField)) {
      expect(thrownServiceError(() => compilePredicate(doc({ op }))).details).toEqual({ pointer: `/root/${field}`, reason: `op "${op}" requires ${field}` });
    }
    for (const op of ['ox', 'er', 'ane', 'nod', 'ltd', 'truf', 'completioN', 'budget_caP', 'schema_fielD', 'array_nonemptY', '', 'o']) {
      expect(thrownServiceError(() => compilePredicate(doc({ op }))).code).toBe('predicate.op_unknown');
    }
  });

  it('reads a field given as an own non-enumerable member, and refuses one whose value is undefined as missing', () => {
    const hidden = (clause: object, name: string, value: unknown) => Object.defineProperty(clause, name, { value, enumerable: false });
    expect(compilePredicate(doc(hidden({ op: 'eq', path: ['a'] }, 'value', 1))).document.root).toEqual({ op: 'eq', path: ['a'], value: 1 });
    expect(compilePredicate(doc(hidden({ path: ['a'] }, 'op', 'budget_cap'))).document.root).toEqual({ op: 'budget_cap', path: ['a'] });
    for (const [root, pointer] of [
      [{ op: 'eq', path: ['a'], value: undefined }, '/root/value'],
      [{ op: 'eq', path: undefined, value: 1 }, '/root/path'],
      [{ op: 'lte', path: ['a'], limit_source: undefined }, '/root/limit_source'],
      [{ op: 'not', clause: undefined }, '/root/clause'],
    ] as const) {
      const error = thrownServiceError(() => compilePredicate(doc(root)));
      expect(error.details).toEqual({ pointer, reason: `op "${root.op}" requires ${pointer.slice('/root/'.length)}` });
    }
  });

  it('names the supported values in details', () => {
    expect(thrownServiceError(() => compilePredicate({ version: 3, root: TRUE })).details).toEqual({ pointer: '/version', supported: [1] });
    const unknownOp = thrownServiceError(() => compilePredicate(doc({ op: 'xor' })));
    expect(unknownOp.details?.['supported']).toEqual(['true', 'and', 'or', 'not', 'eq', 'completion', 'lte', 'budget_cap', 'schema_field', 'array_nonempty']);
  });

  it('reports the version before anything else about a document of another version', () => {
    expect(thrownServiceError(() => compilePredicate({ version: 2, rules: [] })).code).toBe('predicate.version_unsupported');
  });

  it('accepts every op with exactly its fields, and version 1 written as 1.0', () => {
    const all = {
      op: 'and',
      clauses: [
        TRUE,
        { op: 'or', clauses: [TRUE] },
        { op: 'not', clause: { op: 'not', clause: TRUE } },
        { op: 'eq', path: ['a', ''], value: { nested: [1, null, true, 'x'] } },
        { op: 'completion', path: ['status'], value: 'completed' },
        { op: 'lte', path: ['cost'], limit_source: 'amount_cents' },
        { op: 'budget_cap', path: ['cost'] },
        { op: 'schema_field', field: 'f' },
        { op: 'array_nonempty', field: 'f' },
      ],
    };
    const compiled = compilePredicate(JSON.parse(`{"version":1.0,"root":${JSON.stringify(all)}}`));
    expect(compiled.document).toEqual(doc(all));
    expect(compiled.nodeCount).toBe(13);
    expect(compiled.depth).toBe(3);
  });

  it('keeps an own __proto__ key inside an eq value as data', () => {
    const compiled = compilePredicate(JSON.parse('{"version":1,"root":{"op":"eq","path":["a"],"value":{"__proto__":{"x":1}}}}'));
    const root = compiled.document.root as { value: Record<string, unknown> };
    expect(Object.getPrototypeOf(root.value)).toBe(Object.prototype);
    expect(Object.keys(root.value)).toEqual(['__proto__']);
    expect(compiled.canonicalJson).toBe('{"root":{"op":"eq","path":["a"],"value":{"__proto__":{"x":1}}},"version":1}');
  });

  it('compiles into a frozen copy that later changes to the input cannot reach', () => {
    const input = { version: 1, root: { op: 'eq', path: ['status'], value: { state: 'done' } } };
    const compiled = compilePredicate(input);
    input.root.path[0] = 'other';
    input.root.value.state = 'changed';
    const result = evaluate(compiled, { evidence: { status: { state: 'done' } }, evidenceSchema: undefined, amountCents: 1 });
    expect(result.passed).toBe(true);
    expect(Object.isFrozen(compiled.document.root)).toBe(true);
    expect(Object.isFrozen((compiled.document.root as { value: object }).value)).toBe(true);
  });

  it('answers the canonical JSON and its byte size', () => {
    const parsed = parsePredicate(doc({ op: 'eq', value: 'é', path: ['a'] }));
    expect(parsed.canonicalJson).toBe('{"root":{"op":"eq","path":["a"],"value":"é"},"version":1}');
    expect(parsed.canonicalBytes).toBe(parsed.canonicalJson.length + 1);
  });
});

describe('limits: each at its bound accepted, one past refused with its own code', () => {
  it(`depth of not: ${predicateDepthMax} accepted, ${predicateDepthMax + 1} refused at the clause past it`, () => {
    expect(compilePredicate(doc(notChain(predicateDepthMax))).depth).toBe(predicateDepthMax);
    const error = thrownServiceError(() => compilePredicate(doc(notChain(predicateDepthMax + 1))));
    expect(error.code).toBe('predicate.depth_exceeded');
    expect(error.details).toEqual({ pointer: '/root' + '/clause'.repeat(predicateDepthMax), limit: predicateDepthMax });
  });

  it(`depth of and: ${predicateDepthMax} accepted, ${predicateDepthMax + 1} refused`, () => {
    expect(compilePredicate(doc(andChain(predicateDepthMax))).depth).toBe(predicateDepthMax);
    const error = thrownServiceError(() => compilePredicate(doc(andChain(predicateDepthMax + 1))));
    expect(error.code).toBe('predicate.depth_exceeded');
    expect(error.details).toEqual({ pointer: '/root' + '/clauses/0'.repeat(predicateDepthMax), limit: predicateDepthMax });
  });

  it('depth counts and/or/not only: leaves under the deepest combinator are fine', () => {
    let clause: unknown = { op: 'or', clauses: [eqLeaf, { op: 'budget_cap', path: ['c'] }] };
    for (let index = 1; index < predicateDepthMax; index += 1) clause = { op: 'not', clause };
    expect(compilePredicate(doc(clause)).depth).toBe(predicateDepthMax);
  });

  it(`fuel: ${predicateFuelMax} clauses accepted, ${predicateFuelMax + 1} refused at the first clause past it`, () => {
    const compiled = compilePredicate(doc(treeOfNodes(predicateFuelMax)));
    expect(compiled.nodeCount).toBe(predicateFuelMax);
    const result = evaluate(compiled, { evidence: {}, evidenceSchema: undefined, amountCents: 0 });
    expect(result.trace).toHaveLength(predicateFuelMax);
    const error = thrownServiceError(() => compilePredicate(doc(treeOfNodes(predicateFuelMax + 1))));
    expect(error.code).toBe('predicate.fuel_exceeded');
    // Seven groups of an and with 32 trues (33 clauses each) follow the root; the 257th clause is the 24th
    // true of the eighth group.
    expect(error.details).toEqual({ pointer: '/root/clauses/7/clauses/23', limit: predicateFuelMax });
  });

  it.each(['eq', 'completion', 'lte', 'budget_cap'])(`path of %s: ${predicatePathSegmentsMax} segments accepted, one more refused`, (op) => {
    const clauseWith = (segments: number) => {
      const path = Array.from({ length: segments }, (_, index) => `k${index}`);
      if (op === 'eq' || op === 'completion') return { op, path, value: 1 };
      return op === 'lte' ? { op, path, limit_source: 'amount_cents' } : { op, path };
    };
    expect(compilePredicate(doc({ op: 'and', clauses: [TRUE, clauseWith(predicatePathSegmentsMax)] })).nodeCount).toBe(3);
    const error = thrownServiceError(() => compilePredicate(doc({ op: 'and', clauses: [TRUE, clauseWith(predicatePathSegmentsMax + 1)] })));
    expect(error.code).toBe('predicate.path_too_long');
    expect(error.details).toEqual({ pointer: '/root/clauses/1', limit: predicatePathSegmentsMax, segments: predicatePathSegmentsMax + 1 });
  });

  it.each(['and', 'or'])(`clauses of %s: ${predicateClausesMax} accepted, one more refused at the clause`, (op) => {
    const withClauses = (count: number) => ({ op, clauses: Array.from({ length: count }, () => TRUE) });
    expect(compilePredicate(doc(withClauses(predicateClausesMax))).nodeCount).toBe(predicateClausesMax + 1);
    const nested = doc({ op: 'and', clauses: [TRUE, TRUE, TRUE, withClauses(predicateClausesMax + 1)] });
    const error = thrownServiceError(() => compilePredicate(nested));
    expect(error.code).toBe('predicate.clauses_exceeded');
    expect(error.details).toEqual({ pointer: '/root/clauses/3', limit: predicateClausesMax });
  });

  it(`document size: exactly ${predicateDocumentBytesMax} canonical bytes accepted, one more refused`, () => {
    const withValue = (value: string) => doc({ op: 'eq', path: ['a'], value });
    const overhead = canonicalJson(withValue('')).length;
    const atLimit = compilePredicate(withValue('x'.repeat(predicateDocumentBytesMax - overhead)));
    expect(atLimit.canonicalBytes).toBe(predicateDocumentBytesMax);
    const error = thrownServiceError(() => compilePredicate(withValue('x'.repeat(predicateDocumentBytesMax - overhead + 1))));
    expect(error.code).toBe('predicate.document_too_large');
    expect(error.details).toEqual({ pointer: '', limit: predicateDocumentBytesMax, bytes: predicateDocumentBytesMax + 1 });
  });

  it('document size counts UTF-8 bytes of the canonical form, not characters or the input layout', () => {
    const withValue = (value: string) => doc({ op: 'eq', path: ['a'], value });
    const overhead = canonicalJson(withValue('')).length;
    // "é" is one UTF-16 unit but two UTF-8 bytes; a quote is escaped to two bytes.
    const half = (predicateDocumentBytesMax - overhead) / 2;
    expect(compilePredicate(withValue('é'.repeat(half))).canonicalBytes).toBe(predicateDocumentBytesMax);
    expect(thrownServiceError(() => compilePredicate(withValue('é'.repeat(half) + 'x'))).code).toBe('predicate.document_too_large');
    expect(thrownServiceError(() => compilePredicate(withValue('"'.repeat(half) + 'x'))).code).toBe('predicate.document_too_large');
  });

  it('refuses a huge value before copying it, and many values that only add up past the limit', () => {
    const huge = doc({ op: 'eq', path: ['a'], value: 'x'.repeat(10 * predicateDocumentBytesMax) });
    expect(thrownServiceError(() => compilePredicate(huge)).details).toEqual({ pointer: '', limit: predicateDocumentBytesMax });
    const many = doc({ op: 'and', clauses: Array.from({ length: 20 }, () => ({ op: 'eq', path: ['a'], value: 'x'.repeat(1000) })) });
    expect(thrownServiceError(() => compilePredicate(many)).code).toBe('predicate.document_too_large');
  });

  it(`key length: segments and fields of ${predicateKeyLengthMax} characters accepted`, () => {
    const key = 'k'.repeat(predicateKeyLengthMax);
    expect(compilePredicate(doc({ op: 'and', clauses: [{ op: 'budget_cap', path: [key] }, { op: 'schema_field', field: key }] })).nodeCount).toBe(3);
  });

  it('refuses values nested deeper than JSON allows anywhere, without overflowing the stack', () => {
    let value: unknown = 1;
    for (let index = 0; index < 100_000; index += 1) value = [value];
    const error = thrownServiceError(() => compilePredicate(doc({ op: 'eq', path: ['a'], value })));
    expect(error.code).toBe('predicate.invalid');
    expect(error.details?.['reason']).toBe('value nested too deeply');
    // Within the value's own bound but past the whole document's: refused by the canonical form.
    let nearly: unknown = 1;
    for (let index = 0; index < 63; index += 1) nearly = [nearly];
    expect(thrownServiceError(() => compilePredicate(doc({ op: 'eq', path: ['a'], value: nearly }))).code).toBe('predicate.invalid');
  });
});
