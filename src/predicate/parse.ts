// Validates an untrusted predicate_dsl value in one walk, enforcing every rule and limit of the language, and
// builds on the way the compiled clause tree evaluate.ts runs, copying only what the language keeps. The canonical
// JSON byte size is counted during the same walk: sorting keys never changes a length, so the canonical string
// itself is only built if someone asks for it. All failures are PredicateErrors (errors.ts) whose details carry a
// JSON Pointer into the document.
import {
  jsonNestingDepthMax,
  predicateClausesMax,
  predicateDepthMax,
  predicateDocumentBytesMax,
  predicateFuelMax,
  predicateKeyLengthMax,
  predicatePathSegmentsMax,
} from '../limits.ts';
import { canonicalJson, canonicalNestingErrorMessage, jsonNumberByteLength, jsonStringByteLength, quoteJsonString } from '../signing/canonical-json.ts';
import {
  clauseFieldsByOp,
  clauseOps,
  type Clause,
  type ClauseEvaluator,
  type ClauseOp,
  type CompiledPredicate,
  type JsonValue,
  type ParsedPredicate,
  type PredicateDocument,
} from './ast.ts';
import { PredicateError, type PredicateErrorCode, type PredicateErrorDetails } from './errors.ts';
import { ClauseNode, EvidenceLocation, nodeKind, rootEvaluator } from './evaluate.ts';
import { deepFreeze, isJsonObject, jsonPointer, ownMember, type JsonObject } from './json-value.ts';


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
    this.evaluateRoot = rootEvaluator(root, walk.locations.length, walk.reads);
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
      // The rule's own copy is frozen once the document hands it out; trace steps get copies of their own.
      return Object.freeze({ op: node.op as 'eq' | 'completion', path: documentPath(node), value: deepFreeze(node.expected) });
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
  /** The copy walkValue made last (see there). */
  value: JsonValue = null;
  /** Canonical bytes of the clauses walked so far. */
  bytes = 0;
  /** Whether canonicalJson would refuse the document for nesting past jsonNestingDepthMax. */
  canonicalTooDeep = false;
  /** Clauses that read evidence, and the distinct locations they read (see locate). */
  reads = 0;
  readonly locations: EvidenceLocation[] = [];
  /** Locations by the last segment of their path; made once there are more than locationScanMax. */
  locationsByLastSegment: Map<string, EvidenceLocation[]> | null = null;
  /** The segments of the path being walked, before locate finds or copies them. */
  readonly segments: string[] = [];
  /** The reference tokens from the document to the value being walked; turned into a JSON Pointer only to
   * report a failure, so that no pointer string is built for a valid document. */
  readonly trail: (string | number)[] = [];
}

/** The JSON Pointer of the value being walked, with `tokens` appended. */
function pointerHere(walk: Walk, ...tokens: string[]): string {
  return jsonPointer(walk.trail) + jsonPointer(tokens);
}

/** Walks the clause at the end of the trail. `parentDepth` counts and/or/not above it; `nesting` is the
 * canonical form's nesting level of the clause object (the document is level 0). Each op has its own small
 * function: the engine then inlines the helpers each one calls, which matters at up to 256 clauses a walk. */
