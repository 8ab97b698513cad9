// Runs one tool call as the HTTP request it stands for, through the app's own router (`app.inject`) with the
// caller's own Authorization header, and turns the answer into an MCP tool result. So every rule of the route
// (access, tenant scope, validation, recognition proofs, idempotency, error codes) applies unchanged; the rate limit
// counts the /mcp request that carries the call, once.
import type { FastifyInstance } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../../errors/service-error.ts';
import { registeredRails } from '../../rails/index.ts';
import type { ResolvedTool } from './resolved-tools.ts';
import type { HeaderArgumentSpec } from './tools.ts';

type Arguments = Record<string, unknown>;

interface ToolRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload: string | undefined;
}

/** The request a tool call stands for. Arguments that are not the tool's are refused here, as a route refuses an
 * unknown body field; the body itself is left to the route, which validates it as it validates any client's. */
export function toolRequest(tool: ResolvedTool, args: Arguments, authorization: string): ToolRequest {
  const headers: Record<string, string> = { authorization };
  if (tool.input === 'body') {
    return { url: tool.path, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(args) };
  }
  if (tool.input === 'query') {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(args)) {
      if (typeof value !== 'string' && typeof value !== 'number') throw invalidArgument(name, 'must be a string or a number');
      query.set(name, String(value));
    }
    const text = query.toString();
    return { url: text === '' ? tool.path : `${tool.path}?${text}`, headers, payload: undefined };
  }
  const known = new Set<string>([...tool.pathParameters, ...tool.headers, ...tool.bodyFieldArguments, ...(tool.method === 'POST' && tool.routeBodySchema ? ['body'] : [])]);
  for (const name of Object.keys(args)) if (!known.has(name)) throw invalidArgument(name, 'is not an argument of this tool');
  let url = tool.path;
  for (const name of tool.pathParameters) {
    const value = args[name];
    if (typeof value !== 'string' || value === '') throw invalidArgument(name, 'is required, as a string');
    url = url.replace(`:${name}`, encodeURIComponent(value));
  }
  for (const [name, argument] of Object.entries(tool.headerArguments)) {
    const value = args[name];
    if (value === undefined) continue;
    headers[argument.header] = headerValueOf(name, argument, value);
  }
  if (tool.method === 'GET') return { url, headers, payload: undefined };
  // Serialized once, here: the recognition proof and the idempotency fingerprint bind exactly these bytes. A route
  // without a body gets `{}`, as the HTTP clients send it.
  return { url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(bodyOf(tool, args)) };
}

/** A header argument's value: its text, or for a header that encodes a JSON object (a recognition proof), the
 * object as base64url of its JSON, as the public client encodes it. */
function headerValueOf(name: string, argument: HeaderArgumentSpec, value: unknown): string {
  if (typeof value === 'string') return value;
  const takesObject = argument.takesObject === true;
  if (takesObject && typeof value === 'object' && value !== null && !Array.isArray(value)) return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  throw invalidArgument(name, takesObject ? 'must be a string or a JSON object' : 'must be a string');
}

/** The body a POST tool sends: `body`, or the body's fields given as arguments of their own; not both. */
function bodyOf(tool: ResolvedTool, args: Arguments): unknown {
  const given = tool.bodyFieldArguments.filter((name) => args[name] !== undefined);
  if (given.length === 0) return args['body'] ?? {};
  if (args['body'] !== undefined) throw invalidArgument('body', `cannot be given with ${given.join(', ')}: send the body's fields inside body or as arguments, not both`);
  return Object.fromEntries(given.map((name) => [name, args[name]]));
}

function invalidArgument(name: string, reason: string): ServiceError {
  return new ServiceError('request.invalid', { message: `The argument ${name} ${reason}.`, details: { fields: [{ field: name, reason }] } });
}

/** Calls the route and maps its answer: 2xx → the body; 402 → the body with the challenge headers to answer;
 * an error envelope → a tool error carrying its code and message (and details, which never hold secrets). */
export async function dispatchTool(app: FastifyInstance, tool: ResolvedTool, args: Arguments, authorization: string): Promise<CallToolResult> {
  let request: ToolRequest;
  try {
    request = toolRequest(tool, args, authorization);
  } catch (error) {
    if (error instanceof ServiceError) return toolError({ code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) });
    throw error;
  }
  // The /mcp request that carries this call was counted against the credential's rate limit; the route it runs is
  // not counted a second time.
  const headers = { ...request.headers, ...app.alreadyCountedHeaders };
  const response = await app.inject({ method: tool.method, url: request.url, headers, ...(request.payload === undefined ? {} : { payload: request.payload }) });
  const body = parseJson(response.body);
  const envelope = errorEnvelopeOf(body);
  if (envelope) return toolError(envelope);
  if (response.statusCode === 402) {
    const challenge: Record<string, string> = {};
    for (const name of railChallengeHeaderNames()) {
      const value = response.headers[name];
      if (typeof value === 'string') challenge[name] = value;
    }
    return toolSuccess({ ...(body as object), http_status: 402, payment_challenge: challenge });
  }
  if (response.statusCode < 200 || response.statusCode >= 300 || typeof body !== 'object' || body === null || Array.isArray(body)) {
    // Every route answers a JSON object or the error envelope; anything else is a bug, reported without its body.
    throw new Error(`${tool.method} ${tool.path} answered ${response.statusCode} without a JSON object or an error envelope`);
  }
  return toolSuccess(response.statusCode === 202 ? { ...body, http_status: 202 } : (body as Record<string, unknown>));
}

/** The headers a 402 may carry its challenge in: every registered rail's, as the response names them (lowercase). */
function railChallengeHeaderNames(): string[] {
  return registeredRails().flatMap((rail) => rail.challengeHeaders.map((header) => header.name.toLowerCase()));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

interface ErrorContent {
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

function errorEnvelopeOf(body: unknown): ErrorContent | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (typeof error?.code !== 'string' || typeof error.message !== 'string') return undefined;
  return { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) };
}

function toolSuccess(body: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

function toolError(error: ErrorContent): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }], structuredContent: { error } };
}
