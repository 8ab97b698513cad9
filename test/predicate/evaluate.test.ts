// Evaluation semantics, table-driven: every op passing and failing, JSON equality, integers, schema types,
// missing paths, prototype safety, short-circuit order, and the bounds on observed values in the trace.
import { describe, expect, it } from 'vitest';
import { traceObservedNodesMax, traceObservedStringLengthMax } from '../../src/predicate/trace.ts';
import { TRUE, run } from './support.ts';

const eqAt = (path: string[], value: unknown) => ({ op: 'eq', path, value });
const failing = eqAt(['never'], 1);

describe('every op', () => {
  const cases: { name: string; root: unknown; evidence: unknown; amountCents?: unknown; evidenceSchema?: unknown; passed: boolean }[] = [
    { name: 'true passes on anything', root: TRUE, evidence: null, passed: true },
    { name: 'and of passing clauses passes', root: { op: 'and', clauses: [TRUE, TRUE] }, evidence: {}, passed: true },
    { name: 'and with one failing clause fails', root: { op: 'and', clauses: [TRUE, failing] }, evidence: {}, passed: false },
    { name: 'or with one passing clause passes', root: { op: 'or', clauses: [failing, TRUE] }, evidence: {}, passed: true },
    { name: 'or of failing clauses fails', root: { op: 'or', clauses: [failing, failing] }, evidence: {}, passed: false },
    { name: 'not of a failing clause passes', root: { op: 'not', clause: failing }, evidence: {}, passed: true },
    { name: 'not of a passing clause fails', root: { op: 'not', clause: TRUE }, evidence: {}, passed: false },
    { name: 'eq equal string passes', root: eqAt(['status'], 'ok'), evidence: { status: 'ok' }, passed: true },
    { name: 'eq different string fails', root: eqAt(['status'], 'ok'), evidence: { status: 'OK' }, passed: false },
    { name: 'eq on a nested path passes', root: eqAt(['a', 'b', 'c'], 3), evidence: { a: { b: { c: 3 } } }, passed: true },
    { name: 'completion equal passes', root: { op: 'completion', path: ['s'], value: 'completed' }, evidence: { s: 'completed' }, passed: true },
    { name: 'completion different fails', root: { op: 'completion', path: ['s'], value: 'completed' }, evidence: { s: 'failed' }, passed: false },
    { name: 'lte below the amount passes', root: { op: 'lte', path: ['c'], limit_source: 'amount_cents' }, evidence: { c: 99 }, passed: true },
    { name: 'lte at the amount passes', root: { op: 'lte', path: ['c'], limit_source: 'amount_cents' }, evidence: { c: 100 }, passed: true },
    { name: 'lte above the amount fails', root: { op: 'lte', path: ['c'], limit_source: 'amount_cents' }, evidence: { c: 101 }, passed: false },
    { name: 'budget_cap at the amount passes', root: { op: 'budget_cap', path: ['c'] }, evidence: { c: 100 }, passed: true },
    { name: 'budget_cap above the amount fails', root: { op: 'budget_cap', path: ['c'] }, evidence: { c: 101 }, passed: false },
    { name: 'schema_field with the declared type passes', root: { op: 'schema_field', field: 'f' }, evidence: { f: 'x' }, evidenceSchema: { properties: { f: { type: 'string' } } }, passed: true },
    { name: 'schema_field with another type fails', root: { op: 'schema_field', field: 'f' }, evidence: { f: 1 }, evidenceSchema: { properties: { f: { type: 'string' } } }, passed: false },
    { name: 'array_nonempty on [0] passes', root: { op: 'array_nonempty', field: 'f' }, evidence: { f: [0] }, passed: true },
    { name: 'array_nonempty on [] fails', root: { op: 'array_nonempty', field: 'f' }, evidence: { f: [] }, passed: false },
    { name: 'array_nonempty on a string fails', root: { op: 'array_nonempty', field: 'f' }, evidence: { f: 'abc' }, passed: false },
    { name: 'array_nonempty on an object with length fails', root: { op: 'array_nonempty', field: 'f' }, evidence: { f: { length: 2, 0: 1 } }, passed: false },
  ];
  it.each(cases)('$name', ({ root, evidence, amountCents, evidenceSchema, passed }) => {
    const result = run(root, evidence, { amountCents: amountCents ?? 100, evidenceSchema });
    expect(result.passed).toBe(passed);
    expect(result.trace[0]?.data.passed).toBe(passed);
  });
});

