// Whole intent lifecycles over HTTP on a real Postgres, each ledger-verified: create → fund (x402 or MPP 402
// handshake with the sandbox simulators) → evidence → confirm, to released and to refunded; declines, pending
// polls, refused credentials; every 409 and 422 of the state machine; tenant isolation.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockIntent, queueFundedTransition } from '../../src/db/intent-repository.ts';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { runMaintenance } from '../../src/services/maintenance.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 4 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object | undefined, headers: Record<string, string> = {}, tenant = acme) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, ...(payload === undefined ? {} : { payload }) });

async function createIntent(options: Partial<CreateOptions> = {}): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, ...options });
  const response = await post('/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

const fund = (intentId: string, headers: Record<string, string> = {}, tenant = acme) => post(`/harbor/intents/${intentId}/fund`, {}, headers, tenant);
const header = (response: LightMyRequestResponse, name: string) => response.headers[name] as string;

async function fundWithX402(intentId: string, from: string = sandboxX402Payers.success): Promise<LightMyRequestResponse> {
  const challenge = await fund(intentId);
  expect(challenge.statusCode).toBe(402);
  return fund(intentId, { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from }) });
}

async function fundWithMpp(intentId: string, token: string = sandboxMppTokens.success): Promise<LightMyRequestResponse> {
  const challenge = await fund(intentId);
  expect(challenge.statusCode).toBe(402);
  return fund(intentId, { 'x-svc-payment-authorization': sandboxMppAuthorization(header(challenge, 'www-authenticate'), token) });
}

const evidence = (intentId: string, payload: unknown, tenant = acme) =>
  post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload }), {}, tenant);
const confirm = (intentId: string, tenant = acme) => post(`/harbor/intents/${intentId}/settlement/confirm`, {}, {}, tenant);

async function expectLedgerClean(tenant = acme) {
  const report = await verifyTenantLedger(db, tenant.tenantId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  return report;
}

describe('lifecycles', () => {
  it('v6 on x402: 402 challenge → funded → passing evidence → released', async () => {
    const intentId = await createIntent();
    const challenge = await fund(intentId);
    expect(challenge.statusCode).toBe(402);
    expect(header(challenge, 'cache-control')).toBe('no-store');
    expect(header(challenge, 'payment-required')).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(challenge.json()).toMatchObject({ tenant: acme.tenantId, intent_id: intentId, state: 'open', funded: false, funding: { settlement_rail: 'x402_usdc_base' } });

    const funded = await fund(intentId, { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers.success }) });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toMatchObject({ state: 'funded', funded: true, amount_cents: 500, capability_token: expect.any(String) });

    const recorded = await evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect(recorded.json()).toMatchObject({ state: 'evidence_recorded', predicate_passed: true, predicate_evaluation: { passed: true } });

    const settled = await confirm(intentId);
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json()).toMatchObject({ state: 'released', settlement: { action: 'release', reason: 'predicate_passed' } });
    // The transitions travel with COMMIT, so the answer is the intent as predicted: it must be the intent as stored.
    const { settlement: _settlement, ...answered } = settled.json() as Record<string, unknown>;
    const stored = await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) });
    expect(answered).toEqual(stored.json());
    expect(answered).toMatchObject({ funded_at: expect.any(String), evidence_recorded_at: expect.any(String), settled_at: expect.any(String) });
    const report = await expectLedgerClean();
    expect(report.balances[`payee:${payee.did}:payable`]).toBeGreaterThanOrEqual(500);
  });

  it('v6 on MPP: failing evidence → refunded', async () => {
    const intentId = await createIntent({ settlementRail: 'processor_mpp' });
    const funded = await fundWithMpp(intentId);
    expect(funded.statusCode, funded.body).toBe(200);
    const recorded = await evidence(intentId, { status: 'failed' });
    expect(recorded.json()).toMatchObject({ predicate_passed: false });
    const settled = await confirm(intentId);
    expect(settled.json()).toMatchObject({ state: 'refunded', settlement: { action: 'refund', reason: 'predicate_failed' } });
    await expectLedgerClean();
  });

  it('v7 bound to the policy head: released and refunded by the template\'s rule', async () => {
    const version = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1' })).json();
    await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: version.version_seq });
    const policy = { templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate };
    const within = await createIntent({ policy });
    expect((await fundWithX402(within)).statusCode).toBe(200);
    expect((await evidence(within, { status: 'completed', cost_cents: 500 })).json().predicate_passed).toBe(true);
    expect((await confirm(within)).json().state).toBe('released');
    const over = await createIntent({ policy, settlementRail: 'processor_mpp' });
    expect((await fundWithMpp(over)).statusCode).toBe(200);
    expect((await evidence(over, { status: 'completed', cost_cents: 501 })).json().predicate_passed).toBe(false);
    expect((await confirm(over)).json().state).toBe('refunded');
    await expectLedgerClean();
  });
});

