// Split settlement over HTTP on a real Postgres (docs/engine.md#the-split-rule): completion_budget_v1 with
// `release_mode: metered` releases the cost the payee signed and refunds the rest, reaching the intent only through
// what the principal signed (a v7 binding or a v6 reference to a metered policy version; an inline rule is always
// full); the sandbox guardrails take the same parameter. Every flow ends in one balanced ledger transaction, the
// intent's released_cents + refunded_cents = amount_cents, and a clean `svc ledger verify`. The engine's entry that
// settles for a named part is driven directly too, as an operator resolution or a rail's capture of part will.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockIntent, queueEvidenceRecordedTransition } from '../../src/db/intent-repository.ts';
import { checkReleasedCents } from '../../src/engine/decide.ts';
import { settleIntentFor } from '../../src/engine/settle.ts';
import { ServiceError } from '../../src/errors/service-error.ts';
import { Database } from '../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 4 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object | undefined, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...headers }, ...(payload === undefined ? {} : { payload }) });
const read = async (intentId: string) => (await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(acme.adminKey) })).json();
const header = (response: LightMyRequestResponse, name: string) => response.headers[name] as string;

async function createIntent(options: Partial<CreateOptions> = {}): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, amountCents: 250, ...options });
  const response = await post('/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

async function fundWithX402(intentId: string): Promise<void> {
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  expect(challenge.statusCode).toBe(402);
  const funded = await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers.success }) });
  expect(funded.statusCode, funded.body).toBe(200);
}

const evidence = (intentId: string, payload: unknown) =>
  post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload }));

async function meteredPolicy(parameters: Record<string, unknown> = { release_mode: 'metered' }) {
  const version = await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1', parameters });
  expect(version.statusCode, version.body).toBe(201);
  const drafted = version.json();
  const rolled = await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: drafted.version_seq });
  expect(rolled.statusCode, rolled.body).toBe(200);
  return { templateId: 'completion_budget_v1', versionSeq: drafted.version_seq as number, contentDigestHex: drafted.content_digest as string, materializedPredicate: drafted.materialized_predicate };
}

async function expectLedgerClean() {
  const report = await verifyTenantLedger(db, acme.tenantId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  return report;
}

async function ledgerLinesOf(intentId: string) {
  const events = (await app.inject({ url: '/harbor/ledger/v1/events?limit=256', headers: bearer(acme.adminKey) })).json().events as Array<Record<string, unknown>>;
  return events.filter((line) => line.intent_id === intentId);
}

describe('metered release through what the principal signed', () => {
  it('v7 bound to a metered policy: a cost of 120 of 250 settles resolved_split, 120 released and 130 refunded, in one transaction', async () => {
    const policy = await meteredPolicy();
    const intentId = await createIntent({ policy });
    expect(await read(intentId)).toMatchObject({ release_mode: 'metered', released_cents: null, refunded_cents: null });
    await fundWithX402(intentId);
    const recorded = await evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(recorded.json()).toMatchObject({ state: 'evidence_recorded', predicate_passed: true });
    // The guard names what the rule implies: a release is refused, a split confirmed.
    const guarded = await post(`/harbor/intents/${intentId}/settlement/confirm`, { expected_action: 'release' });
    expect(guarded.statusCode).toBe(409);
    expect(guarded.json().error.details).toEqual({ implied_action: 'split' });
    const settled = await post(`/harbor/intents/${intentId}/settlement/confirm`, { expected_action: 'split' });
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json()).toMatchObject({
      state: 'resolved_split', released_cents: 120, refunded_cents: 130,
      settlement: { action: 'split', reason: 'predicate_passed', released_cents: 120, refunded_cents: 130 },
    });
    const { settlement, ...answered } = settled.json() as Record<string, unknown> & { settlement: { transaction_id: string } };
    expect(answered).toEqual(await read(intentId));
    // One balanced transaction of three entries: the payee's part, the principal's part, the escrow emptied.
    const split = (await ledgerLinesOf(intentId)).filter((line) => line.event_kind === 'split');
    expect(split.map((line) => [line.transaction_id, line.account, line.side, line.amount_cents])).toEqual([
      [settlement.transaction_id, `payee:${payee.did}:payable`, 'debit', 120],
      [settlement.transaction_id, `payer:${principal.did}:refund`, 'debit', 130],
      [settlement.transaction_id, `intent:${intentId}:escrow`, 'credit', 250],
    ]);
    const report = await expectLedgerClean();
    expect(report.balances[`intent:${intentId}:escrow`]).toBe(0n);
    // Terminal: nothing moves it again.
    expect((await post(`/harbor/intents/${intentId}/settlement/confirm`, {})).statusCode).toBe(409);
  });

  it('a cost equal to the amount is a plain release, a cost of 0 a refund, a failed rule a refund', async () => {
    const policy = await meteredPolicy();
    const outcomes: Array<[unknown, string, number, number]> = [
      [{ status: 'completed', cost_cents: 250 }, 'released', 250, 0],
      [{ status: 'completed', cost_cents: 0 }, 'refunded', 0, 250],
      [{ status: 'completed', cost_cents: 251 }, 'refunded', 0, 250],
      [{ status: 'failed', cost_cents: 10 }, 'refunded', 0, 250],
    ];
    for (const [payload, state, released, refunded] of outcomes) {
      const intentId = await createIntent({ policy });
      await fundWithX402(intentId);
      expect((await evidence(intentId, payload)).statusCode).toBe(200);
      const settled = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
      expect(settled.json(), JSON.stringify(payload)).toMatchObject({ state, released_cents: released, refunded_cents: refunded });
    }
    await expectLedgerClean();
  });

  it('v6 by reference to a metered version splits; the same rule inline releases the whole amount', async () => {
    const policy = await meteredPolicy({ release_mode: 'metered', cost_path: ['usage', 'cents'] });
    const referenced = await createIntent({ predicate: policy.materializedPredicate, predicateRef: `completion_budget_v1@${policy.versionSeq}` });
    const inline = await createIntent({ predicate: policy.materializedPredicate });
    expect(await read(inline)).toMatchObject({ release_mode: 'full' });
    for (const intentId of [referenced, inline]) {
      await fundWithX402(intentId);
      expect((await evidence(intentId, { status: 'completed', usage: { cents: 90 } })).json().predicate_passed).toBe(true);
    }
    expect((await post(`/harbor/intents/${referenced}/settlement/confirm`, {})).json()).toMatchObject({ state: 'resolved_split', released_cents: 90, refunded_cents: 160 });
    expect((await post(`/harbor/intents/${inline}/settlement/confirm`, {})).json()).toMatchObject({ state: 'released', released_cents: 250, refunded_cents: 0 });
    await expectLedgerClean();
  });

  it('a policy parameter release_mode other than full or metered is refused; a version drafted without it keeps its digest', async () => {
    const refused = await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1', parameters: { release_mode: 'partial' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'policy.parameter_invalid', details: { parameter: 'release_mode' } });
    const plain = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1' })).json();
    expect(Object.keys(plain.parameters).sort()).toEqual(['cost_path', 'expected_status', 'status_path']);
  });
});

