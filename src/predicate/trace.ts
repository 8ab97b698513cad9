// Copies observed evidence into a trace step without letting the evidence decide how much is copied:
// small values verbatim, anything larger replaced by a summary {type, length?} and flagged `observed_truncated`.
import type { ObservedSummary, TraceStepData } from './ast.ts';
import { isJsonObject, jsonTypeOf } from './json-value.ts';

// These bound a trace, not a request, so they live with the trace. A trace step therefore costs at most
// about traceObservedNodesMax × traceObservedStringLengthMax characters whatever the evidence holds.
/** JSON values (each array element, object member and scalar counts one) copied for one observed value. */
export const traceObservedNodesMax = 16;
/** UTF-16 code units of one string (or object key) copied verbatim. */
export const traceObservedStringLengthMax = 128;

/** Sets `data.observed` to the value itself when it is small, else to its summary with the flag set. */
export function recordObserved(data: TraceStepData, observed: unknown): void {
  switch (typeof observed) {
    case 'boolean':
      data.observed = observed;
      return;
    case 'number':
      if (Number.isFinite(observed)) {
        data.observed = observed;
        return;
      }
      break;
    case 'string':
      if (observed.length <= traceObservedStringLengthMax) {
        data.observed = observed;
        return;
      }
      break;
    case 'object': {
      if (observed === null) {
        data.observed = null;
        return;
      }
      const budget = { nodesLeft: traceObservedNodesMax };
      const copy = copyWithinBudget(observed, budget);
      if (copy !== undefined) {
        data.observed = copy;
        return;
      }
      break;
    }
    default:
      break;
  }
  data.observed = summarize(observed);
  data.observed_truncated = true;
}

function summarize(value: unknown): ObservedSummary {
  const type = jsonTypeOf(value) ?? 'not_json';
  if (typeof value === 'string' || Array.isArray(value)) return { type, length: value.length };
  return { type };
}

type Budget = { nodesLeft: number };

// Returns undefined for "over budget or not JSON": undefined never occurs inside a JSON value, so it cannot
// be mistaken for a copy.
function copyWithinBudget(value: unknown, budget: Budget): unknown {
  budget.nodesLeft -= 1;
  if (budget.nodesLeft < 0) return undefined;
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return value.length <= traceObservedStringLengthMax ? value : undefined;
  if (Array.isArray(value)) {
    if (value.length > budget.nodesLeft) return undefined;
    const copy: unknown[] = [];
    for (let index = 0; index < value.length; index += 1) {
      const element = copyWithinBudget(value[index], budget);
      if (element === undefined) return undefined;
      copy.push(element);
    }
    return copy;
  }
  if (!isJsonObject(value)) return undefined;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key) || value[key] === undefined) continue;
    if (key.length > traceObservedStringLengthMax) return undefined;
    const member = copyWithinBudget(value[key], budget);
    if (member === undefined) return undefined;
    // Assigning to "__proto__" would replace the copy's prototype, so that one key is defined instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return copy;
}
