// The one place where hostile input in the URL is refused, for every route at once: over-long targets (414), bad
// percent-encoding in the query (400), and U+0000 or lone surrogates in path parameters and query values (400
// naming the field). Bodies get the same character checks in json-body.ts. Also answers requests that arrive while
// the server closes, in the envelope rather than Fastify's own body.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ErrorCode } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { requestUrlLengthMax } from '../limits.ts';
import { findInputHazard, type InputHazard } from './hostile-input.ts';

const hazardCodes: Record<InputHazard['kind'], ErrorCode> = {
  character: 'request.character_invalid',
  prototype_key: 'request.prototype_key_forbidden',
  nesting: 'request.nesting_too_deep',
  number: 'request.number_out_of_range',
};

/** Where in the request a hazard lies, named as `details.fields[].location` of `request.invalid` names it. */
export type InputLocation = 'body' | 'params' | 'querystring';

export function hazardError(hazard: InputHazard, location: InputLocation): ServiceError {
  return new ServiceError(hazardCodes[hazard.kind], { details: { location, path: hazard.path } });
}

/** Path parameters and query values are flat text: one level of object, one of repeated values. */
const textChecks = { characters: true, prototypeKeys: false, numbers: false, nestingDepthMax: 3 } as const;

/** The query as sent. The query parser leaves a bad escape as literal text, and decodes escapes of bytes that are
 * not UTF-8 to U+FFFD: either way the route would see a value the client did not send. */
function assertQueryEncoding(request: FastifyRequest): void {
  const queryStart = request.url.indexOf('?');
  if (queryStart === -1 || !request.url.includes('%', queryStart)) return;
  try {
    decodeURIComponent(request.url.slice(queryStart + 1));
  } catch {
    throw new ServiceError('request.malformed_url', { details: { location: 'querystring' } });
  }
}

export const inputBoundary = fastifyPlugin(
  async (app: FastifyInstance) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    // Runs before authentication: neither check needs to know who is asking.
    app.addHook('onRequest', async (request, reply) => {
      if (closing) {
        // A load balancer should send this request elsewhere; the connection is not kept for another.
        reply.header('connection', 'close');
        throw new ServiceError('internal.unavailable');
      }
      if (request.url.length > requestUrlLengthMax) throw new ServiceError('request.url_too_long');
    });
    // After authentication and body parsing, before the route schema: a caller without a credential learns
    // nothing, and a bad character gets its own code rather than a pattern mismatch (or none, on a loose schema).
    app.addHook('preValidation', async (request) => {
      assertQueryEncoding(request);
      const paramsHazard = findInputHazard(request.params, textChecks);
      if (paramsHazard) throw hazardError(paramsHazard, 'params');
      const queryHazard = findInputHazard(request.query, textChecks);
      if (queryHazard) throw hazardError(queryHazard, 'querystring');
    });
  },
  { name: 'input-boundary' },
);
