// Validates an untrusted predicate_dsl value in one walk, enforcing every rule and limit of the language, and
// builds on the way the compiled clause tree evaluate.ts runs, copying (and freezing) only what the language
// keeps. The canonical JSON byte size is counted during the same walk: sorting keys never changes a length, so
// the canonical string itself is only built if someone asks for it. All failures are ServiceErrors whose details
// carry a JSON Pointer into the document.
import { errorCatalogue, type ErrorCode } from '../errors/catalogue.ts';
import { ServiceError, type ErrorDetails } from '../errors/service-error.ts';
import {
  jsonNestingDepthMax,
  predicateClausesMax,
  predicateDepthMax,
  predicateDocumentBytesMax,
  predicateFuelMax,
  predicateKeyLengthMax,
  predicatePathSegmentsMax,
} from '../limits.ts';
import { canonicalJson, canonicalNestingErrorMessage, jsonNumberByteLength, jsonStringByteLength } from '../signing/canonical-json.ts';
import { clauseFieldsByOp, clauseOps, type Clause, type ClauseOp, type JsonValue, type PredicateDocument } from './ast.ts';
import type { CompiledPredicate } from './compile.ts';
import { ClauseNode, EvidenceLocation, nodeKind, rootEvaluator, type ClauseEvaluator } from './evaluate.ts';
import { isJsonObject, jsonPointer, ownMember, type JsonObject } from './json-value.ts';

export interface ParsedPredicate {
  /** The document as validated: only the language's fields, deep-frozen, independent of the input. */
  readonly document: PredicateDocument;
  /** Clauses in the document: the static fuel, and the most clauses one evaluation can visit. */
  readonly nodeCount: number;
  /** Deepest nesting of and/or/not (0 for a document without them). */
  readonly depth: number;
  /** Canonical JSON of the document (sorted keys, compact): the bytes the size limit applies to. */
  readonly canonicalJson: string;
  readonly canonicalBytes: number;
}

/** Validates `input` and compiles it; see compilePredicate, the public entry. */
export function parsePredicate(input: unknown): ParsedPredicate {
  return validatePredicate(input);
}

/** The one walk behind parsePredicate and compilePredicate. */
export function validatePredicate(input: unknown): CompiledPredicate {
  if (!isJsonObject(input)) fail('predicate.invalid', { pointer: '', reason: 'a predicate document is a JSON object' });
  // The version is checked first: a document of another version deserves that answer, not a field complaint.
  const version = ownMember(input, 'version');
  if (version === undefined) fail('predicate.invalid', { pointer: '/version', reason: 'version is required' });
  if (version !== 1) fail('predicate.version_unsupported', { pointer: '/version', supported: [1] });
  const keys = Object.keys(input);
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    if (key !== 'version' && key !== 'root') failUnknownField(key, '');
  }
  if (!Object.hasOwn(input, 'root')) fail('predicate.invalid', { pointer: '/root', reason: 'root is required' });

  const walk = new Walk();
  walk.trail.push('root');
  const root = walkClause(input['root'], 0, 1, walk);
  // What canonicalJson(document) would refuse, in its order: nesting past the limit, then the size.
  if (walk.canonicalTooDeep) fail('predicate.invalid', { pointer: '', reason: canonicalNestingErrorMessage });
  const canonicalBytes = walk.bytes + documentOverheadBytes;
  if (canonicalBytes > predicateDocumentBytesMax) {
    fail('predicate.document_too_large', { pointer: '', limit: predicateDocumentBytesMax, bytes: canonicalBytes });
  }
  return Object.freeze(new ValidatedPredicate(root, walk, canonicalBytes));
}

/** The result of a successful walk. The document and its canonical JSON are built from the compiled tree the
 * first time they are read (the tree holds exactly what the document keeps), then kept. */
class ValidatedPredicate implements CompiledPredicate {
  readonly nodeCount: number;
  readonly depth: number;
  readonly canonicalBytes: number;
  readonly evaluateRoot: ClauseEvaluator;
  readonly #root: ClauseNode;
  #document: PredicateDocument | undefined;
  #canonicalJson: string | undefined;

  constructor(root: ClauseNode, walk: Walk, canonicalBytes: number) {
    this.nodeCount = walk.nodeCount;
    this.depth = walk.depth;
    this.canonicalBytes = canonicalBytes;
    this.evaluateRoot = rootEvaluator(root, walk.locationCount, walk.reads);
    this.#root = root;
  }

