// JSON-schema validation of requests: bodies are validated strictly (no type coercion: "100" is not 100 for an
// amount), while path parameters, query strings and headers, which are always text, are coerced.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats));

const shared: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: true };
const bodyAjv = new Ajv({ ...shared, coerceTypes: false });
const textAjv = new Ajv({ ...shared, coerceTypes: 'array' });
for (const ajv of [bodyAjv, textAjv]) addFormats(ajv);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema) as ReturnType<FastifySchemaCompiler<object>>;
