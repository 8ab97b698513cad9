// Validates an untrusted predicate_dsl value into a normalized, deep-frozen PredicateDocument, enforcing every
// limit of the language. All failures are ServiceErrors whose details carry a JSON Pointer into the document.
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
import { CanonicalJsonError, canonicalJson } from '../signing/canonical-json.ts';
import { clauseFieldsByOp, clauseOps, type Clause, type ClauseOp, type EvidencePath, type JsonValue, type PredicateDocument } from './ast.ts';
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

/** Counters carried through one walk of a document. */
interface WalkState {
  nodeCount: number;
  depth: number;
  /** A lower bound of the canonical size of `eq`/`completion` values seen so far: one byte per JSON value
   * plus one per string code unit. It lets an oversized value be refused before it is copied in full. */
  valueBytesLowerBound: number;
}

const documentFields = ['version', 'root'];

export function parsePredicate(input: unknown): ParsedPredicate {
  if (!isJsonObject(input)) fail('predicate.invalid', { pointer: '', reason: 'a predicate document is a JSON object' });
  // The version is checked first: a document of another version deserves that answer, not a field complaint.
  const version = ownMember(input, 'version');
  if (version === undefined) fail('predicate.invalid', { pointer: '/version', reason: 'version is required' });
  if (version !== 1) fail('predicate.version_unsupported', { pointer: '/version', supported: [1] });
  rejectUnknownFields(input, documentFields, '');
  if (!Object.hasOwn(input, 'root')) fail('predicate.invalid', { pointer: '/root', reason: 'root is required' });

  const state: WalkState = { nodeCount: 0, depth: 0, valueBytesLowerBound: 0 };
  const root = parseClause(input['root'], '/root', 0, state);
  const document: PredicateDocument = Object.freeze({ version: 1, root });

  let text: string;
  try {
    text = canonicalJson(document);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    fail('predicate.invalid', { pointer: '', reason: error.message });
  }
  const canonicalBytes = Buffer.byteLength(text, 'utf8');
  if (canonicalBytes > predicateDocumentBytesMax) {
    fail('predicate.document_too_large', { pointer: '', limit: predicateDocumentBytesMax, bytes: canonicalBytes });
  }
  return { document, nodeCount: state.nodeCount, depth: state.depth, canonicalJson: text, canonicalBytes };
}

function parseClause(value: unknown, pointer: string, parentDepth: number, state: WalkState): Clause {
  // Fuel is counted in pre-order, so the pointer names the first clause past the limit.
  state.nodeCount += 1;
  if (state.nodeCount > predicateFuelMax) fail('predicate.fuel_exceeded', { pointer, limit: predicateFuelMax });
  if (!isJsonObject(value)) fail('predicate.invalid', { pointer, reason: 'a clause is a JSON object' });
  const op = ownMember(value, 'op');
  if (typeof op !== 'string') fail('predicate.invalid', { pointer: `${pointer}/op`, reason: 'a clause has a string op' });
  if (!Object.hasOwn(clauseFieldsByOp, op)) fail('predicate.op_unknown', { pointer, supported: clauseOps });
  const knownOp = op as ClauseOp;
  const fields = clauseFieldsByOp[knownOp];
  rejectUnknownFields(value, ['op', ...fields], pointer);
  for (const field of fields) {
    if (ownMember(value, field) === undefined) {
      fail('predicate.invalid', { pointer: `${pointer}/${field}`, reason: `op "${knownOp}" requires ${field}` });
    }
  }
  return parseClauseFields(knownOp, value, pointer, parentDepth, state);
}

function parseClauseFields(op: ClauseOp, value: JsonObject, pointer: string, parentDepth: number, state: WalkState): Clause {
  switch (op) {
    case 'true':
      return Object.freeze({ op });
    case 'and':
    case 'or': {
      const depth = enterCombinator(pointer, parentDepth, state);
      const clauses = parseClauseList(value['clauses'], pointer, depth, state);
      return Object.freeze({ op, clauses });
    }
    case 'not': {
      const depth = enterCombinator(pointer, parentDepth, state);
      return Object.freeze({ op, clause: parseClause(value['clause'], `${pointer}/clause`, depth, state) });
    }
    case 'eq':
    case 'completion': {
      const path = parsePath(value['path'], pointer);
      return Object.freeze({ op, path, value: parseValue(value['value'], `${pointer}/value`, 0, state) });
    }
    case 'lte': {
      const path = parsePath(value['path'], pointer);
      if (value['limit_source'] !== 'amount_cents') {
        fail('predicate.invalid', { pointer: `${pointer}/limit_source`, reason: 'unsupported limit_source', supported: ['amount_cents'] });
      }
      return Object.freeze({ op, path, limit_source: 'amount_cents' });
    }
    case 'budget_cap':
      return Object.freeze({ op, path: parsePath(value['path'], pointer) });
    case 'schema_field':
    case 'array_nonempty':
      return Object.freeze({ op, field: parseFieldName(value['field'], `${pointer}/field`) });
  }
}

