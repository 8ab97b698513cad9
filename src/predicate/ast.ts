// The release-rule language (predicate_dsl v1) as types: the validated document, its ten clause kinds, the shape
// of an evaluation result with its trace, and the compiled form parse.ts builds and evaluate.ts runs. The AST
// keeps the wire's snake_case field names.

/** A JSON value as `JSON.parse` produces it. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Keys into nested evidence objects: `["a","b"]` reads `evidence.a.b`. */
export type EvidencePath = readonly string[];

/** The one supported `lte.limit_source`: the intent amount. */
export type LimitSource = 'amount_cents';

export interface TrueClause { readonly op: 'true' }
export interface AndClause { readonly op: 'and'; readonly clauses: readonly Clause[] }
export interface OrClause { readonly op: 'or'; readonly clauses: readonly Clause[] }
export interface NotClause { readonly op: 'not'; readonly clause: Clause }
export interface EqClause { readonly op: 'eq'; readonly path: EvidencePath; readonly value: JsonValue }
export interface CompletionClause { readonly op: 'completion'; readonly path: EvidencePath; readonly value: JsonValue }
export interface LteClause { readonly op: 'lte'; readonly path: EvidencePath; readonly limit_source: LimitSource }
export interface BudgetCapClause { readonly op: 'budget_cap'; readonly path: EvidencePath }
export interface SchemaFieldClause { readonly op: 'schema_field'; readonly field: string }
export interface ArrayNonemptyClause { readonly op: 'array_nonempty'; readonly field: string }

export type Clause =
  | TrueClause
  | AndClause
  | OrClause
  | NotClause
  | EqClause
  | CompletionClause
  | LteClause
  | BudgetCapClause
  | SchemaFieldClause
  | ArrayNonemptyClause;

export type ClauseOp = Clause['op'];

/** Every op of the language with exactly the fields its clause carries besides `op`. */
export const clauseFieldsByOp: { readonly [op in ClauseOp]: readonly string[] } = {
  true: [],
  and: ['clauses'],
  or: ['clauses'],
  not: ['clause'],
  eq: ['path', 'value'],
  completion: ['path', 'value'],
  lte: ['path', 'limit_source'],
  budget_cap: ['path'],
  schema_field: ['field'],
  array_nonempty: ['field'],
};

export const clauseOps: readonly ClauseOp[] = Object.freeze(Object.keys(clauseFieldsByOp) as ClauseOp[]);

/** A type, not an interface, so that a document is also a plain JSON object (`Record<string, unknown>`) where the
 * services store and show it. */
export type PredicateDocument = {
  readonly version: 1;
  readonly root: Clause;
};

/** JSON types an `evidence_schema` may declare; `integer` is a number with no fractional part. */
export const jsonTypeNames = ['null', 'boolean', 'string', 'integer', 'number', 'array', 'object'] as const;
export type JsonTypeName = (typeof jsonTypeNames)[number];

/** What one evaluation reads: nothing else (no clock, no I/O, no other intent). */
export interface EvaluationInput {
  /** The submitted evidence; any JSON value (a non-object simply has no fields). */
  readonly evidence: unknown;
  /** The intent's declared evidence schema, read by `schema_field`; may be absent or malformed. */
  readonly evidenceSchema: unknown;
  /** The intent amount, the limit of `lte` and `budget_cap`. */
  readonly amountCents: unknown;
}

/** Stands in for an observed value too large to copy into a trace (see trace.ts). */
export interface ObservedSummary {
  readonly type: JsonTypeName | 'not_json';
  /** Elements of an array or UTF-16 code units of a string. */
  readonly length?: number;
}

export interface TraceStepData {
  /** The evidence location as a JSON Pointer (RFC 6901), for clauses that read evidence. */
  path?: string;
  passed: boolean;
  expected?: unknown;
  observed?: unknown;
  /** Present and true when `observed` is an ObservedSummary rather than the value itself. */
  observed_truncated?: true;
}

export interface TraceStep {
  /** The clause's op. */
  readonly kind: ClauseOp;
  /** One short sentence saying what was checked and how it came out. */
  detail: string;
  readonly data: TraceStepData;
}

/** The spec's `predicate_evaluation`. */
export interface PredicateEvaluation {
  readonly passed: boolean;
  /** One step per evaluated clause, in evaluation order (pre-order: a parent before its children). */
  readonly trace: TraceStep[];
}

// ---- The compiled form, shared by parse.ts (which builds it), evaluate.ts (which runs it) and compile.ts ----

/** Evaluates one clause against the input, appends its steps to the trace, and says whether it passed. */
export type ClauseEvaluator = (input: EvaluationInput, trace: TraceStep[]) => boolean;

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

export interface CompiledPredicate extends ParsedPredicate {
  /** Evaluates the root clause; use `evaluate()` rather than calling this directly. */
  readonly evaluateRoot: ClauseEvaluator;
}
