// The refusals Node's HTTP server would make on its own (an empty 400 for a missing Host, an empty 417 for an
// unknown Expect, a dropped CONNECT, a slow body cut at up to twice the request timeout), made in the envelope with a
// request id instead, over real sockets; and request bodies in a content coding the service does not decode,
// refused with 415 rather than read as JSON. The server here has a short request timeout, so a trickled body is cut
// in about a second.
import type { FastifyInstance } from 'fastify';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app as serviceApp } from '../../src/app.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { nodeTimeoutGraceMs } from '../../src/limits.ts';
import { createFastify } from '../../src/server-options.ts';
import { bearer, createTestTenant, LogCapture, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const requestTimeoutMs = 1_000;

let database: TestDatabase;
let app: FastifyInstance;
let port: number;
let tenant: TestTenant;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = createFastify(createLogger('info', logs), { requestTimeoutMs });
  await app.register(serviceApp, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** From the first byte sent to the connection's close. */
  readonly elapsedMs: number;
}

/** Sends `head`, then each of `chunks` `intervalMs` apart (while the connection is open), and reads until the
 * server closes the connection. */
function exchange(head: string, chunks: readonly string[] = [], intervalMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      let next = 0;
      const sendNext = () => {
        if (next >= chunks.length || socket.destroyed) return;
        socket.write(chunks[next++]!);
        timer = setTimeout(sendNext, intervalMs);
      };
      timer = setTimeout(sendNext, intervalMs);
    });
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      // An interim 100 Continue comes first when the request asked for it.
      const [headText = '', body = ''] = answer.replace(/^(HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '').split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = headText.split('\r\n');
      if (statusLine === '') return reject(new Error('the server closed the connection without an answer'));
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, elapsedMs: Date.now() - startedAt });
    });
  });
}

function expectEnvelope(answer: RawAnswer, status: number, code: string): { error: { code: string; message: string }; request_id: string } {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toContain('application/json');
  const body = JSON.parse(answer.body) as { error: { code: string; message: string }; request_id: string };
  expect(body.error.code).toBe(code);
  expect(body.request_id).toMatch(/^req_[0-9a-f]{24}$/);
  expect(answer.headers['x-request-id']).toBe(body.request_id);
  return body;
}

const apiKeysPost = (headers: string, body: string) =>
  `POST /v1/admin/api-keys HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${tenant.adminKey}\r\ncontent-type: application/json\r\nconnection: close\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n`;

describe('Host', () => {
  it('an HTTP/1.1 request without Host → 400 request.malformed_http in the envelope', async () => {
    const body = expectEnvelope(await exchange('GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n'), 400, 'request.malformed_http');
    expect(body.error.message).toContain('Host');
  });

  it('an HTTP/1.0 request needs none', async () => {
    expect((await exchange('GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
  });
});

describe('Expect', () => {
  it('an expectation other than 100-continue → 417 request.expectation_failed in the envelope', async () => {
    for (const expectation of ['something-else', '200-ok', '100-Continue-please']) {
      expectEnvelope(await exchange(`GET /healthz HTTP/1.1\r\nhost: x\r\nexpect: ${expectation}\r\nconnection: close\r\n\r\n`), 417, 'request.expectation_failed');
    }
  });

  it('100-continue still works', async () => {
    const payload = JSON.stringify({ role: 'agent', name: 'expects continue' });
    const answer = await exchange(apiKeysPost('expect: 100-continue\r\n', payload), [payload], 50);
    expect(answer.body).toContain('"object":"api_key"');
  });
});

describe('CONNECT', () => {
  it('→ 400 in the envelope instead of a dropped connection', async () => {
    const body = expectEnvelope(await exchange('CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'), 400, 'request.malformed_http');
    expect(body.error.message).toContain('proxy');
  });
});

describe('Content-Encoding', () => {
  it('a body in a coding the service does not decode → 415 with Accept-Encoding: identity, and nothing is created', async () => {
    const before = (await app.inject({ url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey) })).json().data.length as number;
    for (const coding of ['br', 'gzip', 'deflate', 'zstd', 'x-custom', 'identity, gzip', 'GZIP']) {
      const response = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-encoding': coding }, payload: { role: 'agent' } });
      expect(response.statusCode, coding).toBe(415);
      expect(response.json().error.code).toBe('request.content_encoding_unsupported');
      expect(response.headers['accept-encoding']).toBe('identity');
      expect(response.headers['x-request-id']).toBe(response.json().request_id);
    }
    expect((await app.inject({ url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey) })).json().data.length).toBe(before);
  });

  it('identity is no coding at all', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-encoding': 'identity' }, payload: { role: 'agent' } });
    expect(response.statusCode, response.body).toBe(201);
  });
});

describe('a body that arrives too slowly', () => {
  const payload = JSON.stringify({ role: 'agent', name: 'x'.repeat(40) });

  it('trickled a byte at a time → 408 request.timeout in the envelope at the request timeout, and the connection closes', async () => {
    const answer = await exchange(apiKeysPost('', payload), [...payload], 100);
    const body = expectEnvelope(answer, 408, 'request.timeout');
    expect(answer.headers['connection']).toBe('close');
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(requestTimeoutMs - 50);
    expect(answer.elapsedMs).toBeLessThan(requestTimeoutMs + nodeTimeoutGraceMs);
    expect(logs.text).toContain(body.request_id);
  });

  it('stalled after its headers → the same 408', async () => {
    const answer = await exchange(apiKeysPost('', payload));
    expectEnvelope(answer, 408, 'request.timeout');
    expect(answer.elapsedMs).toBeLessThan(requestTimeoutMs + nodeTimeoutGraceMs);
  });

  it('trickled but complete in time → answered as usual', async () => {
    const chunks = [payload.slice(0, 10), payload.slice(10, 30), payload.slice(30)];
    const answer = await exchange(apiKeysPost('', payload), chunks, 150);
    expect(answer.status, answer.body).toBe(201);
  });

  it('a client that goes away halfway through its body leaves nothing behind: no error logged, the server answers on', async () => {
    const errorsBefore = logs.lines.filter((line) => /"level":(50|60)/.test(line)).length;
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(apiKeysPost('', payload) + payload.slice(0, 10));
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    await new Promise((resolve) => setTimeout(resolve, requestTimeoutMs + 200));
    expect((await exchange('GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')).status).toBe(200);
    expect(logs.lines.filter((line) => /"level":(50|60)/.test(line)).length).toBe(errorsBefore);
  });

  it('headers that never end → 408 from Node, in the envelope, soon after the timeout', async () => {
    const answer = await exchange('GET /healthz HTTP/1.1\r\nhost: x\r\n', Array.from({ length: 40 }, (_, index) => `x-slow-${index}: 1\r\n`), 100);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body).error.code).toBe('request.timeout');
    expect(answer.elapsedMs).toBeLessThan(requestTimeoutMs + nodeTimeoutGraceMs + 1_500);
  });
});