function walkClause(value: unknown, parentDepth: number, nesting: number, walk: Walk): ClauseNode {
  // Fuel is counted in pre-order, so the pointer names the first clause past the limit.
  walk.nodeCount += 1;
  if (walk.nodeCount > predicateFuelMax) fail('predicate.fuel_exceeded', { pointer: pointerHere(walk), limit: predicateFuelMax });
  if (!isJsonObject(value)) fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'a clause is a JSON object' });
  // One Object.keys per clause: a key found there is an own member, so it is read without Object.hasOwn.
  const keys = Object.keys(value);
  const op = keys[0] === 'op' || keys.includes('op') ? value['op'] : ownMember(value, 'op');
  if (typeof op !== 'string') fail('predicate.invalid', { pointer: pointerHere(walk, 'op'), reason: 'a clause has a string op' });
  // Within the depth limit clauses and their arrays stay far from the nesting limit; counted exactly anyway.
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  const kind = kindOfOp(op);
  switch (kind) {
    case nodeKind.true:
      refuseUnknownKeys(keys, 'op', 'op', walk);
      walk.bytes += overheadBytes.true;
      return new ClauseNode(nodeKind.true, 'true', null, null, null, null);
    case nodeKind.and:
    case nodeKind.or:
      return walkCombinator(value, keys, kind, parentDepth, nesting, walk);
    case nodeKind.not:
      return walkNot(value, keys, parentDepth, nesting, walk);
    case nodeKind.eq:
    case nodeKind.completion:
      return walkEquality(value, keys, kind, nesting, walk);
    case nodeKind.lte:
    case nodeKind.budget_cap:
      return walkAmountLimit(value, keys, kind, nesting, walk);
    case nodeKind.schema_field:
    case nodeKind.array_nonempty:
      return walkField(value, keys, kind, walk);
    default:
      // Also `__proto__`, `constructor`, `toString`: only the ten ops above are ops.
      return fail('predicate.op_unknown', { pointer: pointerHere(walk), supported: clauseOps });
  }
}

// In the walkers below, `complete` says refuseUnknownKeys counted exactly `op` and the op's fields (it allows no
// other key, and keys are distinct): every field is then an own member, read directly. Otherwise ownMember finds
// an own non-enumerable one, or the first missing field (in the op's field order) is refused.

function walkCombinator(clause: JsonObject, keys: readonly string[], kind: number, parentDepth: number, nesting: number, walk: Walk): ClauseNode {
  const isAnd = kind === nodeKind.and;
  const complete = refuseUnknownKeys(keys, 'clauses', 'clauses', walk) === 2;
  const value = complete ? clause['clauses'] : ownMember(clause, 'clauses');
  if (value === undefined) failMissingField(isAnd ? 'and' : 'or', 'clauses', walk);
  const depth = enterCombinator(parentDepth, walk);
  walk.bytes += isAnd ? overheadBytes.and : overheadBytes.or;
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer: pointerHere(walk, 'clauses'), reason: 'clauses is an array' });
  const length = value.length;
  // An empty and/or is refused: it would be a hidden `true` (and) or `false` (or); `true` says so openly.
  if (length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'clauses'), reason: 'clauses needs at least one clause' });
  if (length > predicateClausesMax) fail('predicate.clauses_exceeded', { pointer: pointerHere(walk), limit: predicateClausesMax });
  if (nesting + 1 >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  walk.bytes += containerBytes(length);
  const children: ClauseNode[] = [];
  const trail = walk.trail;
  trail.push('clauses', 0);
  const last = trail.length - 1;
  for (let index = 0; index < length; index += 1) {
    trail[last] = index;
    children.push(walkClause(value[index], depth, nesting + 2, walk));
  }
  trail.pop();
  trail.pop();
  return new ClauseNode(kind, isAnd ? 'and' : 'or', children, null, null, null);
}

function walkNot(clause: JsonObject, keys: readonly string[], parentDepth: number, nesting: number, walk: Walk): ClauseNode {
  const complete = refuseUnknownKeys(keys, 'clause', 'clause', walk) === 2;
  const value = complete ? clause['clause'] : ownMember(clause, 'clause');
  if (value === undefined) failMissingField('not', 'clause', walk);
  const depth = enterCombinator(parentDepth, walk);
  walk.bytes += overheadBytes.not;
  walk.trail.push('clause');
  const child = walkClause(value, depth, nesting + 1, walk);
  walk.trail.pop();
  return new ClauseNode(nodeKind.not, 'not', [child], null, null, null);
}

