// The boundary fuzzer's harness, shared by the property test and `npm run fuzz`: the real app on a real database
// with every route listed as it registers, tenants with keys of every role and a few real objects, one fast-check
// arbitrary of requests over all routes, and the check every answer must pass.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import fc from 'fast-check';
import type pg from 'pg';
import { app as serviceApp } from '../../src/app.ts';
import { errorCatalogue, isErrorCode } from '../../src/errors/catalogue.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
import { createTestTenant, LogCapture } from '../helpers/app.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import {
  applyMutation, bodyEncoding, hostileValue, mutation, paramChoice, queryFor, toJsonText, valueFor,
  type BodyEncoding, type Mutation, type ParamChoice,
} from './generate.ts';

export interface FuzzRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: { readonly body?: unknown; readonly params?: { properties?: Record<string, unknown> }; readonly querystring?: unknown };
}

/** One generated request, as plain data so fast-check can print and shrink it. */
export interface GeneratedRequest {
  readonly route: number;
  readonly params: readonly ParamChoice[];
  readonly query: string;
  readonly base: unknown;
  readonly mutation: Mutation;
  readonly encoding: BodyEncoding;
  readonly credential: number;
  readonly idempotencyKey: string | null;
  /** Sometimes another method than the route's, for the 405 path. */
  readonly method: string | null;
}

export interface Exchange {
  readonly method: string;
  readonly url: string;
  readonly credential: string;
  readonly contentType: string | undefined;
  readonly body: string | Buffer | undefined;
  readonly status: number;
  readonly answer: string;
  readonly headers: Record<string, unknown>;
}

export interface Harness {
  readonly routes: readonly FuzzRoute[];
  readonly requests: fc.Arbitrary<GeneratedRequest>;
  send(request: GeneratedRequest): Promise<Exchange>;
  /** Error log lines written since the last call (the cause of a 5xx). */
  takeErrorLogs(): string;
  close(): Promise<void>;
}

/** Response fields whose values are ids a path parameter of the same name takes. */
const idFields: Record<string, string> = { key_id: 'key_id', intent_id: 'intent_id', job_id: 'job_id', decision_id: 'decision_id', id: 'id' };
const poolSizeMax = 64;

export async function startHarness(connection: pg.PoolConfig): Promise<Harness> {
  const logs = new LogCapture();
  const routes: FuzzRoute[] = [];
  const instance: FastifyInstance = createFastify(createLogger('error', logs));
  instance.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, schema: (route.schema ?? {}) as FuzzRoute['schema'] });
    }
  });
  // Rate limits would turn most of a run into 429s; they have their own tests.
  await instance.register(serviceApp, { connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true, rateLimit: { perCredential: 1e9, perAddress: 1e9 } });
  await instance.ready();
  routes.sort((left, right) => `${left.url} ${left.method}`.localeCompare(`${right.url} ${right.method}`));

  const sandbox = await createTestTenant(connection, 'sandbox');
  const live = await createTestTenant(connection, 'live');
  const credentials: Array<[string, string | undefined]> = [
    ['sandbox admin', sandbox.adminKey],
    ['sandbox operator', await sandbox.key('operator')],
    ['sandbox agent', await sandbox.key('agent')],
    ['sandbox auditor', await sandbox.key('auditor')],
    ['live admin', live.adminKey],
    ['none', undefined],
  ];

  // The fuzzer's own keys stay out of the pool: a DELETE of one would turn the rest of the run into 401s.
  const ownKeyIds = new Set(credentials.map(([, key]) => (key === undefined ? '' : `key_${key.split('_')[3]}`)));
  const pool = new Map<string, string[]>();
  const harvest = (value: unknown, depth = 0): void => {
    if (value === null || typeof value !== 'object' || depth > 4) return;
    for (const [key, child] of Object.entries(value)) {
      const name = idFields[key];
      if (name !== undefined && typeof child === 'string') {
        if (ownKeyIds.has(child)) continue;
        const ids = pool.get(name) ?? [];
        if (!ids.includes(child)) ids.push(child);
        if (ids.length > poolSizeMax) ids.shift();
        pool.set(name, ids);
      } else harvest(child, depth + 1);
    }
  };

  const examples = await seedObjects(instance, sandbox.tenantId, sandbox.adminKey, harvest);
  const routeArbitraries = routes.map((route) => routeRequest(route, examples.get(`${route.method} ${route.url}`)));
  const requests = fc.nat({ max: routes.length - 1 }).chain((index) => routeArbitraries[index]!.map((request) => ({ ...request, route: index })));

  return {
    routes,
    requests,
    async send(request) {
      const route = routes[request.route]!;
      const [credentialName, credential] = credentials[request.credential % credentials.length]!;
      const url = materializeUrl(route, request, pool);
      const { body, contentType } = materializeBody(route, request);
      const headers: Record<string, string> = {};
      if (credential !== undefined) headers.authorization = `Bearer ${credential}`;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (request.idempotencyKey !== null) headers['idempotency-key'] = request.idempotencyKey;
      const method = request.method ?? route.method;
      const response = await instance.inject({ method: method as InjectOptions['method'], url, headers, ...(body === undefined ? {} : { payload: body }) });
      if (response.statusCode < 300 && response.headers['content-type']?.toString().includes('json')) harvest(safeJson(response.body));
      return { method, url, credential: credentialName, contentType, body, status: response.statusCode, answer: response.body, headers: response.headers };
    },
    takeErrorLogs() {
      const text = logs.text;
      logs.lines.length = 0;
      return text;
    },
    async close() {
      await instance.close();
    },
  };
}

