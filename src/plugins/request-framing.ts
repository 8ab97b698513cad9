// The HTTP framing rules Node would otherwise enforce with empty answers outside the envelope, or not at all: an
// HTTP/1.1 request needs a Host header (400), Expect may only ask for 100-continue (417), a body must not be
// content-coded, since the service decodes no coding (415), and the whole body must arrive within the request
// timeout after its headers (408, and the connection is closed). Node's own timers stay as a backstop a moment later.
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { ServiceError } from '../errors/service-error.ts';

/** When each request's headers had arrived, for the body deadline. */
const headersReceivedAtMs = new WeakMap<FastifyRequest, number>();

/** Fastify never reads a body of these methods, so their bodies are neither decoded nor waited for. */
const bodylessMethods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'TRACE']);

/** Whether the request carries a body Fastify will read: a body method, and a length or chunked framing. */
function carriesBody(request: FastifyRequest): boolean {
  if (bodylessMethods.has(request.method)) return false;
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function assertHostPresent(request: FastifyRequest): void {
  // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host. HTTP/1.0 did not require it.
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
    throw new ServiceError('request.malformed_http', { message: 'An HTTP/1.1 request must carry a Host header.' });
  }
}

function assertExpectationMet(request: FastifyRequest): void {
  const expectation = request.headers.expect;
  const members = expectation?.split(',').map((member) => member.trim().toLowerCase()) ?? [];
  if (members.some((member) => member !== '100-continue')) throw new ServiceError('request.expectation_failed');
}

/** Content codings of the body other than `identity` (RFC 9110 §8.4): none is decoded, so the bytes would be read
 * as JSON text they are not. RFC 7694: the refusal says, in Accept-Encoding, which coding is taken. */
function assertIdentityCoding(request: FastifyRequest, reply: FastifyReply): void {
  const coding = request.headers['content-encoding'];
  if (coding === undefined || !carriesBody(request)) return;
  const codings = coding.split(',').map((token) => token.trim().toLowerCase()).filter((token) => token !== '');
  if (codings.every((token) => token === 'identity')) return;
  reply.header('accept-encoding', 'identity');
  throw new ServiceError('request.content_encoding_unsupported');
}

function timeoutError(reply: FastifyReply): ServiceError {
  // The rest of the body may still be on its way: it must not be read as the next request.
  reply.header('connection', 'close');
  return new ServiceError('request.timeout');
}

/** The body as the parser reads it: the request itself when it has all arrived (most bodies), else a stream that
 * fails with 408 `request.timeout` at the deadline, and ends or fails with the request otherwise. */
function bodyWithDeadline(request: FastifyRequest, reply: FastifyReply, payload: Readable, deadlineMs: number): Readable {
  if (request.raw.complete || !carriesBody(request)) return payload;
  const remainingMs = deadlineMs - Date.now();
  if (remainingMs <= 0) throw timeoutError(reply);
  const body = new PassThrough();
  // The parser listens for the failure; a body that is never parsed (a media type no parser takes) must not turn it
  // into an uncaught error.
  body.on('error', () => undefined);
  const fail = (error: Error) => {
    clearTimeout(timer);
    payload.unpipe(body);
    body.destroy(error);
  };
  const timer = setTimeout(() => fail(timeoutError(reply)), remainingMs);
  payload.once('end', () => clearTimeout(timer));
  // `pipe` forwards neither errors nor an early close: a client that goes away fails the body as it would have.
  payload.once('error', fail);
  payload.once('close', () => {
    if (!body.writableEnded) fail(Object.assign(new Error('the request was closed before its body arrived'), { code: 'ECONNRESET' }));
  });
  return payload.pipe(body);
}

export const requestFraming = fastifyPlugin(
  async (app: FastifyInstance) => {
    // Fastify's requestTimeout option (src/server-options.ts), the time to receive a whole request: its initial
    // configuration keeps it, though its type does not list it.
    const requestTimeoutMs = (app.initialConfig as { requestTimeout?: number }).requestTimeout ?? 0;
    app.addHook('onRequest', async (request, reply) => {
      headersReceivedAtMs.set(request, Date.now());
      assertHostPresent(request);
      assertExpectationMet(request);
      assertIdentityCoding(request, reply);
    });
    if (requestTimeoutMs > 0) {
      app.addHook('preParsing', async (request, reply, payload) =>
        bodyWithDeadline(request, reply, payload, (headersReceivedAtMs.get(request) ?? Date.now()) + requestTimeoutMs),
      );
    }
  },
  { name: 'request-framing' },
);