function walkEquality(clause: JsonObject, keys: readonly string[], kind: number, nesting: number, walk: Walk): ClauseNode {
  const op = kind === nodeKind.eq ? 'eq' : 'completion';
  const complete = refuseUnknownKeys(keys, 'path', 'value', walk) === 3;
  const path = complete ? clause['path'] : ownMember(clause, 'path');
  if (path === undefined) failMissingField(op, 'path', walk);
  const value = complete ? clause['value'] : ownMember(clause, 'value');
  if (value === undefined) failMissingField(op, 'value', walk);
  const location = walkPath(path, nesting + 1, walk);
  walk.bytes += kind === nodeKind.eq ? overheadBytes.eq : overheadBytes.completion;
  walk.trail.push('value');
  const text = walkValue(value, 0, nesting + 1, walk, '');
  walk.trail.pop();
  const expectedText = text.length <= expectedTextLengthMax ? text : `${text.slice(0, expectedTextLengthMax - 1)}…`;
  return new ClauseNode(kind, op, null, location, walk.value, expectedText);
}

function walkAmountLimit(clause: JsonObject, keys: readonly string[], kind: number, nesting: number, walk: Walk): ClauseNode {
  if (kind === nodeKind.budget_cap) {
    const complete = refuseUnknownKeys(keys, 'path', 'path', walk) === 2;
    const path = complete ? clause['path'] : ownMember(clause, 'path');
    if (path === undefined) failMissingField('budget_cap', 'path', walk);
    const location = walkPath(path, nesting + 1, walk);
    walk.bytes += overheadBytes.budget_cap;
    return new ClauseNode(kind, 'budget_cap', null, location, null, null);
  }
  const complete = refuseUnknownKeys(keys, 'path', 'limit_source', walk) === 3;
  const path = complete ? clause['path'] : ownMember(clause, 'path');
  if (path === undefined) failMissingField('lte', 'path', walk);
  const limitSource = complete ? clause['limit_source'] : ownMember(clause, 'limit_source');
  if (limitSource === undefined) failMissingField('lte', 'limit_source', walk);
  const location = walkPath(path, nesting + 1, walk);
  if (limitSource !== 'amount_cents') {
    fail('predicate.invalid', { pointer: pointerHere(walk, 'limit_source'), reason: 'unsupported limit_source', supported: ['amount_cents'] });
  }
  walk.bytes += overheadBytes.lte + limitSourceBytes;
  return new ClauseNode(kind, 'lte', null, location, null, null);
}

function walkField(clause: JsonObject, keys: readonly string[], kind: number, walk: Walk): ClauseNode {
  const op = kind === nodeKind.schema_field ? 'schema_field' : 'array_nonempty';
  const complete = refuseUnknownKeys(keys, 'field', 'field', walk) === 2;
  const field = complete ? clause['field'] : ownMember(clause, 'field');
  if (field === undefined) failMissingField(op, 'field', walk);
  if (typeof field !== 'string' || field.length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'field'), reason: 'field is a non-empty string' });
  if (field.length > predicateKeyLengthMax) fail('predicate.invalid', { pointer: pointerHere(walk, 'field'), reason: 'field too long', limit: predicateKeyLengthMax });
  // A field `f` reads what the path ["f"] reads; as a string it has the bytes of that path's one segment.
  walk.segments[0] = field;
  const location = locate(walk.segments, 1, walk);
  walk.bytes += (kind === nodeKind.schema_field ? overheadBytes.schema_field : overheadBytes.array_nonempty) + location.segmentBytes;
  return new ClauseNode(kind, op, null, location, null, null);
}

/** The node kind of `op`, or -1 for a string that is not an op. Switching on the length first leaves at most
 * three string comparisons per op, where a switch on the string compares with each case in turn. */