describe('funding handshakes', () => {
  it('x402: a decline answers 402 with a fresh challenge and moves nothing', async () => {
    const intentId = await createIntent();
    const declined = await fundWithX402(intentId, sandboxX402Payers.decline);
    expect(declined.statusCode).toBe(402);
    expect(header(declined, 'payment-required')).toBeTruthy();
    expect(declined.json()).toMatchObject({ state: 'open', funded: false });
    const read = (await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) })).json();
    expect(read.state).toBe('open');
    // The intent can still be funded afterwards.
    expect((await fundWithX402(intentId)).statusCode).toBe(200);
    await expectLedgerClean();
  });

  it('x402: pending answers 202, the same request polls, and the money moves once', async () => {
    const intentId = await createIntent();
    const challenge = await fund(intentId);
    const credential = { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers.pending }), 'idempotency-key': `fund-${intentId}` };
    const pending = await fund(intentId, credential);
    expect(pending.statusCode, pending.body).toBe(202);
    expect(pending.json()).toMatchObject({ state: 'open', funded: false });
    const settled = await fund(intentId, credential);
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json().funded).toBe(true);
    const replay = await fund(intentId, credential);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(settled.body);
    const report = await expectLedgerClean();
    expect(Number(report.balances[`intent:${intentId}:escrow`])).toBe(500);
  });

  it('MPP: decline → 402; pending → 202 then 200; malformed and unknown-challenge credentials → 402 problem+json', async () => {
    const declinedIntent = await createIntent({ settlementRail: 'processor_mpp' });
    const declined = await fundWithMpp(declinedIntent, sandboxMppTokens.decline);
    expect(declined.statusCode).toBe(402);
    expect(header(declined, 'www-authenticate')).toMatch(/^Payment /);

    const paid = await fundWithMpp(await createIntent({ settlementRail: 'processor_mpp' }));
    expect(paid.statusCode).toBe(200);
    expect(header(paid, 'payment-receipt')).toBeTruthy();
    expect(header(paid, 'cache-control')).toBe('private, no-store');

    const pendingIntent = await createIntent({ settlementRail: 'processor_mpp' });
    const challenge = await fund(pendingIntent);
    const credential = { 'x-svc-payment-authorization': sandboxMppAuthorization(header(challenge, 'www-authenticate'), sandboxMppTokens.pending) };
    expect((await fund(pendingIntent, credential)).statusCode).toBe(202);
    expect((await fund(pendingIntent, credential)).statusCode).toBe(200);

    const otherIntent = await createIntent({ settlementRail: 'processor_mpp' });
    for (const value of ['Payment !!!not-base64url!!!', credential['x-svc-payment-authorization']]) {
      const refused = await fund(otherIntent, { 'x-svc-payment-authorization': value });
      expect(refused.statusCode).toBe(402);
      expect(header(refused, 'content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.json()).toMatchObject({ status: 402, type: expect.stringMatching(/^https:\/\/paymentauth\.org\/problems\//), intent_id: otherIntent, funded: false });
      expect(header(refused, 'www-authenticate')).toMatch(/^Payment /);
    }
    await expectLedgerClean();
  });

  // The credential is read, and the attempt it names fetched, before the intent is: the attempt must still be the
  // intent's own, and only the intent's rail may judge the request.
  it("judges a credential by the intent's rail only, against that intent's own challenge", async () => {
    const [first, second] = [await createIntent(), await createIntent()];
    const firstChallenge = await fund(first);
    const secondChallenge = await fund(second);
    const firstCredential = sandboxX402PaymentSignature(header(firstChallenge, 'payment-required'), { from: sandboxX402Payers.success });
    // The first intent's credential presented for the second: no challenge of the second intent is named.
    const crossed = await fund(second, { 'payment-signature': firstCredential });
    expect(crossed.statusCode).toBe(402);
    expect(crossed.json()).toMatchObject({ intent_id: second, funded: false });

    // An MPP credential beside the x402 one: the x402 intent ignores it, and an MPP intent ignores the x402 one.
    const mppIntent = await createIntent({ settlementRail: 'processor_mpp' });
    const mppCredential = sandboxMppAuthorization(header(await fund(mppIntent), 'www-authenticate'), sandboxMppTokens.success);
    const both = (x402: string) => ({ 'payment-signature': x402, 'x-svc-payment-authorization': mppCredential });
    const paidX402 = await fund(second, both(sandboxX402PaymentSignature(header(secondChallenge, 'payment-required'), { from: sandboxX402Payers.success })));
    expect(paidX402.statusCode, paidX402.body).toBe(200);
    expect(paidX402.json()).toMatchObject({ intent_id: second, funded: true, funding: { settlement_rail: 'x402_usdc_base' } });
    const paidMpp = await fund(mppIntent, both(firstCredential));
    expect(paidMpp.statusCode, paidMpp.body).toBe(200);
    expect(paidMpp.json()).toMatchObject({ intent_id: mppIntent, funded: true, funding: { settlement_rail: 'processor_mpp' } });
    // The first intent's challenge is untouched and still pays for it.
    expect((await fund(first, { 'payment-signature': firstCredential })).statusCode).toBe(200);
    await expectLedgerClean();
  });
});

