// The public client's request shapes on routes we serve, each sent exactly as the client sends it, over HTTP on a
// real Postgres: its CLI's API key body and list, its DELETEs labelled JSON with no body, its direct engine
// client's fund with an empty text/plain body. Our own shapes keep working beside them.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** The client's CLI gateway: every call labelled `content-type: application/json`, a body only when it has one. */
const cli = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: object) =>
  app.inject({ method, url, headers: { ...bearer(acme.adminKey), 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const codeOf = (response: LightMyRequestResponse) => ({ status: response.statusCode, code: response.json().error?.code, path: response.json().error?.details?.fields?.[0]?.path });

describe('API keys, as the client\'s CLI creates and lists them', () => {
  it('creates a restricted key from `{service_account_name, service_account_role, label, key_kind, mcp_scopes}`', async () => {
    const response = await cli('POST', '/v1/admin/api-keys', {
      service_account_name: 'ci-bot',
      service_account_role: 'agent',
      label: 'deploys',
      key_kind: 'restricted',
      mcp_scopes: [{ scope: 'mcp.spend', level: 'write' }, { scope: 'mcp.discovery', level: 'read' }],
    });
    expect(response.statusCode, response.body).toBe(201);
    const created = response.json();
    expect(created.api_key).toMatch(/^svc_rk_sandbox_/);
    // What the CLI reads: `item` and `api_key`.
    expect(created.item).toMatchObject({
      key_id: created.key_id, service_account_role: 'agent', key_kind: 'restricted', mcp_scopes: ['mcp.discovery:read', 'mcp.spend:write'],
      service_account_name: 'ci-bot (deploys)', environment: 'sandbox',
    });
    expect(created).toMatchObject({ role: 'agent', name: 'ci-bot (deploys)', scopes: ['mcp.discovery:read', 'mcp.spend:write'] });
    // The key is what was asked for: restricted to those scopes.
    const principalAnswer = (await app.inject({ url: '/v1/auth/principal', headers: bearer(created.api_key) })).json();
    expect(principalAnswer).toMatchObject({ key_kind: 'restricted', mcp_scopes: ['mcp.discovery:read', 'mcp.spend:write'] });

    // The CLI lists from `items`.
    const list = (await cli('GET', '/v1/admin/api-keys?limit=50')).json();
    expect(list.items).toEqual(list.data);
    // As created (its last use, the principal read above, is recorded in the background: not compared).
    const withoutUse = ({ last_used_at: _use, ...rest }: Record<string, unknown>) => rest;
    expect(withoutUse(list.items.find((item: { key_id: string }) => item.key_id === created.key_id))).toEqual(withoutUse(created.item));
  });

  it('creates a standard key with the CLI\'s defaults (`label: ""`, `mcp_scopes: []`)', async () => {
    const response = await cli('POST', '/v1/admin/api-keys', {
      service_account_name: 'reporting', service_account_role: 'auditor', label: '', key_kind: 'standard', mcp_scopes: [],
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ key_kind: 'standard', role: 'auditor', name: 'reporting', scopes: [], api_key: expect.stringMatching(/^svc_sk_sandbox_/) });
  });

  it('refuses a standard key with scopes, two different spellings of one field, and no role', async () => {
    const cases: Array<[object, string]> = [
      [{ service_account_role: 'agent', key_kind: 'standard', mcp_scopes: ['mcp.spend:write'] }, '/key_kind'],
      [{ role: 'agent', service_account_role: 'admin' }, '/service_account_role'],
      [{ role: 'agent', scopes: ['mcp.spend:write'], mcp_scopes: ['mcp.sandbox:write'] }, '/mcp_scopes'],
      [{ service_account_name: 'x'.repeat(100), label: 'y'.repeat(40), service_account_role: 'agent' }, '/label'],
      [{ service_account_name: 'no role' }, '/role'],
    ];
    for (const [body, path] of cases) expect(codeOf(await cli('POST', '/v1/admin/api-keys', body)), JSON.stringify(body)).toEqual({ status: 400, code: 'request.invalid', path });
    const listed = (await cli('GET', '/v1/admin/api-keys?limit=50')).json().data.map((key: { name: string }) => key.name);
    expect(listed).not.toContain('no role');
  });

  it('still takes our own body', async () => {
    const response = await cli('POST', '/v1/admin/api-keys', { role: 'agent', name: 'ours', scopes: ['mcp-sandbox-agent'] });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ key_kind: 'restricted', name: 'ours', scopes: ['mcp.discovery:read', 'mcp.sandbox:write', 'mcp.spend:write'] });
  });
});

describe('bodiless requests labelled with a content type', () => {
  it('revokes a key and deletes an export with a DELETE labelled JSON and no body, as the CLI sends them', async () => {
    const key = (await cli('POST', '/v1/admin/api-keys', { role: 'agent' })).json();
    const revoked = await cli('DELETE', `/v1/admin/api-keys/${key.key_id}`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toMatchObject({ key_id: key.key_id, revoked_at: expect.any(String) });

    // Any label will do on a bodiless DELETE: text/plain without a length (curl -X DELETE -H …) is no body either.
    const other = (await cli('POST', '/v1/admin/api-keys', { role: 'agent' })).json();
    const labelled = await app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${other.key_id}`, headers: { ...bearer(acme.adminKey), 'content-type': 'text/plain' } });
    expect(labelled.statusCode, labelled.body).toBe(200);

    const job = (await cli('POST', '/v1/compliance/audit-exports', {})).json();
    const deleted = await cli('DELETE', `/v1/compliance/audit-exports/${job.job_id}`);
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toMatchObject({ job_id: job.job_id, status: 'deleted' });
  });

  it('funds with the direct engine client\'s empty text/plain body (fetch given "")', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    expect((await cli('POST', '/harbor/intents', body)).statusCode).toBe(201);
    const fund = (headers: Record<string, string> = {}) => app.inject({
      method: 'POST', url: `/harbor/intents/${body.intent_id}/fund`, payload: '',
      headers: { ...bearer(acme.adminKey), 'x-tenant-id': acme.tenantId, 'content-type': 'text/plain;charset=UTF-8', 'content-length': '0', ...headers },
    });
    const challenge = await fund();
    expect(challenge.statusCode, challenge.body).toBe(402);
    const paid = await fund({ 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }) });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ state: 'funded', funded: true });
  });

  it('keeps refusing an empty body where the route takes one, and a non-empty body of another type', async () => {
    expect(codeOf(await cli('POST', '/v1/admin/api-keys', undefined)).code).toBe('request.empty_body');
    const plain = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', payload: '', headers: { ...bearer(acme.adminKey), 'content-type': 'text/plain', 'content-length': '0' } });
    expect(codeOf(plain)).toMatchObject({ status: 415, code: 'request.unsupported_media_type' });
    const text = await app.inject({ method: 'POST', url: `/harbor/intents/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/fund`, payload: 'hello', headers: { ...bearer(acme.adminKey), 'content-type': 'text/plain' } });
    expect(codeOf(text)).toMatchObject({ status: 415, code: 'request.unsupported_media_type' });
  });
});
