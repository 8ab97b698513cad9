// MPP live split (docs/rails.md#operations-per-rail): an intent settled for part pays the payee's part to the
// processor destination (a transfer) and refunds the rest to the payer's card, both through the processor, carried
// out by the sweeper with no person involved; the refund follows the payout. The local processor speaks the
// processor's API (test/helpers/mpp-processor.ts); the credential is a public mppx client's.
import type { FastifyInstance } from 'fastify';
import { Challenge, Credential } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockIntent, queueEvidenceRecordedTransition } from '../../src/db/intent-repository.ts';
import { checkReleasedCents } from '../../src/engine/decide.ts';
import { settleIntentFor } from '../../src/engine/settle.ts';
import { Database } from '../../src/infra/database.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { runCli } from '../helpers/server-process.ts';
import { liveSecretsKey, setUpLive, type LiveTenant } from './live-fixtures.ts';

const destination = 'acct_1SplitPayee';
let database: TestDatabase;
let db: Database;
let processor: MppProcessor;
let app: FastifyInstance;
let live: LiveTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  processor = await startMppProcessor({ accounts: [destination] });
  app = await buildTestApp(database.connection, { appOptions: { secretsKey: liveSecretsKey, railCallTimeoutMs: 2_000 } });
  live = await setUpLive(app, database.connection);
  const configured = await live.configure({
    rails: ['processor_mpp'], mpp_profile_id: 'profile_live_split', processor_destination: destination,
    mpp_processor_url: processor.url, mpp_processor_secret_key: processor.secretKey,
  });
  expect(configured.statusCode, configured.body).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await processor?.close();
  await db?.close();
  await database?.drop();
});

describe('MPP live split', () => {
  it('pays the payee\'s part and refunds the rest through the processor, automatically, payout first', async () => {
    const intentId = await live.createIntent({ settlementRail: 'processor_mpp', amountCents: 250 });
    const challenge = await live.fund(intentId);
    expect(challenge.statusCode, challenge.body).toBe(402);
    const credential = Credential.serialize({ challenge: Challenge.deserialize(challenge.headers['www-authenticate'] as string), payload: { spt: 'spt_success_split' } });
    const funded = await live.fund(intentId, { 'x-svc-payment-authorization': credential });
    expect(funded.statusCode, funded.body).toBe(200);

    const settled = await db.tenant(live.tenant.tenantId, async (tx) => {
      const recorded = queueEvidenceRecordedTransition(tx, (await lockIntent(tx, live.tenant.tenantId, intentId))!, true);
      return settleIntentFor(tx, recorded, app.engineEffects, { command: 'confirm', releasedCents: checkReleasedCents(recorded, 120), reason: 'predicate_passed' });
    });
    expect(settled).toMatchObject({ releasedCents: 120, refundedCents: 130, intent: { state: 'resolved_split' } });

    await live.sweep();
    expect(processor.transfers).toMatchObject([{ amount: 120, destination }]);
    expect(processor.refunds).toHaveLength(0);
    await live.sweep();
    expect(processor.refunds).toMatchObject([{ amount: 130, status: 'succeeded' }]);
    const intent = await live.read(intentId);
    expect(intent).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    expect(intent.rail_instructions).toMatchObject([
      { kind: 'payout', amount_cents: 120, status: 'succeeded', reference: processor.transfers[0]!.id },
      { kind: 'refund', amount_cents: 130, status: 'succeeded', reference: processor.refunds[0]!.id },
    ]);
    await live.sweep();
    expect(processor.transfers).toHaveLength(1);
    expect(processor.refunds).toHaveLength(1);
    const verified = await runCli(['ledger', 'verify', '--tenant-id', live.tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);
});
