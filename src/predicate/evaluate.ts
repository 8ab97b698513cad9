// Evaluation of a compiled predicate: parse.ts turns each clause into a ClauseNode (its static parts: op, children,
// evidence location, expected value), and evaluateClause interprets that tree, pushing one trace step per visited
// clause. The trace's fixed texts (JSON Pointer, human path, detail sentences) are built once, the first time a
// step needs them, and kept: with the location for those that depend only on the path read, with the node for
// the others (parse.ts has written the text of each expected value while validating). An evaluation then only
// reads the evidence, decides pass/fail, copies what it observed and allocates its steps. Total by construction:
// any evidence, schema or amount yields passed true/false, never an exception.
import { traceObservedNodesMax } from '../limits.ts';
import type { ClauseEvaluator, ClauseOp, CompiledPredicate, EvaluationInput, JsonTypeName, JsonValue, PredicateEvaluation, TraceStep, TraceStepData } from './ast.ts';
import { jsonTypeNames } from './ast.ts';
import { copyExpected, equalsExpected, humanSegment, isJsonObject, jsonTypeOf, pointerSegment, readPath } from './json-value.ts';
import { observedStepData, type CopyBudget } from './trace.ts';


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
  /** UTF-8 bytes of the path's segments in canonical JSON (quotes included): what each clause naming it adds. */
  readonly segmentBytes: number;
  /** `data.path` of a step: the location as a JSON Pointer, built when a step first needs it. */
  pointer: string | undefined = undefined;
  /** The location as the detail sentences write it (see humanPath), built with the pointer. */
  where: string | undefined = undefined;
  /** The detail sentences that depend only on this location, by location text id, each built when first needed. */
  texts: (string | undefined)[] | undefined = undefined;

  constructor(path: readonly string[], slot: number, segmentBytes: number) {
    this.path = path;
    this.slot = slot;
    this.segmentBytes = segmentBytes;
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
  /** The value of eq and completion: the rule's private deep copy. Steps get copies of their own; the document
   * freezes it when it hands it out. */
  readonly expected: JsonValue;
  /** The expected value as the sentences of eq and completion show it: its compact JSON (as JSON.stringify
   * writes it), cut short with "…" when long (parse.ts writes it); the whole value is in the step. */
  readonly expectedText: string | null;
  /** The sentences of an and/or, by clause (see combinatorText), each built when first needed. */
  texts: (string | undefined)[] | undefined = undefined;
  /** The sentences of an eq/completion that found a value, built when first needed. The other ops' sentences
   * are constants or kept with the location. */
  passedText: string | undefined = undefined;
  failedText: string | undefined = undefined;

  constructor(kind: number, op: ClauseOp, children: readonly ClauseNode[] | null, location: EvidenceLocation | null, expected: JsonValue, expectedText: string | null) {
    this.kind = kind;
    this.op = op;
    this.children = children;
    this.location = location;
    this.expected = expected;
    this.expectedText = expectedText;
  }
}

/** Marks a slot of an evaluation's table of values read that has not been read yet (undefined means missing). */
const unread: unique symbol = Symbol('unread');

/** What one evaluation carries down the tree: its input, its trace, the values it has read (when some path
 * repeats; else null) and the budget of the observed value being copied. */
class Evaluation implements CopyBudget {
  readonly input: EvaluationInput;
  readonly trace: TraceStep[];
  readonly values: unknown[] | null;
  nodesLeft = traceObservedNodesMax;

  constructor(input: EvaluationInput, trace: TraceStep[], values: unknown[] | null) {
    this.input = input;
    this.trace = trace;
    this.values = values;
  }
}

/** The evaluator of a compiled root node (what CompiledPredicate.evaluateRoot holds). `reads` counts the
 * clauses that read evidence: when fewer locations than that exist, some path repeats, and an evaluation keeps
 * a table of the values it read so that each location is read once. */
export function rootEvaluator(root: ClauseNode, locationCount: number, reads: number): ClauseEvaluator {
  if (locationCount === reads) return (input, trace) => evaluateClause(root, new Evaluation(input, trace, null));
  return (input, trace) => evaluateClause(root, new Evaluation(input, trace, new Array<unknown>(locationCount).fill(unread)));
}