  get document(): PredicateDocument {
    this.#document ??= Object.freeze({ version: 1, root: documentClause(this.#root) });
    return this.#document;
  }

  get canonicalJson(): string {
    this.#canonicalJson ??= canonicalJson(this.document);
    return this.#canonicalJson;
  }
}

/** A clause of the document, rebuilt from its node with the fields (in the order) the language defines. */
function documentClause(node: ClauseNode): Clause {
  switch (node.kind) {
    case nodeKind.true:
      return Object.freeze({ op: 'true' });
    case nodeKind.and:
    case nodeKind.or:
      return Object.freeze({ op: node.op as 'and' | 'or', clauses: Object.freeze((node.children as readonly ClauseNode[]).map(documentClause)) });
    case nodeKind.not:
      return Object.freeze({ op: 'not', clause: documentClause((node.children as readonly ClauseNode[])[0] as ClauseNode) });
    case nodeKind.eq:
    case nodeKind.completion:
      return Object.freeze({ op: node.op as 'eq' | 'completion', path: documentPath(node), value: node.expected });
    case nodeKind.lte:
      return Object.freeze({ op: 'lte', path: documentPath(node), limit_source: 'amount_cents' });
    case nodeKind.budget_cap:
      return Object.freeze({ op: 'budget_cap', path: documentPath(node) });
    default:
      return Object.freeze({ op: node.op as 'schema_field' | 'array_nonempty', field: (node.location as EvidenceLocation).path[0] as string });
  }
}

function documentPath(node: ClauseNode): readonly string[] {
  return Object.freeze((node.location as EvidenceLocation).path.slice());
}

// ---- Canonical size: UTF-8 bytes of canonicalJson(document), counted without building it ----

/** `{"root":…,"version":1}` around the root clause. */
const documentOverheadBytes = '{"root":,"version":1}'.length;

/** A clause's bytes besides the values of its fields: braces, the op member, and for each field its quoted name,
 * a colon and a comma. All ASCII, so characters are bytes. */
function clauseOverheadBytes(op: ClauseOp): number {
  let bytes = `{"op":${JSON.stringify(op)}}`.length;
  for (const field of clauseFieldsByOp[op]) bytes += JSON.stringify(field).length + 2;
  return bytes;
}

const overheadBytes = Object.freeze({
  true: clauseOverheadBytes('true'),
  and: clauseOverheadBytes('and'),
  or: clauseOverheadBytes('or'),
  not: clauseOverheadBytes('not'),
  eq: clauseOverheadBytes('eq'),
  completion: clauseOverheadBytes('completion'),
  lte: clauseOverheadBytes('lte'),
  budget_cap: clauseOverheadBytes('budget_cap'),
  schema_field: clauseOverheadBytes('schema_field'),
  array_nonempty: clauseOverheadBytes('array_nonempty'),
} satisfies { readonly [op in ClauseOp]: number });
const limitSourceBytes = JSON.stringify('amount_cents').length;

/** An array or object of `count` members: brackets and the commas between members. */
function containerBytes(count: number): number {
  return count === 0 ? 2 : count + 1;
}

// ---- The walk ----

/** State carried through one walk of a document. */
class Walk {
  nodeCount = 0;
  depth = 0;
  /** A lower bound of the canonical size of `eq`/`completion` values seen so far: one byte per JSON value
   * plus one per string code unit. It lets an oversized value be refused before it is copied in full. */
  valueBytesLowerBound = 0;
  /** Canonical bytes of the clauses walked so far. */
  bytes = 0;
  /** Whether canonicalJson would refuse the document for nesting past jsonNestingDepthMax. */
  canonicalTooDeep = false;
  /** Clauses that read evidence, and the distinct locations they read (see locate). */
  reads = 0;
  locationCount = 0;
  /** Locations by the last segment of their path; made when the second path is seen. */
  locationsByLastSegment: Map<string, EvidenceLocation[]> | null = null;
  firstLocation: EvidenceLocation | null = null;
  /** The reference tokens from the document to the value being walked; turned into a JSON Pointer only to
   * report a failure, so that no pointer string is built for a valid document. */
  readonly trail: (string | number)[] = [];
}

/** The JSON Pointer of the value being walked, with `tokens` appended. */
function pointerHere(walk: Walk, ...tokens: string[]): string {
  return jsonPointer(walk.trail) + jsonPointer(tokens);
}

/** Walks the clause at the end of the trail. `parentDepth` counts and/or/not above it; `nesting` is the
 * canonical form's nesting level of the clause object (the document is level 0). */
