// The API's description of itself (docs/api.md): the OpenAPI 3.1 document generated from the route contracts
// (`GET /openapi.json`), and a reference page rendering it (`GET /docs`), served from the process with no CDN.
// Tags per surface and security schemes are derived here from each route's URL and `config.access`, once, so that
// no route restates them; the named contracts are hoisted into components.schemas, and `servers` names this service.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyPlugin from 'fastify-plugin';
import fastifySwagger from '@fastify/swagger';
import scalarReference from '@scalar/fastify-api-reference';
import { bodyErrorStatuses, ErrorEnvelope, OpenObject, publicErrors } from '../contracts/common.ts';
import { componentSchemas } from '../contracts/components.ts';
import { publicBaseUrlOf } from '../config.ts';
import { packageVersion } from '../infra/package-version.ts';
import { hoistNamedSchemas } from './openapi-components.ts';
import type { RouteAccess } from '../plugins/access.ts';

/** The contracts the document names in components.schemas (src/contracts/components.ts). */
const componentNames: ReadonlySet<string> = new Set(componentSchemas.keys());

export const openApiPath = '/openapi.json';
export const referencePagePath = '/docs';

/** The routes @scalar/fastify-api-reference adds for the page (the page, its slash-less redirect, its script), which
 * carry no `config.access` of their own. Listed exactly, so that no other route can become public by its prefix. */
export const referencePageRoutes: readonly string[] = [referencePagePath, `${referencePagePath}/`, `${referencePagePath}/js/scalar.js`];

/** The copies of the document the plugin also offers under its prefix. They are not registered: the page reads the
 * one public document at `openApiPath`, and a second copy would be a second thing to keep right. */
const declinedReferenceRoutes: readonly string[] = [`${referencePagePath}/openapi.json`, `${referencePagePath}/openapi.yaml`];

/** Registers the reference page: @scalar/fastify-api-reference adds its routes without a `config.access`, so inside
 * this plugin's own context each route it adds is declared public as it is added — only its routes, whose paths
 * are checked against `referencePageRoutes`. */
async function referencePage(page: FastifyInstance): Promise<void> {
  const route = page.route.bind(page);
  page.route = ((options: RouteOptions) => {
    if (declinedReferenceRoutes.includes(options.url)) return page;
    if (!referencePageRoutes.includes(options.url)) throw new Error(`the reference page adds ${options.url}, which is not one of its known routes`);
    return route({ ...options, config: { ...options.config, access: { public: true } } });
  }) as typeof page.route;
  await page.register(scalarReference, {
    routePrefix: referencePagePath,
    // The page reads the document from its public route, not from a copy of its own.
    // Nothing that calls out: no web fonts from the vendor's host, no AI agent, no telemetry, no developer toolbar.
    configuration: {
      url: openApiPath,
      pageTitle: 'svc-settlement API reference',
      withDefaultFonts: false,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      hideClientButton: true,
      telemetry: false,
      defaultOpenAllTags: true,
    },
  });
}

/** The surface a path belongs to, by its first segment: the OpenAPI tag the route is listed under. */
const tagsBySegment: Record<string, string> = {
  harbor: 'harbor',
  console: 'console',
  mcp: 'mcp',
  healthz: 'health',
  readyz: 'health',
  metrics: 'operations',
  reputation: 'standing',
  signal: 'standing',
  'openapi.json': 'reference',
  docs: 'reference',
  'favicon.ico': 'console',
};
export const surfaceTags = [
  { name: 'gateway', description: 'Tenants, keys, policies, protocol v2 artifacts, sign-in (docs/architecture.md).' },
  { name: 'harbor', description: 'The transaction engine: intents, funding, evidence, settlement, ledger (docs/engine.md).' },
  { name: 'standing', description: 'Operator standing: reputation and signed portfolio exports (docs/standing.md).' },
  { name: 'mcp', description: 'The MCP endpoint (docs/mcp.md).' },
  { name: 'console', description: 'The operator console: HTML pages and forms (docs/console.md).' },
  { name: 'health', description: 'Liveness and readiness.' },
  { name: 'operations', description: 'Metrics for the operator.' },
  { name: 'reference', description: 'This document and its reference page.' },
];

