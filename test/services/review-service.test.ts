// Review holds over HTTP on a real Postgres (docs/release-gate.md): the release gate as the public client reads and
// sets it; review_only recording a signal without holding; critical_hold holding a sandbox lifecycle and a signed
// (confirm) one; the hold in the review queue, a review event, the operator's review status, an operator's
// resolution with its signed receipt, every artifact checked offline (the client-format verifier for the settlement
// and agent receipts and the inclusion proofs, an independent Ed25519 check for the resolution receipt), a clean
// ledger; a held intent past its deadline refunded by the sweeper; the fraud metrics' counts; the refusals.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { GatewayKeyring, newKeyFileEntry } from '../../src/infra/gateway-keys.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { publishTreeHeads } from '../../src/receipts/transparency-log.ts';
import { expireIntents } from '../../src/engine/expire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { signingKeysOf, verifyClientAgentReceipt, verifyClientInclusionProof, verifyClientSettlementReceipt } from '../helpers/client-verifier.ts';
import { expectIndependentlyVerified } from '../helpers/receipts.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let keyring: GatewayKeyring;
let acme: TestTenant;
let globex: TestTenant;
let operatorKey: string;
let agentKey: string;
let auditorKey: string;
let clientTrusted: string[];

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  keyring = new GatewayKeyring({ keys: [newKeyFileEntry()] });
  app = await buildTestApp(database.connection, { gatewayKeys: keyring });
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  operatorKey = await acme.key('operator');
  agentKey = await acme.key('agent');
  auditorKey = await acme.key('auditor');
  clientTrusted = signingKeysOf((await app.inject({ url: '/.well-known/agent-receipt-signing-keys.json' })).json());
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, key = acme.adminKey, headers: Record<string, string> = {}) =>
  app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload === undefined ? {} : { payload }) });
const ok = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, key = acme.adminKey) => {
  const response = await send(method, url, payload, key);
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(200);
  return response.json();
};

