// MPP live end to end (docs/rails.md "MPP live"): a live tenant whose settlement configuration names the test
// processor (test/helpers/mpp-processor.ts) funds through mppx and the processor's SDK, is released (payout: a
// transfer to processor_destination) or refunded (a refund of the payment), each instruction carried out by the
// sweeper; and every failure semantic: decline, pending, 5xx and unreachable, a timeout after the processor
// charged, and a crash between the charge and our commit, never charging twice. The secret key never comes back.
import type { FastifyInstance } from 'fastify';
import { Challenge, Credential, Receipt } from 'mppx';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, LogCapture } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { liveSecretsKey, setUpLive, type LiveTenant } from './live-fixtures.ts';

const destination = 'acct_1LivePayee';
const profile = 'profile_live_mpp';
/** Our deadline for one processor call; the test processor holds a `spt_timeout_…` answer three times as long. */
const railCallTimeoutMs = 500;

let database: TestDatabase;
let processor: MppProcessor;
let app: FastifyInstance;
let live: LiveTenant;
const logs = new LogCapture();
/** Every answer body the tests saw, for the secrets check at the end. */
const answers: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  processor = await startMppProcessor({ accounts: [destination], hangMs: 1_500 });
  app = await buildTestApp(database.connection, { logs, appOptions: { secretsKey: liveSecretsKey, railCallTimeoutMs } });
  live = await setUpLive(app, database.connection);
  const configured = await live.configure(mppConfig());
  answers.push(configured.body);
  expect(configured.statusCode, configured.body).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await processor?.close();
  await database?.drop();
});

function mppConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    rails: ['processor_mpp'],
    mpp_profile_id: profile,
    processor_destination: destination,
    mpp_processor_url: processor.url,
    mpp_processor_secret_key: processor.secretKey,
    ...overrides,
  };
}

interface Answer {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
  json(): any;
}

function remember<T extends Answer>(answer: T): T {
  answers.push(answer.body, JSON.stringify(answer.headers));
  return answer;
}

/** The credential a public mppx client builds for the 402's challenge: `{spt}` under the echoed challenge. */
function credentialFor(answer: Answer, spt: string): string {
  const challenge = Challenge.deserialize(answer.headers['www-authenticate'] as string);
  return Credential.serialize({ challenge, payload: { spt } });
}

async function challengeFor(intentId: string): Promise<Answer> {
  const answer = remember(await live.fund(intentId, {}));
  expect(answer.statusCode, answer.body).toBe(402);
  return answer;
}

async function fundWith(intentId: string, spt: string, key = `fund-${intentId}-${spt}`): Promise<{ answer: Answer; credential: string; key: string }> {
  const credential = credentialFor(await challengeFor(intentId), spt);
  const answer = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, key));
  return { answer, credential, key };
}

async function intentOf(intentId: string): Promise<any> {
  const intent = await live.read(intentId);
  answers.push(JSON.stringify(intent));
  return intent;
}

describe('MPP live: configuration', () => {
  it('checks the processor before saving: a wrong key, an unreachable URL, a processor down, an unknown payout account', async () => {
    const wrongKey = remember(await live.configure(mppConfig({ mpp_processor_secret_key: 'sk_test_not_the_key' })));
    expect(wrongKey.statusCode, wrongKey.body).toBe(400);
    expect(wrongKey.json().error).toMatchObject({ code: 'settlement_config.rail_refused', details: { field: 'mpp_processor_secret_key' } });
    // Not reached, or failing on its side: transient, so 503 with Retry-After, and the same PUT may pass later.
    const unreachable = remember(await live.configure(mppConfig({ mpp_processor_url: 'http://127.0.0.1:9' })));
    expect(unreachable.statusCode, unreachable.body).toBe(503);
    expect(unreachable.headers['retry-after']).toBe('5');
    expect(unreachable.json().error).toMatchObject({ code: 'settlement_config.rail_unreachable', details: { field: 'mpp_processor_url' } });
    processor.down = true;
    try {
      const down = remember(await live.configure(mppConfig()));
      expect(down.statusCode, down.body).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      expect(down.json().error).toMatchObject({ code: 'settlement_config.rail_unreachable', details: { field: 'mpp_processor_url' } });
    } finally {
      processor.down = false;
    }
    const unknown = remember(await live.configure(mppConfig({ processor_destination: 'acct_nobody' })));
    expect(unknown.statusCode, unknown.body).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'settlement_config.rail_refused', details: { field: 'processor_destination' } });
    // The configuration in force is still the good one, and its secret is write-only.
    const current = remember(await app.inject({ method: 'GET', url: '/v1/admin/settlement/config', headers: bearer(live.tenant.adminKey) }));
    expect(current.json()).toMatchObject({ mpp_processor_url: processor.url, mpp_processor_secret_key_set: true, processor_destination: destination });
    expect(current.json()).not.toHaveProperty('mpp_processor_secret_key');
  });
});

