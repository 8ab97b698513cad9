// Compile once, evaluate many. Validation and compilation are one walk (parse.ts): each clause becomes a node of
// the tree evaluate.ts interprets, holding the clause's static parts; the trace's sentences and JSON Pointers are
// built once per node, when a step first needs them.
import type { CompiledPredicate } from './ast.ts';
import { validatePredicate } from './parse.ts';

export type { CompiledPredicate };

/** Validates `input` and compiles it. Throws a PredicateError with a `predicate.*` code when it is not a valid
 * document within the limits; anything else thrown is a bug. The result is frozen; its `document` and
 * `canonicalJson` are built on first read. */
export function compilePredicate(input: unknown): CompiledPredicate {
  return validatePredicate(input);
}
