// Evaluation of a compiled predicate: parse.ts turns each clause into a ClauseNode (its static parts: op, children,
// evidence location, expected value), and evaluateClause interprets that tree, pushing one trace step per visited
// clause. The trace's fixed texts (JSON Pointer, human path, detail sentences) are built once per node or
// location, the first time a step needs them, and kept; an evaluation then only reads the evidence, decides
// pass/fail, copies what it observed and allocates its steps. Total by construction: any evidence, schema or
// amount yields passed true/false, never an exception.
import { quoteJsonString } from '../signing/canonical-json.ts';
import type { ClauseOp, EvaluationInput, JsonTypeName, JsonValue, PredicateEvaluation, TraceStep, TraceStepData } from './ast.ts';
import { jsonTypeNames } from './ast.ts';
import type { CompiledPredicate } from './compile.ts';
import { equalsExpected, humanSegment, isJsonObject, jsonTypeOf, ownMember, pointerSegment, readPath } from './json-value.ts';
import { observedStepData } from './trace.ts';

/** Evaluates one clause against the input, appends its steps to the trace, and says whether it passed. */
export type ClauseEvaluator = (input: EvaluationInput, trace: TraceStep[]) => boolean;

/** Evaluates a compiled predicate. `and`/`or` short-circuit, so every clause is visited at most once and the
 * trace (one step per visited clause) never has more steps than the document has clauses. */
export function evaluate(compiled: CompiledPredicate, input: EvaluationInput): PredicateEvaluation {
  const trace: TraceStep[] = [];
  const passed = compiled.evaluateRoot(input, trace);
  return { passed, trace };
}

// ---- The compiled form ----

/** Which of the ten ops a node is, as a small integer for the evaluator's switch. */
export const nodeKind = Object.freeze({
  true: 0,
  and: 1,
  or: 2,
  not: 3,
  eq: 4,
  completion: 5,
  lte: 6,
  budget_cap: 7,
  schema_field: 8,
  array_nonempty: 9,
} as const satisfies { readonly [op in ClauseOp]: number });

/** One place in the evidence that clauses read: a path (a field `f` is the path `["f"]`), the texts a trace
 * step writes for it, and its slot in an evaluation's table of values read. Clauses of one rule that read the
 * same path share one location (parse.ts), so each text is built once and, when paths repeat, each location is
 * read once per evaluation. */
export class EvidenceLocation {
  /** A private copy of the path, never handed out. */
  readonly path: readonly string[];
  readonly slot: number;
  /** `data.path` of a step: the location as a JSON Pointer, built when a step first needs it. */
  pointer: string | undefined = undefined;
  /** The location as the detail sentences write it (see humanPath), built with the pointer. */
  where: string | undefined = undefined;

  constructor(path: readonly string[], slot: number) {
    this.path = path;
    this.slot = slot;
  }
}

/** One validated clause. Every node has the same fields (one object shape for the whole tree); those an op does
 * not use are null. Built only by parse.ts, from values it has already validated and copied. */
export class ClauseNode {
  readonly kind: number;
  /** The clause's op: the trace step's `kind`. */
  readonly op: ClauseOp;
  /** The clauses of an and/or; the one clause of a not. */
  readonly children: readonly ClauseNode[] | null;
  /** What eq, completion, lte and budget_cap read (`path`), and schema_field and array_nonempty (`field`). */
  readonly location: EvidenceLocation | null;
  /** The value of eq and completion: a deep-frozen copy, shared by the document and every trace step. */
  readonly expected: JsonValue;
  /** Detail sentences by outcome (see the text ids below), each built when a step first needs it. */
  texts: (string | undefined)[] | undefined = undefined;

  constructor(kind: number, op: ClauseOp, children: readonly ClauseNode[] | null, location: EvidenceLocation | null, expected: JsonValue) {
    this.kind = kind;
    this.op = op;
    this.children = children;
    this.location = location;
    this.expected = expected;
  }
}

/** Marks a slot of an evaluation's table of values read that has not been read yet (undefined means missing). */
const unread: unique symbol = Symbol('unread');
type ValuesRead = (unknown | typeof unread)[] | null;

/** The evaluator of a compiled root node (what CompiledPredicate.evaluateRoot holds). `reads` counts the
 * clauses that read evidence: when fewer locations than that exist, some path repeats, and an evaluation keeps
 * a table of the values it read so that each location is read once. */
export function rootEvaluator(root: ClauseNode, locationCount: number, reads: number): ClauseEvaluator {
  if (locationCount === reads) return (input, trace) => evaluateClause(root, input, trace, null);
  return (input, trace) => evaluateClause(root, input, trace, new Array<unknown>(locationCount).fill(unread));
}

