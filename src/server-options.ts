// How the Fastify instance is built: logger, request ids, body and URL limits, timeouts, validation, and the
// handlers that put Fastify's own early errors in our envelope. Shared by server.ts and the tests, so tests run the
// same configuration as production.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type pino from 'pino';
import { handleConnectionError, handleFrameworkError } from './plugins/http-errors.ts';
import { requestBodyBytesMax, requestTimeoutMs, routeParameterLengthMax } from './limits.ts';
import { requestIdFor } from './infra/request-id.ts';
import { validatorCompiler } from './infra/validation.ts';

export function createFastify(logger: pino.Logger): FastifyInstance {
  const instance = Fastify({
    loggerInstance: logger,
    genReqId: requestIdFor,
    // One line per request, with its error code, from plugins/request-log.ts instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: requestBodyBytesMax,
    requestTimeout: requestTimeoutMs,
    connectionTimeout: requestTimeoutMs,
    // Prototype keys in bodies are refused by our own parser (plugins/json-body.ts), with a code that says so.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: routeParameterLengthMax },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleConnectionError,
    // Requests that arrive while closing get a 503 in our envelope from plugins/input-boundary.ts instead.
    return503OnClosing: false,
  }) as unknown as FastifyInstance;
  instance.setValidatorCompiler(validatorCompiler);
  return instance;
}