/** The evidence at `location`, from the table when this evaluation has read it already. */
function readLocation(location: EvidenceLocation, evaluation: Evaluation): unknown {
  const values = evaluation.values;
  if (values === null) return readPath(evaluation.input.evidence, location.path);
  const known = values[location.slot];
  if (known !== unread) return known;
  const value = readPath(evaluation.input.evidence, location.path);
  values[location.slot] = value;
  return value;
}

// ---- Evaluation ----

// Every step is made of new objects; only strings are shared.
const trueDetail = 'true always passes';
const notPassedDetail = 'the inner clause failed, so not passed';
const notFailedDetail = 'the inner clause passed, so not failed';
const amountInvalidDetail = 'the intent amount_cents is not a safe integer, so nothing can be compared with it';
const nonEmptyArray = 'non-empty array';

/** `and` stops at its first failing clause, `or` at its first passing one; the parent's step comes first in the
 * trace and is completed once its children are done, so `trace[0]` always carries the overall result. */
function evaluateClause(node: ClauseNode, evaluation: Evaluation): boolean {
  switch (node.kind) {
    case nodeKind.true:
      evaluation.trace.push({ kind: 'true', detail: trueDetail, data: { passed: true } });
      return true;
    case nodeKind.and:
    case nodeKind.or:
      return evaluateCombinator(node, evaluation);
    case nodeKind.not: {
      const data: TraceStepData = { passed: false };
      const step: TraceStep = { kind: 'not', detail: '', data };
      evaluation.trace.push(step);
      const passed = !evaluateClause((node.children as readonly ClauseNode[])[0] as ClauseNode, evaluation);
      data.passed = passed;
      step.detail = passed ? notPassedDetail : notFailedDetail;
      return passed;
    }
    case nodeKind.eq:
    case nodeKind.completion:
      return evaluateEquality(node, evaluation);
    case nodeKind.lte:
    case nodeKind.budget_cap:
      return evaluateAmountLimit(node, evaluation);
    case nodeKind.schema_field:
      return evaluateSchemaField(node, evaluation);
    default:
      return evaluateArrayNonempty(node, evaluation);
  }
}

function evaluateCombinator(node: ClauseNode, evaluation: Evaluation): boolean {
  // The child result that settles the outcome: a failure settles an and, a pass settles an or.
  const decidingResult = node.kind === nodeKind.or;
  const data: TraceStepData = { passed: !decidingResult };
  const step: TraceStep = { kind: node.op, detail: '', data };
  evaluation.trace.push(step);
  const children = node.children as readonly ClauseNode[];
  for (let index = 0; index < children.length; index += 1) {
    if (evaluateClause(children[index] as ClauseNode, evaluation) === decidingResult) {
      data.passed = decidingResult;
      step.detail = combinatorText(node, combinatorStopText + index);
      return decidingResult;
    }
  }
  step.detail = combinatorText(node, combinatorCompleteText);
  return !decidingResult;
}

/** `eq` and `completion`: the evidence at the path equals the expected value by JSON equality. */
function evaluateEquality(node: ClauseNode, evaluation: Evaluation): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, evaluation);
  const path = location.pointer ?? pointerOf(location);
  const expected = node.expected;
  const scalar = typeof expected !== 'object' || expected === null;
  if (observed === undefined) {
    evaluation.trace.push({ kind: node.op, detail: locationText(location, missingValueText), data: { path, passed: false, expected: scalar ? expected : copyExpected(expected) } });
    return false;
  }
  const passed = scalar ? observed === expected : equalsExpected(expected, observed);
  const data = observedStepData(path, passed, scalar ? expected : copyExpected(expected), observed, evaluation);
  evaluation.trace.push({ kind: node.op, detail: (passed ? node.passedText : node.failedText) ?? equalityText(node, passed), data });
  return passed;
}

/** `lte` and `budget_cap`: the integer at the path is at most the intent amount. Only safe integers compare;
 * a fraction, a string, a huge number or a missing value fails, as does an amount that is not a safe integer. */