describe('MPP live: funding and settling', () => {
  it('create → fund → evidence → confirm → released, and the payout is a transfer to processor_destination', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 1250 });
    const challenge = await challengeFor(intentId);
    expect(challenge.headers['cache-control']).toBe('no-store');
    expect(challenge.json().funding).toMatchObject({ status: 'created', method: 'stripe', intent: 'charge' });
    const credential = credentialFor(challenge, 'spt_success_released');
    const funded = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, `fund-${intentId}`));
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toMatchObject({ state: 'funded', funded: true, funding: { status: 'payment_succeeded' } });
    expect(funded.headers['cache-control']).toContain('private');
    const receipt = Receipt.deserialize(funded.headers['payment-receipt'] as string);
    const [payment] = processor.paymentsFor('spt_success_released');
    expect(receipt).toMatchObject({ method: 'stripe', status: 'success', reference: payment!.id });
    expect(payment).toMatchObject({ amount: 1250, currency: 'usd', status: 'succeeded' });
    expect(payment!.metadata).toMatchObject({ svc_intent_id: intentId });
    expect((await intentOf(intentId)).funding_details).toMatchObject({ payment_intent: payment!.id, charge: payment!.latest_charge });

    expect((await live.evidence(intentId, 'completed')).statusCode).toBe(200);
    const confirmed = remember(await live.confirm(intentId));
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect((await intentOf(intentId)).state).toBe('released');
    expect((await intentOf(intentId)).rail_instructions).toMatchObject([{ kind: 'payout', rail: 'processor_mpp', status: 'pending' }]);

    await live.sweep();
    const [instruction] = (await intentOf(intentId)).rail_instructions;
    expect(instruction).toMatchObject({ kind: 'payout', status: 'succeeded' });
    const transfers = processor.transfers.filter((transfer) => transfer.metadata['svc_intent_id'] === intentId);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ id: instruction.reference, amount: 1250, destination, source_transaction: payment!.latest_charge });
    // Another pass finds nothing to do: one transfer.
    await live.sweep();
    expect(processor.transfers.filter((transfer) => transfer.metadata['svc_intent_id'] === intentId)).toHaveLength(1);
    expect(processor.chargesFor('spt_success_released')).toBe(1);
  });

  it('create → fund → evidence → confirm → refunded, and the refund goes back to the payer\'s card', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 900 });
    const { answer } = await fundWith(intentId, 'spt_success_refunded');
    expect(answer.statusCode, answer.body).toBe(200);
    expect((await live.evidence(intentId, 'failed')).statusCode).toBe(200);
    const confirmed = remember(await live.confirm(intentId));
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect((await intentOf(intentId)).state).toBe('refunded');
    await live.sweep();
    const [instruction] = (await intentOf(intentId)).rail_instructions;
    expect(instruction).toMatchObject({ kind: 'refund', rail: 'processor_mpp', status: 'succeeded' });
    const [payment] = processor.paymentsFor('spt_success_refunded');
    const refunds = processor.refunds.filter((refund) => refund.payment_intent === payment!.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ id: instruction.reference, amount: 900, status: 'succeeded' });
    expect(processor.transfers.filter((transfer) => transfer.metadata['svc_intent_id'] === intentId)).toHaveLength(0);
  });
});