function walkClause(value: unknown, parentDepth: number, nesting: number, walk: Walk): ClauseNode {
  // Fuel is counted in pre-order, so the pointer names the first clause past the limit.
  walk.nodeCount += 1;
  if (walk.nodeCount > predicateFuelMax) fail('predicate.fuel_exceeded', { pointer: pointerHere(walk), limit: predicateFuelMax });
  if (!isJsonObject(value)) fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'a clause is a JSON object' });
  // One Object.keys per clause: a key found there is an own member, so it is read without Object.hasOwn.
  const keys = Object.keys(value);
  const op = keys.includes('op') ? value['op'] : ownMember(value, 'op');
  if (typeof op !== 'string') fail('predicate.invalid', { pointer: pointerHere(walk, 'op'), reason: 'a clause has a string op' });
  // Within the depth limit clauses and their arrays stay far from the nesting limit; counted exactly anyway.
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  switch (op) {
    case 'true':
      checkFields(value, keys, 'true', '', '', walk);
      walk.bytes += overheadBytes.true;
      return new ClauseNode(nodeKind.true, 'true', null, null, null);
    case 'and':
    case 'or': {
      const clauses = checkFields(value, keys, op, 'clauses', '', walk);
      const depth = enterCombinator(parentDepth, walk);
      walk.bytes += op === 'and' ? overheadBytes.and : overheadBytes.or;
      return new ClauseNode(op === 'and' ? nodeKind.and : nodeKind.or, op === 'and' ? 'and' : 'or', walkClauseList(clauses, depth, nesting, walk), null, null);
    }
    case 'not': {
      const clause = checkFields(value, keys, 'not', 'clause', '', walk);
      const depth = enterCombinator(parentDepth, walk);
      walk.bytes += overheadBytes.not;
      walk.trail.push('clause');
      const child = walkClause(clause, depth, nesting + 1, walk);
      walk.trail.pop();
      return new ClauseNode(nodeKind.not, 'not', [child], null, null);
    }
    case 'eq':
    case 'completion': {
      const path = checkFields(value, keys, op, 'path', 'value', walk);
      const expectedInput = value['value'];
      const evidencePath = walkPath(path, nesting + 1, walk);
      walk.bytes += op === 'eq' ? overheadBytes.eq : overheadBytes.completion;
      walk.trail.push('value');
      const expected = walkValue(expectedInput, 0, nesting + 1, walk);
      walk.trail.pop();
      return new ClauseNode(op === 'eq' ? nodeKind.eq : nodeKind.completion, op === 'eq' ? 'eq' : 'completion', null, evidencePath, expected);
    }
    case 'lte': {
      const path = checkFields(value, keys, 'lte', 'path', 'limit_source', walk);
      const limitSource = value['limit_source'];
      const evidencePath = walkPath(path, nesting + 1, walk);
      if (limitSource !== 'amount_cents') {
        fail('predicate.invalid', { pointer: pointerHere(walk, 'limit_source'), reason: 'unsupported limit_source', supported: ['amount_cents'] });
      }
      walk.bytes += overheadBytes.lte + limitSourceBytes;
      return new ClauseNode(nodeKind.lte, 'lte', null, evidencePath, null);
    }
    case 'budget_cap': {
      const path = checkFields(value, keys, 'budget_cap', 'path', '', walk);
      const evidencePath = walkPath(path, nesting + 1, walk);
      walk.bytes += overheadBytes.budget_cap;
      return new ClauseNode(nodeKind.budget_cap, 'budget_cap', null, evidencePath, null);
    }
    case 'schema_field':
    case 'array_nonempty': {
      const field = walkFieldName(checkFields(value, keys, op, 'field', '', walk), walk);
      walk.bytes += op === 'schema_field' ? overheadBytes.schema_field : overheadBytes.array_nonempty;
      return new ClauseNode(op === 'schema_field' ? nodeKind.schema_field : nodeKind.array_nonempty, op === 'schema_field' ? 'schema_field' : 'array_nonempty', null, locate([field], walk), null);
    }
    default:
      // Also `__proto__`, `constructor`, `toString`: only the ten ops above are ops.
      return fail('predicate.op_unknown', { pointer: pointerHere(walk), supported: clauseOps });
  }
}

