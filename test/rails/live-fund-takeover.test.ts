// A funding claim orphaned by a crash, recovered as clients really retry (docs/engine.md "Funding in two phases"):
// the server is killed (SIGKILL) between a fund request's claim and its rail call (or just after the call), a new
// process starts, and the client re-posts fund under the same idempotency key, with no credential or with a new
// credential answering a fresh challenge, retrying 409 `idempotency.request_in_progress` with backoff as the SDKs
// do. The retry takes the claim over once its lease is over and asks the rail about the credential first presented:
// funded promptly, the money moved once, and the new credential never reaches the rail. Without a retry, the
// restarted process's first maintenance pass resolves the claim within seconds and stores the funding's answer
// under the key, which the retry then replays.
import { randomBytes } from 'node:crypto';
import { Challenge, Credential } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { fundingClaimLeaseMs, maintenanceFirstPassDelayMs, maintenanceIntervalMs } from '../../src/limits.ts';
import { maintenanceLockKey } from '../../src/services/maintenance.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { signX402Payment, startX402Facilitator, testAccount, type X402Facilitator } from '../helpers/x402-facilitator.ts';

const apiKey = 'fac_takeover_test_key_7c1e';
const secretsKey = randomBytes(32).toString('base64');
const destination = 'acct_1TakeoverPayee';
const agent = ed25519SignerFromSeed(randomBytes(32));
const keyId = 'agent-takeover';
const principal = party('did:principal:takeover');
const payee = party('did:payee:takeover');

/** How soon after the new process listens the retry must be funded: the claim's lease, then a few round trips
 * (and a loaded machine's slack). The sweeper's interval is far longer: the bound tells the two apart. */
const promptlyMs = fundingClaimLeaseMs + 7_000;

let database: TestDatabase;
let db: Database;
let facilitator: X402Facilitator;
let processor: MppProcessor;
let x402Tenant: TestTenant;
let mppTenant: TestTenant;
let server: ServerProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  facilitator = await startX402Facilitator({ apiKey });
  processor = await startMppProcessor({ accounts: [destination] });
  x402Tenant = await createTestTenant(database.connection, 'live');
  mppTenant = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await facilitator?.close();
  await processor?.close();
  await db?.close();
  await database?.drop();
});

const start = (crashAt?: string) =>
  startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_SECRETS_KEY: secretsKey, ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) }, 120_000);

