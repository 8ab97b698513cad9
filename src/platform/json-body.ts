// The JSON body parser: Fastify's rules (prototype poisoning refused, empty body an error) plus the raw bytes kept
// on the request, because recognition proofs and idempotency fingerprints bind the exact bytes the client sent.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { ServiceError } from '../errors/service-error.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received, for routes that bind it; undefined when there was none. */
    rawBody: Buffer | undefined;
  }
}

export const jsonBody = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorateRequest('rawBody', undefined);
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const raw = body as Buffer;
      request.rawBody = raw;
      if (raw.length === 0) return done(new ServiceError('request.empty_body'), undefined);
      try {
        done(null, secureJson.parse(raw, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch {
        done(new ServiceError('request.malformed_json'), undefined);
      }
    });
  },
  { name: 'json-body' },
);