function kindOfOp(op: string): number {
  switch (op.length) {
    case 2:
      return op === 'eq' ? nodeKind.eq : op === 'or' ? nodeKind.or : -1;
    case 3:
      return op === 'and' ? nodeKind.and : op === 'not' ? nodeKind.not : op === 'lte' ? nodeKind.lte : -1;
    case 4:
      return op === 'true' ? nodeKind.true : -1;
    case 10:
      return op === 'completion' ? nodeKind.completion : op === 'budget_cap' ? nodeKind.budget_cap : -1;
    case 12:
      return op === 'schema_field' ? nodeKind.schema_field : -1;
    case 14:
      return op === 'array_nonempty' ? nodeKind.array_nonempty : -1;
    default:
      return -1;
  }
}

/** Refuses the first of the clause's `keys` that is neither `op` nor one of the op's fields (`first`, `second`;
 * an op with one field passes it twice, `true` passes "op") and answers how many keys there are: distinct and
 * all allowed, so as many as `op` and the fields only when every one of them is present. */
function refuseUnknownKeys(keys: readonly string[], first: string, second: string, walk: Walk): number {
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    if (key !== 'op' && key !== first && key !== second) failUnknownField(key, jsonPointer(walk.trail));
  }
  return keys.length;
}

/** Returns the and/or/not nesting level of the clause being walked, refusing one past the limit. */
function enterCombinator(parentDepth: number, walk: Walk): number {
  const depth = parentDepth + 1;
  if (depth > predicateDepthMax) fail('predicate.depth_exceeded', { pointer: pointerHere(walk), limit: predicateDepthMax });
  if (depth > walk.depth) walk.depth = depth;
  return depth;
}

/** Checks a `path` (at canonical nesting level `nesting`) and answers its location. Each segment is read once,
 * into the walk's scratch array, and copied only when the path is new to the document. */
function walkPath(value: unknown, nesting: number, walk: Walk): EvidenceLocation {
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer: pointerHere(walk, 'path'), reason: 'path is an array of strings' });
  const length = value.length;
  if (length === 0) fail('predicate.invalid', { pointer: pointerHere(walk, 'path'), reason: 'path needs at least one segment' });
  if (length > predicatePathSegmentsMax) failPathTooLong(length, walk);
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
  const segments = walk.segments;
  for (let index = 0; index < length; index += 1) {
    const segment: unknown = value[index];
    if (typeof segment !== 'string' || segment.length > predicateKeyLengthMax) failSegment(segment, index, walk);
    segments[index] = segment;
  }
  const location = locate(segments, length, walk);
  walk.bytes += containerBytes(length) + location.segmentBytes;
  return location;
}

/** Locations compared one by one before they are looked up by last segment instead (see locate). */
const locationScanMax = 8;
/** Candidates with the same last segment compared before a path gets a location of its own (not shared), so
 * that the cost per path stays bounded whatever the document holds. */
const locationCandidatesMax = 8;

/** The location of the path in `segments[0..length)`: the one already made for an equal path, else a new one
 * with a private copy of the path and its canonical size. Most rules read a few paths, which a short scan finds
 * faster than a Map; the Map is made once a rule has more. */
function locate(segments: readonly string[], length: number, walk: Walk): EvidenceLocation {
  walk.reads += 1;
  const lastSegment = segments[length - 1] as string;
  const byLastSegment = walk.locationsByLastSegment;
  if (byLastSegment === null) {
    const locations = walk.locations;
    for (let index = 0; index < locations.length; index += 1) {
      const candidate = locations[index] as EvidenceLocation;
      if (samePath(candidate.path, segments, length)) return candidate;
    }
  } else {
    const candidates = byLastSegment.get(lastSegment);
    if (candidates !== undefined) {
      for (let index = 0; index < candidates.length; index += 1) {
        const candidate = candidates[index] as EvidenceLocation;
        if (samePath(candidate.path, segments, length)) return candidate;
      }
    }
  }
  const path = segments.slice(0, length);
  let segmentBytes = 0;
  for (let index = 0; index < length; index += 1) segmentBytes += jsonStringByteLength(path[index] as string);
  const location = new EvidenceLocation(path, walk.locations.length, segmentBytes);
  walk.locations.push(location);
  if (byLastSegment !== null) addCandidate(byLastSegment, lastSegment, location);
  else if (walk.locations.length > locationScanMax) walk.locationsByLastSegment = locationMap(walk.locations);
  return location;
}

