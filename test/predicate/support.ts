// Helpers shared by the predicate tests: document builders and a way to capture the error a call throws, as the API
// answers it (the module's PredicateError mapped to the catalogue's ServiceError).
import { expect } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import type { EvaluationInput, PredicateEvaluation } from '../../src/predicate/ast.ts';
import { PredicateError } from '../../src/predicate/errors.ts';
import { serviceErrorOfPredicate } from '../../src/errors/pure-error-mapping.ts';
import { compilePredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';

export const doc = (root: unknown): { version: 1; root: unknown } => ({ version: 1, root });
export const TRUE = { op: 'true' } as const;

/** The PredicateError `action` throws, as the API answers it (a ServiceError); fails the test when it returns or
 * throws anything else. */
export function thrownServiceError(action: () => unknown): ServiceError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(PredicateError);
    return serviceErrorOfPredicate(error as PredicateError);
  }
  throw new Error('expected a PredicateError, but nothing was thrown');
}

/** Compiles `root` as a version-1 document and evaluates it; the amount is 100 unless given (even as undefined). */
export function run(root: unknown, evidence: unknown, options: Partial<Omit<EvaluationInput, 'evidence'>> = {}): PredicateEvaluation {
  const input: EvaluationInput = { evidence, evidenceSchema: options.evidenceSchema, amountCents: 'amountCents' in options ? options.amountCents : 100 };
  return evaluate(compilePredicate(doc(root)), input);
}

/** A nesting of `not` clauses `levels` deep around `true`. */
export function notChain(levels: number): unknown {
  let clause: unknown = TRUE;
  for (let index = 0; index < levels; index += 1) clause = { op: 'not', clause };
  return clause;
}

/** A nesting of single-clause `and`s `levels` deep around `true`. */
export function andChain(levels: number): unknown {
  let clause: unknown = TRUE;
  for (let index = 0; index < levels; index += 1) clause = { op: 'and', clauses: [clause] };
  return clause;
}

/** A valid tree of exactly `nodes` clauses (nodes ≥ 2): a root `and` whose children are `and`s of `true`s. */
export function treeOfNodes(nodes: number): unknown {
  const children: unknown[] = [];
  let remaining = nodes - 1;
  while (remaining > 0) {
    if (remaining === 1) {
      children.push(TRUE);
      remaining -= 1;
    } else {
      const leaves = Math.min(32, remaining - 1);
      children.push({ op: 'and', clauses: Array.from({ length: leaves }, () => TRUE) });
      remaining -= leaves + 1;
    }
  }
  return { op: 'and', clauses: children };
}
