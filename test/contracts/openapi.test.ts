// GET /openapi.json: a valid OpenAPI 3.1 document (checked by a maintained validator), listing every registered route
// with its responses, its surface tag and its security; and a client generated from it by openapi-typescript
// type-checks calls of the main flow.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codesOfStatus } from '../../src/contracts/common.ts';
import { unsupportedIntegrations } from '../../src/surfaces/gateway/routes/provider-integrations.ts';
import { componentSchemas } from '../../src/contracts/components.ts';
import { referencePageRoutes } from '../../src/surfaces/reference.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot } from '../helpers/server-process.ts';
import { dereferenced } from './openapi-document.ts';

interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Record<string, unknown>> };
}

let database: TestDatabase;
let app: FastifyInstance;
let document: Document;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(answer.statusCode).toBe(200);
  document = answer.json();
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** `/harbor/intents/:intent_id` as OpenAPI writes it: `/harbor/intents/{intent_id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The registered routes the document lists: all but HEAD (Fastify's automatic twins of GET) and the reference
 * page's own files (its HTML and script, hidden by the package that serves them; docs/api.md says so). */
function documentedRoutes() {
  return [...app.routeContracts.values()].filter((route) => route.method !== 'HEAD' && !referencePageRoutes.includes(route.url));
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, versioned as the package', async () => {
    const result = await new Validator().validate(structuredClone(document) as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 4000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    const packageJson = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };
    expect(document.info.version).toBe(packageJson.version);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'downloadToken', 'sessionToken']);
  });

  it('lists every registered route (the reference page files aside)', () => {
    const missing = documentedRoutes().filter((route) => document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()] === undefined);
    expect(missing.map((route) => `${route.method} ${route.url}`)).toEqual([]);
  });

  it('gives every route its responses: a success and the error envelope of each status it can answer', () => {
    // @fastify/swagger writes a lone `200: Default Response` for a route that declares no responses.
    const undeclared = documentedRoutes()
      .filter((route) => Object.keys(document.paths[openApiPath(route.url)]![route.method.toLowerCase()]!.responses).join() === '200')
      .map((route) => `${route.method} ${route.url}`);
    expect(undeclared, 'routes that declare no response schema').toEqual([]);
    for (const route of documentedRoutes()) {
      const operation = document.paths[openApiPath(route.url)]![route.method.toLowerCase()]!;
      const statuses = Object.keys(operation.responses);
      // A method a route only refuses (GET and DELETE /mcp: the stateless transport answers 405) has no success, and
      // neither has a provider integration the service does not run (422 integration.not_supported).
      const refusesOnly = statuses.includes('405') || unsupportedIntegrations.some((integration) => integration.method === route.method && integration.path === route.url);
      const answers = statuses.some((status) => /^[23]/.test(status)) || refusesOnly;
      expect(answers, `${route.method} ${route.url} has no success response`).toBe(true);
      // Every route can be refused by the input boundary, the rate limiter, or fail; authenticated ones by access
      // (401, and 403 for a role or scope; a download route takes no role, so it has no 403).
      const accessStatuses = 'public' in route.access ? [] : 'download' in route.access ? ['401'] : ['401', '403'];
      const expected = ['400', '414', '429', '500', '503', ...accessStatuses];
      // A range (`4XX`, the console's HTML error pages) covers each status in it.
      const uncovered = expected.filter((status) => !statuses.includes(status) && !statuses.includes(`${status[0]}XX`));
      expect(uncovered, `${route.method} ${route.url}: statuses not declared`).toEqual([]);
    }
  });

  it('restricts each error envelope to the catalogue codes of its status', () => {
    const operation = dereferenced(document).paths['/harbor/intents/{intent_id}']!['get']!;
    const schema = (operation.responses['404']!.content!['application/json'] as { schema: { properties: { error: { properties: { code: { enum: string[] } } } } } }).schema;
    expect(schema.properties.error.properties.code.enum).toEqual(codesOfStatus(404));
    expect(codesOfStatus(404)).toContain('intent.not_found');
  });

  it('names the shared schemas once in components.schemas, and every operation refers to them', () => {
    const schemas = document.components.schemas;
    for (const name of ['Intent', 'IntentList', 'Principal', 'ApiKey', 'LedgerEvents', 'ErrorEnvelope404', 'ErrorEnvelope400']) expect(schemas[name], name).toBeDefined();
    // Only names of the contracts (src/contracts/components.ts) are used.
    expect(Object.keys(schemas).filter((name) => !componentSchemas.has(name))).toEqual([]);
    const intentRead = document.paths['/harbor/intents/{intent_id}']!['get']!;
    expect((intentRead.responses['200']!.content!['application/json'] as { schema: unknown }).schema).toEqual({ $ref: '#/components/schemas/Intent' });
    expect((intentRead.responses['404']!.content!['application/json'] as { schema: unknown }).schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope404' });
    expect(schemas['IntentList']).toMatchObject({ properties: { data: { items: { $ref: '#/components/schemas/Intent' } } } });

    // No copy of a named schema is left inline, every reference names a schema, and every schema is referred to.
    const inline: string[] = [];
    const referenced = new Set<string>();
    const walk = (node: unknown, where: string, insideComponent: string | undefined): void => {
      if (Array.isArray(node)) return node.forEach((member, index) => walk(member, `${where}/${index}`, insideComponent));
      if (node === null || typeof node !== 'object') return;
      const { title, $ref: reference } = node as { title?: unknown; $ref?: unknown };
      if (typeof title === 'string' && componentSchemas.has(title) && title !== insideComponent) inline.push(`${where}: ${title}`);
      if (typeof reference === 'string') referenced.add(reference.replace('#/components/schemas/', ''));
      for (const [key, member] of Object.entries(node)) if (key !== 'examples' && key !== 'example') walk(member, `${where}/${key}`, undefined);
    };
    walk(document.paths, '#/paths', undefined);
    for (const [name, schema] of Object.entries(schemas)) walk(schema, `#/components/schemas/${name}`, name);
    expect(inline).toEqual([]);
    expect([...referenced].filter((name) => schemas[name] === undefined)).toEqual([]);
    expect(Object.keys(schemas).filter((name) => !referenced.has(name))).toEqual([]);
  });

  it('names the server the document was read from, or SVC_PUBLIC_URL when it is set', async () => {
    const read = await app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'api.example.test:8443' } });
    expect(read.json().servers).toEqual([{ url: 'http://api.example.test:8443' }]);
    const configured = await buildTestApp(database.connection, { appOptions: { publicBaseUrl: 'https://svc.example.com' } });
    try {
      const answer = await configured.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'internal:8080' } });
      expect(answer.json().servers).toEqual([{ url: 'https://svc.example.com' }]);
    } finally {
      await configured.close();
    }
  });

  it('documents GET and DELETE /mcp: always 405 with `Allow: POST`, and why', () => {
    const operations = document.paths['/mcp']!;
    for (const method of ['get', 'delete']) {
      const operation = operations[method]! as Operation & { summary: string; description: string };
      expect(operation.summary, method).toMatch(/not offered \(405\)/);
      expect(operation.description).toContain('stateless');
      const refused = operation.responses['405']! as { description: string; headers?: Record<string, { schema: unknown }>; content?: Record<string, unknown> };
      expect(refused.description).toMatch(/stateless.*POST each message/);
      expect(refused.headers?.['allow']?.schema).toMatchObject({ const: 'POST' });
      expect(refused.content?.['application/json']).toEqual({ schema: { $ref: '#/components/schemas/ErrorEnvelope405' } });
    }
    expect(operations['get']!['summary' as never]).not.toBe(operations['delete']!['summary' as never]);
  });

  it('tags each route with its surface and names the credentials that open it', () => {
    const intent = document.paths['/harbor/intents']!['post']!;
    expect(intent.tags).toEqual(['harbor']);
    expect(intent.security).toEqual([{ apiKey: [] }, { sessionToken: [] }]);
    expect(intent.parameters?.some((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key')).toBe(true);
    expect(document.paths['/healthz']!['get']!.security).toEqual([]);
    expect(document.paths['/healthz']!['get']!.tags).toEqual(['health']);
  });
});

describe('a client generated from the document', () => {
  it('type-checks the calls of the main flow (openapi-typescript, then tsc)', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-client-'));
    try {
      const ast = await openapiTS(structuredClone(document) as never);
      const declarations = astToString(ast);
      // One type per shared schema, which every operation's types refer to (not a copy per operation).
      expect(declarations.match(/^ {8}Intent: \{$/gm)).toHaveLength(1);
      expect(declarations).toContain('components["schemas"]["Intent"]');
      fs.writeFileSync(path.join(folder, 'api.d.ts'), declarations);
      fs.writeFileSync(path.join(folder, 'calls.ts'), clientCalls);
      fs.writeFileSync(path.join(folder, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true, types: [] },
        files: ['calls.ts'],
      }));
      const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');
      const run = await promisify(execFile)(process.execPath, [tsc, '-p', folder]).catch((error: { stdout: string }) => error);
      expect('stdout' in run ? run.stdout : '').toBe('');
      // The check can fail: a call the document does not allow is refused.
      fs.writeFileSync(path.join(folder, 'calls.ts'), `${clientCalls}\nexport const wrong: Intent = { object: 'list' };\n`);
      const refused = await promisify(execFile)(process.execPath, [tsc, '-p', folder]).then(() => undefined, (error: { stdout: string }) => error.stdout);
      expect(refused).toContain('calls.ts');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);
});

/** What a client in another code base writes against the generated types: the create → read flow. */
const clientCalls = `
import type { paths } from './api.js';
export type Intent = paths['/harbor/intents/{intent_id}']['get']['responses']['200']['content']['application/json'];
type CreateBody = paths['/harbor/intents']['post']['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never;
type IntentList = paths['/harbor/intents']['get']['responses']['200']['content']['application/json'];
type NotFound = paths['/harbor/intents/{intent_id}']['get']['responses']['404']['content']['application/json'];

export const body: CreateBody = {
  intent_id: '7f4c6c9e-8d4b-4b8e-9a39-0c4a4f7f6d11', principal_did: 'did:key:z6Mk', principal_pubkey: 'AAAA', principal_signature: 'AAAA',
  payee_did: 'did:key:z6Mk', payee_pubkey: 'AAAA', budget: {}, currency: 'usd', amount_cents: 500, evidence_schema: {},
  deadline: '2030-01-01T00:00:00Z', settlement_rail: 'x402_usdc_base', signing_version: 7, allowed_tools: ['search'],
};
export function stateOf(intent: Intent): 'open' | 'funded' | 'evidence_recorded' | 'released' | 'refunded' | 'resolved_split' { return intent.state; }
export function ids(list: IntentList): string[] { return list.data.map((intent) => intent.intent_id); }
export function codeOf(refusal: NotFound): string { return refusal.error.code; }
`;
