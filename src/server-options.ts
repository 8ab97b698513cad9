// How the Fastify instance is built: logger, request ids, body limit, timeouts, validation. Shared by server.ts
// and the tests, so tests run the same configuration as production.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type pino from 'pino';
import { requestBodyBytesMax, requestTimeoutMs } from './limits.ts';
import { requestIdFor } from './platform/request-id.ts';
import { validatorCompiler } from './platform/validation.ts';

export function createFastify(logger: pino.Logger): FastifyInstance {
  const instance = Fastify({
    loggerInstance: logger,
    genReqId: requestIdFor,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: requestBodyBytesMax,
    requestTimeout: requestTimeoutMs,
    connectionTimeout: requestTimeoutMs,
    // Rejects bodies that try to set __proto__ or constructor.prototype (default is 'error' for both).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    return503OnClosing: true,
  }) as unknown as FastifyInstance;
  instance.setValidatorCompiler(validatorCompiler);
  return instance;
}