/** A live engine POST with a fresh recognition proof for its exact body, as each step of the client's loop. */
function post(tenant: TestTenant, path: string, purpose: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const proof = createRecognitionProof({ signer: agent, keyId, purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
  return call(server!.baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
}

const configured = new Set<string>();

/** The tenant's agent and principal keys and its live rail, once (registration reaches no crash point). */
async function configure(tenant: TestTenant, rail: 'x402' | 'mpp'): Promise<void> {
  if (configured.has(tenant.tenantId)) return;
  for (const [kind, subject, hex] of [['agent', keyId, agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
    const registered = await call(server!.baseUrl, tenant.adminKey, 'POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex });
    expect(registered.status, registered.text).toBe(201);
  }
  const config = rail === 'x402'
    ? { rails: ['x402_usdc_base'], x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', x402_facilitator_url: facilitator.url, x402_facilitator_api_key: apiKey }
    : { rails: ['processor_mpp'], mpp_profile_id: 'profile_live_takeover', processor_destination: destination, mpp_processor_url: processor.url, mpp_processor_secret_key: processor.secretKey };
  const answer = await call(server!.baseUrl, tenant.adminKey, 'PUT', '/v1/admin/settlement/config', config);
  expect(answer.status, answer.text).toBe(200);
  configured.add(tenant.tenantId);
}

interface Crashed {
  readonly tenant: TestTenant;
  readonly intentId: string;
  readonly fundPath: string;
  readonly key: string;
}

/** A new intent, its challenge answered with `credentialFor`'s credential under one key, sent to a server armed to
 * die at `crashAt`: the client sees no answer, and the claim stands. */
async function fundIntoCrash(
  tenant: TestTenant,
  rail: 'x402' | 'mpp',
  crashAt: 'fund.after_phase1' | 'fund.after_rail_call',
  credentialFor: (challenge: HttpAnswer) => Promise<Record<string, string>>,
): Promise<Crashed> {
  server = await start(crashAt);
  await configure(tenant, rail);
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, ...(rail === 'mpp' ? { settlementRail: 'processor_mpp', amountCents: 1500 } : {}) });
  const intentId = body['intent_id'] as string;
  expect((await post(tenant, '/harbor/intents', recognitionPurposes.intentCreate, body)).status).toBe(201);
  const fundPath = `/harbor/intents/${intentId}/fund`;
  const key = `fund-${intentId}`;
  // The client's handshake: the challenge and the credential, under one key.
  const challenge = await post(tenant, fundPath, recognitionPurposes.intentFund, {}, { 'idempotency-key': key });
  expect(challenge.status, challenge.text).toBe(402);
  const headers = { ...(await credentialFor(challenge)), 'idempotency-key': key };
  await expect(post(tenant, fundPath, recognitionPurposes.intentFund, {}, headers)).rejects.toThrow();
  expect(await server.exited).toBeNull();
  expect(server.child.signalCode).toBe('SIGKILL');
  const attempts = await db.tenant(tenant.tenantId, async (tx) =>
    (await tx.query(`SELECT status, claimed_at IS NOT NULL AS claimed, idempotency_key FROM funding_attempts WHERE intent_id = $1`, [intentId])).rows);
  expect(attempts).toEqual([{ status: 'challenged', claimed: true, idempotency_key: key }]);
  return { tenant, intentId, fundPath, key };
}

/** A fresh challenge for the intent, asked without the key (another request): what a new credential answers. */
async function freshChallenge({ tenant, fundPath }: Crashed): Promise<HttpAnswer> {
  const challenge = await post(tenant, fundPath, recognitionPurposes.intentFund, {});
  expect(challenge.status, challenge.text).toBe(402);
  return challenge;
}

/** The client's retry under the key: 409 in progress is retried with backoff (200 · 2^n ms plus jitter, at most
 * 5 s, as the SDKs do) until `promptlyMs` has passed. Answers the final answer and how long it took. */
async function retryUnderKey(crashed: Crashed, headers: Record<string, string>): Promise<{ answer: HttpAnswer; elapsedMs: number; inProgress: number }> {
  const startedMs = Date.now();
  for (let retry = 0; ; retry += 1) {
    const answer = await post(crashed.tenant, crashed.fundPath, recognitionPurposes.intentFund, {}, { ...headers, 'idempotency-key': crashed.key });
    const elapsedMs = Date.now() - startedMs;
    if (!(answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress')) return { answer, elapsedMs, inProgress: retry };
    if (elapsedMs > promptlyMs) throw new Error(`the retry stayed in progress for ${elapsedMs} ms (${retry + 1} answers)`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** retry + Math.random() * 100, 5_000)));
  }
}

async function fundingRows({ tenant, intentId }: Crashed) {
  return db.tenant(tenant.tenantId, async (tx) => ({
    state: (await tx.query(`SELECT state FROM intents WHERE intent_id = $1`, [intentId])).rows[0]!.state as string,
    fund: (await tx.query(`SELECT count(DISTINCT transaction_id)::int AS n FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [intentId])).rows[0]!.n as number,
    attempts: (await tx.query<{ status: string; claimed: boolean }>(`SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1 ORDER BY status`, [intentId])).rows,
  }));
}

/** Runs `use` while this test holds the maintenance lock, so that no maintenance pass of the server can resolve the
 * claim: what `use` sees is the retry's own doing. Held as the pass holds it, in an open transaction (a session lock
 * behind a pooler in transaction mode would stay on a server session the pass itself may be given). */
async function withoutSweeper<T>(use: () => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [maintenanceLockKey]);
    return await use();
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const settlementsBy = (payer: string) => facilitator.settlements.filter((settlement) => settlement.payer.toLowerCase() === payer.toLowerCase());

async function expectLedgerVerifies(tenant: TestTenant): Promise<void> {
  const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
  expect(verified.code, verified.stdout + verified.stderr).toBe(0);
}

describe('x402 live: the same-key retry takes an orphaned claim over', () => {
  it('a crash before the facilitator was called: a new credential under the key funds with the first, promptly, once', async () => {
    const [first, second] = [testAccount(), testAccount()];
    const crashed = await fundIntoCrash(x402Tenant, 'x402', 'fund.after_phase1', async (challenge) => ({
      'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, first),
    }));
    expect(settlementsBy(first.address)).toHaveLength(0);
    const { answer, elapsedMs } = await withoutSweeper(async () => {
      server = await start();
      // The client lost its answer and starts its handshake over: a fresh challenge, a new credential, the same key.
      const challenge = await freshChallenge(crashed);
      return retryUnderKey(crashed, { 'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, second) });
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(elapsedMs).toBeLessThan(promptlyMs);
    // The first credential was settled once (by the take-over); the new one never reached the facilitator.
    expect(settlementsBy(first.address)).toHaveLength(1);
    expect(settlementsBy(second.address)).toHaveLength(0);
    expect(facilitator.requests.filter((request) => request.payer?.toLowerCase() === second.address.toLowerCase())).toEqual([]);
    expect(answer.json).toMatchObject({ state: 'funded', funded: true, funding: { transaction: settlementsBy(first.address)[0]!.transaction } });
    expect(answer.json.capability_token).toEqual(expect.any(String));
    // Replayed from then on, whichever credential the retry carries.
    const replay = await post(crashed.tenant, crashed.fundPath, recognitionPurposes.intentFund, {}, { 'idempotency-key': crashed.key });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.text]).toEqual([200, 'true', answer.text]);
    const rows = await fundingRows(crashed);
    expect(rows).toMatchObject({ state: 'funded', fund: 1 });
    expect(rows.attempts).toContainEqual({ status: 'succeeded', claimed: false });
    expect(rows.attempts.every((attempt) => !attempt.claimed)).toBe(true);
    await expectLedgerVerifies(crashed.tenant);
    await server!.stop();
  }, 600_000);

  it('a crash after the facilitator settled: the retry without a credential finds the settlement, never pays again', async () => {
    const first = testAccount();
    const crashed = await fundIntoCrash(x402Tenant, 'x402', 'fund.after_rail_call', async (challenge) => ({
      'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, first),
    }));
    expect(settlementsBy(first.address)).toHaveLength(1);
    const { answer, elapsedMs } = await withoutSweeper(async () => {
      server = await start();
      // The public client's loop starts with the bare request under its key.
      return retryUnderKey(crashed, {});
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(elapsedMs).toBeLessThan(promptlyMs);
    expect(settlementsBy(first.address)).toHaveLength(1);
    expect(answer.json).toMatchObject({ state: 'funded', funding: { transaction: settlementsBy(first.address)[0]!.transaction } });
    expect(await fundingRows(crashed)).toMatchObject({ state: 'funded', fund: 1 });
    await expectLedgerVerifies(crashed.tenant);
    await server!.stop();
  }, 600_000);

  it('a take-over the facilitator answers as pending: the retry\'s new credential polls the first, never settles itself', async () => {
    const first = testAccount();
    facilitator.script(first.address, 'pending_then_settled');
    const crashed = await fundIntoCrash(x402Tenant, 'x402', 'fund.after_phase1', async (challenge) => ({
      'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, first),
    }));
    const second = testAccount();
    const [pending, { answer }] = await withoutSweeper(async () => {
      server = await start();
      const newCredential = { 'payment-signature': await signX402Payment((await freshChallenge(crashed)).headers.get('payment-required')!, second) };
      const first202 = await retryUnderKey(crashed, newCredential);
      // The poll, as the client sends it: the same request again, its new credential still attached.
      return [first202, await retryUnderKey(crashed, newCredential)] as const;
    });
    expect(pending.answer.status, pending.answer.text).toBe(202);
    expect(answer.status, answer.text).toBe(200);
    expect(settlementsBy(first.address)).toHaveLength(1);
    expect(settlementsBy(second.address)).toHaveLength(0);
    expect(await fundingRows(crashed)).toMatchObject({ state: 'funded', fund: 1 });
    await expectLedgerVerifies(crashed.tenant);
    await server!.stop();
  }, 600_000);

  it('no retry: the new process\'s first maintenance pass funds it within seconds, and the retry replays that answer', async () => {
    const first = testAccount();
    const crashed = await fundIntoCrash(x402Tenant, 'x402', 'fund.after_phase1', async (challenge) => ({
      'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, first),
    }));
    const startedMs = Date.now();
    server = await start();
    for (;;) {
      if ((await fundingRows(crashed)).state === 'funded') break;
      // Well before the maintenance interval: the pass that ran is the one soon after start.
      expect(Date.now() - startedMs).toBeLessThan(maintenanceFirstPassDelayMs + 10_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(maintenanceFirstPassDelayMs + 10_000).toBeLessThan(maintenanceIntervalMs);
    expect(settlementsBy(first.address)).toHaveLength(1);
    // The client comes back under its key (its loop starts with the bare request): the funding's answer, stored by
    // the sweeper under that key, with the capability token; not 409 intent.invalid_state.
    const answer = await post(crashed.tenant, crashed.fundPath, recognitionPurposes.intentFund, {}, { 'idempotency-key': crashed.key });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBe('true');
    expect(answer.json).toMatchObject({ state: 'funded', funded: true, funding: { transaction: settlementsBy(first.address)[0]!.transaction } });
    expect(answer.json.capability_token).toEqual(expect.any(String));
    expect(answer.headers.get('payment-response')).toBeTruthy();
    expect(await fundingRows(crashed)).toMatchObject({ state: 'funded', fund: 1 });
    await expectLedgerVerifies(crashed.tenant);
    await server!.stop();
  }, 600_000);
});

describe('MPP live: the same-key retry takes an orphaned claim over', () => {
  it('a crash before the processor was called: a new token under the key charges the first, promptly, once', async () => {
    const crashed = await fundIntoCrash(mppTenant, 'mpp', 'fund.after_phase1', async (challenge) => ({
      'x-svc-payment-authorization': Credential.serialize({ challenge: Challenge.deserialize(challenge.headers.get('www-authenticate')!), payload: { spt: 'spt_success_takeover_first' } }),
    }));
    expect(processor.paymentsFor('spt_success_takeover_first')).toHaveLength(0);
    const { answer, elapsedMs } = await withoutSweeper(async () => {
      server = await start();
      const fresh = await freshChallenge(crashed);
      return retryUnderKey(crashed, {
        'x-svc-payment-authorization': Credential.serialize({ challenge: Challenge.deserialize(fresh.headers.get('www-authenticate')!), payload: { spt: 'spt_success_takeover_second' } }),
      });
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(elapsedMs).toBeLessThan(promptlyMs);
    expect(answer.headers.get('payment-receipt')).toBeTruthy();
    expect(processor.chargesFor('spt_success_takeover_first')).toBe(1);
    expect(processor.paymentsFor('spt_success_takeover_second')).toHaveLength(0);
    expect(await fundingRows(crashed)).toMatchObject({ state: 'funded', fund: 1 });
    await expectLedgerVerifies(crashed.tenant);
    await server!.stop();
  }, 600_000);
});
