// client.review against the real app listening on loopback (port 7750), on a real Postgres (docs/release-gate.md):
// the gate set to critical_hold, a signed lifecycle held at confirm, the queue, a reviewer's finding, the operator's
// status, a resolution with its signed receipt (each answer checked by the SDK against its contract), the metrics.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateKey, sandboxCredential, SvcClient, SvcInvalidStateError, type SigningParty } from '../../src/sdk/index.ts';
import { buildTestApp, createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let client: SvcClient;

const principal: SigningParty = { did: 'did:principal:reviewed', key: generateKey().key };
const payee: SigningParty = { did: 'did:payee:new-vendor', key: generateKey().key };

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  await app.listen({ host: '127.0.0.1', port: 7750 });
  const acme = await createTestTenant(database.connection, 'sandbox');
  client = await SvcClient.open({ apiKey: acme.adminKey, gatewayBaseUrl: 'http://127.0.0.1:7750', expectedEnvironment: 'sandbox' });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

it('holds a release under critical_hold, queues it, and resolves it with a signed receipt', async () => {
  expect((await client.review.gate()).config.mode).toBe('review_only');
  const gate = await client.review.setGate({ mode: 'critical_hold', amountLimitCents: 300 });
  expect(gate.config).toEqual({ mode: 'critical_hold', standing_score_min: null, amount_limit_cents: 300, first_settlement: true });

  const intent = await client.intents.create({
    principal, payee: { did: payee.did, publicKey: payee.key }, amountCents: 500, deadline: new Date(Date.now() + 3_600_000),
    settlementRail: 'x402_usdc_base', allowedTools: ['search.web'], predicate: { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } },
  });
  await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
  await client.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'completed' } });
  const held = await client.intents.confirm(intent.intent_id, { expectedAction: 'release' });
  expect(held.state).toBe('held');
  expect(held.settlement).toBeUndefined();
  expect(held.review_hold?.signals.map((signal) => signal.code)).toEqual(['first_settlement_with_payee', 'amount_over_limit']);
  await expect(client.intents.confirm(intent.intent_id)).rejects.toBeInstanceOf(SvcInvalidStateError);

  const queue = await client.review.queue();
  expect(queue.items.map((item) => [item.intent_id, item.review_state])).toEqual([[intent.intent_id, 'open']]);
  const event = await client.review.recordEvent(payee.did, { eventType: 'review_outcome_recorded', reviewOutcome: 'false_positive', intentId: intent.intent_id, summary: 'Known vendor.' });
  expect(event).toMatchObject({ recorded_event_type: 'review_outcome_recorded', review_outcome: 'false_positive', accepted: true });
  expect((await client.review.status(payee.did)).review_state).toBe('in_review');

  const resolved = await client.review.resolve(intent.intent_id, { resolution: 'release', note: 'Reviewed.', idempotencyKey: 'resolve-1' });
  expect(resolved).toMatchObject({ state: 'released', resolution: { resolution: 'release', released_cents: 500, refunded_cents: 0 } });
  expect(resolved.resolution.receipt).toMatchObject({ kind: 'svc.review_resolution_receipt_v1', harbor_state: 'released' });
  // The same key answers the first resolution again.
  expect(await client.review.resolve(intent.intent_id, { resolution: 'release', note: 'Reviewed.', idempotencyKey: 'resolve-1' })).toEqual(resolved);
  expect((await client.review.queue({ state: 'closed' })).items[0]).toMatchObject({ intent_id: intent.intent_id, resolution: 'release' });
  expect(await client.review.metrics('7d')).toMatchObject({ holds_placed_count: 1, holds_resolved: { release: 1 }, false_positive_count: 1 });
});
