// Maps every error any route can raise (catalogue errors, schema violations, parser failures, unknown routes and
// methods, anything unexpected) to the spec's envelope { error: { code, message, details? }, request_id }; and the
// errors Fastify and Node answer before any route runs (bad URLs, malformed HTTP) to the same envelope.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { errorCatalogue, retryAfterSecondsOf, type ErrorCode } from '../errors/catalogue.ts';
import { isDatabaseUnavailable } from '../infra/database.ts';
import { mintRequestId } from '../infra/request-id.ts';
import { validationFields } from '../infra/validation.ts';
import { ServiceError, type ErrorDetails } from '../errors/service-error.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';
import { logRequestCompleted } from './request-log.ts';

/** Fastify's own client-error codes and the catalogue code each one becomes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'request.malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request.empty_body',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'request.unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'request.body_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request.malformed_http',
  FST_ERR_CTP_INVALID_TYPE: 'request.unsupported_media_type',
  FST_ERR_CTP_EMPTY_TYPE: 'request.unsupported_media_type',
  FST_ERR_NOT_FOUND: 'request.route_not_found',
  FST_ERR_BAD_URL: 'request.malformed_url',
  FST_ERR_MAX_PARAM_LENGTH: 'request.url_too_long',
};

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetails };
  request_id: string;
}

export function envelope(request: FastifyRequest, code: ErrorCode, message?: string, details?: ErrorDetails): ErrorEnvelope {
  return {
    error: { code, message: message ?? errorCatalogue[code].message, ...(details ? { details } : {}) },
    request_id: request.id,
  };
}

/** Every error answer leaves here. A 503 always says when to come back: the Retry-After its thrower set (a rail's
 * own), else its code's in the catalogue. */
function sendError(reply: FastifyReply, code: ErrorCode, message?: string, details?: ErrorDetails): FastifyReply {
  const retryAfterSeconds = retryAfterSecondsOf(code);
  if (retryAfterSeconds !== undefined && !reply.hasHeader('retry-after')) reply.header('retry-after', String(retryAfterSeconds));
  reply.errorCode = code;
  return reply.code(errorCatalogue[code].status).send(envelope(reply.request, code, message, details));
}

/** Fastify's own refusal of a request (a body too large, a media type no parser takes) as the catalogue's error,
 * for surfaces that answer in another shape than the envelope (the console's pages); undefined for anything else. */
export function fastifyRefusalOf(thrown: unknown): ServiceError | undefined {
  const code = (thrown as { code?: unknown } | null)?.code;
  const mapped = typeof code === 'string' ? fastifyCodes[code] : undefined;
  return mapped === undefined ? undefined : new ServiceError(mapped, { cause: thrown });
}

function handleError(thrown: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // The pure modules' own errors (a predicate's) become the catalogue's here.
  const error = asServiceError(thrown);
  if (error instanceof ServiceError) {
    if (error.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    // Errors that carry headers (402 challenges, 429 Retry-After) set them before throwing.
    return sendError(reply, error.code, error.statusCode >= 500 ? undefined : error.message, error.details);
  }
  if (error.validation) {
    return sendError(reply, 'request.invalid', undefined, { fields: validationFields(error.validation, error.validationContext ?? 'body') });
  }
  const mapped = error.code ? fastifyCodes[error.code] : undefined;
  if (mapped) return sendError(reply, mapped);
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    request.log.info({ err: error }, 'client error without a catalogue code');
    return sendError(reply, status === 404 ? 'request.route_not_found' : status === 408 ? 'request.timeout' : 'request.invalid');
  }
  request.log.error({ err: error }, 'request failed');
  // The database out of reach (or of connections) is a dependency unavailable, not a fault of the request: 503 with
  // Retry-After, and nothing of it was committed (or, its connection lost during COMMIT, the same idempotency key
  // finds what was).
  if (isDatabaseUnavailable(error)) return sendError(reply, 'internal.unavailable');
  return sendError(reply, status === 503 ? 'internal.unavailable' : 'internal.error');
}

/** Methods a route may have; HEAD is found wherever GET is, since Fastify adds it. */
const routeMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** No route has this method and path: 405 with `Allow` when the path has routes under other methods, else 404. */
function handleNotFound(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const allowed = routeMethods.filter((method) => method !== request.method && this.findRoute({ method, url: request.url }) !== null);
  if (allowed.length === 0) return sendError(reply, 'request.route_not_found');
  return sendError(reply.header('allow', allowed.join(', ')), 'request.method_not_allowed');
}

/** Fastify's `frameworkErrors`: errors raised while routing (a bad percent-escape in the path, a path parameter
 * past the router's limit), before any hook has run; without it Fastify answers them in a body of its own. */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('x-request-id', request.id);
  const answered = handleError(error, request, reply);
  logRequestCompleted(request, reply);
  return answered;
}

/** Node's HTTP parser errors, answered on the socket before a request exists (Fastify's `clientErrorHandler`). */
const connectionErrorCodes: Record<string, ErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'request.timeout',
  HPE_HEADER_OVERFLOW: 'request.headers_too_large',
};

export function handleConnectionError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = connectionErrorCodes[error.code ?? ''] ?? 'request.malformed_http';
  // Only the code: Node's parse error carries the raw bytes of the request, credentials included.
  const requestId = writeSocketRefusal(socket, code);
  this.log.info({ code: error.code, status_code: errorCatalogue[code].status, error_code: code, request_id: requestId }, 'malformed request refused');
  socket.destroy(error);
}

/** A CONNECT request (Node's `connect` event, which has no Fastify request): 400 in the envelope, then closed. */
export function answerConnectRequest(app: FastifyInstance, socket: Duplex): void {
  const requestId = writeSocketRefusal(socket, 'request.malformed_http', 'CONNECT is a request to a proxy, and this service is not one.');
  app.log.info({ status_code: errorCatalogue['request.malformed_http'].status, error_code: 'request.malformed_http', request_id: requestId }, 'CONNECT request refused');
  socket.destroy();
}

/** Writes a refusal in the envelope straight to a socket that has no request object, with a fresh request id
 * (returned), and `connection: close`: the caller closes the socket next. */
function writeSocketRefusal(socket: Duplex, code: ErrorCode, message: string = errorCatalogue[code].message): string {
  const requestId = mintRequestId();
  if (socket.writable) {
    const { status } = errorCatalogue[code];
    const body = JSON.stringify({ error: { code, message }, request_id: requestId });
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  return requestId;
}

export const httpErrors = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setErrorHandler(handleError);
    app.setNotFoundHandler(handleNotFound);
  },
  { name: 'http-errors' },
);
