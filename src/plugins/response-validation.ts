// Checks every JSON answer against its route's declared response schema for its status, before Fastify serializes
// it (docs/api.md "Response validation"). The serializer drops members a schema does not list and coerces types, so
// a contract that drifts from what a handler sends would break clients silently; this makes the drift loud. On in
// the test suite (AppOptions.validateResponses), off in production, where the compiled serializer alone runs.
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { ErrorEnvelope } from '../contracts/common.ts';
import { ServiceError } from '../errors/service-error.ts';
import { addFormats } from '../infra/validation.ts';

/** Strict: an unknown keyword in a contract is a mistake in the contract, not something to skip. No coercion, no
 * defaults: the payload is checked exactly as the handler built it. */
const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);

type JsonSchema = Record<string, unknown>;
const compiled = new WeakMap<object, ValidateFunction>();

const schemaMapKeywords = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const schemaKeywords = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']);
const schemaListKeywords = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);

/** The schema as the validator reads it: every object that lists properties and says nothing of others is closed
 * (an open object says so with `additionalProperties` or is a record), and the OpenAPI-only `headers` is dropped. */
export function closedSchema(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'headers') continue;
    if (schemaMapKeywords.has(key)) copy[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, member]) => [name, closedSchema(member)]));
    else if (schemaKeywords.has(key)) copy[key] = closedSchema(value);
    else if (schemaListKeywords.has(key)) copy[key] = (value as unknown[]).map(closedSchema);
    else copy[key] = value;
  }
  if (copy['properties'] !== undefined && !('additionalProperties' in copy) && !('patternProperties' in copy)) copy['additionalProperties'] = false;
  return copy;
}

function validatorOf(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(closedSchema(schema) as JsonSchema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** The JSON schema a route declares for a status: exact, then `4xx`-style, then `default`; `content` forms give their
 * application/json schema. Undefined when the route declares no JSON answer for it. */
function declaredSchema(responses: Record<string, unknown>, status: number): object | undefined {
  const range = String(status)[0];
  const entry = (responses[String(status)] ?? responses[`${range}xx`] ?? responses[`${range}XX`] ?? responses['default']) as JsonSchema | undefined;
  if (entry === undefined) return undefined;
  const content = entry['content'] as Record<string, { schema?: object }> | undefined;
  if (content === undefined) return entry;
  return content['application/json']?.schema ?? content['application/problem+json']?.schema;
}

/** Why the payload does not match, or undefined when it does. */
export function responseDrift(request: FastifyRequest, status: number, payload: unknown): Record<string, unknown> | undefined {
  const responses = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
  // No route (404, 405): the not-found handler answers the envelope of its status.
  const schema = request.routeOptions.url === undefined ? ErrorEnvelope(status) : responses === undefined ? undefined : declaredSchema(responses, status);
  // A route that declares no responses at all is not yet converted; the OpenAPI coverage test refuses those.
  if (responses === undefined && request.routeOptions.url !== undefined) return undefined;
  const route = `${request.method} ${request.routeOptions.url ?? '(no route)'}`;
  if (schema === undefined) return { route, status, problem: `the route declares no JSON response for status ${status}` };
  const validate = validatorOf(schema);
  if (validate(payload)) return undefined;
  return { route, status, errors: (validate.errors ?? []).map((error) => ({ path: error.instancePath || '/', message: error.message, params: error.params })) };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once a drift was found, so the 500 that reports it is not checked again. */
    responseDriftFound: boolean;
  }
}

export const responseValidation = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorateRequest('responseDriftFound', false);
    app.addHook('preSerialization', async (request, reply, payload) => {
      if (request.responseDriftFound) return payload;
      const drift = responseDrift(request, reply.statusCode, payload);
      if (drift === undefined) return payload;
      request.responseDriftFound = true;
      request.log.error({ response_drift: drift }, 'response does not match its route contract');
      throw new ServiceError('internal.error', { message: 'The response does not match its route contract.', details: { response_drift: drift } });
    });
  },
  { name: 'response-validation' },
);
