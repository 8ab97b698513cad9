// The examples of GET /openapi.json (src/contracts/examples.ts, docs/api.md "Examples"): every example in the document
// is valid against the schema it illustrates, checked as the response validator checks answers (ajv, strict, objects
// closed); the main flows each show theirs where OpenAPI readers look; and each example still has the shape of what
// the server answers today, by running the same flows again (test/contracts/main-flow-capture.ts).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as examples from '../../src/contracts/examples.ts';
import { closedSchema } from '../../src/plugins/response-validation.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { captureMainFlow, capturedExampleNames, type CapturedExamples } from './main-flow-capture.ts';
import { dereferenced } from './openapi-document.ts';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats));

type Json = Record<string, unknown>;
interface Media {
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media>; headers?: Record<string, { schema?: Json }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

let database: TestDatabase;
let app: FastifyInstance;
let document: Document;
let live: CapturedExamples;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(answer.statusCode).toBe(200);
  // Each schema in place of its reference: an example is checked against the whole schema it illustrates.
  document = dereferenced(answer.json());
  live = await captureMainFlow(app, database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** As src/plugins/response-validation.ts checks answers: strict, no coercion, objects closed unless declared open. */
const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);
const validators = new WeakMap<object, ValidateFunction>();
function problemsOf(schema: Json, value: unknown): string[] {
  let validate = validators.get(schema);
  if (!validate) {
    // The `examples` of a schema annotate it; the copy validated is the schema alone.
    const { examples: _examples, ...bare } = schema;
    validate = ajv.compile(closedSchema(bare) as Json);
    validators.set(schema, validate);
  }
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
}

interface Example {
  readonly where: string;
  readonly schema: Json;
  readonly value: unknown;
}

/** Every JSON Schema `examples` array in a schema and the schemas inside it. */
function schemaExamples(schema: unknown, where: string, found: Example[]): void {
  if (schema === null || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    schema.forEach((member, index) => schemaExamples(member, `${where}/${index}`, found));
    return;
  }
  const node = schema as Json;
  if (Array.isArray(node['examples'])) for (const value of node['examples']) found.push({ where: `${where} (schema examples)`, schema: node, value });
  for (const [key, member] of Object.entries(node)) if (key !== 'examples' && key !== 'default' && key !== 'const' && key !== 'enum') schemaExamples(member, `${where}/${key}`, found);
}

/** A media type's `example` and `examples`, and those of the schemas inside it. */
function mediaExamples(media: Media, where: string, found: Example[]): void {
  if (media.schema === undefined) return;
  if (media.example !== undefined) found.push({ where: `${where} (example)`, schema: media.schema, value: media.example });
  for (const [name, example] of Object.entries(media.examples ?? {})) found.push({ where: `${where} (examples.${name})`, schema: media.schema, value: example.value });
  schemaExamples(media.schema, where, found);
}

/** Every example of the document, with the schema it illustrates. */
function documentExamples(): Example[] {
  const found: Example[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const name = `${method.toUpperCase()} ${path}`;
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) mediaExamples(media, `${name} request ${type}`, found);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) mediaExamples(media, `${name} ${status} ${type}`, found);
        for (const [header, declared] of Object.entries(response.headers ?? {})) schemaExamples(declared.schema, `${name} ${status} header ${header}`, found);
      }
    }
  }
  return found;
}

/** The example a media type shows: `example`, or the first of `examples`. */
const shownExample = (media: Media | undefined): unknown => media?.example ?? Object.values(media?.examples ?? {})[0]?.value;

/** Where the main flows show their examples: a request body, an answer of a status, a header of an answer. */
const mainFlows: { path: string; method: string; request?: true; responses: string[]; headers?: Record<string, string[]> }[] = [
  { method: 'get', path: '/v1/auth/principal', responses: ['200'] },
  { method: 'post', path: '/v1/admin/api-keys', request: true, responses: ['201'] },
  { method: 'post', path: '/harbor/policy/v1/drafts', request: true, responses: ['201'] },
  { method: 'post', path: '/harbor/intents', request: true, responses: ['201'] },
  { method: 'get', path: '/harbor/intents/{intent_id}', responses: ['200'] },
  {
    method: 'post',
    path: '/harbor/intents/{intent_id}/fund',
    responses: ['200', '402', '409'],
    headers: { '200': ['payment-response', 'payment-receipt'], '402': ['payment-required', 'www-authenticate'] },
  },
  { method: 'post', path: '/harbor/intents/{intent_id}/evidence', request: true, responses: ['200'] },
  { method: 'post', path: '/harbor/intents/{intent_id}/settlement/confirm', request: true, responses: ['200'] },
  { method: 'get', path: '/harbor/ledger/v1/events', responses: ['200'] },
  { method: 'post', path: '/v1/sandbox/guardrails/bootstrap', request: true, responses: ['200'] },
];

describe('the examples of GET /openapi.json', () => {
  it('are each valid against the schema they illustrate', () => {
    const found = documentExamples();
    // The main flows alone show more than twenty; a count this low means the walk above found nothing.
    expect(found.length).toBeGreaterThan(20);
    const invalid = found.map((example) => ({ where: example.where, problems: problemsOf(example.schema, example.value) })).filter((result) => result.problems.length > 0);
    expect(invalid).toEqual([]);
  });

  it('are checked strictly enough to fail: an example with a member its schema lacks, or without one it needs, is refused', () => {
    const media = document.paths['/harbor/intents/{intent_id}']!['get']!.responses['200']!.content!['application/json']!;
    const example = shownExample(media) as Json;
    expect(problemsOf(media.schema!, example)).toEqual([]);
    expect(problemsOf(media.schema!, { ...example, surprise: true })).not.toEqual([]);
    const { state: _state, ...withoutState } = example;
    expect(problemsOf(media.schema!, withoutState)).not.toEqual([]);
  });

  it.each(mainFlows)('show the main flows: $method $path', (flow) => {
    const operation = document.paths[flow.path]?.[flow.method];
    expect(operation, `${flow.method} ${flow.path} is in the document`).toBeDefined();
    if (flow.request) expect(shownExample(operation!.requestBody?.content['application/json']), 'a request example').toBeDefined();
    for (const status of flow.responses) {
      expect(shownExample(operation!.responses[status]?.content?.['application/json']), `an example of the ${status} answer`).toBeDefined();
    }
    for (const [status, names] of Object.entries(flow.headers ?? {})) {
      for (const name of names) {
        const examplesOfHeader = operation!.responses[status]?.headers?.[name]?.schema?.['examples'];
        expect(examplesOfHeader, `an example of the ${status} answer's ${name} header`).toHaveLength(1);
      }
    }
  });

  it('have the shape of what the server answers today (else: node --import tsx test/contracts/write-openapi-examples.ts)', () => {
    const drifted = capturedExampleNames.filter((name) => JSON.stringify(shapeOf(examples[name])) !== JSON.stringify(shapeOf(live[name])));
    expect(drifted).toEqual([]);
  });
});

/** A JSON value with its scalars replaced by their types: members (in order), array lengths and types are kept. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object') return Object.entries(value).map(([key, member]) => [key, shapeOf(member)]);
  return typeof value;
}