async function expectLedgerClean(tenant = acme): Promise<void> {
  const report = await verifyTenantLedger(db, tenant.tenantId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}

/** A sandbox guardrail intent of `cents`, funded; answers its id. */
async function bootstrap(cents: number, tenant = acme): Promise<string> {
  const response = await send('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: cents, completion_preset: 'cost_and_completion' }, tenant.adminKey);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().intent_id;
}

const passingEvidence = (cents: number) => ({ payload: { status: 'completed', cost_cents: Math.min(cents, 1) }, operation: 'search.web', metadata: { tool_call_id: `call-${cents}` } });

describe('the release gate', () => {
  it('answers the defaults until set, in the client\'s shape, and keeps the signal settings a PUT leaves out', async () => {
    const initial = await ok('GET', '/signal/v1/fraud/release-gate', undefined, auditorKey);
    expect(initial).toMatchObject({
      schema_version: 1, tenant_id: acme.tenantId, score_model_version: '1', fraud_signal_version: 'svc.release_gate_signals_v1',
      config: { mode: 'review_only', standing_score_min: null, amount_limit_cents: null, first_settlement: true },
      metrics_reliability: { reliable: false, sparse: true, reviewed_count: 0, reasons: expect.arrayContaining(['reviewed_count_below_minimum']) },
      updated_at: null,
    });
    const set = await ok('PUT', '/signal/v1/fraud/release-gate', { mode: 'review_only', amount_limit_cents: 1000 });
    expect(set.config).toEqual({ mode: 'review_only', standing_score_min: null, amount_limit_cents: 1000, first_settlement: true });
    // The client sends only the mode: the signal settings stay.
    const modeOnly = await ok('PUT', '/signal/v1/fraud/release-gate', { mode: 'review_only' });
    expect(modeOnly.config.amount_limit_cents).toBe(1000);
    expect((await ok('GET', '/signal/v1/fraud/release-gate')).config).toEqual(modeOnly.config);
    // Another tenant's gate is its own.
    expect((await ok('GET', '/signal/v1/fraud/release-gate', undefined, globex.adminKey)).config.amount_limit_cents).toBeNull();
  });

  it('refuses a bad mode, unknown fields, and every role but admin setting it', async () => {
    for (const body of [{ mode: 'hold_everything' }, { mode: 'critical_hold', extra: 1 }, { mode: 'critical_hold', standing_score_min: 0 }, {}]) {
      const response = await send('PUT', '/signal/v1/fraud/release-gate', body);
      expect([response.statusCode, response.json().error.code], JSON.stringify(body)).toEqual([400, 'request.invalid']);
    }
    for (const key of [operatorKey, agentKey, auditorKey]) {
      expect((await send('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold' }, key)).statusCode).toBe(403);
    }
    expect((await send('GET', '/signal/v1/fraud/release-gate', undefined, agentKey)).statusCode).toBe(403);
    expect((await send('GET', '/signal/v1/fraud/release-gate?score_version=9')).json().error.code).toBe('standing.score_version_unsupported');
  });
});

describe('review_only', () => {
  it('records the signals a release meets and releases it', async () => {
    await ok('PUT', '/signal/v1/fraud/release-gate', { mode: 'review_only', amount_limit_cents: 100, first_settlement: true, standing_score_min: null }, globex.adminKey);
    const intentId = await bootstrap(250, globex);
    const settled = await ok('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, passingEvidence(250), globex.adminKey);
    expect(settled.sandbox_lifecycle_status).toBe('released');
    expect(settled.review_hold).toBeUndefined();
    const status = await ok('GET', `/signal/v1/operators/${encodeURIComponent('did:svc:sandbox:payee')}/review-status`, undefined, globex.adminKey);
    expect(status).toMatchObject({ tenant_id: globex.tenantId, operator_did: 'did:svc:sandbox:payee', review_state: 'none', held_intents: [] });
    expect(status.fraud_signals.map((signal: { code: string }) => signal.code).sort()).toEqual(['amount_over_limit', 'first_settlement_with_payee']);
    expect(status.release_gate).toMatchObject({ mode: 'review_only', enforcement_enabled: false, hold_required: false, release_allowed: true });
    const metrics = await ok('GET', '/signal/v1/fraud/metrics?window=24h', undefined, globex.adminKey);
    expect(metrics).toMatchObject({ critical_signal_count: 2, flagged_operator_count: 1, holds_placed_count: 0, review_open_count: 0, signal_counts_by_code: { amount_over_limit: 1, first_settlement_with_payee: 1 } });
    // The second release to the payee is no longer a first one.
    const second = await bootstrap(50, globex);
    await ok('POST', `/v1/sandbox/guardrails/${second}/evidence`, passingEvidence(50), globex.adminKey);
    expect((await ok('GET', '/signal/v1/fraud/metrics', undefined, globex.adminKey)).critical_signal_count).toBe(2);
    expect((await ok('GET', '/signal/v1/review-queue', undefined, globex.adminKey)).items).toEqual([]);
    await expectLedgerClean(globex);
  });
});

describe('critical_hold', () => {
  it('holds a sandbox lifecycle, queues it, records a review, and an operator resolves it with a receipt that verifies offline', async () => {
    await ok('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold', amount_limit_cents: 200, first_settlement: false, standing_score_min: null });
    const intentId = await bootstrap(250);
    const held = await ok('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, passingEvidence(250));
    expect(held).toMatchObject({
      sandbox_lifecycle_status: 'held', predicate_passed: true,
      review_hold: { held: true, gate_mode: 'critical_hold', signals: [{ code: 'amount_over_limit', severity: 'critical' }] },
    });
    expect(held.settlement).toBeUndefined();
    expect(held.agent_receipt_intent_terminal).toBeUndefined();
    const intent = await ok('GET', `/harbor/intents/${intentId}`);
    expect(intent).toMatchObject({ state: 'held', funded: true, settled_at: null });
    // No settlement receipt before the resolution.
    expect((await send('GET', `/protocol/v2/receipts/${intentId}`)).statusCode).toBe(404);
    // The standing views count the payee as under review while the hold waits.
    const payeeDid = encodeURIComponent('did:svc:sandbox:payee');
    expect((await ok('GET', '/signal/v1/portfolio/summary')).operators_under_review).toBe(1);
    expect((await ok('GET', '/signal/v1/portfolio/summary', undefined, globex.adminKey)).operators_under_review).toBe(0);
    // Held: confirm and evidence are refused; nothing moved.
    expect((await send('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, passingEvidence(250))).json().error.code).toBe('intent.invalid_state');
    await expectLedgerClean();

    // The queue lists it as open; an operator reads it.
    const queue = await ok('GET', '/signal/v1/review-queue', undefined, operatorKey);
    expect(queue).toMatchObject({ schema_version: 1, tenant_id: acme.tenantId, score_model_version: '1' });
    expect(queue.items).toHaveLength(1);
    expect(queue.items[0]).toMatchObject({
      operator_did: 'did:svc:sandbox:payee', review_state: 'open', review_outcome: 'none', review_reasons: ['amount_over_limit'],
      intent_id: intentId, intent_state: 'held', amount_cents: 250, resolution: null, anomaly_flagged: true,
      release_gate: { mode: 'critical_hold', enforcement_enabled: true, hold_required: true, release_allowed: false, critical_signal_codes: ['amount_over_limit'] },
      fraud_assessment: { level: 'critical', review_priority: 'urgent', signal_count: 1 },
    });
    expect((await ok('GET', '/signal/v1/review-queue?fraud_severity=high')).items).toEqual([]);
    expect((await ok('GET', '/signal/v1/review-queue?state=closed')).items).toEqual([]);
    // Another tenant's queue does not show it.
    expect((await ok('GET', '/signal/v1/review-queue', undefined, globex.adminKey)).items).toEqual([]);

    // A reviewer's finding, sent as the client sends an outcome (as the event type).
    const event = await ok('POST', `/signal/v1/operators/${encodeURIComponent('did:svc:sandbox:payee')}/review-events`, {
      event_type: 'false_positive', intent_id: intentId, signal_code: 'amount_over_limit', summary: 'A known vendor; the amount is the agreed price.',
    }, operatorKey);
    expect(event).toMatchObject({
      tenant_id: acme.tenantId, operator_did: 'did:svc:sandbox:payee', requested_event_type: 'false_positive', recorded_event_type: 'review_outcome_recorded',
      review_outcome: 'false_positive', intent_id: intentId, accepted: true,
    });
    expect((await ok('GET', '/signal/v1/review-queue?state=in_review')).items[0]).toMatchObject({ intent_id: intentId, review_state: 'in_review', review_outcome: 'false_positive' });
    const status = await ok('GET', `/signal/v1/operators/${encodeURIComponent('did:svc:sandbox:payee')}/review-status`, undefined, auditorKey);
    expect(status).toMatchObject({ review_state: 'in_review', review_outcome: 'false_positive', review_reasons: ['amount_over_limit'], held_intents: [{ intent_id: intentId, resolution: null }] });
    expect(status.review_events[0]).toMatchObject({ event_type: 'review_outcome_recorded', intent_id: intentId, recorded_by: expect.stringMatching(/^api_key:/) });

    // An agent may not resolve; a split names a part strictly inside the amount; an operator resolves it as a split.
    expect((await send('POST', `/harbor/intents/${intentId}/review/resolve`, { resolution: 'release' }, agentKey)).statusCode).toBe(403);
    for (const refused of [{ resolution: 'split' }, { resolution: 'split', released_cents: 250 }, { resolution: 'release', released_cents: 120 }]) {
      const answer = await send('POST', `/harbor/intents/${intentId}/review/resolve`, refused, operatorKey);
      expect(answer.statusCode, answer.body).toBe(422);
      expect(answer.json().error.code).toBe('settlement.released_amount_invalid');
    }
    const resolved = await ok('POST', `/harbor/intents/${intentId}/review/resolve`, { resolution: 'split', released_cents: 120, note: 'Reviewed: 120 of 250 delivered.' }, operatorKey);
    expect(resolved).toMatchObject({
      state: 'resolved_split', released_cents: 120, refunded_cents: 130,
      settlement: { action: 'split', reason: 'review_resolved', released_cents: 120, refunded_cents: 130 },
      resolution: { resolution: 'split', released_cents: 120, refunded_cents: 130, resolved_by: expect.stringMatching(/^api_key:/) },
    });
    // Its events: held, then the split it settled in, then the resolution naming its receipt.
    const events = (await ok('GET', `/v1/events?limit=100`)).data.filter((event: { data: { object: { intent_id?: string } } }) => event.data.object.intent_id === intentId);
    expect(events.map((event: { type: string }) => event.type).reverse()).toEqual(['intent.funded', 'intent.held', 'intent.resolved_split', 'intent.review_resolved']);
    expect(events[0]).toMatchObject({ type: 'intent.review_resolved', receipt_ids: [`review-resolution:${intentId}`] });
    const receipt = resolved.resolution.receipt;
    expect(receipt).toMatchObject({
      kind: 'svc.review_resolution_receipt_v1', receipt_id: `review-resolution:${intentId}`, intent_id: intentId, tenant_id: acme.tenantId,
      signal_codes: ['amount_over_limit'], resolution: 'split', note: 'Reviewed: 120 of 250 delivered.', released_cents: 120, refunded_cents: 130,
      harbor_state: 'resolved_split', settlement_receipt_id: intentId, ledger_transaction_id: resolved.settlement.transaction_id,
    });
    expect((await ok('GET', '/signal/v1/portfolio/summary')).operators_under_review).toBe(0);
    expect((await ok('GET', `/signal/v1/operators/${payeeDid}/explanation`)).under_review).toBe(false);
    // A second resolution is refused: the intent is settled.
    expect((await send('POST', `/harbor/intents/${intentId}/review/resolve`, { resolution: 'refund' }, operatorKey)).json().error.code).toBe('intent.invalid_state');

    // Every artifact, offline: the settlement and terminal agent receipts as the client verifies them, the resolution
    // receipt independently, and each one's inclusion proof as the client checks it.
    const settlementReceipt = await ok('GET', `/protocol/v2/receipts/${intentId}`);
    expect(settlementReceipt).toMatchObject({ harbor_state: 'resolved_split', amount_cents: 250 });
    expect(verifyClientSettlementReceipt(settlementReceipt, clientTrusted)).toBe(settlementReceipt.message_digest_sha256_hex);
    const terminal = await ok('GET', `/protocol/v2/agent-receipts/${intentId}`);
    expect(verifyClientAgentReceipt(terminal, clientTrusted)).toBe(terminal.message_digest_sha256_hex);
    expect(await ok('GET', `/protocol/v2/receipts/review-resolution:${intentId}`)).toEqual(receipt);
    expectIndependentlyVerified(receipt, clientTrusted);
    expect(() => expectIndependentlyVerified({ ...receipt, released_cents: 250 }, clientTrusted)).toThrow();
    expect((await ok('POST', '/protocol/v2/receipts/verify', { receipt_id: `review-resolution:${intentId}` })).valid).toBe(true);
    await publishTreeHeads(db, keyring);
    for (const url of [`/protocol/v2/receipts/${intentId}`, `/protocol/v2/agent-receipts/${intentId}`, `/protocol/v2/receipts/review-resolution:${intentId}`]) {
      const artifact = await ok('GET', url);
      const proof = await ok('GET', `${url}/inclusion-proof`);
      expect(proof.message_digest_sha256_hex).toBe(artifact.message_digest_sha256_hex);
      verifyClientInclusionProof(proof, clientTrusted);
    }
    await expectLedgerClean();

    const closed = await ok('GET', '/signal/v1/review-queue?state=closed');
    expect(closed.items[0]).toMatchObject({ intent_id: intentId, review_state: 'closed', resolution: 'split', released_cents: 120, last_receipt_message_digest_hex: receipt.message_digest_sha256_hex });
    const metrics = await ok('GET', '/signal/v1/fraud/metrics?window=7d', undefined, auditorKey);
    expect(metrics).toMatchObject({
      window: '7d', holds_placed_count: 1, review_open_count: 0, reviewed_count: 1, holds_resolved: { release: 0, refund: 0, split: 1, expired: 0 },
      false_positive_count: 1, labeled_outcome_count: 1, review_precision_bps: 0, false_positive_rate_bps: 10000,
      release_gate_config: { mode: 'critical_hold' },
    });

    // The payee has standing now: its explanation says whether a hold of it waits, until that hold is resolved.
    const again = await bootstrap(250);
    expect((await ok('POST', `/v1/sandbox/guardrails/${again}/evidence`, passingEvidence(250))).sandbox_lifecycle_status).toBe('held');
    expect((await ok('GET', `/signal/v1/operators/${payeeDid}/explanation`)).under_review).toBe(true);
    await ok('POST', `/harbor/intents/${again}/review/resolve`, { resolution: 'release' }, operatorKey);
    expect((await ok('GET', `/signal/v1/operators/${payeeDid}/explanation`)).under_review).toBe(false);
  });

  it('holds a signed intent at confirm; an operator refunds it; past its deadline only a refund resolves, and the sweeper refunds a held intent', async () => {
    const principal = party('did:principal:holds');
    const payee = party('did:payee:holds');
    const createAndHold = async (deadlineMs: number): Promise<string> => {
      const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, deadline: new Date(Date.now() + deadlineMs).toISOString() });
      expect((await send('POST', '/harbor/intents', body)).statusCode).toBe(201);
      const intentId = body.intent_id as string;
      const challenge = await send('POST', `/harbor/intents/${intentId}/fund`, {});
      const credential = { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }) };
      expect((await send('POST', `/harbor/intents/${intentId}/fund`, {}, acme.adminKey, credential)).statusCode).toBe(200);
      await ok('POST', `/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }));
      const confirmed = await ok('POST', `/harbor/intents/${intentId}/settlement/confirm`, { expected_action: 'release' });
      expect(confirmed).toMatchObject({ state: 'held', review_hold: { gate_mode: 'critical_hold', signals: [{ code: 'first_settlement_with_payee' }] } });
      expect(confirmed.settlement).toBeUndefined();
      return intentId;
    };
    await ok('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold', amount_limit_cents: null, first_settlement: true });
    const refundedOne = await createAndHold(3_600_000);
    expect((await send('POST', `/harbor/intents/${refundedOne}/settlement/confirm`, {})).json().error.code).toBe('intent.invalid_state');
    const refunded = await ok('POST', `/harbor/intents/${refundedOne}/review/resolve`, { resolution: 'refund' });
    expect(refunded).toMatchObject({ state: 'refunded', resolution: { resolution: 'refund', released_cents: 0, refunded_cents: 500 } });
    expect(verifyClientSettlementReceipt(await ok('GET', `/protocol/v2/receipts/${refundedOne}`), clientTrusted)).toMatch(/^[0-9a-f]{64}$/);
    // Another tenant cannot see nor resolve it.
    expect((await send('POST', `/harbor/intents/${refundedOne}/review/resolve`, { resolution: 'refund' }, globex.adminKey)).statusCode).toBe(404);

    // Past its deadline: a release is refused, the sweeper refunds it and closes the hold as expired.
    const late = await createAndHold(2_000);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const refused = await send('POST', `/harbor/intents/${late}/review/resolve`, { resolution: 'release' }, operatorKey);
    expect([refused.statusCode, refused.json().error.code]).toEqual([409, 'review.deadline_passed']);
    expect(await expireIntents(db, app.engineEffects, new Date())).toBeGreaterThanOrEqual(1);
    expect((await ok('GET', `/harbor/intents/${late}`)).state).toBe('refunded');
    const closed = (await ok('GET', '/signal/v1/review-queue?state=all')).items.find((item: { intent_id: string }) => item.intent_id === late);
    expect(closed).toMatchObject({ review_state: 'closed', resolution: 'expired', released_cents: 0 });
    expect((await ok('GET', '/signal/v1/fraud/metrics')).holds_resolved).toMatchObject({ refund: 1, expired: 1 });
    await expectLedgerClean();
  });

  it('refuses review events that do not fit: a foreign intent, another operator\'s intent, an outcome without its type', async () => {
    const operatorPath = `/signal/v1/operators/${encodeURIComponent('did:svc:sandbox:payee')}/review-events`;
    const foreign = await bootstrap(10, globex);
    const cases: Array<[object, number, string, string?]> = [
      [{ event_type: 'review_open_requested', intent_id: foreign, summary: 'x' }, 404, 'intent.not_found'],
      [{ event_type: 'review_outcome_recorded', summary: 'x' }, 400, 'request.invalid'],
      [{ event_type: 'appeal_requested', review_outcome: 'confirmed_risk', summary: 'x' }, 400, 'request.invalid'],
      [{ event_type: 'note', summary: 'x' }, 400, 'request.invalid'],
      [{ event_type: 'appeal_requested', summary: '' }, 400, 'request.invalid'],
    ];
    for (const [body, status, code] of cases) {
      const response = await send('POST', operatorPath, body);
      expect([response.statusCode, response.json().error.code], JSON.stringify(body)).toEqual([status, code]);
    }
    const own = await bootstrap(10);
    const mismatch = await send('POST', `/signal/v1/operators/${encodeURIComponent('did:other')}/review-events`, { event_type: 'appeal_requested', intent_id: own, summary: 'x' });
    expect([mismatch.statusCode, mismatch.json().error.code]).toEqual([422, 'review.intent_operator_mismatch']);
    expect((await send('POST', operatorPath, { event_type: 'appeal_requested', summary: 'x' }, auditorKey)).statusCode).toBe(403);
    const unknown = await send('GET', `/signal/v1/operators/${encodeURIComponent('did:nobody')}/review-status`);
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'review.operator_unknown']);
    const bad = await send('GET', '/signal/v1/fraud/metrics?window=1y');
    expect(bad.statusCode).toBe(400);
  });
});
