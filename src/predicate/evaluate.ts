// Evaluation of a compiled predicate: one closure per clause, built once by compile.ts, each pushing its trace
// step. Total by construction: any evidence, schema or amount yields passed true/false, never an exception.
import type {
  ArrayNonemptyClause,
  BudgetCapClause,
  CompletionClause,
  EqClause,
  EvaluationInput,
  JsonTypeName,
  LteClause,
  PredicateEvaluation,
  SchemaFieldClause,
  TraceStep,
  TraceStepData,
} from './ast.ts';
import { jsonTypeNames } from './ast.ts';
import type { CompiledPredicate } from './compile.ts';
import { compileEqualityMatcher, humanPath, isJsonObject, jsonPointer, jsonTypeOf, ownMember, readPath } from './json-value.ts';
import { recordObserved } from './trace.ts';

/** Evaluates one clause against the input, appends its steps to the trace, and says whether it passed. */
export type ClauseEvaluator = (input: EvaluationInput, trace: TraceStep[]) => boolean;

/** Evaluates a compiled predicate. `and`/`or` short-circuit, so every clause is visited at most once and the
 * trace (one step per visited clause) never has more steps than the document has clauses. */
export function evaluate(compiled: CompiledPredicate, input: EvaluationInput): PredicateEvaluation {
  const trace: TraceStep[] = [];
  const passed = compiled.evaluateRoot(input, trace);
  return { passed, trace };
}

export function trueEvaluator(): ClauseEvaluator {
  return (_input, trace) => {
    trace.push({ kind: 'true', detail: 'true always passes', data: { passed: true } });
    return true;
  };
}

/** `and` stops at its first failing clause, `or` at its first passing one; the parent's step comes first in the
 * trace and is completed once its children are done, so `trace[0]` always carries the overall result. */
export function combinatorEvaluator(op: 'and' | 'or', children: readonly ClauseEvaluator[]): ClauseEvaluator {
  const count = children.length;
  // The child result that settles the outcome: a failure settles an and, a pass settles an or.
  const decidingResult = op === 'or';
  const stopDetails = children.map((_child, index) => {
    const outcome = op === 'and' ? 'failed, so the and failed' : 'passed, so the or passed';
    const rest = index + 1 < count ? '; later clauses were not evaluated' : '';
    return `clause ${index + 1} of ${count} ${outcome}${rest}`;
  });
  const completeDetail = op === 'and' ? `all ${count} clauses passed` : `none of the ${count} clauses passed`;
  return (input, trace) => {
    const data: TraceStepData = { passed: !decidingResult };
    const step: TraceStep = { kind: op, detail: completeDetail, data };
    trace.push(step);
    for (let index = 0; index < count; index += 1) {
      if ((children[index] as ClauseEvaluator)(input, trace) === decidingResult) {
        data.passed = decidingResult;
        step.detail = stopDetails[index] as string;
        return decidingResult;
      }
    }
    return !decidingResult;
  };
}

export function notEvaluator(child: ClauseEvaluator): ClauseEvaluator {
  return (input, trace) => {
    const data: TraceStepData = { passed: false };
    const step: TraceStep = { kind: 'not', detail: '', data };
    trace.push(step);
    const passed = !child(input, trace);
    data.passed = passed;
    step.detail = passed ? 'the inner clause failed, so not passed' : 'the inner clause passed, so not failed';
    return passed;
  };
}

/** `eq` and `completion`: the evidence at the path equals the expected value by JSON equality. */
export function equalityEvaluator(clause: EqClause | CompletionClause): ClauseEvaluator {
  const { op, path: evidencePath, value: expected } = clause;
  const path = jsonPointer(evidencePath);
  const matches = compileEqualityMatcher(expected);
  const where = humanPath(evidencePath);
  const expectedText = shortJson(expected);
  const missingDetail = `evidence has no value at ${where}`;
  const passedDetail = `${where} equals ${expectedText}`;
  const failedDetail = `${where} does not equal ${expectedText}`;
  return (input, trace) => {
    const observed = readPath(input.evidence, evidencePath);
    if (observed === undefined) {
      trace.push({ kind: op, detail: missingDetail, data: { path, passed: false, expected } });
      return false;
    }
    const passed = matches(observed);
    const data: TraceStepData = { path, passed, expected };
    recordObserved(data, observed);
    trace.push({ kind: op, detail: passed ? passedDetail : failedDetail, data });
    return passed;
  };
}

