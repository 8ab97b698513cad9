// The signing core's refusals as the HTTP API answers them, on a real Postgres: the core raises its own
// SigningError, and every answer keeps the status, code, catalogue message and details it has always had, whether
// the refusal ends the request (an error envelope) or is the verdict a verify route answers.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue, type ErrorCode } from '../../src/errors/catalogue.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let sandbox: TestTenant;
let live: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  sandbox = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const create = (tenant: TestTenant, body: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/harbor/intents', headers: { ...bearer(tenant.adminKey), ...headers }, payload: body });

/** The error object of an envelope as the catalogue words it, with the details the refusal carries. */
const refusal = (code: ErrorCode, details?: Record<string, unknown>) => ({ code, message: errorCatalogue[code].message, ...(details ? { details } : {}) });

describe('refusals that end the request', () => {
  it.each([
    ['bad base64', { principal_pubkey: 'AB==' }, refusal('signing.value_invalid', { field: 'principal_pubkey', reason: 'has non-zero padding bits' })],
    ['a key of the wrong length', { payee_pubkey: 'AAAA' }, refusal('signing.value_invalid', { field: 'payee_pubkey', reason: 'must decode to exactly 32 bytes' })],
    [
      'a deadline that is not RFC 3339',
      { deadline: 'tomorrow' },
      refusal('signing.value_invalid', { field: 'deadline', reason: 'must be an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM))' }),
    ],
    ['an unknown signing version', { signing_version: 8 }, refusal('signing.version_unsupported', { field: 'signing_version', value: 8 })],
    ['a deprecated signing version', { signing_version: 5 }, refusal('signing.version_deprecated', { field: 'signing_version', value: 5 })],
  ])('%s: 400 with the catalogue message and the field', async (_name, change, error) => {
    const response = await create(sandbox, { ...signedCreateBody({ tenantId: sandbox.tenantId, principal, payee }), ...change });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toEqual(error);
    expect(response.json().request_id).toEqual(expect.any(String));
  });

  it('a recognition proof header that is not base64url: 401 recognition.malformed with its reason', async () => {
    const body = signedCreateBody({ tenantId: live.tenantId, principal, payee });
    const response = await create(live, body, { 'x-svc-agent-recognition-proof': '!!!' });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toEqual(refusal('recognition.malformed', { reason: 'header is not base64url' }));
  });

  it('no recognition proof on a live tenant: 401 recognition.required, without details', async () => {
    const response = await create(live, signedCreateBody({ tenantId: live.tenantId, principal, payee }));
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toEqual(refusal('recognition.required'));
  });
});

describe('refusals that are a verify route\'s verdict', () => {
  it('a receipt with another signing algorithm: valid false, artifact.algorithm_unsupported', async () => {
    const response = await app.inject({
      method: 'POST', url: '/protocol/v2/receipts/verify', headers: bearer(sandbox.adminKey),
      payload: { schema_version: 1, kind: 'svc.protocol_authorization_receipt_v1', signing_algorithm: 'rsa' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ valid: false, ...refusal('artifact.algorithm_unsupported', { field: 'signing_algorithm' }) });
  });

  it('a recognition proof that is not base64url: valid false, recognition.malformed', async () => {
    const response = await app.inject({
      method: 'POST', url: '/protocol/v2/recognition/verify', headers: bearer(sandbox.adminKey),
      payload: { proof: '!!!', expected_purpose: 'harbor.intent.fund', expected_request: { method: 'POST', path: '/harbor/intents/x/fund', body_digest_sha256_hex: '0'.repeat(64) } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ valid: false, code: 'recognition.malformed', message: errorCatalogue['recognition.malformed'].message });
  });
});