/** The evidence at `location`, from the table when this evaluation has read it already. */
function readLocation(location: EvidenceLocation, input: EvaluationInput, values: ValuesRead): unknown {
  if (values === null) return readPath(input.evidence, location.path);
  const known = values[location.slot];
  if (known !== unread) return known;
  const value = readPath(input.evidence, location.path);
  values[location.slot] = value;
  return value;
}

// ---- Evaluation ----

// Ids of the detail sentences a node keeps (built in buildText below). Each op numbers its own; `missingText`
// is the "no value" sentence of every op that reads evidence.
const missingText = 0;
const equalityPassedText = 1;
const equalityFailedText = 2;
const limitNotIntegerText = 1;
const limitPassedText = 2;
const limitFailedText = 3;
const arrayNotArrayText = 1;
const arrayEmptyText = 2;
const arrayPassedText = 3;
const schemaPassedText = 1;
const schemaFailedText = 2;
const schemaProblemText = 3; // then one id per schema problem, in schemaProblems order
const combinatorCompleteText = 0;
const combinatorStopText = 1; // then one id per clause index

// Every step is made of new objects; only strings (and the rule's frozen expected values) are shared.
const amountInvalidDetail = 'the intent amount_cents is not a safe integer, so nothing can be compared with it';
const nonEmptyArray = 'non-empty array';

/** `and` stops at its first failing clause, `or` at its first passing one; the parent's step comes first in the
 * trace and is completed once its children are done, so `trace[0]` always carries the overall result. */
function evaluateClause(node: ClauseNode, input: EvaluationInput, trace: TraceStep[], values: ValuesRead): boolean {
  switch (node.kind) {
    case nodeKind.true:
      trace.push({ kind: 'true', detail: 'true always passes', data: { passed: true } });
      return true;
    case nodeKind.and:
    case nodeKind.or: {
      // The child result that settles the outcome: a failure settles an and, a pass settles an or.
      const decidingResult = node.kind === nodeKind.or;
      const data: TraceStepData = { passed: !decidingResult };
      const step: TraceStep = { kind: node.op, detail: '', data };
      trace.push(step);
      const children = node.children as readonly ClauseNode[];
      for (let index = 0; index < children.length; index += 1) {
        if (evaluateClause(children[index] as ClauseNode, input, trace, values) === decidingResult) {
          data.passed = decidingResult;
          step.detail = textOf(node, combinatorStopText + index);
          return decidingResult;
        }
      }
      step.detail = textOf(node, combinatorCompleteText);
      return !decidingResult;
    }
    case nodeKind.not: {
      const data: TraceStepData = { passed: false };
      const step: TraceStep = { kind: 'not', detail: '', data };
      trace.push(step);
      const passed = !evaluateClause((node.children as readonly ClauseNode[])[0] as ClauseNode, input, trace, values);
      data.passed = passed;
      step.detail = passed ? 'the inner clause failed, so not passed' : 'the inner clause passed, so not failed';
      return passed;
    }
    case nodeKind.eq:
    case nodeKind.completion:
      return evaluateEquality(node, input, trace, values);
    case nodeKind.lte:
    case nodeKind.budget_cap:
      return evaluateAmountLimit(node, input, trace, values);
    case nodeKind.schema_field:
      return evaluateSchemaField(node, input, trace, values);
    default:
      return evaluateArrayNonempty(node, input, trace, values);
  }
}

/** `eq` and `completion`: the evidence at the path equals the expected value by JSON equality. */
function evaluateEquality(node: ClauseNode, input: EvaluationInput, trace: TraceStep[], values: ValuesRead): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, input, values);
  const path = location.pointer ?? pointerOf(location);
  const expected = node.expected;
  if (observed === undefined) {
    trace.push({ kind: node.op, detail: textOf(node, missingText), data: { path, passed: false, expected } });
    return false;
  }
  const passed = equalsExpected(expected, observed);
  const data = observedStepData(path, passed, expected, observed);
  trace.push({ kind: node.op, detail: textOf(node, passed ? equalityPassedText : equalityFailedText), data });
  return passed;
}

/** `lte` and `budget_cap`: the integer at the path is at most the intent amount. Only safe integers compare;
 * a fraction, a string, a huge number or a missing value fails, as does an amount that is not a safe integer. */