describe('MPP live: failure semantics', () => {
  it('a declined card: 402 with a fresh challenge, nothing moved', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 700 });
    const { answer } = await fundWith(intentId, 'spt_decline_live');
    expect(answer.statusCode, answer.body).toBe(402);
    expect(answer.headers['www-authenticate']).toMatch(/^Payment id="/);
    expect(answer.json()).toMatchObject({ state: 'open', funded: false, funding: { status: 'payment_failed', error_reason: 'generic_decline' } });
    expect(processor.chargesFor('spt_decline_live')).toBe(0);
    // The fresh challenge is answerable: funded by the next card.
    const next = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credentialFor(answer, 'spt_success_after_decline') }, `fund-${intentId}-2`));
    expect(next.statusCode, next.body).toBe(200);
  });

  it('a payment still processing: 202, and the same request polls to 200', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 800 });
    const { answer, credential, key } = await fundWith(intentId, 'spt_processing_live');
    expect(answer.statusCode, answer.body).toBe(202);
    expect(answer.json()).toMatchObject({ state: 'open', funding: { status: 'payment_pending' } });
    const polled = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, `${key}-poll`));
    expect(polled.statusCode, polled.body).toBe(200);
    expect(polled.json()).toMatchObject({ state: 'funded' });
    expect(processor.paymentsFor('spt_processing_live')).toHaveLength(1);
  });

  it('a 5xx: 503 rail.unavailable with Retry-After, nothing moved; the retry with the same key continues', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 600 });
    const { answer, credential, key } = await fundWith(intentId, 'spt_unavailable_live');
    expect(answer.statusCode, answer.body).toBe(503);
    expect(answer.json().error.code).toBe('rail.unavailable');
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect((await intentOf(intentId)).state).toBe('open');
    const retried = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, key));
    expect(retried.statusCode, retried.body).toBe(200);
    expect(processor.chargesFor('spt_unavailable_live')).toBe(1);

    const failing = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 600 });
    const always = await fundWith(failing, 'spt_error_live');
    expect(always.answer.statusCode).toBe(503);
    const again = remember(await live.fund(failing, { 'x-svc-payment-authorization': always.credential }, always.key));
    expect(again.statusCode).toBe(503);
    expect(again.json().error.code).toBe('rail.unavailable');
    expect(processor.paymentsFor('spt_error_live')).toHaveLength(0);
  });

  it('an unreachable processor: 503 rail.unavailable, nothing moved, and the retry continues once it answers', async () => {
    const elsewhere = await startMppProcessor({ secretKey: processor.secretKey, accounts: [destination] });
    expect((await live.configure(mppConfig({ mpp_processor_url: elsewhere.url }))).statusCode).toBe(200);
    await elsewhere.close();
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 650 });
    const credential = credentialFor(await challengeFor(intentId), 'spt_success_outage');
    const refused = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, `fund-${intentId}`));
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json().error.code).toBe('rail.unavailable');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await intentOf(intentId)).state).toBe('open');
    // A processor that answers 503 to everything (an outage in front of it) is the same answer.
    expect((await live.configure(mppConfig())).statusCode).toBe(200);
    processor.down = true;
    try {
      const down = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, `fund-${intentId}`));
      expect(down.statusCode, down.body).toBe(503);
    } finally {
      processor.down = false;
    }
    const retried = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, `fund-${intentId}`));
    expect(retried.statusCode, retried.body).toBe(200);
    expect(processor.chargesFor('spt_success_outage')).toBe(1);
  });

  it('a charge whose answer outlives our deadline is looked up before answering: funded, one charge', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 1100 });
    const { answer, credential, key } = await fundWith(intentId, 'spt_timeout_live');
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ state: 'funded' });
    const replay = remember(await live.fund(intentId, { 'x-svc-payment-authorization': credential }, key));
    expect(replay.statusCode).toBe(200);
    expect(processor.paymentsFor('spt_timeout_live')).toHaveLength(1);
    expect(processor.chargesFor('spt_timeout_live')).toBe(1);
  });
});

describe('MPP live: secrets', () => {
  it('the processor secret key is in no answer and no log line', () => {
    expect(answers.length).toBeGreaterThan(20);
    for (const answer of answers) expect(answer).not.toContain(processor.secretKey);
    expect(logs.text.length).toBeGreaterThan(0);
    expect(logs.text).not.toContain(processor.secretKey);
    // Every call the processor saw carried the key, and only it.
    expect(processor.requests.length).toBeGreaterThan(0);
  });

  it('a payment token is stored only while the rail may be asked about it again: final attempts keep none', async () => {
    const client = new pg.Client(database.connection);
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT status, claimed_at IS NOT NULL AS claimed, credential IS NOT NULL AS kept, credential::text AS text
         FROM funding_attempts WHERE credential_digest IS NOT NULL`,
      );
      expect(rows.filter((row) => row.status === 'succeeded').length).toBeGreaterThan(3);
      expect(rows.some((row) => row.status === 'declined')).toBe(true);
      for (const row of rows) {
        expect(row.kept, `${row.status}, claimed ${row.claimed}`).toBe(row.status === 'pending' || row.claimed);
        if (!row.kept) expect(row.text).toBeNull();
      }
    } finally {
      await client.end();
    }
  });
});