/** Refuses any of the clause's `keys` besides `op` and the op's fields (`first`, `second`; "" for none), then
 * a missing field, in the op's field order. Answers the value of `first`; the caller reads `second` (an own
 * member by then). A field not among the keys is still looked up, as an own non-enumerable member counts. */
function checkFields(clause: JsonObject, keys: readonly string[], op: ClauseOp, first: string, second: string, walk: Walk): unknown {
  let firstSeen = false;
  let secondSeen = false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    if (key === 'op') continue;
    if (key === first && first !== '') firstSeen = true;
    else if (key === second && second !== '') secondSeen = true;
    else failUnknownField(key, jsonPointer(walk.trail));
  }
  if (first === '') return undefined;
  const firstValue = firstSeen ? clause[first] : ownMember(clause, first);
  if (firstValue === undefined) fail('predicate.invalid', { pointer: pointerHere(walk, first), reason: `op "${op}" requires ${first}` });
  if (second !== '') {
    const secondValue = secondSeen ? clause[second] : ownMember(clause, second);
    if (secondValue === undefined) fail('predicate.invalid', { pointer: pointerHere(walk, second), reason: `op "${op}" requires ${second}` });
  }
  return firstValue;
}

/** Returns the and/or/not nesting level of the clause being walked, refusing one past the limit. */
function enterCombinator(parentDepth: number, walk: Walk): number {
  const depth = parentDepth + 1;
  if (depth > predicateDepthMax) fail('predicate.depth_exceeded', { pointer: pointerHere(walk), limit: predicateDepthMax });
  if (depth > walk.depth) walk.depth = depth;
  return depth;
}

function walkClauseList(value: unknown, depth: number, nesting: number, walk: Walk): ClauseNode[] {
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer: pointerHere(walk, 'clauses'), reason: 'clauses is an array' });
  // An empty and/or is refused: it would be a hidden `true` (and) or `false` (or); `true` says so openly.
  if (value.length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'clauses'), reason: 'clauses needs at least one clause' });
  if (value.length > predicateClausesMax) fail('predicate.clauses_exceeded', { pointer: pointerHere(walk), limit: predicateClausesMax });
  if (nesting + 1 >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  walk.bytes += containerBytes(value.length);
  const children: ClauseNode[] = [];
  const trail = walk.trail;
  trail.push('clauses', 0);
  const last = trail.length - 1;
  for (let index = 0; index < value.length; index += 1) {
    trail[last] = index;
    children.push(walkClause(value[index], depth, nesting + 2, walk));
  }
  trail.pop();
  trail.pop();
  return children;
}

/** Checks a `path` (at canonical nesting level `nesting`) and answers its location. */
function walkPath(value: unknown, nesting: number, walk: Walk): EvidenceLocation {
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer: pointerHere(walk, 'path'), reason: 'path is an array of strings' });
  const length = value.length;
  if (length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'path'), reason: 'path needs at least one segment' });
  if (length > predicatePathSegmentsMax) {
    fail('predicate.path_too_long', { pointer: pointerHere(walk), limit: predicatePathSegmentsMax, segments: length });
  }
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  let bytes = containerBytes(length);
  const segments: string[] = [];
  for (let index = 0; index < length; index += 1) {
    const segment: unknown = value[index];
    if (typeof segment !== 'string') fail('predicate.invalid', { pointer: pointerHere(walk, 'path', String(index)), reason: 'a path segment is a string' });
    if (segment.length > predicateKeyLengthMax) {
      fail('predicate.invalid', { pointer: pointerHere(walk, 'path', String(index)), reason: 'path segment too long', limit: predicateKeyLengthMax });
    }
    bytes += jsonStringByteLength(segment);
    segments.push(segment);
  }
  walk.bytes += bytes;
  return locate(segments, walk);
}

/** Candidates with the same last segment compared before a path gets a location of its own (not shared), so
 * that the cost per path stays bounded whatever the document holds. */
const locationCandidatesMax = 8;

/** The location of `segments` (a private copy): the one already made for an equal path, else a new one. */
function locate(segments: string[], walk: Walk): EvidenceLocation {
  walk.reads += 1;
  const first = walk.firstLocation;
  if (first === null) {
    // Most rules read one or two paths: the map is made only once a second path shows up.
    const location = new EvidenceLocation(segments, walk.locationCount++);
    walk.firstLocation = location;
    return location;
  }
  let byLastSegment = walk.locationsByLastSegment;
  if (byLastSegment === null) {
    byLastSegment = new Map([[first.path[first.path.length - 1] as string, [first]]]);
    walk.locationsByLastSegment = byLastSegment;
  }
  const lastSegment = segments[segments.length - 1] as string;
  const candidates = byLastSegment.get(lastSegment);
  if (candidates !== undefined) {
    for (let index = 0; index < candidates.length; index += 1) {
      const candidate = candidates[index] as EvidenceLocation;
      if (samePath(candidate.path, segments)) return candidate;
    }
  }
  const location = new EvidenceLocation(segments, walk.locationCount++);
  if (candidates === undefined) byLastSegment.set(lastSegment, [location]);
  else if (candidates.length < locationCandidatesMax) candidates.push(location);
  return location;
}

