// Benchmarks of the release-rule evaluator: a completion_budget_v1 rule against json-logic-js in the same run,
// and the worst-case valid document (fuel 256) from validation to trace. Run alone: node --import tsx bench/predicate-bench.ts
// Every timed operation returns a number that is added to `consumed`, which is checked after the run, so the
// work (including the trace) stays observable and cannot be optimized away.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { predicateDepthMax, predicateDocumentBytesMax, predicateFuelMax } from '../src/limits.ts';
import type { Clause, EvaluationInput, PredicateEvaluation } from '../src/predicate/ast.ts';
import { compilePredicate } from '../src/predicate/compile.ts';
import { evaluate } from '../src/predicate/evaluate.ts';
import { materializeTemplate } from '../src/predicate/templates.ts';
import { canonicalJson } from '../src/signing/canonical-json.ts';
import type { BenchRow } from './bench-row.ts';

// json-logic-js is CommonJS without type declarations; require() keeps it out of the type checker.
const jsonLogic = createRequire(import.meta.url)('json-logic-js') as { apply(rule: unknown, data: unknown): unknown };

const rounds = 11;
const roundMs = 200;
/** Untimed running of every operation before the rounds, so that the first round does not time the engine's
 * optimizing compiler instead of the code. */
const warmUpMs = 300;
const ratioTarget = 2;
const worstCaseTargetUs = 20;

/** The sum of every timed operation's result. */
let consumed = 0;

/** Runs `operation` repeatedly for about `durationMs` and answers operations per second. */
function measureRate(operation: () => number, durationMs: number): number {
  let sink = 0;
  let count = 0;
  const batch = 100;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < durationMs) {
    for (let index = 0; index < batch; index += 1) sink += operation();
    count += batch;
    elapsed = performance.now() - start;
  }
  consumed += sink;
  return (count / elapsed) * 1000;
}