function evaluateAmountLimit(node: ClauseNode, input: EvaluationInput, trace: TraceStep[], values: ValuesRead): boolean {
  const location = node.location as EvidenceLocation;
  const amountCents = input.amountCents;
  const path = location.pointer ?? pointerOf(location);
  if (typeof amountCents !== 'number' || !Number.isSafeInteger(amountCents)) {
    trace.push({ kind: node.op, detail: amountInvalidDetail, data: { path, passed: false } });
    return false;
  }
  const observed = readLocation(location, input, values);
  if (observed === undefined) {
    trace.push({ kind: node.op, detail: textOf(node, missingText), data: { path, passed: false, expected: amountCents } });
    return false;
  }
  if (typeof observed !== 'number' || !Number.isSafeInteger(observed)) {
    trace.push({ kind: node.op, detail: textOf(node, limitNotIntegerText), data: observedStepData(path, false, amountCents, observed) });
    return false;
  }
  const passed = observed <= amountCents;
  const data = observedStepData(path, passed, amountCents, observed);
  trace.push({ kind: node.op, detail: textOf(node, passed ? limitPassedText : limitFailedText), data });
  return passed;
}

/** `array_nonempty`: the top-level field exists and is an array with at least one element. */
function evaluateArrayNonempty(node: ClauseNode, input: EvaluationInput, trace: TraceStep[], values: ValuesRead): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, input, values);
  const path = location.pointer ?? pointerOf(location);
  if (observed === undefined) {
    trace.push({ kind: 'array_nonempty', detail: textOf(node, missingText), data: { path, passed: false, expected: nonEmptyArray } });
    return false;
  }
  const observedType = jsonTypeOf(observed) ?? 'not_json';
  const passed = Array.isArray(observed) && observed.length > 0;
  const detail = textOf(node, passed ? arrayPassedText : observedType === 'array' ? arrayEmptyText : arrayNotArrayText);
  trace.push({ kind: 'array_nonempty', detail, data: { path, passed, expected: nonEmptyArray, observed: observedType } });
  return passed;
}

/** Why a schema entry cannot be used, in the order they are checked, each with its detail sentence's text id. */
const schemaProblems = ['schema_not_object', 'properties_not_object', 'entry_missing', 'type_invalid'] as const;
type SchemaProblem = (typeof schemaProblems)[number];
type DeclaredType = JsonTypeName | readonly JsonTypeName[];
const problemOf = Object.fromEntries(schemaProblems.map((problem, index) => [problem, Object.freeze({ problem, text: schemaProblemText + index })])) as {
  readonly [problem in SchemaProblem]: { readonly problem: SchemaProblem; readonly text: number };
};
type Problem = (typeof problemOf)[SchemaProblem];

/** `schema_field`: the top-level field exists and its JSON type is one `evidence_schema` declares for it. */
function evaluateSchemaField(node: ClauseNode, input: EvaluationInput, trace: TraceStep[], values: ValuesRead): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, input, values);
  const path = location.pointer ?? pointerOf(location);
  if (observed === undefined) {
    trace.push({ kind: 'schema_field', detail: textOf(node, missingText), data: { path, passed: false } });
    return false;
  }
  const observedType = jsonTypeOf(observed);
  const declared = declaredType(input.evidenceSchema, location.path[0] as string);
  if (typeof declared === 'object' && !Array.isArray(declared)) {
    const problem = declared as Problem;
    trace.push({ kind: 'schema_field', detail: textOf(node, problem.text), data: { path, passed: false, observed: observedType ?? 'not_json' } });
    return false;
  }
  const declaredTypes = declared as DeclaredType;
  const passed = observedType !== undefined && typeDeclared(declaredTypes, observedType);
  const expected = typeof declaredTypes === 'string' ? declaredTypes : declaredTypes.slice();
  const data = { path, passed, expected, observed: observedType ?? 'not_json' };
  trace.push({ kind: 'schema_field', detail: textOf(node, passed ? schemaPassedText : schemaFailedText), data });
  return passed;
}

/** Reads `evidence_schema.properties[field].type` through own properties only. A type array must hold 1 to 7
 * known type names, so what is copied into the trace stays small whatever the schema holds. */
function declaredType(schema: unknown, field: string): DeclaredType | Problem {
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

function isTypeName(value: unknown): value is JsonTypeName {
  return typeof value === 'string' && (jsonTypeNames as readonly string[]).includes(value);
}

/** An integer satisfies both "integer" and "number"; every other JSON type only its own name. */
function typeDeclared(declared: DeclaredType, observedType: JsonTypeName): boolean {
  if (typeof declared === 'string') return declared === observedType || (declared === 'number' && observedType === 'integer');
  return declared.includes(observedType) || (observedType === 'integer' && declared.includes('number'));
}

// ---- Trace texts, built once per node on first use ----

/** Builds, in one pass over the path, the location's JSON Pointer and its text for sentences (see humanPath),
 * keeps both and answers the pointer. */
function pointerOf(location: EvidenceLocation): string {
  const segments = location.path;
  let pointer = '';
  let where = '';
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index] as string;
    pointer += '/' + pointerSegment(segment);
    where += humanSegment(segment, index === 0);
  }
  location.pointer = pointer;
  location.where = where;
  return pointer;
}

