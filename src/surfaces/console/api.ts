// Every console action is a call to the service's own HTTP API, run in-process through `app.inject` with the
// session's bearer, as the MCP surface does (src/surfaces/mcp/dispatch.ts). So the console holds no rule of its
// own: access, tenant scope, validation and error codes are the routes'. The console request was counted by the
// rate limiter already; the calls it makes on its behalf are not counted again.
import type { FastifyInstance, FastifyRequest } from 'fastify';
// For its declaration of `app.alreadyCountedHeaders`.
import '../../plugins/rate-limit.ts';

export interface ApiError {
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
}

export interface ApiAnswer<T = Record<string, unknown>> {
  readonly status: number;
  /** The JSON body of a 2xx answer. */
  readonly body: T;
  /** The error of an answer carrying the error envelope. */
  readonly error: ApiError | undefined;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly raw: Buffer;
}

export interface ApiCall {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** The answer's error envelope, or undefined when there is none. */
function errorOf(body: unknown): ApiError | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null | undefined)?.error;
  if (typeof error?.code !== 'string' || typeof error.message !== 'string') return undefined;
  const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined;
  return { code: error.code, message: error.message, ...(details ? { details } : {}) };
}

/** Calls one route of the API as the given bearer (none for the public sign-in routes). */
export async function callApi<T = Record<string, unknown>>(
  app: FastifyInstance,
  request: FastifyRequest,
  bearerToken: string | undefined,
  call: ApiCall,
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = {
    ...app.alreadyCountedHeaders,
    // One request id across the console request and the calls it makes, so the logs tie them together.
    'x-request-id': request.id,
    ...(bearerToken === undefined ? {} : { authorization: `Bearer ${bearerToken}` }),
    ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...call.headers,
  };
  const response = await app.inject({
    // The browser's address, not loopback: routes that limit per client address count the person, not the console.
    remoteAddress: request.ip,
    method: call.method,
    url: call.url,
    headers,
    ...(call.body === undefined ? {} : { payload: JSON.stringify(call.body) }),
  });
  const raw = response.rawPayload;
  const isJson = String(response.headers['content-type'] ?? '').startsWith('application/json');
  let parsed: unknown;
  if (isJson) {
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      parsed = undefined;
    }
  }
  const error = response.statusCode >= 400 ? (errorOf(parsed) ?? { code: 'internal.error', message: 'The service could not answer.' }) : undefined;
  return { status: response.statusCode, body: (parsed ?? {}) as T, error, headers: response.headers as ApiAnswer['headers'], raw };
}

/** A query string from the set values of a record (empty ones left out), with its leading `?` when not empty. */
export function queryString(values: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}
