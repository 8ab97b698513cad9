// The JSON body parser, the only body parser: UTF-8 JSON only (any other media type is 415), hostile input refused
// with a code that says why (the checks in hostile-input.ts, the codes in input-boundary.ts), and the raw bytes kept
// on the request, because recognition proofs and idempotency fingerprints bind the exact bytes the client sent.
// An empty body is no body on a route that takes none, whatever content type it is labelled with.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { requestJsonNestingDepthMax } from '../limits.ts';
import { ServiceError } from '../errors/service-error.ts';
import { findInputHazard } from './hostile-input.ts';
import { hazardError } from './input-boundary.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received, for routes that bind it; undefined when there was none. */
    rawBody: Buffer | undefined;
  }
  interface FastifyContextConfig {
    /** The route's body may be left out (fund, sandbox evidence): an empty body is then read as none, whatever
     * content type labels it. */
    bodyOptional?: boolean;
  }
}

/** Whether an empty body is read as no body: on a route that declares its body optional, and on a DELETE that
 * declares no body. Clients label bodiless requests with a content type (`application/json` from a JSON helper,
 * `text/plain` from `fetch` given `""`), and there is nothing in them to misread. Elsewhere an empty body stays
 * `request.empty_body` (JSON) or `request.unsupported_media_type` (another type). */
function emptyBodyIsNone(request: FastifyRequest): boolean {
  if (request.routeOptions.config.bodyOptional === true) return true;
  return request.method === 'DELETE' && request.routeOptions.schema?.body === undefined;
}

const charsetPattern = /;\s*charset\s*=\s*"?([^";\s]*)/i;
/** Text that may hold a number too large for a double; a match only means the parsed value is walked. */
const hugeNumberPattern = /\d[eE]\+?\d{3}|(?<!\d)\d{309}/;

/** JSON text is UTF-8 (RFC 8259 §8.1); a body declared in another charset is refused rather than misread. */
function assertUtf8Charset(contentType: string | undefined): void {
  const charset = contentType === undefined ? undefined : charsetPattern.exec(contentType)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ServiceError('request.unsupported_media_type');
  }
}

/** Parses a JSON body and refuses what no route can handle safely. */
export function parseJsonBody(raw: Buffer, contentType: string | undefined): unknown {
  assertUtf8Charset(contentType);
  if (raw.length === 0) throw new ServiceError('request.empty_body');
  // Invalid UTF-8 would otherwise decode to U+FFFD silently, and the value stored would not be the one sent.
  if (!isUtf8(raw)) throw new ServiceError('request.malformed_json', { message: 'The request body is not valid UTF-8.' });
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServiceError('request.malformed_json');
  }
  // U+0000 and lone surrogates can only come from \u escapes: raw control characters are not valid JSON and the
  // bytes are valid UTF-8. Without an escape, a prototype key can only be spelt out. A double overflows to
  // Infinity only past 1.8e308: a three-digit exponent or 309 digits. So most bodies skip these checks, and bodies
  // too short to nest past the limit skip the walk altogether.
  const escaped = raw.includes('\\u');
  const checks = {
    characters: escaped,
    prototypeKeys: escaped || raw.includes('__proto__') || raw.includes('constructor'),
    numbers: hugeNumberPattern.test(text),
    nestingDepthMax: requestJsonNestingDepthMax,
  };
  if (!checks.characters && !checks.prototypeKeys && !checks.numbers && raw.length < 2 * requestJsonNestingDepthMax) return value;
  const hazard = findInputHazard(value, checks);
  if (hazard) throw hazardError(hazard, 'body');
  return value;
}

export const jsonBody = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorateRequest('rawBody', undefined);
    // Fastify also parses text/plain by default; a route would then see a string where its schema expects an object.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const raw = body as Buffer;
      if (raw.length === 0 && emptyBodyIsNone(request)) {
        done(null, undefined);
        return;
      }
      request.rawBody = raw;
      try {
        done(null, parseJsonBody(raw, request.headers['content-type']));
      } catch (error) {
        done(error as ServiceError, undefined);
      }
    });
  },
  { name: 'json-body' },
);