function locationMap(locations: readonly EvidenceLocation[]): Map<string, EvidenceLocation[]> {
  const byLastSegment = new Map<string, EvidenceLocation[]>();
  for (const location of locations) addCandidate(byLastSegment, location.path[location.path.length - 1] as string, location);
  return byLastSegment;
}

function addCandidate(byLastSegment: Map<string, EvidenceLocation[]>, lastSegment: string, location: EvidenceLocation): void {
  const candidates = byLastSegment.get(lastSegment);
  if (candidates === undefined) byLastSegment.set(lastSegment, [location]);
  else if (candidates.length < locationCandidatesMax) candidates.push(location);
}

/** Compares from the last segment back, where paths of one rule tend to differ. */
function samePath(path: readonly string[], segments: readonly string[], length: number): boolean {
  if (path.length !== length) return false;
  for (let index = length - 1; index >= 0; index -= 1) if (path[index] !== segments[index]) return false;
  return true;
}

/** Characters of an `eq`/`completion` value its sentences show before cutting it short with "…". */
const expectedTextLengthMax = 64;

/** Deep-copies an `eq`/`completion` value into `walk.value`, refusing anything JSON cannot carry, and answers
 * `text` followed by the value's compact JSON (as JSON.stringify writes it) for the trace sentences, which stops
 * growing once longer than expectedTextLengthMax. The text goes through parameters and results, where the engine
 * appends to it cheaply, and the copy through the walk. `depth` is the nesting inside the value, `nesting` the
 * canonical form's level of the value in the whole document. Kept small, with arrays and objects apart, so that
 * the engine inlines it into their loops: scalar members cost no call. */
function walkValue(value: unknown, depth: number, nesting: number, walk: Walk, text: string): string {
  walk.valueBytesLowerBound += typeof value === 'string' ? value.length + 1 : 1;
  if (walk.valueBytesLowerBound > predicateDocumentBytesMax) failValueTooLarge();
  walk.value = value as JsonValue;
  switch (typeof value) {
    case 'string': {
      const bytes = jsonStringByteLength(value);
      walk.bytes += bytes;
      if (text.length > expectedTextLengthMax) return text;
      // One byte per character besides the quotes: ASCII with nothing to escape, so its JSON is itself in quotes.
      return bytes === value.length + 2 ? text + '"' + value + '"' : text + quoteJsonString(value);
    }
    case 'number':
      if (!Number.isFinite(value)) failValue('a number must be finite', walk);
      walk.bytes += jsonNumberByteLength(value);
      // JSON.stringify writes a finite number as its JavaScript string.
      return text.length > expectedTextLengthMax ? text : text + String(value);
    case 'boolean':
      walk.bytes += value ? 4 : 5;
      return text.length > expectedTextLengthMax ? text : text + (value ? 'true' : 'false');
    case 'object':
      if (value === null) {
        walk.bytes += 4;
        return text.length > expectedTextLengthMax ? text : text + 'null';
      }
      return Array.isArray(value) ? walkArray(value, depth, nesting, walk, text) : walkObject(value as JsonObject, depth, nesting, walk, text);
    default:
      return failValue('value must be JSON', walk);
  }
}

