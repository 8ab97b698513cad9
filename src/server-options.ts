// How the Fastify instance is built: logger, request ids, body and URL limits, timeouts, validation, and the
// handlers that put Fastify's and Node's own early errors in our envelope. Shared by server.ts and the tests, so
// tests run the same configuration as production.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type pino from 'pino';
import { answerConnectRequest, handleConnectionError, handleFrameworkError } from './plugins/http-errors.ts';
import { nodeTimeoutCheckIntervalMs, nodeTimeoutGraceMs, requestBodyBytesMax, requestTimeoutMs, routeParameterLengthMax } from './limits.ts';
import { requestIdFor } from './infra/request-id.ts';
import { validatorCompiler } from './infra/validation.ts';

export interface ServerOptions {
  /** How long a request's body may take to arrive after its headers; default requestTimeoutMs. Tests that trickle
   * a body over a real socket set a short one. */
  readonly requestTimeoutMs?: number;
}

export function createFastify(logger: pino.Logger, options: ServerOptions = {}): FastifyInstance {
  const requestTimeout = options.requestTimeoutMs ?? requestTimeoutMs;
  const instance = Fastify({
    loggerInstance: logger,
    genReqId: requestIdFor,
    // One line per request, with its error code, from plugins/request-log.ts instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: requestBodyBytesMax,
    // The body deadline the app enforces itself, answering 408 in the envelope (src/plugins/request-framing.ts).
    requestTimeout,
    // Node's idle timeout, a moment later, so that a body that stalls altogether gets that 408 too.
    connectionTimeout: requestTimeout + nodeTimeoutGraceMs,
    http: {
      // A request without Host reaches the app, which refuses it in the envelope (Node would answer an empty 400).
      requireHostHeader: false,
      connectionsCheckingInterval: nodeTimeoutCheckIntervalMs,
    },
    // Prototype keys in bodies are refused by our own parser (plugins/json-body.ts), with a code that says so.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: routeParameterLengthMax },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleConnectionError,
    // Requests that arrive while closing get a 503 in our envelope from plugins/input-boundary.ts instead.
    return503OnClosing: false,
  }) as unknown as FastifyInstance;
  // Node's own cut of a request that runs too long backs up the app's 408, and bounds slow headers.
  instance.server.requestTimeout = requestTimeout + nodeTimeoutGraceMs;
  // Node answers an Expect header other than 100-continue with an empty 417 unless someone listens: route such a
  // request through the app like any other, where request-framing.ts answers 417 in the envelope.
  instance.server.on('checkExpectation', (request, response) => instance.server.emit('request', request, response));
  // Node drops a CONNECT request without a word unless someone listens.
  instance.server.on('connect', (_request, socket) => answerConnectRequest(instance, socket));
  instance.setValidatorCompiler(validatorCompiler);
  return instance;
}