/** Returns the and/or/not nesting level of the clause at `pointer`, refusing one past the limit. */
function enterCombinator(pointer: string, parentDepth: number, state: WalkState): number {
  const depth = parentDepth + 1;
  if (depth > predicateDepthMax) fail('predicate.depth_exceeded', { pointer, limit: predicateDepthMax });
  if (depth > state.depth) state.depth = depth;
  return depth;
}

function parseClauseList(value: unknown, pointer: string, depth: number, state: WalkState): readonly Clause[] {
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer: `${pointer}/clauses`, reason: 'clauses is an array' });
  // An empty and/or is refused: it would be a hidden `true` (and) or `false` (or); `true` says so openly.
  if (value.length === 0) fail('predicate.invalid', { pointer: `${pointer}/clauses`, reason: 'clauses needs at least one clause' });
  if (value.length > predicateClausesMax) fail('predicate.clauses_exceeded', { pointer, limit: predicateClausesMax });
  const clauses: Clause[] = [];
  for (let index = 0; index < value.length; index += 1) {
    clauses.push(parseClause(value[index], `${pointer}/clauses/${index}`, depth, state));
  }
  return Object.freeze(clauses);
}

function parsePath(value: unknown, clausePointer: string): EvidencePath {
  const pointer = `${clausePointer}/path`;
  if (!Array.isArray(value)) fail('predicate.invalid', { pointer, reason: 'path is an array of strings' });
  if (value.length === 0) fail('predicate.invalid', { pointer, reason: 'path needs at least one segment' });
  if (value.length > predicatePathSegmentsMax) {
    fail('predicate.path_too_long', { pointer: clausePointer, limit: predicatePathSegmentsMax, segments: value.length });
  }
  const segments: string[] = [];
  for (let index = 0; index < value.length; index += 1) {
    const segment: unknown = value[index];
    if (typeof segment !== 'string') fail('predicate.invalid', { pointer: `${pointer}/${index}`, reason: 'a path segment is a string' });
    if (segment.length > predicateKeyLengthMax) {
      fail('predicate.invalid', { pointer: `${pointer}/${index}`, reason: 'path segment too long', limit: predicateKeyLengthMax });
    }
    segments.push(segment);
  }
  return Object.freeze(segments);
}

function parseFieldName(value: unknown, pointer: string): string {
  if (typeof value !== 'string' || value.length === 0) fail('predicate.invalid', { pointer, reason: 'field is a non-empty string' });
  if (value.length > predicateKeyLengthMax) fail('predicate.invalid', { pointer, reason: 'field too long', limit: predicateKeyLengthMax });
  return value;
}

/** Deep-copies and freezes an `eq`/`completion` value, refusing anything JSON cannot carry. */
function parseValue(value: unknown, pointer: string, nesting: number, state: WalkState): JsonValue {
  state.valueBytesLowerBound += typeof value === 'string' ? value.length + 1 : 1;
  if (state.valueBytesLowerBound > predicateDocumentBytesMax) {
    fail('predicate.document_too_large', { pointer: '', limit: predicateDocumentBytesMax });
  }
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail('predicate.invalid', { pointer, reason: 'a number must be finite' });
    return value;
  }
  if (typeof value !== 'object') fail('predicate.invalid', { pointer, reason: 'value must be JSON' });
  // A Date, Map or class instance is not what a client sent as JSON; canonicalJson refuses it as well.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) {
    fail('predicate.invalid', { pointer, reason: 'value must be JSON' });
  }
  if (nesting >= jsonNestingDepthMax) fail('predicate.invalid', { pointer, reason: 'value nested too deeply', limit: jsonNestingDepthMax });
  if (Array.isArray(value)) {
    const elements: JsonValue[] = [];
    for (let index = 0; index < value.length; index += 1) {
      elements.push(parseValue(value[index], `${pointer}/${index}`, nesting + 1, state));
    }
    return Object.freeze(elements);
  }
  const copy: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    state.valueBytesLowerBound += key.length;
    const member = parseValue((value as JsonObject)[key], `${pointer}${jsonPointer([key])}`, nesting + 1, state);
    // defineProperty, not assignment: assigning to "__proto__" would replace the copy's prototype.
    Object.defineProperty(copy, key, { value: member, enumerable: true });
  }
  return Object.freeze(copy);
}

function rejectUnknownFields(value: JsonObject, allowed: readonly string[], pointer: string): void {
  for (const key of Object.keys(value)) {
    if (allowed.includes(key)) continue;
    // A very long key is named by its clause only, so details stay small whatever the input holds.
    const keyPointer = key.length <= predicateKeyLengthMax ? `${pointer}${jsonPointer([key])}` : pointer;
    fail('predicate.invalid', { pointer: keyPointer, reason: 'unknown field' });
  }
}

function fail(code: ErrorCode & `predicate.${string}`, details: ErrorDetails): never {
  throw new ServiceError(code, { message: messageFor(code, details), details });
}

/** The catalogue message, followed by the specific reason when there is one. */
function messageFor(code: ErrorCode, details: ErrorDetails): string {
  const reason = typeof details['reason'] === 'string' ? ` (${details['reason']} at "${String(details['pointer'])}")` : '';
  return errorCatalogue[code].message + reason;
}
