// Property tests: validation throws nothing but ServiceError on any input; evaluation never throws, agrees with an
// independent reference evaluator, visits at most the static fuel, keeps observed values bounded and is deterministic.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { PredicateError } from '../../src/predicate/errors.ts';
import { serviceErrorOfPredicate } from '../../src/errors/pure-error-mapping.ts';
import { predicateFuelMax } from '../../src/limits.ts';
import { clauseOps, type EvaluationInput, type PredicateEvaluation } from '../../src/predicate/ast.ts';
import { compilePredicate, type CompiledPredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { traceObservedNodesMax, traceObservedStringLengthMax } from '../../src/predicate/trace.ts';
import { canonicalJson } from '../../src/signing/canonical-json.ts';

// ---- Arbitraries ----

// A small key alphabet so generated paths often hit generated evidence, including keys that exist on
// Object.prototype or on arrays and strings, and keys that need escaping in a JSON Pointer.
const key = fc.constantFrom('a', 'b', 'status', 'list', '0', 'length', '__proto__', 'constructor', 'toString', '', 'x/y~z');
const fieldName = key.filter((name) => name !== '');
const typeName = fc.constantFrom('null', 'boolean', 'string', 'integer', 'number', 'array', 'object');

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 300 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0.5, -0, 2 ** 53, Number.MAX_SAFE_INTEGER, 1e21),
  fc.string({ maxLength: 4 }),
  fc.constantFrom('completed', 'x'.repeat(traceObservedStringLengthMax + 1)),
);

const { jsonTree } = fc.letrec<{ jsonTree: unknown; jsonArray: unknown[]; jsonObject: Record<string, unknown> }>((tie) => ({
  jsonTree: fc.oneof({ depthSize: 'small', maxDepth: 4 }, scalar, tie('jsonArray'), tie('jsonObject')),
  jsonArray: fc.array(tie('jsonTree'), { maxLength: 20 }),
  jsonObject: fc.dictionary(key, tie('jsonTree'), { maxKeys: 5 }),
}));
// Values from a tiny domain, so that an eq value and the evidence it reads are often equal, or nearly.
const smallScalar = fc.constantFrom(null, 0, -0, 1.5, 'completed');
const { smallJson } = fc.letrec<{ smallJson: unknown }>((tie) => ({
  smallJson: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    smallScalar,
    fc.array(tie('smallJson'), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom('a', 'b'), tie('smallJson'), { maxKeys: 2 }),
  ),
}));
const anyJson = fc.oneof(jsonTree, smallJson);
// Evidence is most often an object whose members are what paths of one or two keys read.
const evidenceTree = fc.oneof(anyJson, fc.dictionary(key, fc.oneof(anyJson, fc.dictionary(key, anyJson, { maxKeys: 4 })), { maxKeys: 6 }));
// JSON.parse turns a "__proto__" key into an own data member on an ordinary object: the case that matters.
const evidence = fc.oneof(evidenceTree, evidenceTree.map((value) => JSON.parse(JSON.stringify(value) ?? 'null') as unknown));

const schemaEntry = fc.oneof(
  { arbitrary: fc.record({ type: typeName }), weight: 3 },
  fc.record({ type: fc.constantFrom('number', 'integer') }),
  fc.record({ type: fc.array(typeName, { minLength: 1, maxLength: 9 }) }),
  fc.record({ type: fc.oneof(fc.string({ maxLength: 3 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 9 })) }),
  jsonTree,
);
const evidenceSchema = fc.oneof(
  { arbitrary: fc.record({ type: fc.constant('object'), properties: fc.dictionary(key, schemaEntry, { minKeys: 6, maxKeys: 11 }) }), weight: 4 },
  jsonTree,
  fc.constant(undefined),
);
const amountCents = fc.oneof(fc.integer({ min: -5, max: 400 }), fc.double(), fc.string({ maxLength: 3 }), fc.constant(undefined), fc.constant(Number.MAX_SAFE_INTEGER));
const evaluationInput: fc.Arbitrary<EvaluationInput> = fc.record({ evidence, evidenceSchema, amountCents });