/** `lte` and `budget_cap`: the integer at the path is at most the intent amount. Only safe integers compare;
 * a fraction, a string, a huge number or a missing value fails, as does an amount that is not a safe integer. */
export function amountLimitEvaluator(clause: LteClause | BudgetCapClause): ClauseEvaluator {
  const { op, path: evidencePath } = clause;
  const path = jsonPointer(evidencePath);
  const where = humanPath(evidencePath);
  const missingDetail = `evidence has no value at ${where}`;
  const amountInvalidDetail = 'the intent amount_cents is not a safe integer, so nothing can be compared with it';
  const notIntegerDetail = `${where} is not a safe integer, so it cannot be compared with amount_cents`;
  const passedDetail = `${where} is at most amount_cents`;
  const failedDetail = `${where} is greater than amount_cents`;
  return (input, trace) => {
    const amountCents = input.amountCents;
    if (typeof amountCents !== 'number' || !Number.isSafeInteger(amountCents)) {
      trace.push({ kind: op, detail: amountInvalidDetail, data: { path, passed: false } });
      return false;
    }
    const observed = readPath(input.evidence, evidencePath);
    if (observed === undefined) {
      trace.push({ kind: op, detail: missingDetail, data: { path, passed: false, expected: amountCents } });
      return false;
    }
    const data: TraceStepData = { path, passed: false, expected: amountCents };
    recordObserved(data, observed);
    if (typeof observed !== 'number' || !Number.isSafeInteger(observed)) {
      trace.push({ kind: op, detail: notIntegerDetail, data });
      return false;
    }
    const passed = observed <= amountCents;
    data.passed = passed;
    trace.push({ kind: op, detail: passed ? passedDetail : failedDetail, data });
    return passed;
  };
}

/** `array_nonempty`: the top-level field exists and is an array with at least one element. */
export function arrayNonemptyEvaluator(clause: ArrayNonemptyClause): ClauseEvaluator {
  const fieldPath = Object.freeze([clause.field]);
  const path = jsonPointer(fieldPath);
  const where = humanPath(fieldPath);
  const missingDetail = `evidence has no field ${where}`;
  const notArrayDetail = `field ${where} is not an array`;
  const emptyDetail = `field ${where} is an empty array`;
  const passedDetail = `field ${where} is a non-empty array`;
  return (input, trace) => {
    const observed = readPath(input.evidence, fieldPath);
    if (observed === undefined) {
      trace.push({ kind: 'array_nonempty', detail: missingDetail, data: { path, passed: false, expected: 'non-empty array' } });
      return false;
    }
    const observedType = jsonTypeOf(observed) ?? 'not_json';
    const passed = Array.isArray(observed) && observed.length > 0;
    const detail = passed ? passedDetail : observedType === 'array' ? emptyDetail : notArrayDetail;
    trace.push({ kind: 'array_nonempty', detail, data: { path, passed, expected: 'non-empty array', observed: observedType } });
    return passed;
  };
}

/** Why a schema entry cannot be used; the order is the order they are checked in. */
const schemaProblems = ['schema_not_object', 'properties_not_object', 'entry_missing', 'type_invalid'] as const;
type SchemaProblem = (typeof schemaProblems)[number];
type DeclaredType = JsonTypeName | readonly JsonTypeName[];

