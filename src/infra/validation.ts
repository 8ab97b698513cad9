// JSON-schema validation of requests: bodies are validated strictly (no type coercion: "100" is not 100 for an
// amount), while path parameters, query strings and headers, which are always text, are coerced.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ServiceError } from '../errors/service-error.ts';
import { inputPointerLengthMax } from '../limits.ts';

/** Adds ajv-formats' formats (date-time, uri, email, …) to an Ajv instance; the response validation uses it too.
 * ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `default` is the function
 * (its types declare the function itself, hence the one cast). */
export const addFormats = ((addFormatsModule as unknown as { default?: (ajv: Ajv) => Ajv }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

const shared: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: true };
const bodyAjv = new Ajv({ ...shared, coerceTypes: false });
const textAjv = new Ajv({ ...shared, coerceTypes: 'array' });
for (const ajv of [bodyAjv, textAjv]) addFormats(ajv);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv.compile(schema) : finiteAfterCoercion(textAjv.compile(schema))) as ReturnType<FastifySchemaCompiler<object>>;

/** Ajv coerces the text "1e400" to Infinity and then skips `minimum` and `maximum` for a number that is not finite
 * (ajv 8.20), so `?limit=1e400` would reach SQL as Infinity. Path parameters and queries are flat (values, or
 * arrays of values), so one look at each value after coercion refuses it as a schema violation. */
function finiteAfterCoercion(validate: ValidateFunction): (data: unknown) => boolean {
  const checked = (data: unknown): boolean => {
    const valid = validate(data);
    checked.errors = validate.errors;
    if (!valid || data === null || typeof data !== 'object') return valid;
    for (const [key, value] of Object.entries(data)) {
      if ([value].flat().some((item) => typeof item === 'number' && !Number.isFinite(item))) {
        checked.errors = [{ instancePath: `/${key}`, message: 'must be a finite number' }];
        return false;
      }
    }
    return true;
  };
  checked.errors = undefined as ValidateFunction['errors'] | Partial<ErrorObject>[];
  return checked;
}

/** Schema violations listed in `details.fields`; more than this adds nothing a caller can act on. */
const validationFieldsMax = 20;

export interface ValidationField {
  readonly location: string;
  readonly path: string;
  readonly message: string;
}

/** A JSON pointer as an answer echoes it: cut to `inputPointerLengthMax` characters, ending with "…" when cut, so
 * a key of 500 KB in the body does not make a 500 KB answer. */
export function boundedPointer(pointer: string): string {
  return pointer.length > inputPointerLengthMax ? `${pointer.slice(0, inputPointerLengthMax)}…` : pointer;
}

/** RFC 6901 escaping of one reference token. */
const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** Ajv errors as the envelope's `details.fields`: a JSON pointer to each field at fault and why. */
export function validationFields(errors: readonly Partial<ErrorObject>[], location: string): ValidationField[] {
  return errors.slice(0, validationFieldsMax).map((issue) => {
    // Ajv points at the parent for missing and unexpected properties; point at the property itself.
    const params = (issue.params ?? {}) as { missingProperty?: string; additionalProperty?: string };
    const child = params.missingProperty ?? params.additionalProperty;
    const base = issue.instancePath ?? '';
    const path = child === undefined ? base || '/' : `${base}/${pointerToken(child)}`;
    return { location, path: boundedPointer(path), message: issue.message ?? 'is invalid' };
  });
}

/** A strict body validator for schemas checked inside a handler (after a version gate, say), throwing the same
 * 400 `request.invalid` a route schema would. */
export function compileBodyValidator<T>(schema: object): (value: unknown) => asserts value is T {
  const validate = bodyAjv.compile(schema);
  return (value: unknown): asserts value is T => {
    if (!validate(value)) {
      throw new ServiceError('request.invalid', { details: { fields: validationFields(validate.errors ?? [], 'body') } });
    }
  };
}
