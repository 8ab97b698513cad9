// An intent's `evidence_schema`: checked at creation against the subset of JSON Schema we accept, compiled once
// (cached by digest), and applied to every evidence payload.
//
// The subset leaves out every keyword whose cost depends on the schema author rather than on the evidence size:
// `pattern` and `patternProperties` (a caller-chosen regular expression can backtrack for hours), `$ref` (cycles,
// remote fetches), `format` (a second vocabulary), `uniqueItems` (quadratic). What remains describes shapes.
import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { BoundedCache } from '../credentials/bounded-cache.ts';
import { ServiceError } from '../errors/service-error.ts';
import { evidenceSchemaCacheEntriesMax, jsonNestingDepthMax } from '../limits.ts';
import { validationFields, type ValidationField } from '../infra/validation.ts';
import { canonicalJson, CanonicalJsonError } from '../signing/canonical-json.ts';

const annotationKeywords = new Set(['$schema', '$id', 'title', 'description', 'examples', 'default', '$comment']);
const valueKeywords = new Set([
  'type', 'enum', 'const', 'required', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'multipleOf',
]);
const schemaMapKeywords = new Set(['properties']);
const subschemaKeywords = new Set(['items', 'additionalProperties', 'not']);
const schemaListKeywords = new Set(['anyOf', 'allOf', 'oneOf']);

/** The first keyword outside the subset, as a JSON pointer, or undefined when the schema is acceptable. */
export function unsupportedEvidenceSchemaKeyword(schema: unknown, pointer = '', depth = 0): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return pointer || '/';
  if (depth > jsonNestingDepthMax) return pointer;
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${keyword}`;
    if (annotationKeywords.has(keyword) || valueKeywords.has(keyword)) continue;
    if (schemaMapKeywords.has(keyword)) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return at;
      for (const [name, child] of Object.entries(value)) {
        const found = unsupportedEvidenceSchemaKeyword(child, `${at}/${name}`, depth + 1);
        if (found) return found;
      }
    } else if (subschemaKeywords.has(keyword)) {
      const found = unsupportedEvidenceSchemaKeyword(value, at, depth + 1);
      if (found) return found;
    } else if (schemaListKeywords.has(keyword)) {
      if (!Array.isArray(value)) return at;
      for (const [index, child] of value.entries()) {
        const found = unsupportedEvidenceSchemaKeyword(child, `${at}/${index}`, depth + 1);
        if (found) return found;
      }
    } else {
      return at;
    }
  }
  return undefined;
}

// Not strict: the subset check above is the gate; Ajv only has to compile what passed it.
const evidenceAjv = new Ajv({ strict: false, allErrors: true, validateSchema: true });
const compiled = new BoundedCache<string, ValidateFunction>(evidenceSchemaCacheEntriesMax, Number.POSITIVE_INFINITY);

/** The schema's canonical JSON. Each schema level above may span two JSON levels (`properties`, then a name), so a
 * schema within the subset's depth can still nest deeper than canonical JSON allows: that too is the caller's fault. */
function canonicalSchemaText(schema: unknown): string {
  try {
    return canonicalJson(schema);
  } catch (error) {
    if (error instanceof CanonicalJsonError) throw new ServiceError('intent.evidence_schema_invalid', { details: { reason: error.message } });
    throw error;
  }
}

/** Checks and compiles an evidence schema; 400 `intent.evidence_schema_invalid` naming the place at fault. */
export function compileEvidenceSchema(schema: unknown): ValidateFunction {
  const unsupported = unsupportedEvidenceSchemaKeyword(schema);
  if (unsupported) throw new ServiceError('intent.evidence_schema_invalid', { details: { pointer: unsupported } });
  const digest = createHash('sha256').update(canonicalSchemaText(schema)).digest('hex');
  const cached = compiled.get(digest);
  if (cached) return cached;
  let validate: ValidateFunction;
  try {
    validate = evidenceAjv.compile(schema as object);
  } catch (error) {
    throw new ServiceError('intent.evidence_schema_invalid', { details: { reason: (error as Error).message } });
  }
  compiled.set(digest, validate);
  return validate;
}

/** The payload's fields at fault against the schema (as `details.fields` lists them), or undefined when it matches. */
export function evidenceMismatchOf(schema: unknown, payload: unknown): ValidationField[] | undefined {
  const validate = compileEvidenceSchema(schema);
  return validate(payload) ? undefined : validationFields(validate.errors ?? [], 'payload');
}

/** 422 `evidence.schema_mismatch` with the fields at fault when the payload does not match. */
export function assertEvidenceMatchesSchema(schema: unknown, payload: unknown): void {
  const fields = evidenceMismatchOf(schema, payload);
  if (fields) throw new ServiceError('evidence.schema_mismatch', { details: { fields } });
}
