// MPP live across a crash (docs/engine.md "Funding in two phases", docs/rails.md "MPP live"): the server is killed
// (SIGKILL) after the processor charged the card and before our second phase committed. The retry with the same
// idempotency key, or the sweeper, resolves the claim by asking the processor: the intent is funded once and the
// processor saw one charge.
import { randomBytes } from 'node:crypto';
import { Challenge, Credential } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { SecretBox } from '../../src/infra/secret-box.ts';
import { fundingClaimLeaseMs } from '../../src/limits.ts';
import { runRailSweep } from '../../src/services/maintenance.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const secretsKey = randomBytes(32).toString('base64');
const destination = 'acct_1CrashPayee';
const agent = ed25519SignerFromSeed(randomBytes(32));
const keyId = 'agent-mpp-crash';
const principal = party('did:principal:mpp-crash');
const payee = party('did:payee:mpp-crash');

let database: TestDatabase;
let db: Database;
let processor: MppProcessor;
let tenant: TestTenant;
let server: ServerProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  processor = await startMppProcessor({ accounts: [destination] });
  tenant = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await processor?.close();
  await db?.close();
  await database?.drop();
});

/** Server start-up (tsx, migrations) can take long on a loaded machine. */
const startTimeoutMs = 120_000;

const start = (crashAt?: string) =>
  startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_SECRETS_KEY: secretsKey, ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) }, startTimeoutMs);

/** An engine mutation with its recognition proof (a fresh one each time: a retry may carry a new nonce). */
function mutate(path: string, purpose: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const proof = createRecognitionProof({ signer: agent, keyId, purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
  return call(server!.baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
}

/** What a client does after a failure: the same request, same key, until it is no longer "in progress". */
async function retryUntilFinal(path: string, headers: Record<string, string>): Promise<HttpAnswer> {
  const deadline = Date.now() + fundingClaimLeaseMs + 20_000;
  for (;;) {
    const answer = await mutate(path, recognitionPurposes.intentFund, {}, headers);
    if (!(answer.status === 409 && answer.json?.error?.code === 'idempotency.request_in_progress')) return answer;
    if (Date.now() > deadline) throw new Error(`${path} stayed in progress`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function fundingRows(intentId: string) {
  return db.tenant(tenant.tenantId, async (tx) => {
    const state = (await tx.query(`SELECT state FROM intents WHERE intent_id = $1`, [intentId])).rows[0]!.state as string;
    const attempts = (await tx.query(`SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1 ORDER BY created_at`, [intentId])).rows;
    const ledger = (await tx.query(`SELECT count(DISTINCT transaction_id)::int AS transactions FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [intentId])).rows[0]!;
    return { state, attempts: attempts as Array<{ status: string; claimed: boolean }>, fundTransactions: ledger.transactions as number };
  });
}

/** Creates the processor saw for a token: the recovery asked (found the payment) rather than charging again. */
function createCalls(spt: string): number {
  return processor.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents' && request.idempotencyKey?.endsWith(`_${spt}`)).length;
}

let configured = false;

/** The live tenant's agent and principal keys, and its processor_mpp configuration (the PUT probes the processor). */
async function configureTenant(): Promise<void> {
  for (const [kind, subject, hex] of [['agent', keyId, agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
    const registered = await call(server!.baseUrl, tenant.adminKey, 'POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex });
    expect(registered.status, registered.text).toBe(201);
  }
  const answer = await call(server!.baseUrl, tenant.adminKey, 'PUT', '/v1/admin/settlement/config', {
    rails: ['processor_mpp'], mpp_profile_id: 'profile_live_crash', processor_destination: destination,
    mpp_processor_url: processor.url, mpp_processor_secret_key: processor.secretKey,
  });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.text).not.toContain(processor.secretKey);
  configured = true;
}

/** Creates an intent and answers its challenge with `spt` through a server that dies after the processor's answer. */
async function fundIntoCrash(spt: string): Promise<{ intentId: string; fundPath: string; headers: Record<string, string> }> {
  server = await start('fund.after_rail_call');
  // Registration and configuration reach no crash point: the first crashing server sets the tenant up.
  if (!configured) await configureTenant();
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, settlementRail: 'processor_mpp', amountCents: 1500 });
  const intentId = body['intent_id'] as string;
  const created = await mutate('/harbor/intents', recognitionPurposes.intentCreate, body);
  expect(created.status, created.text).toBe(201);
  const fundPath = `/harbor/intents/${intentId}/fund`;
  const challenge = await mutate(fundPath, recognitionPurposes.intentFund, {});
  expect(challenge.status, challenge.text).toBe(402);
  const credential = Credential.serialize({ challenge: Challenge.deserialize(challenge.headers.get('www-authenticate')!), payload: { spt } });
  const headers = { 'x-svc-payment-authorization': credential, 'idempotency-key': `fund-${intentId}` };
  // The processor charges; the server kills itself before recording it: the client sees no answer.
  await expect(mutate(fundPath, recognitionPurposes.intentFund, {}, headers)).rejects.toThrow();
  expect(await server.exited).toBeNull();
  expect(server.child.signalCode).toBe('SIGKILL');
  expect(processor.chargesFor(spt)).toBe(1);
  expect(await fundingRows(intentId)).toEqual({ state: 'open', attempts: [{ status: 'challenged', claimed: true }], fundTransactions: 0 });
  return { intentId, fundPath, headers };
}

describe('MPP live: a crash between the processor\'s charge and our commit', () => {
  it('the retry with the same key finds the charge: funded once, one charge, the ledger verifies', async () => {
    const { intentId, fundPath, headers } = await fundIntoCrash('spt_success_crash_retry');
    server = await start();
    const recovered = await retryUntilFinal(fundPath, headers);
    expect(recovered.status, recovered.text).toBe(200);
    expect(recovered.json).toMatchObject({ state: 'funded', funded: true });
    expect(recovered.headers.get('payment-receipt')).toBeTruthy();
    expect(processor.paymentsFor('spt_success_crash_retry')).toHaveLength(1);
    expect(processor.chargesFor('spt_success_crash_retry')).toBe(1);
    expect(createCalls('spt_success_crash_retry')).toBe(1);
    const rows = await fundingRows(intentId);
    expect(rows).toMatchObject({ state: 'funded', fundTransactions: 1 });
    expect(rows.attempts.filter((attempt) => attempt.status === 'succeeded')).toHaveLength(1);
    expect(rows.attempts.every((attempt) => !attempt.claimed)).toBe(true);
    const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(server.output()).not.toContain(processor.secretKey);
    await server.stop('SIGTERM');
  }, 600_000);

  it('the sweeper resolves the claim after its lease: funded once, one charge', async () => {
    const { intentId } = await fundIntoCrash('spt_success_crash_sweep');
    await new Promise((resolve) => setTimeout(resolve, fundingClaimLeaseMs + 100));
    const report = await runRailSweep(db, { secretBox: SecretBox.fromBase64(secretsKey), callTimeoutMs: 2_000 }, ephemeralKeyring());
    expect(report.claims.funded).toBeGreaterThanOrEqual(1);
    const rows = await fundingRows(intentId);
    expect(rows).toMatchObject({ state: 'funded', fundTransactions: 1 });
    expect(rows.attempts).toEqual([{ status: 'succeeded', claimed: false }]);
    // The sweeper asked; it did not charge again.
    expect(processor.paymentsFor('spt_success_crash_sweep')).toHaveLength(1);
    expect(processor.chargesFor('spt_success_crash_sweep')).toBe(1);
    expect(createCalls('spt_success_crash_sweep')).toBe(1);
  }, 600_000);
});