describe('JSON equality', () => {
  const cases: { name: string; expected: unknown; observed: unknown; equal: boolean }[] = [
    { name: '1 and 1.0', expected: JSON.parse('1'), observed: JSON.parse('1.0'), equal: true },
    { name: '100 and 1e2', expected: 100, observed: JSON.parse('1e2'), equal: true },
    { name: '0 and -0', expected: 0, observed: JSON.parse('-0'), equal: true },
    { name: '-0 and 0', expected: JSON.parse('-0'), observed: 0, equal: true },
    { name: '1 and "1"', expected: 1, observed: '1', equal: false },
    { name: '1 and true', expected: 1, observed: true, equal: false },
    { name: '0 and false', expected: 0, observed: false, equal: false },
    { name: '"" and null', expected: '', observed: null, equal: false },
    { name: 'null and null', expected: null, observed: null, equal: true },
    { name: 'objects with keys in another order', expected: { a: 1, b: 2 }, observed: JSON.parse('{"b":2,"a":1}'), equal: true },
    { name: 'an object with an extra key', expected: { a: 1 }, observed: { a: 1, b: 2 }, equal: false },
    { name: 'an object missing a key', expected: { a: 1, b: 2 }, observed: { a: 1 }, equal: false },
    { name: 'an object with a null member and one without it', expected: { a: null }, observed: {}, equal: false },
    { name: 'empty objects', expected: {}, observed: {}, equal: true },
    { name: 'an empty object and an empty array', expected: {}, observed: [], equal: false },
    { name: 'an array and an object with index keys', expected: [1], observed: { 0: 1 }, equal: false },
    { name: 'arrays in order', expected: [1, 2, 3], observed: [1, 2, 3], equal: true },
    { name: 'arrays out of order', expected: [1, 2, 3], observed: [3, 2, 1], equal: false },
    { name: 'a longer array', expected: [1, 2], observed: [1, 2, 3], equal: false },
    { name: 'nested arrays', expected: [[1, 2], [3, [4]]], observed: [[1, 2], [3, [4]]], equal: true },
    { name: 'nested arrays differing deep', expected: [[1, 2], [3, [4]]], observed: [[1, 2], [3, [5]]], equal: false },
    { name: 'nested objects in arrays', expected: [{ a: [{ b: 1 }] }], observed: JSON.parse('[{"a":[{"b":1.0}]}]'), equal: true },
    { name: 'an own __proto__ member', expected: JSON.parse('{"__proto__":1}'), observed: JSON.parse('{"__proto__":1}'), equal: true },
    { name: 'an own __proto__ member against none', expected: JSON.parse('{"__proto__":1}'), observed: {}, equal: false },
  ];
  it.each(cases)('$name: equal is $equal', ({ expected, observed, equal }) => {
    expect(run(eqAt(['v'], expected), { v: observed }).passed).toBe(equal);
    expect(run({ op: 'completion', path: ['v'], value: expected }, { v: observed }).passed).toBe(equal);
  });

  it('null at a path is a value; a missing path is not', () => {
    expect(run(eqAt(['v'], null), { v: null }).passed).toBe(true);
    const missing = run(eqAt(['v'], null), {});
    expect(missing.passed).toBe(false);
    expect(missing.trace[0]).toEqual({ kind: 'eq', detail: 'evidence has no value at v', data: { path: '/v', passed: false, expected: null } });
  });

  it('does not count an inherited enumerable member as a key of the observed object', () => {
    const observed = Object.create({ extra: 1 }) as Record<string, unknown>;
    observed['a'] = 1;
    expect(run(eqAt(['v'], { a: 1 }), { v: observed }).passed).toBe(true);
    expect(run(eqAt(['v'], { a: 1, extra: 1 }), { v: observed }).passed).toBe(false);
  });
});

