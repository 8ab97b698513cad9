// The credential `svc login` stored, as the TypeScript SDK uses it: only when no API key is given (option, then
// SVC_API_KEY, then the stored login), with the server it came from, never sent to another one, refused when expired
// or malformed, and not read at all from an environment given in place of the process's that names no folder.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStoredLogin, storedLoginPath, SvcClient, SvcConfigurationError } from '../../src/sdk/index.ts';
import { buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let tenant: TestTenant;
let other: TestTenant;
let configHome: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  tenant = await createTestTenant(database.connection, 'sandbox');
  other = await createTestTenant(database.connection, 'sandbox');
  configHome = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-stored-login-'));
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
  if (configHome) fs.rmSync(configHome, { recursive: true, force: true });
});

/** Writes the file `svc login` would have written for `content`. */
function storeLogin(content: Record<string, unknown>): void {
  const file = path.join(configHome, 'svc', 'credentials.json');
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
}

const apiKeyLogin = (server: string, accessToken: string, tenantId: string) => ({
  server, credential_type: 'api_key', access_token: accessToken, token_type: 'Bearer', tenant_id: tenantId, key_id: 'key_x', roles: ['admin'], expires_at: null,
});

/** A fetch that counts what it sends, so a refusal can be shown to have sent nothing. */
function countingFetch() {
  const sent: string[] = [];
  const fetchFunction = (input: string, init: RequestInit) => {
    sent.push(input);
    return fetch(input, init);
  };
  return { sent, fetch: fetchFunction };
}

describe('the stored login', () => {
  it('is used, with its server, when no API key is given', async () => {
    storeLogin(apiKeyLogin(baseUrl, tenant.adminKey, tenant.tenantId));
    const client = await SvcClient.open({ env: { XDG_CONFIG_HOME: configHome } });
    expect(client.credentialSource).toBe('stored_login');
    expect(client.gatewayBaseUrl).toBe(baseUrl);
    expect(client.tenantId).toBe(tenant.tenantId);
    expect(readStoredLogin({ XDG_CONFIG_HOME: configHome })).toMatchObject({ server: baseUrl, credentialType: 'api_key', tenantId: tenant.tenantId, expiresAt: null });
  });

  it('comes last: the apiKey option, then SVC_API_KEY, win over it', async () => {
    storeLogin(apiKeyLogin(baseUrl, tenant.adminKey, tenant.tenantId));
    const fromEnvironment = await SvcClient.open({ env: { XDG_CONFIG_HOME: configHome, SVC_API_KEY: other.adminKey, SVC_GATEWAY_URL: baseUrl } });
    expect(fromEnvironment).toMatchObject({ credentialSource: 'environment', tenantId: other.tenantId });
    const fromOption = await SvcClient.open({ apiKey: other.adminKey, gatewayBaseUrl: baseUrl, env: { XDG_CONFIG_HOME: configHome, SVC_API_KEY: 'svc_sk_sandbox_not_this_one' } });
    expect(fromOption).toMatchObject({ credentialSource: 'option', tenantId: other.tenantId });
  });

  it('is never sent to another server than its own', async () => {
    storeLogin(apiKeyLogin('https://svc.example.com', tenant.adminKey, tenant.tenantId));
    const counting = countingFetch();
    const refusal = SvcClient.open({ env: { XDG_CONFIG_HOME: configHome, SVC_GATEWAY_URL: baseUrl }, fetch: counting.fetch });
    await expect(refusal).rejects.toThrow(SvcConfigurationError);
    await expect(refusal).rejects.toThrow(`is for https://svc.example.com, not ${baseUrl}`);
    expect(counting.sent).toEqual([]);
  });

  it('is refused once its session has expired, saying so, without a request', async () => {
    storeLogin({ server: baseUrl, credential_type: 'session', access_token: 'eyJ.expired.token', token_type: 'Bearer', tenant_id: tenant.tenantId, user_id: 'usr_x', roles: ['admin'], expires_at: '2026-01-01T00:00:00.000Z' });
    const counting = countingFetch();
    await expect(SvcClient.open({ env: { XDG_CONFIG_HOME: configHome }, fetch: counting.fetch })).rejects.toThrow('expired at 2026-01-01T00:00:00.000Z: run `svc login` again');
    expect(counting.sent).toEqual([]);
  });

  it('a file that is not one svc login wrote is named, not skipped', async () => {
    storeLogin({ server: baseUrl, token: 'x' });
    await expect(SvcClient.open({ env: { XDG_CONFIG_HOME: configHome } })).rejects.toThrow(`The stored login ${path.join(configHome, 'svc', 'credentials.json')} is not one \`svc login\` wrote`);
  });

  it('is not looked for in an environment given in place of the process\'s that names no folder', async () => {
    expect(storedLoginPath({})).toBeUndefined();
    expect(storedLoginPath({ HOME: '/home/ann' })).toBe('/home/ann/.config/svc/credentials.json');
    expect(storedLoginPath({ HOME: '/home/ann', XDG_CONFIG_HOME: '/etc/ann' })).toBe('/etc/ann/svc/credentials.json');
    await expect(SvcClient.open({ env: {} })).rejects.toThrow('apiKey is required (or set SVC_API_KEY, or sign in with `svc login`).');
  });
});
