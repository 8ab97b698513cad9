// The evidence-schema gate: a schema within the accepted subset whose JSON nests past the canonical-JSON limit is
// the caller's fault (400 `intent.evidence_schema_invalid`), never a server fault. Found by the boundary fuzzer.
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { jsonNestingDepthMax } from '../../src/limits.ts';
import { compileEvidenceSchema } from '../../src/engine/evidence-schema.ts';

/** `levels` schema levels through `properties`: each adds two JSON levels (`properties`, then the name). */
function nestedSchema(levels: number): object {
  let schema: object = { type: 'string' };
  for (let level = 0; level < levels; level += 1) schema = { type: 'object', properties: { next: schema } };
  return schema;
}

describe('evidence schema nesting', () => {
  it('compiles a schema nested well inside the limit', () => {
    expect(typeof compileEvidenceSchema(nestedSchema(8))).toBe('function');
  });

  it('refuses a schema whose JSON nests past the canonical limit, though its schema depth is inside the subset', () => {
    const levels = Math.ceil(jsonNestingDepthMax / 2) + 2;
    expect(levels).toBeLessThan(jsonNestingDepthMax);
    let thrown: unknown;
    try {
      compileEvidenceSchema(nestedSchema(levels));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ServiceError);
    expect((thrown as ServiceError).code).toBe('intent.evidence_schema_invalid');
  });
});