function walkArray(array: readonly unknown[], depth: number, nesting: number, walk: Walk, text: string): string {
  enterContainer(depth, nesting, walk);
  const length = array.length;
  walk.bytes += containerBytes(length);
  const elements: JsonValue[] = [];
  const trail = walk.trail;
  trail.push(0);
  const last = trail.length - 1;
  for (let index = 0; index < length; index += 1) {
    trail[last] = index;
    if (text.length <= expectedTextLengthMax) text += index === 0 ? '[' : ',';
    text = walkValue(array[index], depth + 1, nesting + 1, walk, text);
    elements.push(walk.value);
  }
  trail.pop();
  walk.value = elements;
  if (text.length > expectedTextLengthMax) return text;
  return text + (length === 0 ? '[]' : ']');
}

function walkObject(object: JsonObject, depth: number, nesting: number, walk: Walk, text: string): string {
  // A Date, Map or class instance is not what a client sent as JSON; canonicalJson refuses it as well.
  const prototype: unknown = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) failValue('value must be JSON', walk);
  enterContainer(depth, nesting, walk);
  const keys = Object.keys(object);
  walk.bytes += containerBytes(keys.length);
  const copy: { [key: string]: JsonValue } = {};
  const trail = walk.trail;
  trail.push('');
  const last = trail.length - 1;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    walk.valueBytesLowerBound += key.length;
    const keyBytes = jsonStringByteLength(key);
    walk.bytes += keyBytes + 1;
    trail[last] = key;
    if (text.length <= expectedTextLengthMax) {
      text += index === 0 ? '{' : ',';
      text += keyBytes === key.length + 2 ? '"' + key + '":' : quoteJsonString(key) + ':';
    }
    text = walkValue(object[key], depth + 1, nesting + 1, walk, text);
    const member = walk.value;
    // Defined, not assigned: assigning to "__proto__" (or to a setter someone put on Object.prototype) would
    // not make a member. An ordinary key takes the fast path of assignment only when that is the same thing.
    if (key === '__proto__' || key in copy) Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  trail.pop();
  walk.value = copy;
  if (text.length > expectedTextLengthMax) return text;
  return text + (keys.length === 0 ? '{}' : '}');
}

function enterContainer(depth: number, nesting: number, walk: Walk): void {
  if (depth >= jsonNestingDepthMax) {
    fail('predicate.invalid', { pointer: pointerHere(walk), reason: 'value nested too deeply', limit: jsonNestingDepthMax });
  }
  if (nesting >= jsonNestingDepthMax) walk.canonicalTooDeep = true;
}

// Failures the hot functions above would otherwise spell out inline, kept apart so those stay small.

function failMissingField(op: string, name: string, walk: Walk): never {
  fail('predicate.invalid', { pointer: pointerHere(walk, name), reason: `op "${op}" requires ${name}` });
}

function failPathTooLong(length: number, walk: Walk): never {
  fail('predicate.path_too_long', { pointer: pointerHere(walk), limit: predicatePathSegmentsMax, segments: length });
}

function failSegment(segment: unknown, index: number, walk: Walk): never {
  if (typeof segment !== 'string') fail('predicate.invalid', { pointer: pointerHere(walk, 'path', String(index)), reason: 'a path segment is a string' });
  fail('predicate.invalid', { pointer: pointerHere(walk, 'path', String(index)), reason: 'path segment too long', limit: predicateKeyLengthMax });
}

function failValue(reason: string, walk: Walk): never {
  fail('predicate.invalid', { pointer: pointerHere(walk), reason });
}

function failValueTooLarge(): never {
  fail('predicate.document_too_large', { pointer: '', limit: predicateDocumentBytesMax });
}

function failUnknownField(key: string, pointer: string): never {
  // A very long key is named by its clause only, so details stay small whatever the input holds.
  const keyPointer = key.length <= predicateKeyLengthMax ? pointer + jsonPointer([key]) : pointer;
  fail('predicate.invalid', { pointer: keyPointer, reason: 'unknown field' });
}

function fail(code: PredicateErrorCode & `predicate.${string}`, details: PredicateErrorDetails): never {
  throw new PredicateError(code, details);
}
