// Maps every error any route can raise (catalogue errors, schema violations, parser failures, unknown routes,
// anything unexpected) to the spec's envelope { error: { code, message, details? }, request_id }.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { errorCatalogue, type ErrorCode } from './catalogue.ts';
import { validationFields } from '../platform/validation.ts';
import { ServiceError, type ErrorDetails } from './service-error.ts';

/** Fastify's own client-error codes and the catalogue code each one becomes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'request.malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request.empty_body',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'request.unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'request.body_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request.invalid',
  FST_ERR_CTP_INVALID_TYPE: 'request.unsupported_media_type',
  FST_ERR_CTP_EMPTY_TYPE: 'request.unsupported_media_type',
  FST_ERR_NOT_FOUND: 'request.route_not_found',
  FST_ERR_BAD_URL: 'request.invalid',
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

function sendError(reply: FastifyReply, code: ErrorCode, message?: string, details?: ErrorDetails): FastifyReply {
  return reply.code(errorCatalogue[code].status).send(envelope(reply.request, code, message, details));
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
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
  // secure-json-parse rejects __proto__ / constructor.prototype keys: a malformed body, not a server fault.
  if (error instanceof SyntaxError) return sendError(reply, 'request.malformed_json');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    request.log.info({ err: error }, 'client error without a catalogue code');
    return sendError(reply, status === 404 ? 'request.route_not_found' : status === 408 ? 'request.timeout' : 'request.invalid');
  }
  request.log.error({ err: error }, 'request failed');
  return sendError(reply, status === 503 ? 'internal.unavailable' : 'internal.error');
}

export const httpErrors = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setErrorHandler(handleError);
    app.setNotFoundHandler((request, reply) => sendError(reply, 'request.route_not_found'));
  },
  { name: 'http-errors' },
);