describe('sandbox guardrails take release_mode with the template', () => {
  it('metered: 120 of 250 released, 130 refunded, in the answer, the intent and the ledger', async () => {
    const boot = await post('/v1/sandbox/guardrails/bootstrap', {
      operation: 'search.web', requested_spend_cents: 250, template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' },
    });
    expect(boot.statusCode, boot.body).toBe(200);
    const intentId = boot.json().intent_id as string;
    const answer = await post(`/v1/sandbox/guardrails/${intentId}/evidence`, { payload: { status: 'completed', cost_cents: 120 } });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({
      sandbox_lifecycle_status: 'resolved_split', predicate_passed: true, released_cents: 120, refunded_cents: 130,
      settlement: { action: 'split', reason: 'predicate_passed', released_cents: 120, refunded_cents: 130 },
      simulator_event: { type: 'split.simulated' },
    });
    expect(await read(intentId)).toMatchObject({ state: 'resolved_split', release_mode: 'metered', released_cents: 120, refunded_cents: 130 });
    await expectLedgerClean();
  });
});

describe('the engine entry that settles for a named part', () => {
  it('settles a locked intent for 0, part or all by the command\'s transitions, and refuses a part out of range', async () => {
    const boot = async () => (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 250 })).json().intent_id as string;
    const results: Array<[number, string]> = [[0, 'refunded'], [1, 'resolved_split'], [249, 'resolved_split'], [250, 'released']];
    for (const [releasedCents, state] of results) {
      const intentId = await boot();
      const settled = await db.tenant(acme.tenantId, async (tx) => {
        const locked = (await lockIntent(tx, acme.tenantId, intentId))!;
        // As an operator resolution would: the part is named, the confirm transitions from evidence_recorded apply.
        const recorded = queueEvidenceRecordedTransition(tx, locked, true);
        return settleIntentFor(tx, recorded, app.engineEffects, { command: 'confirm', releasedCents: checkReleasedCents(recorded, releasedCents), reason: 'predicate_passed' });
      });
      expect(settled).toMatchObject({ releasedCents, refundedCents: 250 - releasedCents, intent: { state } });
      expect(await read(intentId)).toMatchObject({ state, released_cents: releasedCents, refunded_cents: 250 - releasedCents });
    }
    for (const wrong of [-1, 251, 1.5, '10', null]) {
      expect(() => checkReleasedCents({ amountCents: 250 }, wrong)).toThrow(ServiceError);
    }
    await expectLedgerClean();
  });
});
