// Runs the pinned JSON vectors of test/vectors/predicate/: evaluation results with their full traces, and the
// exact error (code and details) of refused documents. A change to any sentence or field shows up here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compilePredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { thrownServiceError } from './support.ts';

interface EvaluationVector {
  name: string;
  predicate: unknown;
  evidence: unknown;
  evidence_schema?: unknown;
  amount_cents?: unknown;
  expected: { passed: boolean; trace: unknown[] };
}
interface ValidationVector {
  name: string;
  predicate: unknown;
  expected_error: { code: string; details: Record<string, unknown> };
}

function loadVectors<T>(file: string): T[] {
  const text = readFileSync(new URL(`../vectors/predicate/${file}`, import.meta.url), 'utf8');
  return (JSON.parse(text) as { vectors: T[] }).vectors;
}

const evaluationVectors = loadVectors<EvaluationVector>('evaluation-vectors.json');
const validationVectors = loadVectors<ValidationVector>('validation-vectors.json');

describe('evaluation vectors', () => {
  it('cover every op, passing and failing', () => {
    const kinds = new Set(evaluationVectors.flatMap((vector) => vector.expected.trace.map((step) => (step as { kind: string }).kind)));
    expect([...kinds].sort()).toEqual(['and', 'array_nonempty', 'budget_cap', 'completion', 'eq', 'lte', 'not', 'or', 'schema_field', 'true']);
    expect(evaluationVectors.some((vector) => vector.expected.passed)).toBe(true);
    expect(evaluationVectors.some((vector) => !vector.expected.passed)).toBe(true);
  });

  it.each(evaluationVectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const compiled = compilePredicate(vector.predicate);
    const result = evaluate(compiled, { evidence: vector.evidence, evidenceSchema: vector.evidence_schema, amountCents: vector.amount_cents });
    // Compared as JSON text, so key order inside each step is pinned too.
    expect(JSON.stringify(result)).toBe(JSON.stringify(vector.expected));
    expect(result.trace.length).toBeLessThanOrEqual(compiled.nodeCount);
  });
});

describe('validation vectors', () => {
  it.each(validationVectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const error = thrownServiceError(() => compilePredicate(vector.predicate));
    expect({ code: error.code, details: error.details }).toEqual(vector.expected_error);
  });
});