describe('state machine', () => {
  it('answers 409 for every transition out of order', async () => {
    const open = await createIntent();
    expect((await evidence(open, { status: 'completed' })).statusCode).toBe(409);
    expect((await confirm(open)).statusCode).toBe(409);
    expect((await fundWithX402(open)).statusCode).toBe(200);
    const again = await fund(open);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'intent.invalid_state', details: { state: 'funded' } });
    const early = await confirm(open);
    expect(early.statusCode).toBe(409);
    expect((await evidence(open, { status: 'completed' })).statusCode).toBe(200);
    expect((await evidence(open, { status: 'completed' })).statusCode).toBe(409);
    expect((await confirm(open)).statusCode).toBe(200);
    expect((await confirm(open)).statusCode).toBe(409);
    expect((await fund(open)).statusCode).toBe(409);
  });

  it('fails the commit, and keeps nothing of the transaction, when a queued transition finds the intent moved', async () => {
    const intentId = await createIntent();
    const failed = db.tenant(acme.tenantId, async (tx) => {
      const intent = (await lockIntent(tx, acme.tenantId, intentId))!;
      // What no caller does: the row changes under the lock after its state was read and checked.
      await tx.query(`UPDATE intents SET state = 'funded', funded_at = now() WHERE intent_id = $1`, [intentId]);
      queueFundedTransition(tx, intent, 'ref-never-stored');
    });
    await expect(failed).rejects.toMatchObject({ code: '21000', message: expect.stringContaining('intent transition from open') });
    const stored = await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) });
    expect(stored.json()).toMatchObject({ state: 'open', funded_at: null });
  });

  it('answers 422 for evidence of the wrong shape or from the wrong payee, 400 for a bad or replayed signature', async () => {
    const intentId = await createIntent();
    expect((await fundWithX402(intentId)).statusCode).toBe(200);
    const notObject = await evidence(intentId, ['completed']);
    expect([notObject.statusCode, notObject.json().error.code]).toEqual([422, 'evidence.payload_not_object']);
    const mismatch = await evidence(intentId, { status: 7 });
    expect([mismatch.statusCode, mismatch.json().error.code]).toEqual([422, 'evidence.schema_mismatch']);
    expect(mismatch.json().error.details.fields[0].path).toBe('/status');

    const stranger = party('did:payee:mallory');
    const wrongPayee = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee: stranger, payload: { status: 'completed' } }));
    expect([wrongPayee.statusCode, wrongPayee.json().error.code]).toEqual([422, 'evidence.payee_mismatch']);

    const good = signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } });
    const tampered = await post(`/harbor/intents/${intentId}/evidence`, { ...good, payload: { status: 'completed', cost_cents: 1 } });
    expect([tampered.statusCode, tampered.json().error.code]).toEqual([400, 'signing.signature_invalid']);

    const otherIntent = await createIntent();
    expect((await fundWithX402(otherIntent)).statusCode).toBe(200);
    const replayedFromOther = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId: otherIntent, payee, payload: { status: 'completed' } }));
    expect([replayedFromOther.statusCode, replayedFromOther.json().error.code]).toEqual([400, 'signing.signature_invalid']);
    // None of the refusals moved the intent.
    expect((await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) })).json().state).toBe('funded');
  });

  it('refunds a funded intent past its deadline: by confirm, and by the maintenance sweeper', async () => {
    const soon = () => new Date(Date.now() + 1_500).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const byConfirm = await createIntent({ deadline: soon() });
    const bySweeper = await createIntent({ deadline: soon() });
    expect((await fundWithX402(byConfirm)).statusCode).toBe(200);
    expect((await fundWithX402(bySweeper)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const late = await evidence(byConfirm, { status: 'completed' });
    expect([late.statusCode, late.json().error.code]).toEqual([409, 'intent.deadline_passed']);
    expect((await confirm(byConfirm)).json()).toMatchObject({ state: 'refunded', settlement: { action: 'refund', reason: 'deadline_passed' } });
    const report = await runMaintenance(db, app.engineEffects);
    expect(report).toMatchObject({ ran: true });
    expect(report.refunded).toBeGreaterThanOrEqual(1);
    expect((await app.inject({ url: `/harbor/intents/${bySweeper}`, headers: bearer(acme.adminKey) })).json().state).toBe('refunded');
    await expectLedgerClean();
  });
});

describe('tenant isolation', () => {
  it('answers 404 on every engine route for another tenant\'s intent', async () => {
    const intentId = await createIntent();
    const requests = [
      app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(globex.adminKey) }),
      fund(intentId, {}, globex),
      evidence(intentId, { status: 'completed' }, globex),
      confirm(intentId, globex),
    ];
    for (const response of await Promise.all(requests)) {
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('intent.not_found');
    }
    expect((await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) })).json().state).toBe('open');
  });
});