function evaluateAmountLimit(node: ClauseNode, evaluation: Evaluation): boolean {
  const location = node.location as EvidenceLocation;
  const amountCents = evaluation.input.amountCents;
  const path = location.pointer ?? pointerOf(location);
  if (typeof amountCents !== 'number' || !Number.isSafeInteger(amountCents)) {
    evaluation.trace.push({ kind: node.op, detail: amountInvalidDetail, data: { path, passed: false } });
    return false;
  }
  const observed = readLocation(location, evaluation);
  if (observed === undefined) {
    evaluation.trace.push({ kind: node.op, detail: locationText(location, missingValueText), data: { path, passed: false, expected: amountCents } });
    return false;
  }
  if (typeof observed !== 'number' || !Number.isSafeInteger(observed)) {
    const data = observedStepData(path, false, amountCents, observed, evaluation);
    evaluation.trace.push({ kind: node.op, detail: locationText(location, limitNotIntegerText), data });
    return false;
  }
  const passed = observed <= amountCents;
  // A safe integer is copied as it is: no budget to spend.
  const data: TraceStepData = { path, passed, expected: amountCents, observed };
  evaluation.trace.push({ kind: node.op, detail: locationText(location, passed ? limitPassedText : limitFailedText), data });
  return passed;
}

/** `array_nonempty`: the top-level field exists and is an array with at least one element. */
function evaluateArrayNonempty(node: ClauseNode, evaluation: Evaluation): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, evaluation);
  const path = location.pointer ?? pointerOf(location);
  if (observed === undefined) {
    evaluation.trace.push({ kind: 'array_nonempty', detail: locationText(location, missingFieldText), data: { path, passed: false, expected: nonEmptyArray } });
    return false;
  }
  const observedType = jsonTypeOf(observed) ?? 'not_json';
  const passed = Array.isArray(observed) && observed.length > 0;
  const detail = locationText(location, passed ? arrayPassedText : observedType === 'array' ? arrayEmptyText : arrayNotArrayText);
  evaluation.trace.push({ kind: 'array_nonempty', detail, data: { path, passed, expected: nonEmptyArray, observed: observedType } });
  return passed;
}

// Why a schema entry cannot be used, in the order they are checked: each is the location text id of its sentence.
const schemaNotObjectText = 10;
const propertiesNotObjectText = 11;
const entryMissingText = 12;
const typeInvalidText = 13;
type DeclaredType = JsonTypeName | readonly JsonTypeName[];

/** `schema_field`: the top-level field exists and its JSON type is one `evidence_schema` declares for it. */
function evaluateSchemaField(node: ClauseNode, evaluation: Evaluation): boolean {
  const location = node.location as EvidenceLocation;
  const observed = readLocation(location, evaluation);
  const path = location.pointer ?? pointerOf(location);
  if (observed === undefined) {
    evaluation.trace.push({ kind: 'schema_field', detail: locationText(location, missingFieldText), data: { path, passed: false } });
    return false;
  }
  const observedType = jsonTypeOf(observed);
  const declared = declaredType(evaluation.input.evidenceSchema, location.path[0] as string);
  if (typeof declared === 'number') {
    evaluation.trace.push({ kind: 'schema_field', detail: locationText(location, declared), data: { path, passed: false, observed: observedType ?? 'not_json' } });
    return false;
  }
  const passed = observedType !== undefined && typeDeclared(declared, observedType);
  const expected = typeof declared === 'string' ? declared : declared.slice();
  const data = { path, passed, expected, observed: observedType ?? 'not_json' };
  evaluation.trace.push({ kind: 'schema_field', detail: locationText(location, passed ? schemaPassedText : schemaFailedText), data });
  return passed;
}

/** Reads `evidence_schema.properties[field].type` through own properties only, or answers the text id of why it
 * cannot. A type array must hold 1 to 7 known type names, so what is copied into the trace stays small whatever
 * the schema holds. */