/** `schema_field`: the top-level field exists and its JSON type is one `evidence_schema` declares for it. */
export function schemaFieldEvaluator(clause: SchemaFieldClause): ClauseEvaluator {
  const field = clause.field;
  const fieldPath = Object.freeze([field]);
  const path = jsonPointer(fieldPath);
  const where = humanPath(fieldPath);
  const missingDetail = `evidence has no field ${where}`;
  const problemDetails: Record<SchemaProblem, string> = {
    schema_not_object: `evidence_schema is not a JSON object, so no type is declared for ${where}`,
    properties_not_object: `evidence_schema has no properties object, so no type is declared for ${where}`,
    entry_missing: `evidence_schema.properties has no entry for ${where}`,
    type_invalid: `evidence_schema.properties entry for ${where} has no valid type`,
  };
  const passedDetail = `field ${where} has a type evidence_schema declares`;
  const failedDetail = `field ${where} does not have a type evidence_schema declares`;
  return (input, trace) => {
    const observed = readPath(input.evidence, fieldPath);
    if (observed === undefined) {
      trace.push({ kind: 'schema_field', detail: missingDetail, data: { path, passed: false } });
      return false;
    }
    const observedType = jsonTypeOf(observed);
    const declared = declaredType(input.evidenceSchema, field);
    if (isSchemaProblem(declared)) {
      const data = { path, passed: false, observed: observedType ?? 'not_json' };
      trace.push({ kind: 'schema_field', detail: problemDetails[declared.problem], data });
      return false;
    }
    const passed = observedType !== undefined && typeDeclared(declared, observedType);
    const expected = typeof declared === 'string' ? declared : declared.slice();
    const data = { path, passed, expected, observed: observedType ?? 'not_json' };
    trace.push({ kind: 'schema_field', detail: passed ? passedDetail : failedDetail, data });
    return passed;
  };
}

/** Reads `evidence_schema.properties[field].type` through own properties only. A type array must hold 1 to 7
 * known type names, so what is copied into the trace stays small whatever the schema holds. */
function declaredType(schema: unknown, field: string): DeclaredType | { readonly problem: SchemaProblem } {
  if (!isJsonObject(schema)) return problemOf.schema_not_object;
  const properties = ownMember(schema, 'properties');
  if (!isJsonObject(properties)) return problemOf.properties_not_object;
  const entry = ownMember(properties, field);
  if (!isJsonObject(entry)) return problemOf.entry_missing;
  const type = ownMember(entry, 'type');
  if (isTypeName(type)) return type;
  if (!Array.isArray(type) || type.length === 0 || type.length > jsonTypeNames.length) return problemOf.type_invalid;
  for (let index = 0; index < type.length; index += 1) {
    if (!isTypeName(type[index])) return problemOf.type_invalid;
  }
  return type as readonly JsonTypeName[];
}

function isSchemaProblem(declared: DeclaredType | { readonly problem: SchemaProblem }): declared is { readonly problem: SchemaProblem } {
  return typeof declared === 'object' && Object.hasOwn(declared, 'problem');
}

const problemOf = Object.fromEntries(schemaProblems.map((problem) => [problem, Object.freeze({ problem })])) as {
  readonly [problem in SchemaProblem]: { readonly problem: SchemaProblem };
};

function isTypeName(value: unknown): value is JsonTypeName {
  return typeof value === 'string' && (jsonTypeNames as readonly string[]).includes(value);
}

/** An integer satisfies both "integer" and "number"; every other JSON type only its own name. */
function typeDeclared(declared: DeclaredType, observedType: JsonTypeName): boolean {
  if (typeof declared === 'string') return declared === observedType || (declared === 'number' && observedType === 'integer');
  return declared.includes(observedType) || (observedType === 'integer' && declared.includes('number'));
}

const expectedTextLengthMax = 64;

/** The expected value as compact JSON for a sentence, cut short when long (the full value is in data). */
function shortJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length <= expectedTextLengthMax ? text : `${text.slice(0, expectedTextLengthMax - 1)}…`;
}
