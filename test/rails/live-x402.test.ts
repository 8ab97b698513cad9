// x402 in live (docs/rails.md#x402-live): a live tenant configured with a facilitator (a local one that verifies
// real EIP-3009 signatures, test/helpers/x402-facilitator.ts) funds, settles and is refunded through it; every
// failure semantic of the rail; the settlement configuration's dry call and write-only secrets.
import type { FastifyInstance } from 'fastify';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { x402Networks } from '../../src/rails/x402/protocol.ts';
import { bearer, buildTestApp, LogCapture } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { signX402Payment, startX402Facilitator, testAccount, type X402Facilitator } from '../helpers/x402-facilitator.ts';
import { liveSecretsKey, setUpLive, type LiveTenant } from './live-fixtures.ts';

const apiKey = 'fac_live_8f3a1c0de5ecre7';
const payTo = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let facilitator: X402Facilitator;
let live: LiveTenant;
const logs = new LogCapture();
const answers: string[] = [];

/** Every answer body and header this file sees, to look for the secret in afterwards. */
function seen<T extends { body: string; headers: Record<string, unknown> }>(response: T): T {
  answers.push(response.body, JSON.stringify(response.headers));
  return response;
}

const x402Config = (overrides: Record<string, unknown> = {}) => ({
  rails: ['x402_usdc_base'],
  x402_address: payTo,
  x402_facilitator_url: facilitator.url,
  x402_facilitator_api_key: apiKey,
  ...overrides,
});

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  facilitator = await startX402Facilitator({ apiKey, hangMs: 1_500 });
  app = await buildTestApp(database.connection, { logs, appOptions: { secretsKey: liveSecretsKey, railCallTimeoutMs: 500 } });
  live = await setUpLive(app, database.connection);
  const configured = seen(await live.configure(x402Config()));
  expect(configured.statusCode, configured.body).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await facilitator?.close();
  await db?.close();
  await database?.drop();
});

interface Moved {
  state: string;
  fundPostings: number;
  attempts: Array<{ status: string; claimed: boolean }>;
}

