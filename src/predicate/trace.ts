// Copies observed evidence into a trace step without letting the evidence decide how much is copied:
// small values verbatim, anything larger replaced by a summary {type, length?} and flagged `observed_truncated`.
import { traceObservedNodesMax, traceObservedStringLengthMax } from '../limits.ts';
import type { ObservedSummary, TraceStepData } from './ast.ts';
import { jsonTypeOf, type JsonObject } from './json-value.ts';

// Defined in src/limits.ts with every other limit; re-exported here, where they are used.
export { traceObservedNodesMax, traceObservedStringLengthMax } from '../limits.ts';

/** The JSON values a copy may still take; the evaluation carries one, so copying allocates nothing else. */
export interface CopyBudget {
  nodesLeft: number;
}

/** The data of a step that observed a value: `{path, passed, expected, observed}` with the value itself when it
 * is small, else `{…, observed: summary, observed_truncated: true}`. Each shape is one object literal. */
export function observedStepData(path: string, passed: boolean, expected: unknown, observed: unknown, budget: CopyBudget): TraceStepData {
  switch (typeof observed) {
    case 'boolean':
      return { path, passed, expected, observed };
    case 'number':
      if (Number.isFinite(observed)) return { path, passed, expected, observed };
      break;
    case 'string':
      if (observed.length <= traceObservedStringLengthMax) return { path, passed, expected, observed };
      break;
    case 'object': {
      if (observed === null) return { path, passed, expected, observed };
      budget.nodesLeft = traceObservedNodesMax;
      const copy = copyWithinBudget(observed, budget);
      if (copy !== undefined) return { path, passed, expected, observed: copy };
      break;
    }
    default:
      break;
  }
  return { path, passed, expected, observed: summarize(observed), observed_truncated: true };
}

function summarize(value: unknown): ObservedSummary {
  const type = jsonTypeOf(value) ?? 'not_json';
  if (typeof value === 'string' || Array.isArray(value)) return { type, length: value.length };
  return { type };
}

// Returns undefined for "over budget or not JSON": undefined never occurs inside a JSON value, so it cannot
// be mistaken for a copy. Small, with arrays and objects apart, so that scalar members are copied without a call.
function copyWithinBudget(value: unknown, budget: CopyBudget): unknown {
  budget.nodesLeft -= 1;
  if (budget.nodesLeft < 0) return undefined;
  switch (typeof value) {
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'string':
      return value.length <= traceObservedStringLengthMax ? value : undefined;
    case 'object':
      if (value === null) return null;
      return Array.isArray(value) ? copyArrayWithinBudget(value, budget) : copyObjectWithinBudget(value as JsonObject, budget);
    default:
      return undefined;
  }
}

function copyArrayWithinBudget(array: readonly unknown[], budget: CopyBudget): unknown[] | undefined {
  if (array.length > budget.nodesLeft) return undefined;
  const copy: unknown[] = [];
  for (let index = 0; index < array.length; index += 1) {
    const element = copyWithinBudget(array[index], budget);
    if (element === undefined) return undefined;
    copy.push(element);
  }
  return copy;
}

function copyObjectWithinBudget(object: JsonObject, budget: CopyBudget): Record<string, unknown> | undefined {
  const copy: Record<string, unknown> = {};
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const value = object[key];
    if (value === undefined) continue;
    if (key.length > traceObservedStringLengthMax) return undefined;
    const member = copyWithinBudget(value, budget);
    if (member === undefined) return undefined;
    // Assigning to "__proto__" would replace the copy's prototype, so that one key is defined instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return copy;
}