const path = fc.oneof(fc.tuple(key), fc.array(key, { minLength: 1, maxLength: 3 }));
const leafClause = fc.oneof(
  fc.constant({ op: 'true' }),
  fc.record({ op: fc.constantFrom('eq', 'completion'), path, value: anyJson }),
  fc.record({ op: fc.constant('lte'), path, limit_source: fc.constant('amount_cents') }),
  fc.record({ op: fc.constant('budget_cap'), path }),
  fc.record({ op: fc.constantFrom('schema_field', 'array_nonempty'), field: fieldName }),
);
const { clause: validClause } = fc.letrec<{ clause: unknown; combinator: unknown; negation: unknown }>((tie) => ({
  clause: fc.oneof({ depthSize: 'small', maxDepth: 5 }, leafClause, tie('combinator'), tie('negation')),
  combinator: fc.record({ op: fc.constantFrom('and', 'or'), clauses: fc.array(tie('clause'), { minLength: 1, maxLength: 6 }) }),
  negation: fc.record({ op: fc.constant('not'), clause: tie('clause') }),
}));
// Wide trees whose size straddles the fuel limit.
const { clause: wideClause } = fc.letrec<{ clause: unknown; combinator: unknown }>((tie) => ({
  clause: fc.oneof({ depthSize: 'small', maxDepth: 3 }, fc.constant({ op: 'true' }), tie('combinator')),
  combinator: fc.record({ op: fc.constantFrom('and', 'or'), clauses: fc.array(tie('clause'), { minLength: 1, maxLength: 32 }) }),
}));
// Clauses that are mostly right but may carry a wrong field, a wrong type or an unknown op anywhere.
const { clause: nearlyValidClause } = fc.letrec<{ clause: unknown; combinator: unknown; mangled: unknown }>((tie) => ({
  clause: fc.oneof({ depthSize: 'small', maxDepth: 4 }, leafClause, tie('combinator'), tie('mangled')),
  combinator: fc.record({ op: fc.constantFrom('and', 'or', 'not'), clauses: fc.array(tie('clause'), { maxLength: 4 }), clause: tie('clause') }, { requiredKeys: ['op'] }),
  mangled: fc.oneof(
    jsonTree,
    fc.record({ op: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...clauseOps)), path: fc.oneof(path, jsonTree), field: jsonTree, value: jsonTree, limit_source: jsonTree }, { requiredKeys: ['op'] }),
  ),
}));

// ---- The reference evaluator: written independently of src/, as plainly as possible ----

function referenceRead(value: unknown, segments: readonly string[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function referenceType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const typeNames = ['null', 'boolean', 'string', 'integer', 'number', 'array', 'object'];

function referenceSchemaTypes(schema: unknown, field: string): string[] | undefined {
  const properties = referenceRead(schema, ['properties']);
  const type = referenceRead(properties, [field, 'type']);
  if (typeof type === 'string') return typeNames.includes(type) ? [type] : undefined;
  if (!Array.isArray(type) || type.length === 0 || type.length > 7) return undefined;
  return type.every((name) => typeNames.includes(name)) ? (type as string[]) : undefined;
}

type Clause = { op: string; clauses?: Clause[]; clause?: Clause; path?: string[]; value?: unknown; field?: string };

/** Answers [passed, clauses visited] with short-circuiting and/or. */
function reference(clause: Clause, input: EvaluationInput): [boolean, number] {
  const at = clause.path === undefined ? undefined : referenceRead(input.evidence, clause.path);
  const safe = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value);
  switch (clause.op) {
    case 'true':
      return [true, 1];
    case 'and':
    case 'or': {
      let visited = 1;
      for (const child of clause.clauses ?? []) {
        const [passed, count] = reference(child, input);
        visited += count;
        if (passed === (clause.op === 'or')) return [passed, visited];
      }
      return [clause.op === 'and', visited];
    }
    case 'not': {
      const [passed, count] = reference(clause.clause as Clause, input);
      return [!passed, count + 1];
    }
    case 'eq':
    case 'completion':
      return [at !== undefined && canonicalJson(at) === canonicalJson(clause.value), 1];
    case 'lte':
    case 'budget_cap':
      return [safe(at) && safe(input.amountCents) && (at as number) <= (input.amountCents as number), 1];
    case 'schema_field': {
      const value = referenceRead(input.evidence, [clause.field as string]);
      const types = referenceSchemaTypes(input.evidenceSchema, clause.field as string);
      if (value === undefined || types === undefined) return [false, 1];
      const type = referenceType(value);
      return [types.includes(type) || (type === 'integer' && types.includes('number')), 1];
    }
    case 'array_nonempty': {
      const value = referenceRead(input.evidence, [clause.field as string]);
      return [Array.isArray(value) && value.length > 0, 1];
    }
    default:
      throw new Error(`reference: unknown op ${clause.op}`);
  }
}

// ---- Checks ----

function compileOrServiceError(document: unknown): CompiledPredicate | ServiceError {
  try {
    return compilePredicate(document);
  } catch (error) {
    if (error instanceof PredicateError) return serviceErrorOfPredicate(error);
    throw error;
  }
}

function expectPredicateError(error: ServiceError): void {
  expect(error.code).toMatch(/^predicate\./);
  expect(error.statusCode).toBe(400);
  expect(typeof error.details?.['pointer']).toBe('string');
}

function countJsonNodes(value: unknown): number {
  if (value === null || typeof value !== 'object') return 1;
  return 1 + Object.values(value).reduce<number>((sum, member) => sum + countJsonNodes(member), 0);
}

function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  return Math.max(0, ...Object.entries(value).map(([name, member]) => Math.max(name.length, longestString(member))));
}

