// The request log as an operator reads it (docs/operations.md#logs): one line per request, and every 4xx and 5xx line
// names the error code the client was given, under the request id the client saw; LOG_LEVEL=debug adds an arrival
// line and the route, the caller and the sizes, and never a credential.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app as svcApp } from '../../src/app.ts';
import type { LogLevel } from '../../src/config.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
import { bearer, createTestTenant, LogCapture, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let tenant: TestTenant;
const opened: FastifyInstance[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  for (const instance of opened) await instance.close();
  await database?.drop();
});

/** The app as server.ts builds it, logging at `level` into a capture. */
async function appLoggingAt(level: LogLevel): Promise<{ instance: FastifyInstance; logs: LogCapture }> {
  const logs = new LogCapture();
  const instance = createFastify(createLogger(level, logs));
  await instance.register(svcApp, { maintenance: false, connection: database.connection, gatewayKeys: ephemeralKeyring() });
  await instance.ready();
  opened.push(instance);
  return { instance, logs };
}

type LogLine = Record<string, unknown> & { msg: string; request_id?: string };
const linesOf = (logs: LogCapture): LogLine[] => logs.text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine);
const completedLine = (logs: LogCapture, requestId: string) => linesOf(logs).find((line) => line.msg === 'request completed' && line.request_id === requestId);

describe('at info', () => {
  let instance: FastifyInstance;
  let logs: LogCapture;
  beforeAll(async () => ({ instance, logs } = await appLoggingAt('info')));

  it('every answer has one line; a 4xx or 5xx line carries the error code its body gave, under its request id', async () => {
    const requests = [
      { method: 'GET' as const, url: '/v1/auth/principal', headers: bearer(tenant.adminKey) },
      { method: 'GET' as const, url: '/v1/auth/principal', headers: bearer('svc_sk_sandbox_not_a_key') },
      { method: 'GET' as const, url: '/v1/no-such-route' },
      { method: 'POST' as const, url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey), payload: { role: 'emperor' } },
      { method: 'POST' as const, url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-type': 'text/plain' }, payload: 'role=agent' },
      { method: 'PUT' as const, url: '/v1/auth/principal', headers: bearer(tenant.adminKey) },
      { method: 'GET' as const, url: '/harbor/intents/00000000-0000-4000-8000-000000000000', headers: bearer(tenant.adminKey) },
      { method: 'POST' as const, url: '/v1/public/auth/device/token', payload: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'dvc_nope' } },
      { method: 'GET' as const, url: '/console/no-such-page' },
    ];
    const seen = new Set<string>();
    for (const request of requests) {
      const response = await instance.inject(request);
      const requestId = String(response.headers['x-request-id']);
      const line = completedLine(logs, requestId);
      expect(line, `${request.method} ${request.url}`).toBeDefined();
      expect(line).toMatchObject({ method: request.method, path: request.url, status_code: response.statusCode, level: 30 });
      expect(typeof line!['response_time_ms']).toBe('number');
      if (response.statusCode < 400) {
        expect(line).not.toHaveProperty('error_code');
        continue;
      }
      const isJson = String(response.headers['content-type']).includes('json');
      const body = isJson ? response.json() : undefined;
      const code = isJson ? (typeof body.error === 'string' ? body.error : body.error.code) : /data-code="([^"]+)"/.exec(response.body)?.[1];
      expect(code, `${request.method} ${request.url}`).toBeTruthy();
      expect(line!['error_code'], `${request.method} ${request.url}`).toBe(code);
      seen.add(String(response.statusCode));
    }
    // The cases above cover the statuses they are meant to (so the loop cannot pass on 200s alone).
    expect([...seen].sort()).toEqual(['400', '401', '404', '405', '415']);
    // Info writes no arrival line and no caller details.
    expect(linesOf(logs).filter((line) => line.msg === 'request received')).toEqual([]);
    expect(linesOf(logs).some((line) => 'tenant_id' in line || 'route' in line)).toBe(false);
  });

  it('a request refused before routing (a bad percent-escape) and one refused by the HTTP parser are logged with their code', async () => {
    const badUrl = await instance.inject({ method: 'GET', url: '/v1/%zz' });
    expect(badUrl.statusCode).toBe(400);
    expect(completedLine(logs, String(badUrl.headers['x-request-id']))).toMatchObject({ status_code: 400, error_code: badUrl.json().error.code });

    await instance.listen({ host: '127.0.0.1', port: 0 });
    const port = (instance.server.address() as AddressInfo).port;
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nNot a header line\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    const requestId = /x-request-id: (\S+)/.exec(answer)?.[1];
    expect(requestId).toBeDefined();
    expect(linesOf(logs).find((line) => line.msg === 'malformed request refused' && line.request_id === requestId)).toMatchObject({ status_code: 400, error_code: 'request.malformed_http' });
  });
});

describe('at debug', () => {
  it('adds an arrival line, and the route, the caller and the sizes to the final line, never the credential', async () => {
    const { instance, logs } = await appLoggingAt('debug');
    const created = await instance.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey), payload: { role: 'agent', name: 'debug-log' } });
    expect(created.statusCode).toBe(201);
    const requestId = String(created.headers['x-request-id']);
    const arrival = linesOf(logs).find((line) => line.msg === 'request received' && line.request_id === requestId);
    expect(arrival).toMatchObject({ level: 20, method: 'POST', path: '/v1/admin/api-keys', content_type: 'application/json', content_length: Buffer.byteLength(JSON.stringify({ role: 'agent', name: 'debug-log' })) });
    const principal = (await instance.inject({ url: '/v1/auth/principal', headers: bearer(tenant.adminKey) })).json();
    expect(completedLine(logs, requestId)).toMatchObject({
      route: '/v1/admin/api-keys',
      tenant_id: tenant.tenantId,
      role: 'admin',
      credential_kind: 'standard',
      subject: principal.subject,
      request_bytes: arrival!['content_length'],
      response_bytes: created.rawPayload.length,
    });
    // The admin key and the key just issued appear nowhere, whole or as their secret part.
    for (const secret of [tenant.adminKey, created.json().api_key as string]) expect(logs.text).not.toContain(secret.slice(-64));
  });
});
