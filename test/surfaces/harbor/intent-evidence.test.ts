// GET /harbor/intents/{id}/evidence over HTTP on a real Postgres: signed evidence (passing) and sandbox evidence
// (failing) answered as stored with their outcome and trace, an empty list before evidence, the page and cursor,
// the readers (every role, restricted keys by scope), and another tenant's intent answered 404.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:search-vendor');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const get = (url: string, key = acme.adminKey) => app.inject({ url, headers: bearer(key) });
const post = (url: string, payload: object, headers: Record<string, string> = {}, key = acme.adminKey) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload });
const errorOf = (response: LightMyRequestResponse) => ({ status: response.statusCode, code: response.json().error?.code });

/** A signed v6 intent of acme, funded over x402 with the sandbox payer. */
async function fundedIntent(): Promise<string> {
  const body = signedCreateBody({
    tenantId: acme.tenantId,
    principal,
    payee,
    evidenceSchema: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] },
    predicate: { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } },
  });
  const intentId = body.intent_id as string;
  expect((await post('/harbor/intents', body)).statusCode).toBe(201);
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  const paid = await post(`/harbor/intents/${intentId}/fund`, {}, {
    'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
  });
  expect(paid.statusCode, paid.body).toBe(200);
  return intentId;
}

describe('GET /harbor/intents/{id}/evidence', () => {
  let signedIntent: string;
  let sandboxIntent: string;

  it('answers an empty list before evidence, then the signed evidence as stored with its passing trace', async () => {
    signedIntent = await fundedIntent();
    expect((await get(`/harbor/intents/${signedIntent}/evidence`)).json()).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });

    const evidence = signedEvidenceBody({ tenantId: acme.tenantId, intentId: signedIntent, payee, payload: { status: 'completed' } });
    const recorded = await post(`/harbor/intents/${signedIntent}/evidence`, evidence);
    expect(recorded.statusCode, recorded.body).toBe(200);

    const response = await get(`/harbor/intents/${signedIntent}/evidence`);
    expect(response.statusCode, response.body).toBe(200);
    const list = response.json();
    expect(list).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(list.data).toHaveLength(1);
    const [submission] = list.data;
    expect(submission).toEqual({
      object: 'evidence_submission',
      tenant_id: acme.tenantId,
      submission_id: `evs_${recorded.json().payload_digest}`,
      intent_id: signedIntent,
      submitted_at: evidence.submitted_at,
      recorded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      payee_did: payee.did,
      payee_signed: true,
      evidence: { payload: { status: 'completed' }, artifacts: [] },
      payload_digest: recorded.json().payload_digest,
      artifacts_digest: recorded.json().artifacts_digest,
      outcome: 'pass',
      predicate_passed: true,
      predicate_evaluation: recorded.json().predicate_evaluation,
      external_attestations: [],
      agent_run_id: null,
    });
    expect(submission.predicate_evaluation.trace[0]).toMatchObject({ kind: 'completion', data: { path: '/status', passed: true } });
    // The signature is checked on arrival and kept for the audit export; this read does not answer it.
    expect(response.body).not.toContain(evidence.payee_signature as string);
  });

  it('answers sandbox evidence that failed its rule with outcome fail and the failing step', async () => {
    const bootstrap = await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100 });
    expect(bootstrap.statusCode, bootstrap.body).toBe(200);
    sandboxIntent = bootstrap.json().intent_id;
    const submitted = await post(`/v1/sandbox/guardrails/${sandboxIntent}/evidence`, { payload: { status: 'failed', cost_cents: 10 } });
    expect(submitted.statusCode, submitted.body).toBe(200);
    expect(submitted.json().predicate_passed).toBe(false);

    const [submission] = (await get(`/harbor/intents/${sandboxIntent}/evidence`)).json().data;
    expect(submission).toMatchObject({ outcome: 'fail', predicate_passed: false, payee_signed: false, evidence: { payload: { status: 'failed', cost_cents: 10 } } });
    expect(submission.predicate_evaluation).toEqual(submitted.json().predicate_evaluation);
    expect(submission.predicate_evaluation.trace.some((step: { data: { passed: boolean } }) => step.data.passed === false)).toBe(true);
  });

  it('pages with limit and cursor; a cursor of no submission answers an empty page; bad input is 400', async () => {
    const first = (await get(`/harbor/intents/${signedIntent}/evidence?limit=1`)).json();
    expect(first.data).toHaveLength(1);
    const after = await get(`/harbor/intents/${signedIntent}/evidence?cursor=${first.data[0].submission_id}`);
    expect(after.json()).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    // The cursor of another intent's submission names nothing of this intent.
    const sandboxSubmission = (await get(`/harbor/intents/${sandboxIntent}/evidence`)).json().data[0].submission_id;
    expect((await get(`/harbor/intents/${signedIntent}/evidence?cursor=${sandboxSubmission}`)).json().data).toEqual([]);
    for (const query of ['limit=0', 'limit=201', 'cursor=evs_zz', 'cursor=abc', 'colour=blue']) {
      expect(errorOf(await get(`/harbor/intents/${signedIntent}/evidence?${query}`)), query).toEqual({ status: 400, code: 'request.invalid' });
    }
    expect(errorOf(await get('/harbor/intents/not-a-uuid/evidence'))).toEqual({ status: 400, code: 'request.invalid' });
  });

  it('is read by every role, by restricted keys with mcp.discovery:read only, and is 404 for another tenant', async () => {
    for (const role of ['operator', 'agent', 'auditor'] as const) {
      const response = await get(`/harbor/intents/${signedIntent}/evidence`, await acme.key(role));
      expect(response.statusCode, role).toBe(200);
      expect(response.json().data).toHaveLength(1);
    }
    expect((await get(`/harbor/intents/${signedIntent}/evidence`, await acme.key('agent', ['mcp.discovery:read']))).statusCode).toBe(200);
    expect(errorOf(await get(`/harbor/intents/${signedIntent}/evidence`, await acme.key('agent', ['mcp.spend:write'])))).toEqual({ status: 403, code: 'auth.scope_insufficient' });

    const foreign = await get(`/harbor/intents/${signedIntent}/evidence`, globex.adminKey);
    expect(errorOf(foreign)).toEqual({ status: 404, code: 'intent.not_found' });
    expect(foreign.body).not.toContain('completed');
    expect(errorOf(await get('/harbor/intents/00000000-0000-4000-8000-000000000001/evidence'))).toEqual({ status: 404, code: 'intent.not_found' });
    expect(errorOf(await app.inject({ url: `/harbor/intents/${signedIntent}/evidence` }))).toMatchObject({ status: 401 });
  });
});
