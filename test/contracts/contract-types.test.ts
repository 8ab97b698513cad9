// The evaluation trace's contract (src/contracts/intents.ts `PredicateEvaluation`): it names exactly the clause ops of
// the predicate language (src/predicate/ast.ts `clauseOps`, which the contracts cannot import), and the serializer,
// writing through it, sends the evaluator's trace byte for byte as the evaluator built it: every op, a summary of a
// value too large to copy, members in the evaluator's order.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clauseOpNames, PredicateTraceStep } from '../../src/contracts/intents.ts';
import { clauseOps, compilePredicate, evaluate } from '../../src/predicate/index.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('the evaluation trace contract', () => {
  it('names exactly the ops of the predicate language', () => {
    expect([...clauseOpNames].sort()).toEqual([...clauseOps].sort());
    expect(PredicateTraceStep.properties.kind.enum).toEqual([...clauseOpNames]);
  });

  it('is answered exactly as the evaluator writes it (POST /harbor/policy/v1/test)', async () => {
    const predicate = {
      version: 1,
      root: {
        op: 'and',
        clauses: [
          { op: 'or', clauses: [{ op: 'eq', path: ['missing'], value: 1 }, { op: 'completion', path: ['status'], value: 'completed' }] },
          { op: 'not', clause: { op: 'eq', path: ['status'], value: 'failed' } },
          { op: 'lte', path: ['cost_cents'], limit_source: 'amount_cents' },
          { op: 'budget_cap', path: ['cost_cents'] },
          { op: 'schema_field', field: 'status' },
          { op: 'array_nonempty', field: 'items' },
          { op: 'true' },
          // Fails, with an observed value too long to copy: the step carries its summary and observed_truncated.
          { op: 'eq', path: ['note'], value: 'short' },
        ],
      },
    };
    const input = {
      evidence: { status: 'completed', cost_cents: 40, items: [1], note: 'x'.repeat(1000) },
      evidenceSchema: { type: 'object', properties: { status: { type: 'string' } } },
      amountCents: 500,
    };
    const expected = evaluate(compilePredicate(predicate), input);
    // Every op has a step, and the last one summarises what it observed.
    expect(new Set(expected.trace.map((step) => step.kind))).toEqual(new Set(clauseOps));
    expect(expected.trace.at(-1)!.data.observed_truncated).toBe(true);

    const answer = await app.inject({
      method: 'POST',
      url: '/harbor/policy/v1/test',
      headers: bearer(tenant.adminKey),
      payload: { predicate_dsl: predicate, evidence: input.evidence, evidence_schema: input.evidenceSchema, amount_cents: input.amountCents },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.body.startsWith(`{"predicate_evaluation":${JSON.stringify(expected)},`)).toBe(true);
  });
});