function declaredType(schema: unknown, field: string): DeclaredType | number {
  if (!isJsonObject(schema)) return schemaNotObjectText;
  const properties = Object.hasOwn(schema, 'properties') ? schema['properties'] : undefined;
  if (!isJsonObject(properties)) return propertiesNotObjectText;
  const entry = Object.hasOwn(properties, field) ? properties[field] : undefined;
  if (!isJsonObject(entry)) return entryMissingText;
  const type = Object.hasOwn(entry, 'type') ? entry['type'] : undefined;
  if (isTypeName(type)) return type;
  if (!Array.isArray(type) || type.length === 0 || type.length > jsonTypeNames.length) return typeInvalidText;
  for (let index = 0; index < type.length; index += 1) {
    if (!isTypeName(type[index])) return typeInvalidText;
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

// ---- Trace texts, each built once on first use ----

// Ids of the sentences a location keeps, for every op that reads it (see buildLocationText).
const missingValueText = 0;
const missingFieldText = 1;
const limitNotIntegerText = 2;
const limitPassedText = 3;
const limitFailedText = 4;
const arrayNotArrayText = 5;
const arrayEmptyText = 6;
const arrayPassedText = 7;
const schemaPassedText = 8;
const schemaFailedText = 9;
// 10 to 13: the schema problems above.
const locationTextCount = 14;

// Ids of the sentences an and/or keeps: the one for "every clause ran", then one per clause that can stop it.
const combinatorCompleteText = 0;
const combinatorStopText = 1;

function locationText(location: EvidenceLocation, id: number): string {
  const texts = location.texts ?? (location.texts = new Array<string | undefined>(locationTextCount));
  return texts[id] ?? (texts[id] = buildLocationText(whereOf(location), id));
}

function combinatorText(node: ClauseNode, id: number): string {
  const count = (node.children as readonly ClauseNode[]).length;
  const texts = node.texts ?? (node.texts = new Array<string | undefined>(count + 1));
  return texts[id] ?? (texts[id] = buildCombinatorText(node.kind === nodeKind.and, count, id));
}

function equalityText(node: ClauseNode, passed: boolean): string {
  const where = whereOf(node.location as EvidenceLocation);
  const expectedText = node.expectedText as string;
  if (passed) return (node.passedText = `${where} equals ${expectedText}`);
  return (node.failedText = `${where} does not equal ${expectedText}`);
}

function buildLocationText(where: string, id: number): string {
  switch (id) {
    case missingValueText:
      return `evidence has no value at ${where}`;
    case missingFieldText:
      return `evidence has no field ${where}`;
    case limitNotIntegerText:
      return `${where} is not a safe integer, so it cannot be compared with amount_cents`;
    case limitPassedText:
      return `${where} is at most amount_cents`;
    case limitFailedText:
      return `${where} is greater than amount_cents`;
    case arrayNotArrayText:
      return `field ${where} is not an array`;
    case arrayEmptyText:
      return `field ${where} is an empty array`;
    case arrayPassedText:
      return `field ${where} is a non-empty array`;
    case schemaPassedText:
      return `field ${where} has a type evidence_schema declares`;
    case schemaFailedText:
      return `field ${where} does not have a type evidence_schema declares`;
    case schemaNotObjectText:
      return `evidence_schema is not a JSON object, so no type is declared for ${where}`;
    case propertiesNotObjectText:
      return `evidence_schema has no properties object, so no type is declared for ${where}`;
    case entryMissingText:
      return `evidence_schema.properties has no entry for ${where}`;
    default:
      return `evidence_schema.properties entry for ${where} has no valid type`;
  }
}

function buildCombinatorText(isAnd: boolean, count: number, id: number): string {
  if (id === combinatorCompleteText) return isAnd ? `all ${count} clauses passed` : `none of the ${count} clauses passed`;
  const index = id - combinatorStopText;
  const outcome = isAnd ? 'failed, so the and failed' : 'passed, so the or passed';
  const rest = index + 1 < count ? '; later clauses were not evaluated' : '';
  return `clause ${index + 1} of ${count} ${outcome}${rest}`;
}

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

function whereOf(location: EvidenceLocation): string {
  if (location.where === undefined) pointerOf(location);
  return location.where as string;
}