function whereOf(node: ClauseNode): string {
  const location = node.location as EvidenceLocation;
  if (location.where === undefined) pointerOf(location);
  return location.where as string;
}

function textOf(node: ClauseNode, id: number): string {
  const texts = node.texts ?? (node.texts = []);
  let text = texts[id];
  if (text === undefined) {
    text = buildText(node, id);
    texts[id] = text;
  }
  return text;
}

function buildText(node: ClauseNode, id: number): string {
  switch (node.kind) {
    case nodeKind.and:
    case nodeKind.or: {
      const count = (node.children as readonly ClauseNode[]).length;
      if (id === combinatorCompleteText) return node.kind === nodeKind.and ? `all ${count} clauses passed` : `none of the ${count} clauses passed`;
      const index = id - combinatorStopText;
      const outcome = node.kind === nodeKind.and ? 'failed, so the and failed' : 'passed, so the or passed';
      const rest = index + 1 < count ? '; later clauses were not evaluated' : '';
      return `clause ${index + 1} of ${count} ${outcome}${rest}`;
    }
    case nodeKind.eq:
    case nodeKind.completion: {
      const where = whereOf(node);
      if (id === missingText) return `evidence has no value at ${where}`;
      const expectedText = shortJson(node.expected);
      return id === equalityPassedText ? `${where} equals ${expectedText}` : `${where} does not equal ${expectedText}`;
    }
    case nodeKind.lte:
    case nodeKind.budget_cap: {
      const where = whereOf(node);
      if (id === missingText) return `evidence has no value at ${where}`;
      if (id === limitNotIntegerText) return `${where} is not a safe integer, so it cannot be compared with amount_cents`;
      return id === limitPassedText ? `${where} is at most amount_cents` : `${where} is greater than amount_cents`;
    }
    case nodeKind.array_nonempty: {
      const where = whereOf(node);
      if (id === missingText) return `evidence has no field ${where}`;
      if (id === arrayNotArrayText) return `field ${where} is not an array`;
      return id === arrayEmptyText ? `field ${where} is an empty array` : `field ${where} is a non-empty array`;
    }
    case nodeKind.schema_field: {
      const where = whereOf(node);
      switch (id) {
        case missingText:
          return `evidence has no field ${where}`;
        case schemaPassedText:
          return `field ${where} has a type evidence_schema declares`;
        case schemaFailedText:
          return `field ${where} does not have a type evidence_schema declares`;
        case schemaProblemText + 0:
          return `evidence_schema is not a JSON object, so no type is declared for ${where}`;
        case schemaProblemText + 1:
          return `evidence_schema has no properties object, so no type is declared for ${where}`;
        case schemaProblemText + 2:
          return `evidence_schema.properties has no entry for ${where}`;
        default:
          return `evidence_schema.properties entry for ${where} has no valid type`;
      }
    }
    default:
      return '';
  }
}

const expectedTextLengthMax = 64;

/** The expected value as compact JSON for a sentence (as JSON.stringify writes it), cut short when long: the
 * full value is in data. Written out for the validated value so that it stops early and cannot throw. */
function shortJson(value: JsonValue): string {
  const text = compactJsonPrefix(value, '', expectedTextLengthMax + 1);
  return text.length <= expectedTextLengthMax ? text : `${text.slice(0, expectedTextLengthMax - 1)}…`;
}

/** Appends JSON.stringify(value) to `text`, stopping once `text` is at least `stopAt` long. */
function compactJsonPrefix(value: JsonValue, text: string, stopAt: number): string {
  if (value === null) return text + 'null';
  switch (typeof value) {
    case 'string':
      return text + quoteJsonString(value);
    case 'number':
      return text + String(value);
    case 'boolean':
      return text + (value ? 'true' : 'false');
    default:
      break;
  }
  if (Array.isArray(value)) {
    const elements = value as readonly JsonValue[];
    text += '[';
    for (let index = 0; index < elements.length && text.length < stopAt; index += 1) {
      if (index > 0) text += ',';
      text = compactJsonPrefix(elements[index] as JsonValue, text, stopAt);
    }
    return text + ']';
  }
  const object = value as { readonly [key: string]: JsonValue };
  text += '{';
  let first = true;
  for (const key in object) {
    if (text.length >= stopAt) break;
    if (!Object.hasOwn(object, key)) continue;
    text += (first ? '' : ',') + quoteJsonString(key) + ':';
    first = false;
    text = compactJsonPrefix(object[key] as JsonValue, text, stopAt);
  }
  return text + '}';
}