function expectWellFormedTrace(compiled: CompiledPredicate, result: PredicateEvaluation): void {
  expect(result.trace.length).toBeGreaterThan(0);
  expect(result.trace.length).toBeLessThanOrEqual(compiled.nodeCount);
  expect(compiled.nodeCount).toBeLessThanOrEqual(predicateFuelMax);
  expect(result.trace[0]?.data.passed).toBe(result.passed);
  for (const step of result.trace) {
    expect(clauseOps).toContain(step.kind);
    expect(typeof step.detail).toBe('string');
    if (step.data.observed_truncated === true) {
      expect(Object.keys(step.data.observed as object).every((name) => name === 'type' || name === 'length')).toBe(true);
    } else if ('observed' in step.data) {
      expect(countJsonNodes(step.data.observed)).toBeLessThanOrEqual(traceObservedNodesMax);
      expect(longestString(step.data.observed)).toBeLessThanOrEqual(traceObservedStringLengthMax);
    }
  }
}

describe('validation never throws anything but a predicate ServiceError', () => {
  it('on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), jsonTree), (document) => {
        const outcome = compileOrServiceError(document);
        if (outcome instanceof ServiceError) expectPredicateError(outcome);
      }),
      { numRuns: 300 },
    );
  });

  it('on version-1 documents with arbitrary or nearly valid roots', () => {
    fc.assert(
      fc.property(fc.oneof(jsonTree, nearlyValidClause, fc.jsonValue({ maxDepth: 5 })), (root) => {
        const outcome = compileOrServiceError({ version: 1, root });
        if (outcome instanceof ServiceError) expectPredicateError(outcome);
        else expect(outcome.nodeCount).toBeLessThanOrEqual(predicateFuelMax);
      }),
      { numRuns: 500 },
    );
  });

  it('valid trees compile unless a limit is hit, and the limit named is one they exceed', () => {
    fc.assert(
      fc.property(fc.oneof(validClause, wideClause), (root) => {
        const outcome = compileOrServiceError({ version: 1, root });
        if (outcome instanceof ServiceError) {
          expect(['predicate.fuel_exceeded', 'predicate.document_too_large']).toContain(outcome.code);
          if (outcome.code === 'predicate.fuel_exceeded') expect(countJsonNodes(root)).toBeGreaterThan(predicateFuelMax);
        } else {
          expect(outcome.document.root).toEqual(root);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('evaluation', () => {
  it('never throws, agrees with the reference evaluator, and visits what the reference visits', () => {
    fc.assert(
      fc.property(fc.oneof(validClause, wideClause), evaluationInput, (root, input) => {
        const compiled = compileOrServiceError({ version: 1, root });
        fc.pre(!(compiled instanceof ServiceError));
        const result = evaluate(compiled as CompiledPredicate, input);
        const [passed, visited] = reference(root as Clause, input);
        expect(result.passed).toBe(passed);
        expect(result.trace).toHaveLength(visited);
        expectWellFormedTrace(compiled as CompiledPredicate, result);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the reference on single clauses reading evidence and schemas built to match them', () => {
    const coherentCase = fc.record({
      field: fieldName,
      value: fc.oneof(anyJson, fc.array(smallScalar, { minLength: 1, maxLength: 2 }), fc.integer({ min: -2, max: 200 }), fc.constantFrom(0.5, 2 ** 53)),
      entry: schemaEntry,
      others: fc.dictionary(key, anyJson, { maxKeys: 3 }),
      expected: smallJson,
      amountCents,
      op: fc.constantFrom('eq', 'completion', 'lte', 'budget_cap', 'schema_field', 'array_nonempty'),
      nested: fc.boolean(),
    });
    fc.assert(
      fc.property(coherentCase, ({ field, value, entry, others, expected, amountCents: amount, op, nested }) => {
        const path = nested ? [field, 'a'] : [field];
        const evidence = JSON.parse(JSON.stringify({ ...others, [field]: nested ? { a: value } : value })) as unknown;
        const input: EvaluationInput = { evidence, evidenceSchema: { properties: { [field]: entry } }, amountCents: amount };
        const clause =
          op === 'eq' || op === 'completion' ? { op, path, value: expected }
          : op === 'lte' ? { op, path, limit_source: 'amount_cents' }
          : op === 'budget_cap' ? { op, path }
          : { op, field };
        const compiled = compilePredicate({ version: 1, root: clause });
        const result = evaluate(compiled, input);
        expect(result.passed).toBe(reference(clause as Clause, input)[0]);
        expectWellFormedTrace(compiled, result);
      }),
      { numRuns: 3000 },
    );
  });

  it('is deterministic: the same inputs give byte-identical JSON, also after a JSON round trip of the inputs', () => {
    fc.assert(
      fc.property(validClause, evaluationInput, (root, input) => {
        const compiled = compileOrServiceError({ version: 1, root });
        fc.pre(!(compiled instanceof ServiceError));
        const first = JSON.stringify(evaluate(compiled as CompiledPredicate, input));
        expect(JSON.stringify(evaluate(compiled as CompiledPredicate, input))).toBe(first);
        const recompiled = compilePredicate(JSON.parse(JSON.stringify({ version: 1, root })));
        const roundTripped = {
          evidence: JSON.parse(JSON.stringify(input.evidence) ?? 'null') as unknown,
          evidenceSchema: input.evidenceSchema === undefined ? undefined : JSON.parse(JSON.stringify(input.evidenceSchema) ?? 'null'),
          amountCents: input.amountCents,
        };
        // A top-level undefined evidence becomes null through JSON: both are "no fields", so traces agree.
        expect(JSON.stringify(evaluate(recompiled, roundTripped))).toBe(first);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on documents that compiled from nearly valid input, with any evidence', () => {
    fc.assert(
      fc.property(nearlyValidClause, evaluationInput, (root, input) => {
        const compiled = compileOrServiceError({ version: 1, root });
        fc.pre(!(compiled instanceof ServiceError));
        expectWellFormedTrace(compiled as CompiledPredicate, evaluate(compiled as CompiledPredicate, input));
      }),
      { numRuns: 300 },
    );
  });

  it('a whole-fuel document evaluates every clause once at most', () => {
    const leaves = Array.from({ length: 31 }, (_, index) => ({ op: 'not', clause: { op: 'eq', path: ['a'], value: index } }));
    const groups = Array.from({ length: 7 }, () => ({ op: 'and', clauses: leaves.slice(0, 17) }));
    // 1 root + 7 × (1 and + 17 × 2) = 246, plus an or of 3 × not(not(eq)) = 10 → 256.
    const root = { op: 'and', clauses: [...groups, { op: 'or', clauses: leaves.slice(0, 3).map((leaf) => ({ op: 'not', clause: leaf })) }] };
    const compiled = compilePredicate({ version: 1, root });
    expect(compiled.nodeCount).toBe(predicateFuelMax);
    fc.assert(
      fc.property(evaluationInput, (input) => {
        const result = evaluate(compiled, input);
        expect(result.trace.length).toBeLessThanOrEqual(predicateFuelMax);
        expect(result.trace).toHaveLength(reference(root as Clause, input)[1]);
      }),
      { numRuns: 200 },
    );
    // With no evidence every eq fails, so every and passes through and the or tries every clause: the whole fuel.
    expect(evaluate(compiled, { evidence: {}, evidenceSchema: undefined, amountCents: 0 }).trace).toHaveLength(predicateFuelMax);
  });
});