describe('lte and budget_cap compare safe integers only', () => {
  const cases: { name: string; observed: unknown; amountCents: unknown; passed: boolean; detail: string }[] = [
    { name: 'a negative integer', observed: -5, amountCents: 0, passed: true, detail: 'c is at most amount_cents' },
    { name: '-0 against 0', observed: JSON.parse('-0'), amountCents: 0, passed: true, detail: 'c is at most amount_cents' },
    { name: '1e2 written as a float', observed: JSON.parse('1.0e2'), amountCents: 100, passed: true, detail: 'c is at most amount_cents' },
    { name: 'the largest safe integer', observed: Number.MAX_SAFE_INTEGER, amountCents: Number.MAX_SAFE_INTEGER, passed: true, detail: 'c is at most amount_cents' },
    { name: 'a fraction below the amount', observed: 1.5, amountCents: 100, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'a numeric string', observed: '50', amountCents: 100, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'an unsafe integer', observed: 2 ** 53, amountCents: Number.MAX_SAFE_INTEGER, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'a huge negative number', observed: -1e300, amountCents: 100, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'null', observed: null, amountCents: 100, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'an array holding an integer', observed: [1], amountCents: 100, passed: false, detail: 'c is not a safe integer, so it cannot be compared with amount_cents' },
    { name: 'an amount that is a fraction', observed: 1, amountCents: 100.5, passed: false, detail: 'the intent amount_cents is not a safe integer, so nothing can be compared with it' },
    { name: 'an amount that is a string', observed: 1, amountCents: '100', passed: false, detail: 'the intent amount_cents is not a safe integer, so nothing can be compared with it' },
    { name: 'an amount that is NaN', observed: 1, amountCents: Number.NaN, passed: false, detail: 'the intent amount_cents is not a safe integer, so nothing can be compared with it' },
    { name: 'no amount', observed: 1, amountCents: undefined, passed: false, detail: 'the intent amount_cents is not a safe integer, so nothing can be compared with it' },
  ];
  it.each(cases)('$name → passed $passed', ({ observed, amountCents, passed, detail }) => {
    for (const root of [{ op: 'budget_cap', path: ['c'] }, { op: 'lte', path: ['c'], limit_source: 'amount_cents' }]) {
      const result = run(root, { c: observed }, { amountCents });
      expect(result.passed).toBe(passed);
      expect(result.trace[0]?.detail).toBe(detail);
    }
  });

  it('a missing value fails with the limit as expected', () => {
    expect(run({ op: 'budget_cap', path: ['c'] }, { d: 1 }).trace).toEqual([
      { kind: 'budget_cap', detail: 'evidence has no value at c', data: { path: '/c', passed: false, expected: 100 } },
    ]);
  });
});

