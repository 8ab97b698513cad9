// Standing carries the split (docs/engine.md#the-split-rule): a split settlement counts as a delivery (released_count,
// and split_count among them in the aggregates) and adds its parts to the released and refunded sums of the
// operator's signed receipt; a rebuild from the intents agrees with what the settling transactions accumulated.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { rebuildStanding } from '../../../src/services/standing-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
const principal = party('did:principal:alice');
const operator = party('did:payee:metered-tools');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...headers }, payload });

/** Creates, funds (x402 sandbox), records the payee's evidence and confirms: the settled answer. */
async function settle(options: Partial<CreateOptions>, payload: Record<string, unknown>) {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee: operator, ...options });
  const intentId = body.intent_id as string;
  expect((await post('/harbor/intents', body)).statusCode).toBe(201);
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  const funded = await post(`/harbor/intents/${intentId}/fund`, {}, {
    'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
  });
  expect(funded.statusCode, funded.body).toBe(200);
  const recorded = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee: operator, payload }));
  expect(recorded.statusCode, recorded.body).toBe(200);
  const settled = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
  expect(settled.statusCode, settled.body).toBe(200);
  return settled.json();
}

async function aggregates() {
  return db.system(async (tx) => (await tx.query(
    `SELECT released_count::int, refunded_count::int, expired_count::int, split_count::int, released_cents::text, refunded_cents::text
     FROM standing_operator_totals WHERE tenant_id = $1 AND operator_did = $2`,
    [acme.tenantId, operator.did],
  )).rows);
}

describe('standing with a split', () => {
  it('counts the split as a delivery and adds its parts to the released and refunded sums; a rebuild agrees', async () => {
    const drafted = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' } })).json();
    expect((await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: drafted.version_seq })).statusCode).toBe(200);
    const policy = { templateId: 'completion_budget_v1', versionSeq: drafted.version_seq, contentDigestHex: drafted.content_digest, materializedPredicate: drafted.materialized_predicate };
    expect(await settle({ policy, amountCents: 250 }, { status: 'completed', cost_cents: 120 })).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    expect(await settle({ amountCents: 300 }, { status: 'completed' })).toMatchObject({ state: 'released', released_cents: 300, refunded_cents: 0 });
    expect(await settle({ amountCents: 200 }, { status: 'failed' })).toMatchObject({ state: 'refunded', released_cents: 0, refunded_cents: 200 });

    const accumulated = await aggregates();
    expect(accumulated).toEqual([{ released_count: 2, refunded_count: 1, expired_count: 0, split_count: 1, released_cents: '420', refunded_cents: '330' }]);

    const response = await app.inject({ url: `/reputation/${encodeURIComponent(operator.did)}`, headers: bearer(acme.adminKey) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().receipt.metrics.all_time).toMatchObject({
      released_count: 2, refunded_count: 1, expired_count: 0, predicate_evaluated_count: 3, predicate_passed_count: 2,
      amounts: [{ currency: 'usd', released_cents: '420', refunded_cents: '330', expired_cents: '0' }],
    });

    expect(await rebuildStanding(db, acme.tenantId)).toMatchObject({ operators: 1 });
    expect(await aggregates()).toEqual(accumulated);
  });
});