/** What one evaluation yields to the sink: its step count and its result. */
function consume(result: PredicateEvaluation): number {
  return result.trace.length + (result.passed ? 1 : 0);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** (max − min) / median, in percent: how far apart the rounds were. */
function spreadPercent(values: readonly number[]): number {
  return ((Math.max(...values) - Math.min(...values)) / median(values)) * 100;
}

function formatRate(rate: number): string {
  return `${Math.round(rate).toLocaleString('en-US')} evals/s`;
}

/** The largest document the limits allow us to make expensive: exactly 256 clauses, and/or/not nested to the
 * depth limit, every clause visited (and-groups that all pass, or-groups whose only passing clause is last, so
 * nothing short-circuits), failing and passing checks of every kind, under the 16 KiB byte limit. */
export function worstCaseDocument(): unknown {
  // A chain of nots around a failing eq: with the root `and` it reaches the depth limit, and an odd number of
  // nots turns the failure into a pass.
  const chainNots = predicateDepthMax - 1;
  let chain: Clause = { op: 'eq', path: ['a', 'b', 'c', 'd'], value: { k: [1, 'y'] } };
  for (let index = 0; index < chainNots; index += 1) chain = { op: 'not', clause: chain };
  const passing: Clause[] = [
    { op: 'eq', path: ['a', 'b', 'c', 'd'], value: { k: [1, 'x'] } },
    { op: 'completion', path: ['a', 'b', 'c', 's'], value: 'completed' },
    { op: 'budget_cap', path: ['a', 'b', 'c', 'n'] },
    { op: 'lte', path: ['a', 'b', 'c', 'n'], limit_source: 'amount_cents' },
    { op: 'schema_field', field: 'f' },
    { op: 'array_nonempty', field: 'arr' },
    { op: 'eq', path: ['a', 'b', 'c', 'n'], value: 5 },
  ];
  const failing: Clause[] = [
    { op: 'eq', path: ['a', 'b', 'c', 'd'], value: { k: [1, 'y'] } },
    { op: 'completion', path: ['a', 'b', 'c', 's'], value: 'failed' },
    { op: 'budget_cap', path: ['a', 'b', 'c', 'big'] },
    { op: 'lte', path: ['a', 'b', 'c', 'x'], limit_source: 'amount_cents' },
    { op: 'schema_field', field: 'arr' },
    { op: 'array_nonempty', field: 'empty' },
    { op: 'eq', path: ['a', 'b', 'c', 'n'], value: 6 },
  ];
  const clauses: Clause[] = [chain];
  let nodesLeft = predicateFuelMax - 1 - (chainNots + 1);
  for (let group = 0; nodesLeft > 0; group += 1) {
    const leafCount = Math.min(passing.length, nodesLeft - 1);
    const orGroup = group % 2 === 1;
    const leaves = orGroup ? [...failing.slice(0, leafCount - 1), passing[0] as Clause] : passing.slice(0, leafCount);
    clauses.push({ op: orGroup ? 'or' : 'and', clauses: leaves });
    nodesLeft -= leafCount + 1;
  }
  return { version: 1, root: { op: 'and', clauses } };
}

export const worstCaseInput: EvaluationInput = {
  evidence: { a: { b: { c: { d: { k: [1, 'x'] }, s: 'completed', n: 5, big: 500 } } }, f: 'x', arr: [1], empty: [] },
  evidenceSchema: { type: 'object', properties: { f: { type: ['null', 'string'] }, arr: { type: 'object' } } },
  amountCents: 100,
};

export async function run(): Promise<BenchRow[]> {
  const rule = materializeTemplate('completion_budget_v1', {}).compiled;
  const input: EvaluationInput = { evidence: { status: 'completed', cost_cents: 50 }, evidenceSchema: {}, amountCents: 100 };
  const logicRule = { and: [{ '===': [{ var: 'status' }, 'completed'] }, { '<=': [{ var: 'cost_cents' }, { var: 'amount_cents' }] }] };
  const logicData = { status: 'completed', cost_cents: 50, amount_cents: 100 };
  if (evaluate(rule, input).passed !== true || jsonLogic.apply(logicRule, logicData) !== true) {
    throw new Error('predicate-bench: the two rules must agree before they are timed');
  }

  // The document as the service receives it: already parsed (JSON.parse is not timed), in the object shapes
  // JSON.parse makes.
  const worstDocument: unknown = JSON.parse(JSON.stringify(worstCaseDocument()));
  const worstCompiled = compilePredicate(worstDocument);
  const worstResult = evaluate(worstCompiled, worstCaseInput);
  if (worstCompiled.nodeCount !== predicateFuelMax || worstResult.trace.length !== predicateFuelMax || !worstResult.passed ||
    worstCompiled.depth !== predicateDepthMax || worstCompiled.canonicalBytes > predicateDocumentBytesMax) {
    throw new Error('predicate-bench: the worst-case document must use the whole fuel and depth, and pass');
  }
  const worstText = JSON.stringify(worstDocument);

  const ourRates: number[] = [];
  const logicRates: number[] = [];
  const ratios: number[] = [];
  const worstUs: number[] = [];
  const worstValidateUs: number[] = [];
  const worstEvaluateUs: number[] = [];
  const worstCanonicalUs: number[] = [];
  const worstParseJsonUs: number[] = [];
  const operations = {
    ours: () => consume(evaluate(rule, input)),
    theirs: () => (jsonLogic.apply(logicRule, logicData) === true ? 1 : 0),
    // The figure: a fresh validation (with compilation) of the parsed document, then one evaluation with its trace.
    worst: () => consume(evaluate(compilePredicate(worstDocument), worstCaseInput)),
    worstValidate: () => compilePredicate(worstDocument).canonicalBytes,
    worstEvaluate: () => consume(evaluate(worstCompiled, worstCaseInput)),
    worstCanonical: () => canonicalJson(worstDocument).length,
    worstParseJson: () => (JSON.parse(worstText) as { version: number }).version,
  };
  for (const operation of Object.values(operations)) measureRate(operation, warmUpMs);
  for (let round = 0; round < rounds; round += 1) {
    const ours = measureRate(operations.ours, roundMs);
    const theirs = measureRate(operations.theirs, roundMs);
    ourRates.push(ours);
    logicRates.push(theirs);
    ratios.push(ours / theirs);
    worstUs.push(1e6 / measureRate(operations.worst, roundMs));
    worstValidateUs.push(1e6 / measureRate(operations.worstValidate, roundMs / 2));
    worstEvaluateUs.push(1e6 / measureRate(operations.worstEvaluate, roundMs / 2));
    worstCanonicalUs.push(1e6 / measureRate(operations.worstCanonical, roundMs / 2));
    worstParseJsonUs.push(1e6 / measureRate(operations.worstParseJson, roundMs / 2));
  }
  if (!(consumed > 0)) throw new Error('predicate-bench: the timed operations yielded nothing');

  const ratio = median(ratios);
  const worst = median(worstUs);
  const nsPerEval = 1e9 / median(ourRates);
  const microseconds = (values: readonly number[]) => `${median(values).toFixed(1)} µs`;
  return [
    {
      entry: 'predicate: completion_budget_v1 evaluate with trace vs json-logic-js',
      figure: `${formatRate(median(ourRates))} (${nsPerEval.toFixed(0)} ns/eval; median of ${rounds}, spread ${spreadPercent(ourRates).toFixed(0)}%)`,
      baseline: `${formatRate(median(logicRates))} json-logic-js (spread ${spreadPercent(logicRates).toFixed(0)}%)`,
      ratio: Number(ratio.toFixed(2)),
      target: `>= ${ratioTarget}`,
      met: ratio >= ratioTarget,
    },
    {
      entry: `predicate: worst-case valid document (fuel ${predicateFuelMax}, depth ${predicateDepthMax}, ${worstCompiled.canonicalBytes} B) validate+evaluate`,
      figure:
        `${worst.toFixed(1)} µs (median of ${rounds}, fastest ${Math.min(...worstUs).toFixed(1)} µs, spread ` +
        `${spreadPercent(worstUs).toFixed(0)}%; validate alone ` +
        `${microseconds(worstValidateUs)}, evaluate alone of the compiled rule ${microseconds(worstEvaluateUs)})`,
      // Not a target baseline: what merely parsing or canonicalizing the same document costs on this machine, for scale.
      baseline: `JSON.parse of the same document ${microseconds(worstParseJsonUs)}, canonicalJson ${microseconds(worstCanonicalUs)}`,
      ratio: null,
      target: `< ${worstCaseTargetUs} µs`,
      met: worst < worstCaseTargetUs,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await run()) console.log(JSON.stringify(row));
}