export function surfaceTagOf(url: string): string {
  return tagsBySegment[url.split('/')[1] ?? ''] ?? 'gateway';
}

/** Which credentials open a route, as OpenAPI security requirements; `[]` for a public route. */
function securityOf(access: RouteAccess | undefined): Record<string, string[]>[] {
  if (access === undefined || 'public' in access) return [];
  if ('download' in access) return [{ downloadToken: [] }];
  return [{ apiKey: [] }, { sessionToken: [] }];
}

/** The route's access, in words, for the operation's description (docs/roles.md has the table). */
function accessNote(access: RouteAccess | undefined): string {
  if (access === undefined || 'public' in access) return 'Public.';
  if ('download' in access) return 'Only a download token for this job.';
  const scope = access.scope === undefined ? 'restricted keys may not call it' : access.scope === 'any' ? 'any restricted key' : `restricted keys need \`${access.scope}\``;
  return `Roles: ${access.roles.join(', ')}; ${scope}.`;
}

const securitySchemes = {
  apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_…', description: 'An API key (`svc_…`; restricted keys `svc_rk_…`) in `Authorization: Bearer` (docs/roles.md).' },
  sessionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A session token from sign-in or device login (docs/sign-in.md).' },
  downloadToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A download token of one audit export job (docs/audit-exports.md).' },
} as const;

/** The methods whose requests Fastify parses a body of. */
const bodyMethods: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Registered before the surfaces: @fastify/swagger collects routes as they are added. */
export const openApiDocument = fastifyPlugin(
  async (app: FastifyInstance) => {
    // Fastify reads a body on these methods before any route runs, so every such route can answer 408 (too slow),
    // 413 (too large) and 415 (not JSON), whether or not it takes a body: declared here once, for the document and
    // the validator.
    app.addHook('onRoute', (route) => {
      const responses = route.schema?.response as Record<string, unknown> | undefined;
      if (responses === undefined || responses['4xx'] !== undefined || responses['4XX'] !== undefined) return;
      if (![route.method].flat().some((method) => bodyMethods.has(method))) return;
      for (const status of bodyErrorStatuses) responses[String(status)] ??= ErrorEnvelope(status);
    });
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'svc-settlement API',
          version: packageVersion,
          description: 'Settlement for AI agents\' delegated spend: escrow, signed release rules, a signed and verifiable ledger. Errors answer `{error:{code,message,details?},request_id}` (docs/errors.md).',
          license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        },
        tags: surfaceTags,
        components: { securitySchemes },
      },
      // The named contracts once, in components.schemas, referred to from every operation (docs/api.md#components).
      transformObject: (documentObject) => hoistNamedSchemas((documentObject as { openapiObject: Record<string, unknown> }).openapiObject, componentNames),
      transform: ({ schema, url, route }) => {
        const access = route.config?.access;
        const declared = (schema ?? {}) as Record<string, unknown>;
        const description = [declared['description'], accessNote(access)].filter((text) => typeof text === 'string').join('\n\n');
        return {
          url,
          schema: { ...declared, tags: [surfaceTagOf(url)], security: securityOf(access), description } as typeof schema,
        };
      },
    });
  },
  { name: 'openapi-document', dependencies: ['access'] },
);

export async function referenceRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    openApiPath,
    {
      config: { access: { public: true } },
      schema: { summary: 'This API as an OpenAPI 3.1 document', response: { 200: OpenObject('The OpenAPI 3.1 document.'), ...publicErrors() } },
    },
    // The document is built once; the server it names is the one this request reached, or SVC_PUBLIC_URL.
    async (request) => ({ ...app.swagger(), servers: [{ url: publicBaseUrlOf(app.publicBaseUrl, request) }] }),
  );
  await app.register(referencePage);
}
