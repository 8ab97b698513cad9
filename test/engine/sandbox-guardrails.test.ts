// Sandbox guardrails over HTTP on a real Postgres: bootstrap with a preset, with a template and with neither (the
// default rule), evidence that releases and evidence that refunds, every field the public client requires with
// the type it requires, the 400/403/404 refusals, idempotent bootstrap, and a clean ledger after each flow.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { artifactsDigest, jsonDigestBlake3 } from '../../src/signing/digests.ts';
import { bytesToHex } from '../../src/signing/encoding.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
let initech: TestTenant;
const uuidV4Pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  initech = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object | undefined, headers: Record<string, string> = {}, key = acme.adminKey) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, ...(payload === undefined ? {} : { payload }) });
const bootstrap = (body: object, headers: Record<string, string> = {}, key = acme.adminKey) => post('/v1/sandbox/guardrails/bootstrap', body, headers, key);
const evidence = (intentId: string, body: object | undefined, key = acme.adminKey) => post(`/v1/sandbox/guardrails/${intentId}/evidence`, body, {}, key);
const readIntent = async (intentId: string, key = acme.adminKey) => (await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(key) })).json();

async function expectLedgerClean(tenant = acme) {
  const report = await verifyTenantLedger(db, tenant.tenantId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  return report;
}

/** What PaybondGuardrails requires of a bootstrap answer: non-empty strings and a number, and the tenant echo. */
function expectBootstrapAnswer(response: LightMyRequestResponse, operation: string, cents: number, tenant = acme) {
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json();
  for (const field of ['tenant_id', 'intent_id', 'capability_token', 'operation', 'sandbox_lifecycle_status']) {
    expect(typeof answer[field], field).toBe('string');
    expect(answer[field].length, field).toBeGreaterThan(0);
  }
  expect(answer).toMatchObject({
    tenant_id: tenant.tenantId, operation, sandbox_lifecycle_status: 'funded', requested_spend_cents: cents,
    currency: 'usd', settlement_rail: 'x402_usdc_base', settlement_mode: 'simulated',
    simulator_event: { type: 'funding.simulated', reference: expect.stringMatching(/^sim_/) },
  });
  expect(typeof answer.requested_spend_cents).toBe('number');
  expect(answer.intent_id).toMatch(uuidV4Pattern);
  expect(response.headers['cache-control']).toBe('private, no-store');
  return answer;
}

/** What the client requires of an evidence answer, plus the fields we document. */
function expectEvidenceAnswer(response: LightMyRequestResponse, intentId: string, status: 'released' | 'refunded', tenant = acme) {
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json();
  for (const field of ['tenant_id', 'intent_id', 'operation', 'sandbox_lifecycle_status', 'payload_digest', 'artifacts_digest', 'settlement_rail']) {
    expect(typeof answer[field], field).toBe('string');
  }
  expect(answer).toMatchObject({
    tenant_id: tenant.tenantId, intent_id: intentId, sandbox_lifecycle_status: status, predicate_passed: status === 'released',
    settlement_mode: 'simulated', settlement_rail: 'x402_usdc_base',
    predicate_evaluation: { passed: status === 'released', trace: expect.any(Array) },
    settlement: { action: status === 'released' ? 'release' : 'refund' },
  });
  expect(typeof answer.requested_spend_cents).toBe('number');
  expect(answer.payload_digest).toMatch(/^[0-9a-f]{64}$/);
  expect(answer.artifacts_digest).toMatch(/^[0-9a-f]{64}$/);
  return answer;
}

const verify = (intentId: string, token: string, cents: number, key = acme.adminKey) =>
  post('/verify', { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: cents }, {}, key);

describe('bootstrap and evidence', () => {
  it('a preset: an unsigned funded intent and a working token; passing evidence releases it', async () => {
    const answer = expectBootstrapAnswer(
      await bootstrap({ operation: ' Search.Web ', requested_spend_cents: 250, completion_preset: 'cost_and_completion', metadata: { run: 'r-1' } }),
      'search.web',
      250,
    );
    expect(answer).toMatchObject({ completion_source: 'preset', completion_preset: 'cost_and_completion', template_id: 'completion_budget_v1', allowed_tools: ['search.web'], metadata: { run: 'r-1' } });
    const intent = await readIntent(answer.intent_id);
    expect(intent).toMatchObject({
      state: 'funded', signing_version: 0, principal_did: `did:svc:sandbox:${acme.tenantId}`, payee_did: 'did:svc:sandbox:payee',
      amount_cents: 250, currency: 'usd', allowed_tools: ['search.web'], settlement_rail: 'x402_usdc_base', completion_preset_id: 'cost_and_completion',
      evidence_schema: { required: ['status', 'cost_cents'] },
    });
    expect(Date.parse(intent.deadline) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect((await verify(answer.intent_id, answer.capability_token, 100)).json()).toMatchObject({ allow: true, remaining_cents: 150 });

    const payload = { status: 'completed', cost_cents: 90 };
    const artifacts = ['ab'.repeat(32)];
    const settled = expectEvidenceAnswer(await evidence(answer.intent_id, { payload, artifacts, operation: 'search.web', requested_spend_cents: 90, metadata: { tool_call_id: 'c-1' } }), answer.intent_id, 'released');
    expect(settled).toMatchObject({ operation: 'search.web', requested_spend_cents: 90 });
    expect(settled.payload_digest).toBe(bytesToHex(jsonDigestBlake3(payload)));
    expect(settled.artifacts_digest).toBe(bytesToHex(artifactsDigest(artifacts)));
    expect((await readIntent(answer.intent_id)).state).toBe('released');
    // Settled: the token is revoked by state.
    expect((await verify(answer.intent_id, answer.capability_token, 1)).json()).toMatchObject({ allow: false, code: 'capability.revoked' });
    const report = await expectLedgerClean();
    expect(report.balances['payee:did:svc:sandbox:payee:payable']).toBeGreaterThanOrEqual(250);
  });

  it('template_id with parameters and a schema: failing evidence refunds it', async () => {
    const answer = expectBootstrapAnswer(
      await bootstrap({
        operation: 'booking.create', requested_spend_cents: 1200, currency: 'USD',
        template_id: 'webhook_confirmation_v1', parameters: { expected_event_type: 'booking.confirmed' },
        evidence_schema: { type: 'object', properties: { event_type: { type: 'string' } }, required: ['event_type'] },
      }),
      'booking.create',
      1200,
    );
    expect(answer).toMatchObject({ completion_source: 'template', completion_preset: null, template_id: 'webhook_confirmation_v1', parameters: { expected_event_type: 'booking.confirmed', event_type_path: ['event_type'] } });
    const refused = await evidence(answer.intent_id, { payload: { event_type: 7 } });
    expect([refused.statusCode, refused.json().error.code]).toEqual([422, 'evidence.schema_mismatch']);
    const settled = expectEvidenceAnswer(await evidence(answer.intent_id, { payload: { event_type: 'booking.cancelled' } }), answer.intent_id, 'refunded');
    expect(settled).toMatchObject({ operation: 'booking.create', requested_spend_cents: 1200, settlement: { reason: 'predicate_failed' } });
    expect((await readIntent(answer.intent_id)).state).toBe('refunded');
    const again = await evidence(answer.intent_id, { payload: { event_type: 'booking.confirmed' } });
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'intent.invalid_state']);
    const report = await expectLedgerClean();
    expect(report.balances[`payer:did:svc:sandbox:${acme.tenantId}:refund`]).toBeGreaterThanOrEqual(1200);
  });

  it('a template without parameters or schema, and evidence with no body at all', async () => {
    const answer = expectBootstrapAnswer(await bootstrap({ operation: 'noop', requested_spend_cents: 1, template_id: 'true_v1' }), 'noop', 1);
    expect(answer.evidence_schema).toEqual({ type: 'object' });
    const settled = expectEvidenceAnswer(await evidence(answer.intent_id, undefined), answer.intent_id, 'released');
    expect(settled).toMatchObject({ operation: 'noop', requested_spend_cents: 1, payload_digest: bytesToHex(jsonDigestBlake3({})) });
    await expectLedgerClean();
  });

  it('neither preset nor template: the default rule completion_v1 with its default parameters, echoed in the answer', async () => {
    const answer = expectBootstrapAnswer(await bootstrap({ operation: 'search.web', requested_spend_cents: 40 }), 'search.web', 40);
    expect(answer).toMatchObject({
      completion_source: 'default', completion_preset: null, template_id: 'completion_v1',
      parameters: { status_path: ['status'], expected_status: 'completed' },
      predicate_dsl: { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } },
      evidence_schema: { type: 'object' },
    });
    expect((await readIntent(answer.intent_id)).predicate_dsl).toEqual(answer.predicate_dsl);
    expectEvidenceAnswer(await evidence(answer.intent_id, { payload: { status: 'completed' } }), answer.intent_id, 'released');

    const failing = expectBootstrapAnswer(await bootstrap({ operation: 'search.web', requested_spend_cents: 41 }), 'search.web', 41);
    expectEvidenceAnswer(await evidence(failing.intent_id, { payload: { status: 'failed' } }), failing.intent_id, 'refunded');
    await expectLedgerClean();
  });

  it('an evidence_schema without a template keeps the default rule and applies the schema', async () => {
    const evidenceSchema = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] };
    const answer = expectBootstrapAnswer(await bootstrap({ operation: 'search.web', requested_spend_cents: 42, evidence_schema: evidenceSchema }), 'search.web', 42);
    expect(answer).toMatchObject({ completion_source: 'default', template_id: 'completion_v1', evidence_schema: evidenceSchema });
    const refused = await evidence(answer.intent_id, { payload: { outcome: 'completed' } });
    expect([refused.statusCode, refused.json().error.code]).toEqual([422, 'evidence.schema_mismatch']);
    expectEvidenceAnswer(await evidence(answer.intent_id, { payload: { status: 'completed' } }), answer.intent_id, 'released');
  });

  it('an operation other than the bootstrapped one is 422', async () => {
    const answer = expectBootstrapAnswer(await bootstrap({ operation: 'search.web', requested_spend_cents: 10, completion_preset: 'sandbox_permissive' }), 'search.web', 10);
    const wrong = await evidence(answer.intent_id, { operation: 'payments.transfer' });
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([422, 'sandbox.operation_mismatch']);
    expect((await readIntent(answer.intent_id)).state).toBe('funded');
  });
});