async function moved(intentId: string): Promise<Moved> {
  return db.tenant(live.tenant.tenantId, async (tx) => ({
    state: (await tx.query('SELECT state FROM intents WHERE intent_id = $1', [intentId])).rows[0]!.state,
    fundPostings: (await tx.query(`SELECT count(DISTINCT transaction_id)::int AS n FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [intentId])).rows[0]!.n,
    attempts: (await tx.query('SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1 ORDER BY created_at', [intentId])).rows as Moved['attempts'],
  }));
}

/** A new intent and its first 402's PAYMENT-REQUIRED header. */
async function challenged(amountCents = 500): Promise<{ intentId: string; paymentRequired: string }> {
  const intentId = await live.createIntent({ amountCents });
  const challenge = seen(await live.fund(intentId));
  expect(challenge.statusCode, challenge.body).toBe(402);
  const paymentRequired = challenge.headers['payment-required'] as string;
  const decoded = JSON.parse(Buffer.from(paymentRequired, 'base64').toString('utf8'));
  expect(decoded.accepts[0]).toMatchObject({ network: x402Networks.live.network, asset: x402Networks.live.asset, payTo });
  return { intentId, paymentRequired };
}

const settlementsOf = (payer: string) => facilitator.settlements.filter((settlement) => settlement.payer.toLowerCase() === payer.toLowerCase());

describe('live x402 funding through the facilitator', () => {
  it('create → fund → evidence → confirm → released: the facilitator settles once, the intent shows its transaction and payer', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged();
    const funded = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(paymentRequired, payer) }, `fund-${intentId}`));
    expect(funded.statusCode, funded.body).toBe(200);
    const transaction = settlementsOf(payer.address)[0]!.transaction;
    expect(funded.json()).toMatchObject({ state: 'funded', funding: { status: 'authorization_succeeded', transaction, source_address: payer.address } });
    expect(funded.json().capability_token).toEqual(expect.any(String));
    const response = JSON.parse(Buffer.from(funded.headers['payment-response'] as string, 'base64').toString('utf8'));
    expect(response).toMatchObject({ success: true, transaction, network: x402Networks.live.network, payer: payer.address });
    // The API key went to the facilitator on every call, as a bearer token.
    const calls = facilitator.requests.filter((request) => request.payer === payer.address);
    expect(calls.map((request) => request.path)).toEqual(['/verify', '/settle']);
    expect(calls.every((request) => request.authorization === `Bearer ${apiKey}`)).toBe(true);

    expect(await live.read(intentId)).toMatchObject({
      state: 'funded',
      funding_details: { transaction, payer: payer.address, network: x402Networks.live.network },
      rail_instructions: [],
    });
    expect(seen(await live.evidence(intentId, 'completed')).statusCode).toBe(200);
    const confirmed = seen(await live.confirm(intentId));
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().state).toBe('released');

    const released = await live.read(intentId);
    expect(released.rail_instructions).toEqual([
      expect.objectContaining({ kind: 'payout', rail: 'x402_usdc_base', status: 'pending', amount_cents: 500, attempts: 0 }),
    ]);
    // The sweeper asks the rail; x402's escrow is the tenant's own wallet: the instruction says what to transfer.
    const report = await live.sweep();
    expect(report.instructions.pending).toBeGreaterThanOrEqual(1);
    const [payout] = (await live.read(intentId)).rail_instructions;
    expect(payout).toMatchObject({ status: 'pending', attempts: 1, last_error: null });
    expect(payout.detail).toContain('5000000 base units of USDC');
    expect(payout.detail).toContain(transaction);
    expect(settlementsOf(payer.address)).toHaveLength(1);

    // The operator made the transfer from its wallet and records it: the instruction succeeds and the sweeper stops.
    const done = (reference: string, key = live.tenant.adminKey, instructionId = payout.instruction_id) =>
      app.inject({
        method: 'POST', url: `/harbor/intents/${intentId}/rail-instructions/${instructionId}/done`, headers: bearer(key), payload: { reference },
      });
    const other = await setUpLive(app, database.connection);
    expect((await done(`0x${'ab'.repeat(32)}`, other.tenant.adminKey)).statusCode).toBe(404);
    expect((await done(`0x${'ab'.repeat(32)}`, undefined, intentId)).json().error.code).toBe('rail_instruction.not_found');
    const recorded = seen(await done(`0x${'ab'.repeat(32)}`));
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect(recorded.json()).toMatchObject({ instruction_id: payout.instruction_id, status: 'succeeded', reference: `0x${'ab'.repeat(32)}`, detail: null });
    expect((await done(`0x${'ab'.repeat(32)}`)).statusCode).toBe(200);
    const conflicting = await done(`0x${'cd'.repeat(32)}`);
    expect(conflicting.statusCode).toBe(409);
    expect(conflicting.json().error.code).toBe('rail_instruction.already_succeeded');
    expect((await live.read(intentId)).rail_instructions[0]).toMatchObject({ status: 'succeeded', reference: `0x${'ab'.repeat(32)}` });
    expect((await live.sweep()).instructions.pending).toBe(0);
  });

  it('create → fund → failed evidence → confirm → refunded, with a refund instruction to the payer', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged(250);
    const funded = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(paymentRequired, payer) }));
    expect(funded.statusCode, funded.body).toBe(200);
    expect(seen(await live.evidence(intentId, 'failed')).statusCode).toBe(200);
    const confirmed = seen(await live.confirm(intentId));
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().state).toBe('refunded');
    await live.sweep();
    const [refund] = (await live.read(intentId)).rail_instructions;
    expect(refund).toMatchObject({ kind: 'refund', status: 'pending', amount_cents: 250 });
    expect(refund.detail).toContain(`to ${payer.address}`);
  });

  it('a decline (insufficient funds) answers 402 with a fresh challenge and moves nothing', async () => {
    const payer = testAccount();
    facilitator.script(payer.address, 'insufficient_funds');
    const { intentId, paymentRequired } = await challenged();
    const declined = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(paymentRequired, payer) }));
    expect(declined.statusCode, declined.body).toBe(402);
    expect(declined.json().funding).toMatchObject({ status: 'authorization_failed', error_reason: 'insufficient_funds' });
    expect(declined.headers['payment-required']).not.toBe(paymentRequired);
    expect(await moved(intentId)).toMatchObject({ state: 'open', fundPostings: 0 });
    expect(settlementsOf(payer.address)).toHaveLength(0);
  });

  it('an invalid signature (signed by another key) is refused by the facilitator: 402 problem, nothing moved', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged();
    const forged = await signX402Payment(paymentRequired, payer, { signer: testAccount() });
    const refused = seen(await live.fund(intentId, { 'payment-signature': forged }));
    expect(refused.statusCode, refused.body).toBe(402);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ type: 'https://paymentauth.org/problems/verification-failed', funding: { error_reason: 'invalid_exact_evm_payload_signature' } });
    expect(await moved(intentId)).toMatchObject({ state: 'open', fundPostings: 0 });
    expect(settlementsOf(payer.address)).toHaveLength(0);
  });

  it('refuses, before the facilitator sees them, an overpaying or expired authorization and one spent on another intent', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged();
    const refusals: Array<[string, Parameters<typeof signX402Payment>[2], string]> = [
      ['overpaying', { value: '5000001' }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['expired', { nowMs: Date.now() - 3_600_000 }, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['not yet valid', { nowMs: Date.now() + 3_600_000 }, 'invalid_exact_evm_payload_authorization_valid_after'],
    ];
    let challenge = paymentRequired;
    for (const [label, options, errorReason] of refusals) {
      const refused = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(challenge, payer, options) }));
      expect(refused.statusCode, label).toBe(402);
      expect(refused.json().funding, label).toMatchObject({ status: 'authorization_failed', error_reason: errorReason });
      challenge = refused.headers['payment-required'] as string;
    }
    expect(facilitator.requests.filter((request) => request.payer === payer.address)).toEqual([]);

    // A nonce settled for one intent is refused for the next, without asking the facilitator again.
    const nonce = `0x${'5a'.repeat(32)}`;
    expect(seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(challenge, payer, { nonce }) })).statusCode).toBe(200);
    const next = await challenged();
    const reused = seen(await live.fund(next.intentId, { 'payment-signature': await signX402Payment(next.paymentRequired, payer, { nonce }) }));
    expect(reused.json().funding).toMatchObject({ status: 'authorization_failed', error_reason: 'invalid_exact_evm_nonce_already_used' });
    expect(facilitator.requests.filter((request) => request.payer === payer.address).map((request) => request.path)).toEqual(['/verify', '/settle']);
    expect(await moved(next.intentId)).toMatchObject({ state: 'open', fundPostings: 0 });
    // What was paid is on the intent: the base units the facilitator settled.
    expect((await live.read(intentId)).funding_details).toMatchObject({ amount: '5000000', payer: payer.address });
  });

  it('a facilitator 5xx answers 503 rail.unavailable with Retry-After; the retry with the same key continues and settles once', async () => {
    const payer = testAccount();
    facilitator.script(payer.address, 'server_error');
    const { intentId, paymentRequired } = await challenged();
    const headers = { 'payment-signature': await signX402Payment(paymentRequired, payer) };
    const unavailable = seen(await live.fund(intentId, headers, `fund-${intentId}`));
    expect(unavailable.statusCode, unavailable.body).toBe(503);
    expect(unavailable.json().error.code).toBe('rail.unavailable');
    expect(Number(unavailable.headers['retry-after'])).toBeGreaterThan(0);
    // Nothing moved and the claim is released: the retry need not wait for a lease.
    expect(await moved(intentId)).toEqual({ state: 'open', fundPostings: 0, attempts: [{ status: 'challenged', claimed: false }] });

    facilitator.script(payer.address, 'success');
    const retried = seen(await live.fund(intentId, headers, `fund-${intentId}`));
    expect(retried.statusCode, retried.body).toBe(200);
    expect(await moved(intentId)).toMatchObject({ state: 'funded', fundPostings: 1 });
    expect(settlementsOf(payer.address)).toHaveLength(1);
  });

  it('an unreachable facilitator answers 503 too, nothing moved', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged();
    facilitator.setDown(true);
    try {
      const unavailable = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(paymentRequired, payer) }));
      expect(unavailable.statusCode, unavailable.body).toBe(503);
      expect(unavailable.json().error.code).toBe('rail.unavailable');
    } finally {
      facilitator.setDown(false);
    }
    expect(await moved(intentId)).toMatchObject({ state: 'open', fundPostings: 0 });
  });

  it('a settle that times out after the facilitator settled is resolved by asking again: funded, settled once', async () => {
    const payer = testAccount();
    facilitator.script(payer.address, 'timeout_then_settled');
    const { intentId, paymentRequired } = await challenged();
    const funded = seen(await live.fund(intentId, { 'payment-signature': await signX402Payment(paymentRequired, payer) }, `fund-${intentId}`));
    expect(funded.statusCode, funded.body).toBe(200);
    expect(facilitator.requests.filter((request) => request.payer === payer.address).map((request) => request.path)).toEqual(['/verify', '/settle', '/settle']);
    expect(settlementsOf(payer.address)).toHaveLength(1);
    expect(funded.json().funding.transaction).toBe(settlementsOf(payer.address)[0]!.transaction);
    expect(await moved(intentId)).toMatchObject({ state: 'funded', fundPostings: 1 });
  });

  it('a settlement pending on chain answers 202; the same request polls it to 200', async () => {
    const payer = testAccount();
    facilitator.script(payer.address, 'pending_then_settled');
    const { intentId, paymentRequired } = await challenged();
    const headers = { 'payment-signature': await signX402Payment(paymentRequired, payer) };
    const pending = seen(await live.fund(intentId, headers, `fund-${intentId}`));
    expect(pending.statusCode, pending.body).toBe(202);
    expect(pending.json().funding).toMatchObject({ status: 'authorization_pending' });
    const polled = seen(await live.fund(intentId, headers, `fund-${intentId}`));
    expect(polled.statusCode, polled.body).toBe(200);
    expect(settlementsOf(payer.address)).toHaveLength(1);
    expect(await moved(intentId)).toMatchObject({ state: 'funded', fundPostings: 1 });
  });

  it('a claim left by a dead process is resolved by the sweeper after its lease: funded once', async () => {
    const payer = testAccount();
    const { intentId, paymentRequired } = await challenged();
    const credential = await signX402Payment(paymentRequired, payer);
    // What a process that died after phase 1 leaves: the attempt claimed with its credential, the rail not called.
    const payload = JSON.parse(Buffer.from(credential, 'base64').toString('utf8'));
    const { createHash } = await import('node:crypto');
    await db.tenant(live.tenant.tenantId, (tx) => tx.query(
      `UPDATE funding_attempts SET claimed_at = now() - interval '1 minute', credential_digest = $2, credential = $3, live = true
       WHERE intent_id = $1 AND status = 'challenged'`,
      [intentId, createHash('sha256').update(credential, 'utf8').digest(), JSON.stringify(payload)],
    ));
    const report = await live.sweep();
    expect(report.claims.funded).toBeGreaterThanOrEqual(1);
    expect(await moved(intentId)).toEqual({ state: 'funded', fundPostings: 1, attempts: [{ status: 'succeeded', claimed: false }] });
    expect(settlementsOf(payer.address)).toHaveLength(1);
  });
});

describe('the live settlement configuration', () => {
  it('GET shows the facilitator and whether a key is set, never the key; a PUT without the key keeps it, null clears it', async () => {
    const read = seen(await app.inject({ method: 'GET', url: '/v1/admin/settlement/config', headers: bearer(live.tenant.adminKey) }));
    expect(read.json()).toMatchObject({ environment: 'live', x402_facilitator_url: facilitator.url, x402_facilitator_api_key_set: true, mpp_processor_secret_key_set: false });
    expect(read.json()).not.toHaveProperty('x402_facilitator_api_key');
    const stored = await db.system(async (tx) => (await tx.query(
      `SELECT sealed FROM settlement_rail_secrets WHERE tenant_id = $1 AND rail = 'x402_usdc_base' AND field = 'x402_facilitator_api_key'`, [live.tenant.tenantId])).rows[0]);
    expect(Buffer.from(stored!.sealed).toString('latin1')).not.toContain(apiKey);

    const kept = seen(await live.configure({ rails: ['x402_usdc_base'], x402_address: payTo, x402_facilitator_url: facilitator.url }));
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().x402_facilitator_api_key_set).toBe(true);

    // Without the key, the facilitator refuses the dry call: 400, nothing saved.
    const cleared = seen(await live.configure(x402Config({ x402_facilitator_api_key: null })));
    expect(cleared.statusCode, cleared.body).toBe(400);
    expect(cleared.json().error).toMatchObject({ code: 'settlement_config.rail_refused', details: { field: 'x402_facilitator_api_key' } });
    const wrongKey = seen(await live.configure(x402Config({ x402_facilitator_api_key: 'not-the-key' })));
    expect(wrongKey.json().error.details.field).toBe('x402_facilitator_api_key');
    const after = (await app.inject({ method: 'GET', url: '/v1/admin/settlement/config', headers: bearer(live.tenant.adminKey) })).json();
    expect(after.x402_facilitator_api_key_set).toBe(true);
  });

  it('a facilitator that is down is a 503 with Retry-After, one that does not list Base a 400, both naming the URL', async () => {
    facilitator.setDown(true);
    try {
      const down = seen(await live.configure(x402Config()));
      expect(down.statusCode).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      expect(down.json().error).toMatchObject({ code: 'settlement_config.rail_unreachable', details: { field: 'x402_facilitator_url', settlement_rail: 'x402_usdc_base' } });
    } finally {
      facilitator.setDown(false);
    }
    const testnetOnly = await startX402Facilitator({ network: 'eip155:84532' });
    try {
      const wrongNetwork = seen(await live.configure(x402Config({ x402_facilitator_url: testnetOnly.url })));
      expect(wrongNetwork.statusCode).toBe(400);
      expect(wrongNetwork.json().error.code).toBe('settlement_config.rail_refused');
      expect(wrongNetwork.json().error.details.reason).toContain('eip155:8453');
    } finally {
      await testnetOnly.close();
    }
  });

  it('refuses endpoints that are not https (http only to loopback), or carry credentials', async () => {
    for (const url of ['http://facilitator.example.com', 'ftp://127.0.0.1/x', 'https://user:pw@facilitator.example.com', 'https://f.example.com/?key=1', 'not a url']) {
      const refused = seen(await live.configure(x402Config({ x402_facilitator_url: url })));
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'settlement_config.rail_endpoint_invalid', details: { field: 'x402_facilitator_url' } });
    }
  });

  it('a deployment without SVC_SECRETS_KEY cannot store a secret (503 settlement_config.secrets_key_missing)', async () => {
    const keyless = await buildTestApp(database.connection);
    try {
      const refused = seen(await keyless.inject({ method: 'PUT', url: '/v1/admin/settlement/config', headers: bearer(live.tenant.adminKey), payload: x402Config() }));
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.code).toBe('settlement_config.secrets_key_missing');
    } finally {
      await keyless.close();
    }
  });

  it('the API key appears in no answer, no log line and no audit export', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/compliance/audit-exports', headers: bearer(live.tenant.adminKey), payload: {} });
    expect(created.statusCode, created.body).toBe(201);
    const job = created.json();
    const bundle = await app.inject({ method: 'POST', url: `/v1/compliance/audit-exports/${job.job_id}/bundle`, headers: bearer(job.download_token) });
    expect(bundle.statusCode).toBe(200);
    const files = Object.values(unzipSync(new Uint8Array(bundle.rawPayload))).map((bytes) => strFromU8(bytes));
    expect(files.length).toBeGreaterThan(0);
    for (const text of [...files, ...answers, created.body]) expect(text).not.toContain(apiKey);
    expect(logs.text.length).toBeGreaterThan(0);
    expect(logs.text).not.toContain(apiKey);
  });
});
