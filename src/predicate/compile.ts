// Compile once, evaluate many: validates a predicate_dsl value (parse.ts) and turns its clause tree into the
// evaluator closures of evaluate.ts, with every sentence and JSON Pointer of the trace prepared in advance.
import type { Clause } from './ast.ts';
import {
  amountLimitEvaluator,
  arrayNonemptyEvaluator,
  combinatorEvaluator,
  equalityEvaluator,
  notEvaluator,
  schemaFieldEvaluator,
  trueEvaluator,
  type ClauseEvaluator,
} from './evaluate.ts';
import { parsePredicate, type ParsedPredicate } from './parse.ts';

export interface CompiledPredicate extends ParsedPredicate {
  /** Evaluates the root clause; use `evaluate()` rather than calling this directly. */
  readonly evaluateRoot: ClauseEvaluator;
}

/** Validates `input` and compiles it. Throws a ServiceError with a `predicate.*` code when it is not a valid
 * document within the limits; anything else thrown is a bug. */
export function compilePredicate(input: unknown): CompiledPredicate {
  const parsed = parsePredicate(input);
  return Object.freeze({ ...parsed, evaluateRoot: compileClause(parsed.document.root) });
}

function compileClause(clause: Clause): ClauseEvaluator {
  switch (clause.op) {
    case 'true':
      return trueEvaluator();
    case 'and':
    case 'or':
      return combinatorEvaluator(clause.op, clause.clauses.map(compileClause));
    case 'not':
      return notEvaluator(compileClause(clause.clause));
    case 'eq':
    case 'completion':
      return equalityEvaluator(clause);
    case 'lte':
    case 'budget_cap':
      return amountLimitEvaluator(clause);
    case 'schema_field':
      return schemaFieldEvaluator(clause);
    case 'array_nonempty':
      return arrayNonemptyEvaluator(clause);
  }
}
