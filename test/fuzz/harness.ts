// The boundary fuzzer's harness, shared by the property test and `npm run fuzz`: the real app on a real database
// with every route listed as it registers, tenants with keys of every role, console sessions and a few real
// objects, one fast-check arbitrary of requests over all routes (the console's forms included), and the check every
// answer must pass.
import { randomBytes, randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { FastifyInstance, InjectOptions } from 'fastify';
import fc from 'fast-check';
import type pg from 'pg';
import { app as serviceApp } from '../../src/app.ts';
import { errorCatalogue, isErrorCode } from '../../src/errors/catalogue.ts';
import { inputPointerLengthMax } from '../../src/limits.ts';
import type { Role } from '../../src/credentials/roles.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
import { createTestTenant, LogCapture } from '../helpers/app.ts';
import { consoleSession, csrfCookie, type ConsoleSession } from '../helpers/console-session.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { consoleBody, consoleInput, consoleProbes, consoleQuery, type ConsoleInput } from './console.ts';
import {
  applyMutation, bodyEncoding, contentEncoding, hostileValue, mutation, padToLength, paramChoice, queryFor, schemaShapedString, toJsonText, valueFor,
  type BodyEncoding, type ContentEncoding, type Mutation, type ParamChoice,
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
  /** Rarely, a Content-Encoding on the body (and the body coded so, or not). */
  readonly contentEncoding: ContentEncoding;
  /** For a console route: its form, query and CSRF token, in place of the schema-derived parts. */
  readonly console: ConsoleInput | null;
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
  /** The Content-Encoding the request's body was labelled with, if any. */
  readonly contentEncoding: string | undefined;
}

export interface Harness {
  readonly routes: readonly FuzzRoute[];
  readonly requests: fc.Arbitrary<GeneratedRequest>;
  /** The same kind of request, enumerated rather than drawn: every string field of every body at its limit with a
   * character of each class that grows or that a CHECK refuses, and every console form in every shape. */
  readonly probes: readonly GeneratedRequest[];
  send(request: GeneratedRequest): Promise<Exchange>;
  /** Error log lines written since the last call (the cause of a 5xx). */
  takeErrorLogs(): string;
  close(): Promise<void>;
}

/** Response fields whose values are ids a path parameter of the same name takes. */
const idFields: Record<string, string> = { key_id: 'key_id', intent_id: 'intent_id', job_id: 'job_id', decision_id: 'decision_id', id: 'id' };
const poolSizeMax = 64;
/** An error answer larger than this echoes too much of a hostile request (a body holds up to 1 MB). */
export const errorAnswerBytesMax = 64 * 1024;
/** Console sessions are signed in again after this long: a session JWT lives 15 minutes, a long run longer. */
const consoleSessionRenewMs = 10 * 60_000;

/** Console routes are HTML forms behind a session cookie and a CSRF token, described by no JSON schema. */
export const isConsoleRoute = (route: Pick<FuzzRoute, 'url'>): boolean => route.url === '/console' || route.url.startsWith('/console/');

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
  // With a secrets key, as a deployment that stores rail and webhook secrets has one (docs/operations.md): the routes
  // that seal a secret are exercised, not refused for the missing key.
  await instance.register(serviceApp, {
    connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true, rateLimit: { perCredential: 1e9, perAddress: 1e9 },
    secretsKey: randomBytes(32).toString('base64'),
  });
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
  const sessions = consoleSessions(instance, connection, sandbox.tenantId);

  return {
    routes,
    requests,
    probes: limitProbes(routes),
    async send(request) {
      const route = routes[request.route]!;
      const method = request.method ?? route.method;
      const parts = request.console === null
        ? apiRequestParts(route, request, credentials, pool)
        : consoleRequestParts(route, request, request.console, await sessions.pick(request.credential), pool);
      const headers: Record<string, string> = { ...parts.headers };
      if (parts.contentType !== undefined) headers['content-type'] = parts.contentType;
      if (request.idempotencyKey !== null) headers['idempotency-key'] = request.idempotencyKey;
      const body = parts.body === undefined ? undefined : encodeContent(parts.body, request.contentEncoding, headers);
      const response = await instance.inject({ method: method as InjectOptions['method'], url: parts.url, headers, ...(body === undefined ? {} : { payload: body }) });
      if (response.statusCode < 300 && response.headers['content-type']?.toString().includes('json')) harvest(safeJson(response.body));
      return {
        method, url: parts.url, credential: parts.credentialName, contentType: parts.contentType, body,
        status: response.statusCode, answer: response.body, headers: response.headers, contentEncoding: headers['content-encoding'],
      };
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
  const forConsole = isConsoleRoute(route);
  const base = forConsole ? fc.constant(null) : signedBodies ? fc.oneof(valueFor(route.schema.body), signedBodies) : valueFor(route.schema.body);
  return fc.record({
    params: fc.tuple(...paramNames.map((name) => paramChoice(route.schema.params?.properties?.[name]))),
    query: forConsole ? fc.constant('') : fc.oneof(fc.constant(''), queryFor(route.schema.querystring)),
    base,
    mutation: forConsole ? fc.constant({ kind: 'none' } as const) : mutation,
    encoding: bodyEncoding,
    // For the console: 0 is an admin's session, 1 an auditor's, 2 none.
    credential: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }),
    // fc.option gives null once in `freq` draws: half of the requests carry a key.
    idempotencyKey: fc.option(fc.oneof(fc.uuid(), fc.string({ maxLength: 300, unit: 'grapheme-ascii' })), { freq: 2 }),
    method: fc.oneof(
      { weight: 19, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
    ),
    contentEncoding,
    console: forConsole ? consoleInput : fc.constant(null),
  });
}

interface RequestParts {
  readonly url: string;
  readonly credentialName: string;
  readonly headers: Record<string, string>;
  readonly contentType: string | undefined;
  readonly body: string | Buffer | undefined;
}

function apiRequestParts(route: FuzzRoute, request: GeneratedRequest, credentials: ReadonlyArray<[string, string | undefined]>, pool: ReadonlyMap<string, string[]>): RequestParts {
  const [credentialName, credential] = credentials[request.credential % credentials.length]!;
  const { body, contentType } = materializeBody(route, request);
  const headers: Record<string, string> = credential === undefined ? {} : { authorization: `Bearer ${credential}` };
  return { url: materializeUrl(route, request, pool), credentialName, headers, contentType, body };
}

function consoleRequestParts(route: FuzzRoute, request: GeneratedRequest, input: ConsoleInput, session: [string, ConsoleSession], pool: ReadonlyMap<string, string[]>): RequestParts {
  const [credentialName, { cookie, csrfToken }] = session;
  const path = materializeUrl(route, { ...request, query: '' }, pool);
  const query = consoleQuery(input);
  const url = query === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${query}`;
  const headers: Record<string, string> = { cookie, ...(input.csrf === 'header' ? { 'x-csrf-token': csrfToken } : {}) };
  const method = request.method ?? route.method;
  if (method === 'GET' || method === 'HEAD' || request.encoding.kind === 'none') return { url, credentialName, headers, contentType: undefined, body: undefined };
  if (request.encoding.kind === 'bytes') return { url, credentialName, headers, contentType: request.encoding.contentType, body: Buffer.from(request.encoding.bytes) };
  const { body, contentType } = consoleBody(input, csrfToken);
  return { url, credentialName, headers, contentType, body };
}

/** The body as the Content-Encoding header (set here) says, compressed so when the request says it really is. */
function encodeContent(body: string | Buffer, encoding: ContentEncoding, headers: Record<string, string>): string | Buffer {
  if (encoding === null) return body;
  headers['content-encoding'] = encoding.coding;
  if (!encoding.compressed) return body;
  const coding = encoding.coding.toLowerCase();
  if (coding.includes('gzip')) return gzipSync(body);
  if (coding.includes('br')) return brotliCompressSync(body);
  if (coding.includes('deflate')) return deflateSync(body);
  return body;
}

/** The console's visitors: an admin and an auditor signed in (again, before their session would end), and a browser
 * with no session; each has a CSRF cookie and token. */
function consoleSessions(instance: FastifyInstance, connection: pg.PoolConfig, tenantId: string) {
  const signedIn = new Map<Role, { session: ConsoleSession; atMs: number }>();
  const visitor = csrfCookie();
  const sessionOf = async (role: Role): Promise<ConsoleSession> => {
    const current = signedIn.get(role);
    if (current && Date.now() - current.atMs < consoleSessionRenewMs) return current.session;
    const session = await consoleSession(instance, connection, tenantId, role);
    signedIn.set(role, { session, atMs: Date.now() });
    return session;
  };
  return {
    async pick(credential: number): Promise<[string, ConsoleSession]> {
      const choice = credential % 3;
      if (choice === 0) return ['console admin', await sessionOf('admin')];
      if (choice === 1) return ['console auditor', await sessionOf('auditor')];
      return ['console visitor', visitor];
    },
  };
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

/** One character of each class that grows when lowercased, uppercased or normalised, or that a CHECK refuses, or
 * that JavaScript and Postgres count or trim differently. */
const probeCharacters = ['\u0130', 'ß', '\ufb03', '\ufdfa', '\u0344', '\u0085', '\u{1f600}', '\u3000', '\u202e'];
/** The characters also sent alone, repeated to the limit. */
const repeatedProbeCharacters = ['\u0130', '\u0085'];
const probeLengthMax = 4_096;

/** Every string reachable in a schema through properties and array items, with its path from the root. */
function stringFields(schema: unknown, path: Array<string | number> = [], depth = 0): Array<{ path: Array<string | number>; schema: Record<string, unknown> }> {
  if (schema === null || typeof schema !== 'object' || depth > 5) return [];
  const node = schema as Record<string, unknown>;
  const types = [node.type].flat();
  if (types.includes('string') && node.const === undefined && node.enum === undefined) return [{ path, schema: node }];
  const found = Object.entries((node.properties ?? {}) as Record<string, unknown>).flatMap(([key, child]) => stringFields(child, [...path, key], depth + 1));
  if (node.items !== undefined) found.push(...stringFields(node.items, [...path, 0], depth + 1));
  for (const choice of [(node.oneOf ?? node.anyOf ?? []) as unknown[]].flat()) found.push(...stringFields(choice, path, depth + 1));
  return found;
}

/** A copy of `value` with `leaf` at `path`, creating the objects and arrays on the way. */
function withValueAt(value: unknown, path: ReadonlyArray<string | number>, leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = withValueAt(list[head], rest, leaf);
    return list;
  }
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : {};
  object[head!] = withValueAt(object[head!], rest, leaf);
  return object;
}

const probeRequest = (route: number, params: number, part: Partial<GeneratedRequest>): GeneratedRequest => ({
  route, params: Array.from({ length: params }, () => ({ kind: 'real', index: 0 }) as const), query: '', base: null, mutation: { kind: 'none' },
  encoding: { kind: 'json', contentType: 'application/json' }, credential: 0, idempotencyKey: null, method: null, contentEncoding: null, console: null, ...part,
});

/** Every string field of every route's body at its limit, every body with an oversized key and in a content coding,
 * and every console form sent with troublesome text in every field, as text (urlencoded) and as other JSON values. */
function limitProbes(routes: readonly FuzzRoute[]): GeneratedRequest[] {
  const probes: GeneratedRequest[] = [];
  routes.forEach((route, index) => {
    const params = [...route.url.matchAll(/:(\w+)/g)].length;
    if (isConsoleRoute(route)) {
      if (route.method === 'POST') probes.push(...consoleProbes().map((input) => probeRequest(index, params, { console: input })));
      return;
    }
    if (route.schema.body === undefined) return;
    const [base] = fc.sample(valueFor(route.schema.body), { numRuns: 1, seed: 1 });
    for (const field of stringFields(route.schema.body)) {
      const limit = Math.min(typeof field.schema.maxLength === 'number' ? field.schema.maxLength : 256, probeLengthMax);
      const [sample = ''] = fc.sample(schemaShapedString(field.schema), { numRuns: 1, seed: 1 });
      const values = [
        ...probeCharacters.map((character) => padToLength(sample, character, limit, 'before')),
        ...repeatedProbeCharacters.map((character) => character.repeat(limit)),
      ];
      for (const value of values) probes.push(probeRequest(index, params, { base: withValueAt(base, field.path, value) }));
    }
    // A key of 500 KB (a refusal must not echo it whole), and the body labelled with codings none of which is decoded.
    const object = base !== null && typeof base === 'object' && !Array.isArray(base) ? base : {};
    probes.push(probeRequest(index, params, { base: { ...object, [oversizedKey]: 1 } }));
    for (const coding of [{ coding: 'br', compressed: false }, { coding: 'gzip', compressed: true }]) probes.push(probeRequest(index, params, { base, contentEncoding: coding }));
  });
  return probes;
}

const oversizedKey = 'k'.repeat(500_000);

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

/** What is wrong with an answer, or undefined: no 5xx; no content-coded body taken; every error in our envelope with
 * a catalogue code of its status (402 handshakes excepted: a rail may answer them as problem+json), at most 64 KiB,
 * and echoing no pointer longer than the boundary's cut. */
export function problemWith(exchange: Exchange): string | undefined {
  if (exchange.status >= 500) return `answered ${exchange.status}`;
  if (exchange.status < 400 && readCodedBody(exchange)) return `a body labelled Content-Encoding: ${exchange.contentEncoding} was taken as if it were not coded`;
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
  if (Buffer.byteLength(exchange.answer) > errorAnswerBytesMax) return `an error answer of ${Buffer.byteLength(exchange.answer)} bytes: it echoes too much of the request`;
  // The device token route answers in RFC 8628's OAuth shape, with our catalogue code beside it (docs/decisions.md).
  const oauth = body as { error?: unknown; error_description?: unknown; code?: unknown; request_id?: unknown } | undefined;
  if (exchange.url.startsWith('/v1/public/auth/device/token') && typeof oauth?.error === 'string') {
    const oauthCode = oauth.code;
    if (typeof oauthCode !== 'string' || !isErrorCode(oauthCode)) return `a device token refusal without a catalogue code: ${exchange.answer.slice(0, 200)}`;
    if (errorCatalogue[oauthCode].status !== exchange.status) return `${oauthCode} answered with status ${exchange.status}`;
    if (typeof oauth.error_description !== 'string') return 'a device token refusal without a description';
    return oauth.request_id === exchange.headers['x-request-id'] ? undefined : 'request_id differs from the x-request-id header';
  }
  const envelope = body as { error?: { code?: unknown; message?: unknown; details?: unknown }; request_id?: unknown } | undefined;
  const code = envelope?.error?.code;
  if (typeof code !== 'string' || !isErrorCode(code)) return `an error answer without a catalogue code: ${exchange.answer.slice(0, 200)}`;
  if (errorCatalogue[code].status !== exchange.status) return `${code} answered with status ${exchange.status}`;
  if (typeof envelope?.error?.message !== 'string') return 'an error answer without a message';
  const longPath = echoedPaths(envelope.error).find((path) => path.length > inputPointerLengthMax + 1);
  if (longPath !== undefined) return `an error answer echoing a path of ${longPath.length} characters`;
  if (envelope?.request_id !== exchange.headers['x-request-id']) return 'request_id differs from the x-request-id header';
  return undefined;
}

/** Whether the request had a body in a content coding other than identity (none is decoded, so none may be read). */
function readCodedBody(exchange: Exchange): boolean {
  const codings = (exchange.contentEncoding ?? '').split(',').map((token) => token.trim().toLowerCase()).filter((token) => token !== '');
  const coded = codings.some((token) => token !== 'identity');
  const bodyRead = exchange.body !== undefined && exchange.body.length > 0 && !['GET', 'HEAD'].includes(exchange.method);
  return coded && bodyRead;
}

/** The JSON pointers an error answer echoes: `details.path` and each `details.fields[].path`. */
function echoedPaths(error: { details?: unknown }): string[] {
  const details = (error.details ?? {}) as { path?: unknown; fields?: unknown };
  const fields = Array.isArray(details.fields) ? (details.fields as Array<{ path?: unknown }>) : [];
  return [details.path, ...fields.map((field) => field.path)].filter((path): path is string => typeof path === 'string');
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
