// One log line per request (docs/operations.md#logs), written when the answer has been sent: at info its method,
// path, status, time and, for every 4xx and 5xx, the error code the client was given, so that a failure a person
// reports by its request id is found with its reason. LOG_LEVEL=debug adds a line as each request arrives, and the
// route, the caller (tenant, role, credential kind and id) and the body sizes to the final line. Never a header
// value, a query string or a body: those are where credentials travel.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
// For its declaration of `request.principal`, which the access plugin sets once a credential is checked.
import type {} from './access.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The error code of an error answer, when the code that sent it knew it (the console's pages); read from the
     * envelope otherwise. */
    errorCode: string | null;
  }
}

/** `{"error":{"code":"x"…` (our envelope) or `{"error":"x"…` (OAuth's, device login): where the code sits in the first
 * bytes of an error body, found without parsing the whole of it. */
const envelopeCode = /^\{"error":(?:\{"code":"([a-z0-9_.]{1,128})"|"([a-z0-9_.]{1,128})")/;

function errorCodeOf(reply: FastifyReply, payload: unknown): string | null {
  if (reply.errorCode !== null) return reply.errorCode;
  if (typeof payload !== 'string') return null;
  const match = envelopeCode.exec(payload);
  return match?.[1] ?? match?.[2] ?? null;
}

/** Whether this request's logger writes debug lines (LOG_LEVEL debug or trace). */
const debugEnabled = (request: FastifyRequest): boolean => request.log.level === 'debug' || request.log.level === 'trace';

/** A header's number, or undefined: `content-length` as the client declared it. */
function lengthOf(value: string | string[] | number | undefined): number | undefined {
  const number = Number(Array.isArray(value) ? value[0] : value);
  return Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

/** Who called, for the debug line: never the credential, only what it is. */
function callerOf(request: FastifyRequest): Record<string, unknown> {
  const principal = request.principal;
  if (!principal) return {};
  const { credential } = principal;
  return {
    tenant_id: principal.tenantId,
    role: principal.role,
    credential_kind: credential.type === 'api_key' ? credential.keyKind : 'session',
    subject: principal.subject,
  };
}

export const requestLog = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorateReply('errorCode', null);
    app.addHook('onRequest', async (request) => {
      if (!debugEnabled(request)) return;
      request.log.debug(
        { method: request.method, path: request.url.split('?')[0], content_type: request.headers['content-type'], content_length: lengthOf(request.headers['content-length']), remote_address: request.ip },
        'request received',
      );
    });
    app.addHook('onSend', async (request, reply, payload) => {
      if (reply.statusCode >= 400) reply.errorCode = errorCodeOf(reply, payload);
      return payload;
    });
    app.addHook('onResponse', async (request, reply) => logRequestCompleted(request, reply));
  },
  { name: 'request-log' },
);

/** The request's final line. Written by the onResponse hook, and by the handler of errors raised while routing
 * (plugins/http-errors.ts), for which Fastify runs no hook. */
export function logRequestCompleted(request: FastifyRequest, reply: FastifyReply): void {
  const line: Record<string, unknown> = {
    method: request.method,
    path: request.url.split('?')[0],
    status_code: reply.statusCode,
    ...(reply.statusCode >= 400 ? { error_code: reply.errorCode } : {}),
    response_time_ms: Math.round(reply.elapsedTime * 10) / 10,
  };
  if (debugEnabled(request)) {
    Object.assign(line, {
      route: request.routeOptions.url ?? null,
      ...callerOf(request),
      request_bytes: lengthOf(request.headers['content-length']) ?? 0,
      response_bytes: lengthOf(reply.getHeader('content-length')),
    });
  }
  request.log.info(line, 'request completed');
}