describe('schema_field types', () => {
  const values: Record<string, unknown> = {
    null: null,
    boolean: false,
    string: '',
    integer: 7,
    fraction: 7.25,
    array: [],
    object: {},
  };
  // Which declared type accepts which sample; an integer is also a number.
  const accepts: Record<string, string[]> = {
    null: ['null'],
    boolean: ['boolean'],
    string: ['string'],
    integer: ['integer'],
    number: ['integer', 'fraction'],
    array: ['array'],
    object: ['object'],
  };
  const cases = Object.entries(accepts).flatMap(([declared, accepted]) =>
    Object.keys(values).map((sample) => ({ declared, sample, passed: accepted.includes(sample) })),
  );
  it.each(cases)('declared $declared, value $sample → $passed', ({ declared, sample, passed }) => {
    const schema = { type: 'object', properties: { f: { type: declared } } };
    const result = run({ op: 'schema_field', field: 'f' }, { f: values[sample] }, { evidenceSchema: schema });
    expect(result.passed).toBe(passed);
    expect(result.trace[0]?.data.expected).toBe(declared);
  });

  it('integer-valued floats are integers (1.0 is 1)', () => {
    expect(run({ op: 'schema_field', field: 'f' }, JSON.parse('{"f":1.0}'), { evidenceSchema: { properties: { f: { type: 'integer' } } } }).passed).toBe(true);
  });

  const multiCases: { types: string[]; value: unknown; passed: boolean }[] = [
    { types: ['string', 'null'], value: null, passed: true },
    { types: ['string', 'null'], value: 'x', passed: true },
    { types: ['string', 'null'], value: 1, passed: false },
    { types: ['number'], value: 3, passed: true },
    { types: ['integer', 'boolean'], value: 3.5, passed: false },
    { types: ['array', 'object'], value: {}, passed: true },
    { types: ['null', 'boolean', 'string', 'integer', 'number', 'array', 'object'], value: 1.5, passed: true },
  ];
  it.each(multiCases)('type $types, value $value → $passed', ({ types, value, passed }) => {
    const result = run({ op: 'schema_field', field: 'f' }, { f: value }, { evidenceSchema: { properties: { f: { type: types } } } });
    expect(result.passed).toBe(passed);
    expect(result.trace[0]?.data.expected).toEqual(types);
  });

  const malformed: { name: string; schema: unknown; detail: string }[] = [
    { name: 'no schema', schema: undefined, detail: 'evidence_schema is not a JSON object, so no type is declared for f' },
    { name: 'a schema that is an array', schema: [{ properties: {} }], detail: 'evidence_schema is not a JSON object, so no type is declared for f' },
    { name: 'no properties', schema: { type: 'object' }, detail: 'evidence_schema has no properties object, so no type is declared for f' },
    { name: 'properties an array', schema: { properties: [{ type: 'string' }] }, detail: 'evidence_schema has no properties object, so no type is declared for f' },
    { name: 'no entry for the field', schema: { properties: { g: { type: 'string' } } }, detail: 'evidence_schema.properties has no entry for f' },
    { name: 'an entry that is a string', schema: { properties: { f: 'string' } }, detail: 'evidence_schema.properties has no entry for f' },
    { name: 'an entry without type', schema: { properties: { f: { items: {} } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
    { name: 'an unknown type name', schema: { properties: { f: { type: 'str' } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
    { name: 'an empty type list', schema: { properties: { f: { type: [] } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
    { name: 'a type list with an unknown name', schema: { properties: { f: { type: ['string', 'text'] } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
    { name: 'a type list longer than the type names', schema: { properties: { f: { type: Array(8).fill('string') } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
    { name: 'a type that is a number', schema: { properties: { f: { type: 1 } } }, detail: 'evidence_schema.properties entry for f has no valid type' },
  ];
  it.each(malformed)('fails and says why with $name', ({ schema, detail }) => {
    const result = run({ op: 'schema_field', field: 'f' }, { f: 'x' }, schema === undefined ? {} : { evidenceSchema: schema });
    expect(result).toEqual({ passed: false, trace: [{ kind: 'schema_field', detail, data: { path: '/f', passed: false, observed: 'string' } }] });
  });

  it('a missing field fails before the schema is read', () => {
    const result = run({ op: 'schema_field', field: 'f' }, { g: 1 }, { evidenceSchema: { properties: { f: { type: 'string' } } } });
    expect(result.trace).toEqual([{ kind: 'schema_field', detail: 'evidence has no field f', data: { path: '/f', passed: false } }]);
  });
});

describe('paths and evidence shapes', () => {
  it.each([null, 5, 'status', true, [], [{ status: 'ok' }]])('evidence %j has no fields: every reading clause fails', (evidence) => {
    for (const root of [eqAt(['status'], 'ok'), { op: 'budget_cap', path: ['status'] }, { op: 'schema_field', field: 'status' }, { op: 'array_nonempty', field: 'status' }]) {
      const result = run(root, evidence, { evidenceSchema: { properties: { status: { type: 'string' } } } });
      expect(result.passed).toBe(false);
      expect(result.trace[0]?.detail).toMatch(/^evidence has no (value at|field) status$/);
    }
  });

  it('reads nested objects only: an array on the way is not followed', () => {
    expect(run(eqAt(['a', '0'], 1), { a: [1] }).passed).toBe(false);
    expect(run(eqAt(['a', 'length'], 1), { a: [1] }).passed).toBe(false);
    expect(run(eqAt(['a', '0'], 1), { a: { 0: 1 } }).passed).toBe(true);
    expect(run(eqAt(['a', 'b'], 1), { a: 'b' }).passed).toBe(false);
    expect(run(eqAt(['s', 'length'], 3), { s: 'abc' }).passed).toBe(false);
  });

  it('addresses keys that are empty, contain dots, slashes or tildes', () => {
    const evidence = { '': { 'a.b': { 'c/d~e': 'x' } } };
    const result = run(eqAt(['', 'a.b', 'c/d~e'], 'x'), evidence);
    expect(result.passed).toBe(true);
    expect(result.trace[0]?.data.path).toBe('//a.b/c~1d~0e');
    expect(result.trace[0]?.detail).toBe('[""]["a.b"]["c/d~e"] equals "x"');
  });
});

describe('prototype safety: only own properties are read', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])('a path %s on {} is missing', (key) => {
    expect(run({ op: 'eq', path: [key], value: null }, {}).trace[0]?.detail).toBe(`evidence has no value at ${key}`);
    expect(run({ op: 'not', clause: { op: 'eq', path: [key, 'name'], value: 'Object' } }, {}).passed).toBe(true);
    expect(run({ op: 'schema_field', field: key }, {}, { evidenceSchema: { properties: { [key]: { type: 'object' } } } }).passed).toBe(false);
    expect(run({ op: 'array_nonempty', field: key }, {}).passed).toBe(false);
    expect(run({ op: 'budget_cap', path: [key, 'length'] }, {}).passed).toBe(false);
  });

  it('an own "__proto__" member from JSON.parse is read as data', () => {
    const evidence = JSON.parse('{"__proto__":{"status":"completed"}}');
    expect(run(eqAt(['__proto__', 'status'], 'completed'), evidence).passed).toBe(true);
    expect(run(eqAt(['status'], 'completed'), evidence).passed).toBe(false);
  });

  it('members inherited from a prototype are not evidence', () => {
    const evidence = Object.create({ status: 'completed', cost: 1, list: [1] });
    expect(run(eqAt(['status'], 'completed'), evidence).passed).toBe(false);
    expect(run({ op: 'budget_cap', path: ['cost'] }, evidence).passed).toBe(false);
    expect(run({ op: 'array_nonempty', field: 'list' }, evidence).passed).toBe(false);
  });

  it('a polluted Object.prototype changes nothing', () => {
    const prototype = Object.prototype as Record<string, unknown>;
    prototype['polluted'] = 'completed';
    try {
      expect(run(eqAt(['polluted'], 'completed'), {}).passed).toBe(false);
      expect(run(eqAt(['v'], { a: 1 }), { v: { a: 1 } }).passed).toBe(true);
      const schema = { properties: {} };
      expect(run({ op: 'schema_field', field: 'polluted' }, { polluted: 'x' }, { evidenceSchema: schema }).trace[0]?.detail).toBe(
        'evidence_schema.properties has no entry for polluted',
      );
    } finally {
      delete prototype['polluted'];
    }
  });

  it('a schema entry is read through own properties only', () => {
    const inherited = { properties: Object.create({ f: { type: 'string' } }) };
    expect(run({ op: 'schema_field', field: 'f' }, { f: 'x' }, { evidenceSchema: inherited }).passed).toBe(false);
    const typeInherited = { properties: { f: Object.create({ type: 'string' }) } };
    expect(run({ op: 'schema_field', field: 'f' }, { f: 'x' }, { evidenceSchema: typeInherited }).passed).toBe(false);
  });
});

describe('short-circuit and trace order', () => {
  it('and stops at the first failing clause; its step comes first and says where it stopped', () => {
    const result = run({ op: 'and', clauses: [TRUE, failing, TRUE] }, {});
    expect(result.trace.map((step) => step.kind)).toEqual(['and', 'true', 'eq']);
    expect(result.trace[0]).toEqual({
      kind: 'and',
      detail: 'clause 2 of 3 failed, so the and failed; later clauses were not evaluated',
      data: { passed: false },
    });
  });

  it('or stops at the first passing clause', () => {
    const result = run({ op: 'or', clauses: [failing, TRUE, failing] }, {});
    expect(result.trace.map((step) => step.kind)).toEqual(['or', 'eq', 'true']);
    expect(result.trace[0]?.detail).toBe('clause 2 of 3 passed, so the or passed; later clauses were not evaluated');
  });

  it('the last clause deciding says nothing about later clauses; an exhausted and/or says so', () => {
    expect(run({ op: 'and', clauses: [TRUE, failing] }, {}).trace[0]?.detail).toBe('clause 2 of 2 failed, so the and failed');
    expect(run({ op: 'and', clauses: [TRUE, TRUE] }, {}).trace[0]?.detail).toBe('all 2 clauses passed');
    expect(run({ op: 'or', clauses: [failing, failing] }, {}).trace[0]?.detail).toBe('none of the 2 clauses passed');
  });

  it('nested steps appear in pre-order', () => {
    const root = { op: 'or', clauses: [{ op: 'not', clause: TRUE }, { op: 'and', clauses: [TRUE, { op: 'not', clause: failing }] }] };
    const result = run(root, {});
    expect(result.passed).toBe(true);
    expect(result.trace.map((step) => [step.kind, step.data.passed])).toEqual([
      ['or', true],
      ['not', false],
      ['true', true],
      ['and', true],
      ['true', true],
      ['not', true],
      ['eq', false],
    ]);
  });
});

describe('observed values in the trace are bounded', () => {
  const observedOf = (value: unknown) => run(eqAt(['v'], 'something else'), { v: value }).trace[0]?.data;

  it(`copies a string of ${traceObservedStringLengthMax} characters, summarizes a longer one`, () => {
    expect(observedOf('x'.repeat(traceObservedStringLengthMax))).toEqual({ path: '/v', passed: false, expected: 'something else', observed: 'x'.repeat(traceObservedStringLengthMax) });
    expect(observedOf('x'.repeat(traceObservedStringLengthMax + 1))).toEqual({
      path: '/v',
      passed: false,
      expected: 'something else',
      observed: { type: 'string', length: traceObservedStringLengthMax + 1 },
      observed_truncated: true,
    });
  });

  it(`copies composites of up to ${traceObservedNodesMax} JSON values, summarizes larger ones`, () => {
    const fits = Array.from({ length: traceObservedNodesMax - 1 }, (_, index) => index);
    expect(observedOf(fits)?.observed).toEqual(fits);
    expect(observedOf(fits)?.observed_truncated).toBeUndefined();
    const tooMany = [...fits, 99];
    expect(observedOf(tooMany)).toMatchObject({ observed: { type: 'array', length: traceObservedNodesMax }, observed_truncated: true });
    const object = { a: { b: [1, 2, { c: 'd' }] } };
    expect(observedOf(object)?.observed).toEqual(object);
    const bigObject = Object.fromEntries(Array.from({ length: 1000 }, (_, index) => [`k${index}`, index]));
    expect(observedOf(bigObject)).toMatchObject({ observed: { type: 'object' }, observed_truncated: true });
    expect(observedOf({ ['k'.repeat(traceObservedStringLengthMax + 1)]: 1 })).toMatchObject({ observed: { type: 'object' }, observed_truncated: true });
    expect(observedOf({ a: ['x'.repeat(traceObservedStringLengthMax + 1)] })).toMatchObject({ observed: { type: 'object' }, observed_truncated: true });
  });

  it('a copied observed value is a copy: changing the evidence later does not change the trace', () => {
    const evidence = { v: { a: 1 } };
    const result = run(eqAt(['v'], { a: 2 }), evidence);
    evidence.v.a = 3;
    expect(result.trace[0]?.data.observed).toEqual({ a: 1 });
  });

  it('copies an own "__proto__" key as data, not as a prototype', () => {
    const observed = observedOf(JSON.parse('{"__proto__":{"x":1}}'))?.observed as object;
    expect(Object.getPrototypeOf(observed)).toBe(Object.prototype);
    expect(JSON.stringify(observed)).toBe('{"__proto__":{"x":1}}');
  });

  it('values that are not JSON are summarized, not copied', () => {
    expect(observedOf(Number.POSITIVE_INFINITY)).toMatchObject({ observed: { type: 'not_json' }, observed_truncated: true });
    expect(observedOf(10n)).toMatchObject({ observed: { type: 'not_json' }, observed_truncated: true });
    expect(observedOf([1, () => 1])).toMatchObject({ observed: { type: 'array', length: 2 }, observed_truncated: true });
  });
});

describe('trace data of each op', () => {
  const schema = { properties: { f: { type: 'string' }, list: { type: 'array' } } };
  it.each([
    { root: eqAt(['v'], 1), evidence: { v: 1 }, data: { path: '/v', passed: true, expected: 1, observed: 1 }, detail: 'v equals 1' },
    { root: eqAt(['v'], 1), evidence: { v: 2 }, data: { path: '/v', passed: false, expected: 1, observed: 2 }, detail: 'v does not equal 1' },
    { root: { op: 'lte', path: ['c'], limit_source: 'amount_cents' }, evidence: { c: 150 }, data: { path: '/c', passed: false, expected: 100, observed: 150 }, detail: 'c is greater than amount_cents' },
    { root: { op: 'schema_field', field: 'f' }, evidence: { f: 'x' }, data: { path: '/f', passed: true, expected: 'string', observed: 'string' }, detail: 'field f has a type evidence_schema declares' },
    { root: { op: 'schema_field', field: 'f' }, evidence: { f: 2 }, data: { path: '/f', passed: false, expected: 'string', observed: 'integer' }, detail: 'field f does not have a type evidence_schema declares' },
    { root: { op: 'array_nonempty', field: 'list' }, evidence: { list: [] }, data: { path: '/list', passed: false, expected: 'non-empty array', observed: 'array' }, detail: 'field list is an empty array' },
    { root: { op: 'array_nonempty', field: 'list' }, evidence: { list: 'x' }, data: { path: '/list', passed: false, expected: 'non-empty array', observed: 'string' }, detail: 'field list is not an array' },
    { root: { op: 'array_nonempty', field: 'list' }, evidence: { list: [1] }, data: { path: '/list', passed: true, expected: 'non-empty array', observed: 'array' }, detail: 'field list is a non-empty array' },
    { root: { op: 'not', clause: TRUE }, evidence: {}, data: { passed: false }, detail: 'the inner clause passed, so not failed' },
  ])('$detail', ({ root, evidence, data, detail }) => {
    expect(run(root, evidence, { evidenceSchema: schema }).trace[0]).toEqual({ kind: (root as { op: string }).op, detail, data });
  });

  it('cuts a long expected value short in the sentence but keeps it whole in data', () => {
    const expected = { key: 'v'.repeat(100) };
    const step = run(eqAt(['v'], expected), { v: 1 }).trace[0];
    expect(step?.detail).toBe(`v does not equal ${JSON.stringify(expected).slice(0, 63)}…`);
    expect(step?.data.expected).toEqual(expected);
  });
});