function samePath(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}

function walkFieldName(value: unknown, walk: Walk): string {
  if (typeof value !== 'string' || value.length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'field'), reason: 'field is a non-empty string' });
  if (value.length > predicateKeyLengthMax) fail('predicate.invalid', { pointer: pointerHere(walk, 'field'), reason: 'field too long', limit: predicateKeyLengthMax });
  walk.bytes += jsonStringByteLength(value);
  return value;
}

/** Deep-copies and freezes an `eq`/`completion` value, refusing anything JSON cannot carry. `depth` is the
 * nesting inside the value, `nesting` the canonical form's level of the value in the whole document. */
function walkValue(value: unknown, depth: number, nesting: number, walk: Walk): JsonValue {
  walk.valueBytesLowerBound += typeof value === 'string' ? value.length + 1 : 1;
  if (walk.valueBytesLowerBound > predicateDocumentBytesMax) {
    fail('predicate.document_too_large', { pointer: '', limit: predicateDocumentBytesMax });
  }
  switch (typeof value) {
    case 'string':
      walk.bytes += jsonStringByteLength(value);
      return value;
    case 'number':
      if (!Number.isFinite(value)) fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'a number must be finite' });
      walk.bytes += jsonNumberByteLength(value);
      return value;
    case 'boolean':
      walk.bytes += value ? 4 : 5;
      return value;
    case 'object':
      if (value === null) {
        walk.bytes += 4;
        return null;
      }
      break;
    default:
      fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'value must be JSON' });
  }
  // A Date, Map or class instance is not what a client sent as JSON; canonicalJson refuses it as well.
  const isArray = Array.isArray(value);
  if (!isArray) {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'value must be JSON' });
  }
  if (depth >= jsonNestingDepthMax) {
    fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'value nested too deeply', limit: jsonNestingDepthMax });
  }
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  const trail = walk.trail;
  if (isArray) {
    const array = value as readonly unknown[];
    const length = array.length;
    walk.bytes += containerBytes(length);
    const elements: JsonValue[] = [];
    trail.push(0);
    const last = trail.length - 1;
    for (let index = 0; index < length; index += 1) {
      trail[last] = index;
      elements.push(walkValue(array[index], depth + 1, nesting + 1, walk));
    }
    trail.pop();
    return Object.freeze(elements);
  }
  const object = value as JsonObject;
  const keys = Object.keys(object);
  walk.bytes += containerBytes(keys.length);
  const copy: { [key: string]: JsonValue } = {};
  trail.push('');
  const last = trail.length - 1;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    walk.valueBytesLowerBound += key.length;
    walk.bytes += jsonStringByteLength(key) + 1;
    trail[last] = key;
    const member = walkValue(object[key], depth + 1, nesting + 1, walk);
    // Defined, not assigned: assigning to "__proto__" (or to a setter someone put on Object.prototype) would
    // not make a member. An ordinary key takes the fast path of assignment only when that is the same thing.
    if (key === '__proto__' || key in copy) Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  trail.pop();
  return Object.freeze(copy);
}

function failUnknownField(key: string, pointer: string): never {
  // A very long key is named by its clause only, so details stay small whatever the input holds.
  const keyPointer = key.length <= predicateKeyLengthMax ? pointer + jsonPointer([key]) : pointer;
  fail('predicate.invalid', { pointer: keyPointer, reason: 'unknown field' });
}

function fail(code: ErrorCode & `predicate.${string}`, details: ErrorDetails): never {
  throw new ServiceError(code, { message: messageFor(code, details), details });
}

/** The catalogue message, followed by the specific reason when there is one. */
function messageFor(code: ErrorCode, details: ErrorDetails): string {
  const reason = typeof details['reason'] === 'string' ? ` (${details['reason']} at "${String(details['pointer'])}")` : '';
  return errorCatalogue[code].message + reason;
}