function routeRequest(route: FuzzRoute, signedBodies: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<Omit<GeneratedRequest, 'route'>> {
  const paramNames = [...route.url.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  const base = signedBodies ? fc.oneof(valueFor(route.schema.body), signedBodies) : valueFor(route.schema.body);
  return fc.record({
    params: fc.tuple(...paramNames.map((name) => paramChoice(route.schema.params?.properties?.[name]))),
    query: fc.oneof(fc.constant(''), queryFor(route.schema.querystring)),
    base,
    mutation,
    encoding: bodyEncoding,
    credential: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }),
    // fc.option gives null once in `freq` draws: half of the requests carry a key.
    idempotencyKey: fc.option(fc.oneof(fc.uuid(), fc.string({ maxLength: 300, unit: 'grapheme-ascii' })), { freq: 2 }),
    method: fc.oneof(
      { weight: 19, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
    ),
  });
}

function materializeUrl(route: FuzzRoute, request: GeneratedRequest, pool: ReadonlyMap<string, string[]>): string {
  let index = 0;
  const path = route.url.replace(/:(\w+)/g, (_match, name: string) => {
    const choice = request.params[index++]!;
    if (choice.kind === 'raw') return choice.text;
    if (choice.kind === 'real') {
      const ids = pool.get(name) ?? [];
      return encodeURIComponent(ids.length === 0 ? 'none' : ids[choice.index % ids.length]!);
    }
    return encodeURIComponent(wellFormed(choice.text));
  });
  return request.query === '' ? path : `${path}?${request.query}`;
}

function materializeBody(route: FuzzRoute, request: GeneratedRequest): { body: string | Buffer | undefined; contentType: string | undefined } {
  if (route.method === 'GET' || request.method === 'GET' || request.method === 'HEAD' || request.encoding.kind === 'none') return { body: undefined, contentType: undefined };
  if (request.encoding.kind === 'bytes') return { body: Buffer.from(request.encoding.bytes), contentType: request.encoding.contentType };
  return { body: toJsonText(applyMutation(request.base, request.mutation)), contentType: request.encoding.contentType };
}

/** encodeURIComponent throws on a lone surrogate; the fuzzer sends U+0000 in parameters instead (raw %ED%A0%80
 * covers the encoded surrogate). */
const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What is wrong with an answer, or undefined: no 5xx, and every error in our envelope with a catalogue code of its
 * status (402 handshakes excepted: a rail may answer them as problem+json). */
export function problemWith(exchange: Exchange): string | undefined {
  if (exchange.status >= 500) return `answered ${exchange.status}`;
  if (exchange.status === 405 && !exchange.headers.allow) return '405 without an Allow header';
  // A HEAD answer has the status and headers of GET, and no body to check.
  if (exchange.method === 'HEAD') return undefined;
  // The console is a browser surface: its refusals are HTML pages in words (docs/console.md), not the envelope.
  if (exchange.url.startsWith('/console') && String(exchange.headers['content-type'] ?? '').startsWith('text/html')) {
    return exchange.answer.toLowerCase().startsWith('<!doctype html>') ? undefined : 'a console answer that is not an HTML page';
  }
  const body = exchange.answer === '' ? undefined : safeJson(exchange.answer);
  if (exchange.status < 400) {
    const isJson = String(exchange.headers['content-type'] ?? '').includes('json');
    return isJson && body === undefined ? 'a success answer that is not JSON' : undefined;
  }
  if (exchange.status === 402) return undefined;
  // The device token route answers in RFC 8628's OAuth shape, with our catalogue code beside it (docs/decisions.md).
  const oauth = body as { error?: unknown; error_description?: unknown; code?: unknown; request_id?: unknown } | undefined;
  if (exchange.url.startsWith('/v1/public/auth/device/token') && typeof oauth?.error === 'string') {
    const oauthCode = oauth.code;
    if (typeof oauthCode !== 'string' || !isErrorCode(oauthCode)) return `a device token refusal without a catalogue code: ${exchange.answer.slice(0, 200)}`;
    if (errorCatalogue[oauthCode].status !== exchange.status) return `${oauthCode} answered with status ${exchange.status}`;
    if (typeof oauth.error_description !== 'string') return 'a device token refusal without a description';
    return oauth.request_id === exchange.headers['x-request-id'] ? undefined : 'request_id differs from the x-request-id header';
  }
  const envelope = body as { error?: { code?: unknown; message?: unknown }; request_id?: unknown } | undefined;
  const code = envelope?.error?.code;
  if (typeof code !== 'string' || !isErrorCode(code)) return `an error answer without a catalogue code: ${exchange.answer.slice(0, 200)}`;
  if (errorCatalogue[code].status !== exchange.status) return `${code} answered with status ${exchange.status}`;
  if (typeof envelope?.error?.message !== 'string') return 'an error answer without a message';
  if (envelope?.request_id !== exchange.headers['x-request-id']) return 'request_id differs from the x-request-id header';
  return undefined;
}

/** A failing exchange in a form that can be replayed by hand. */
export function describeExchange(exchange: Exchange): string {
  const body = exchange.body === undefined ? '(none)'
    : Buffer.isBuffer(exchange.body) ? `bytes ${exchange.body.toString('hex').slice(0, 200)}`
    : `${JSON.stringify(exchange.body.slice(0, 400))}${exchange.body.length > 400 ? ` … (${exchange.body.length} characters)` : ''}`;
  return [
    `${exchange.method} ${exchange.url.slice(0, 400)} as ${exchange.credential}`,
    `content-type: ${exchange.contentType ?? '(none)'}`,
    `body: ${body}`,
    `answer ${exchange.status}: ${exchange.answer.slice(0, 400)}`,
  ].join('\n');
}

/** A few real objects of the sandbox tenant, so path parameters sometimes name something that exists; and, for the
 * routes whose schema alone says little (intent creation, evidence), bodies signed over a hostile value, so that
 * the value passes the signature check and reaches the code behind it. */
async function seedObjects(
  instance: FastifyInstance,
  tenantId: string,
  adminKey: string,
  harvest: (value: unknown) => void,
): Promise<Map<string, fc.Arbitrary<unknown>>> {
  const post = async (url: string, payload: Record<string, unknown>) => {
    const response = await instance.inject({ method: 'POST', url, headers: { authorization: `Bearer ${adminKey}` }, payload });
    if (response.statusCode >= 300) throw new Error(`seeding ${url} answered ${response.statusCode}: ${response.body}`);
    harvest(response.json());
    return response.json() as Record<string, unknown>;
  };
  const principal = party('did:example:fuzz-principal');
  const payee = party('did:example:fuzz-payee');
  const intentBodies = [0, 1].map(() => signedCreateBody({ tenantId, principal, payee, intentId: randomUUID() }));
  for (const body of intentBodies) await post('/harbor/intents', body);
  const intentId = intentBodies[0]!.intent_id as string;
  const evidence = signedEvidenceBody({ tenantId, intentId, payee, payload: { status: 'completed', cost_cents: 100 } });
  await post('/v1/admin/api-keys', { role: 'agent', name: 'fuzz' });
  await post('/v1/registry/keys', { kind: 'agent', subject: 'fuzz-agent', public_key_ed25519_hex: Buffer.from(party('did:example:fuzz-agent').signer.publicKey.bytes).toString('hex') });
  await post('/v1/compliance/audit-exports', {});
  const signedIntent = fc
    .tuple(fc.constantFrom(...signedIntentFields), fc.oneof(hostileValue, fc.jsonValue({ maxDepth: 3 })))
    .map(([[field, option], value]) => {
      const valid = signedCreateBody({ tenantId, principal, payee, intentId: randomUUID() });
      try {
        return signedCreateBody({ tenantId, principal, payee, intentId: randomUUID(), [option]: value });
      } catch {
        // The value has no signed form (bincode refuses it): sent unsigned in place of the valid one.
        return { ...valid, [field]: value };
      }
    });
  const signedEvidence = fc.oneof(hostileValue, fc.jsonValue({ maxDepth: 4 }), fc.dictionary(fc.string({ maxLength: 8 }), hostileValue, { maxKeys: 3 }))
    .map((payload) => {
      try {
        return signedEvidenceBody({ tenantId, intentId, payee, payload });
      } catch {
        return { ...evidence, payload };
      }
    });
  return new Map<string, fc.Arbitrary<unknown>>([
    ['POST /harbor/intents', fc.oneof(fc.constantFrom(...intentBodies), signedIntent)],
    ['POST /harbor/intents/:intent_id/evidence', fc.oneof(fc.constant(evidence), signedEvidence)],
  ]);
}

/** Signed fields of an intent creation body and the signedCreateBody option that sets each. */
const signedIntentFields = [
  ['amount_cents', 'amountCents'], ['currency', 'currency'], ['deadline', 'deadline'], ['settlement_rail', 'settlementRail'],
  ['predicate_dsl', 'predicate'], ['evidence_schema', 'evidenceSchema'], ['allowed_tools', 'allowedTools'], ['intent_id', 'intentId'],
] as const;