describe('refusals', () => {
  it('400: preset with a schema, a template_id or parameters; parameters without a template; unknown preset or template; a body tenant_id; bad amounts', async () => {
    const base = { operation: 'search.web', requested_spend_cents: 100 };
    const cases: [object, string][] = [
      [{ ...base, completion_preset: 'api_response_ok', evidence_schema: { type: 'object' } }, 'sandbox.completion_conflict'],
      [{ ...base, completion_preset: 'api_response_ok', template_id: 'true_v1' }, 'sandbox.completion_conflict'],
      [{ ...base, completion_preset: 'api_response_ok', parameters: {} }, 'sandbox.completion_conflict'],
      [{ ...base, parameters: {} }, 'sandbox.completion_conflict'],
      [{ ...base, parameters: { expected_status: 'done' }, evidence_schema: { type: 'object' } }, 'sandbox.completion_conflict'],
      [{ ...base, completion_preset: 'no_such_preset' }, 'sandbox.preset_unknown'],
      [{ ...base, template_id: 'no_such_template' }, 'policy.template_unknown'],
      [{ ...base, template_id: 'api_response_v1', parameters: { expected_http_status: 'ok' } }, 'policy.parameter_invalid'],
      [{ ...base, template_id: 'true_v1', evidence_schema: { $ref: 'https://example.com/schema' } }, 'intent.evidence_schema_invalid'],
      [{ ...base, completion_preset: 'api_response_ok', tenant_id: acme.tenantId }, 'request.invalid'],
      [{ ...base, completion_preset: 'api_response_ok', requested_spend_cents: 0 }, 'request.invalid'],
      [{ ...base, completion_preset: 'api_response_ok', operation: '   ' }, 'request.invalid'],
      [{ ...base, completion_preset: 'api_response_ok', metadata: { blob: 'x'.repeat(17 * 1024) } }, 'sandbox.metadata_too_large'],
    ];
    for (const [body, code] of cases) {
      const response = await bootstrap(body);
      expect([response.statusCode, response.json().error.code], JSON.stringify(body).slice(0, 120)).toEqual([400, code]);
    }
    const euro = await bootstrap({ ...base, completion_preset: 'api_response_ok', currency: 'eur' });
    expect([euro.statusCode, euro.json().error.code]).toEqual([422, 'funding.currency_not_allowed']);
    const count = await db.system(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM intents WHERE tenant_id = $1 AND amount_cents = 100', [acme.tenantId])).rows[0]!.n);
    expect(count).toBe(0);
  });

  it('400 for any x-tenant-id, even our own, on both routes; 403 for a live tenant, before the body is read', async () => {
    const body = { operation: 'search.web', requested_spend_cents: 101, completion_preset: 'sandbox_permissive' };
    const funded = expectBootstrapAnswer(await bootstrap(body), 'search.web', 101);
    for (const tenantId of [acme.tenantId, globex.tenantId, '']) {
      const hinted = await bootstrap(body, { 'x-tenant-id': tenantId });
      expect([hinted.statusCode, hinted.json().error.code], tenantId).toEqual([400, 'request.tenant_header_refused']);
      const hintedEvidence = await post(`/v1/sandbox/guardrails/${funded.intent_id}/evidence`, {}, { 'x-tenant-id': tenantId });
      expect([hintedEvidence.statusCode, hintedEvidence.json().error.code], tenantId).toEqual([400, 'request.tenant_header_refused']);
    }
    // Refused before anything ran: no intent beyond the one bootstrapped without the header, and it is still funded.
    const count = await db.system(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM intents WHERE tenant_id = $1 AND amount_cents = 101', [acme.tenantId])).rows[0]!.n);
    expect(count).toBe(1);
    expect((await readIntent(funded.intent_id)).state).toBe('funded');
    // The credential is still checked first: no key is 401 whatever the header says.
    const anonymous = await app.inject({ method: 'POST', url: '/v1/sandbox/guardrails/bootstrap', headers: { 'x-tenant-id': acme.tenantId }, payload: body });
    expect([anonymous.statusCode, anonymous.json().error.code]).toEqual([401, 'auth.credential_missing']);
    for (const response of [
      await bootstrap(body, {}, initech.adminKey),
      await bootstrap({ nonsense: true }, {}, initech.adminKey),
      await evidence('00000000-0000-4000-8000-000000000001', {}, initech.adminKey),
    ]) {
      expect([response.statusCode, response.json().error.code]).toEqual([403, 'sandbox.live_tenant']);
    }
    const auditor = await bootstrap(body, {}, await acme.key('auditor'));
    expect([auditor.statusCode, auditor.json().error.code]).toEqual([403, 'auth.role_insufficient']);
  });

  it('404 for a signed intent, another tenant\'s guardrail intent and an unknown id; none of them is touched', async () => {
    const principal = party('did:principal:alice');
    const payee = party('did:payee:tools-inc');
    const created = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const signedId = created.intent_id as string;
    expect((await post('/harbor/intents', created)).statusCode).toBe(201);
    const challenge = await post(`/harbor/intents/${signedId}/fund`, {});
    const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
    expect((await post(`/harbor/intents/${signedId}/fund`, {}, { 'payment-signature': paymentSignature })).statusCode).toBe(200);

    const theirs = expectBootstrapAnswer(
      await bootstrap({ operation: 'search.web', requested_spend_cents: 5, completion_preset: 'sandbox_permissive' }, {}, globex.adminKey),
      'search.web', 5, globex,
    );
    for (const intentId of [signedId, theirs.intent_id, '00000000-0000-4000-8000-000000000001']) {
      const response = await evidence(intentId, { payload: { status: 'completed' } });
      expect([response.statusCode, response.json().error.code]).toEqual([404, 'intent.not_found']);
    }
    expect((await readIntent(signedId)).state).toBe('funded');
    expect((await readIntent(theirs.intent_id, globex.adminKey)).state).toBe('funded');
    await expectLedgerClean();
    await expectLedgerClean(globex);
  });
});

describe('idempotency', () => {
  it('the same bootstrap with the same key creates and funds one intent and replays the same answer', async () => {
    const body = { operation: 'search.web', requested_spend_cents: 77, completion_preset: 'api_response_ok' };
    const headers = { 'idempotency-key': 'bootstrap-77' };
    const first = expectBootstrapAnswer(await bootstrap(body, headers), 'search.web', 77);
    const replay = await bootstrap(body, headers);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first);
    const reused = await bootstrap({ ...body, requested_spend_cents: 78 }, headers);
    expect([reused.statusCode, reused.json().error.code]).toEqual([409, 'idempotency.key_reused']);
    const count = await db.system(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM intents WHERE tenant_id = $1 AND amount_cents = 77', [acme.tenantId])).rows[0]!.n);
    expect(count).toBe(1);

    const evidenceHeaders = { 'idempotency-key': `evidence-${first.intent_id}` };
    const payload = { payload: { http_status: 200, vendor_ref_id: 'v-1', response_digest: 'd' } };
    const settled = await post(`/v1/sandbox/guardrails/${first.intent_id}/evidence`, payload, evidenceHeaders);
    expectEvidenceAnswer(settled, first.intent_id, 'released');
    const settledAgain = await post(`/v1/sandbox/guardrails/${first.intent_id}/evidence`, payload, evidenceHeaders);
    expect([settledAgain.statusCode, settledAgain.body, settledAgain.headers['idempotent-replayed']]).toEqual([200, settled.body, 'true']);
    await expectLedgerClean();
  });
});
