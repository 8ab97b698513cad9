// MPP live settlement across a crash (docs/rails.md#rail-instructions-and-the-sweeper): the server's sweeper makes
// the processor's transfer (payout) or refund, and the process is killed (SIGKILL, `instruct.after_rail_call`) before
// it records the outcome. After the claim's lease the restarted server's sweeper asks the processor again under the
// instruction's idempotency key: the processor replays the first transfer or refund, nothing is paid twice, the
// instruction succeeds with the processor's reference.
import { randomBytes } from 'node:crypto';
import { Challenge, Credential } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { startMppProcessor, type MppProcessor } from '../helpers/mpp-processor.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const secretsKey = randomBytes(32).toString('base64');
const destination = 'acct_1SettleCrash';
const agent = ed25519SignerFromSeed(randomBytes(32));
const keyId = 'agent-mpp-settle-crash';
const principal = party('did:principal:mpp-settle-crash');
const payee = party('did:payee:mpp-settle-crash');

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

const start = (crashAt?: string) =>
  startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_SECRETS_KEY: secretsKey, ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) }, 120_000);

function mutate(path: string, purpose: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const proof = createRecognitionProof({ signer: agent, keyId, purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
  return call(server!.baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
}

async function instructions(intentId: string) {
  return db.tenant(tenant.tenantId, async (tx) =>
    (await tx.query(`SELECT kind, status, amount_cents::int AS amount, reference, claimed_at IS NOT NULL AS claimed FROM rail_instructions WHERE intent_id = $1 ORDER BY kind`, [intentId])).rows);
}

describe('MPP live: a crash between the processor\'s transfer and our record', () => {
  it('is recovered by the sweeper after the claim\'s lease: one transfer, recorded once, the ledger verifies', async () => {
    server = await start('instruct.after_rail_call');
    for (const [kind, subject, hex] of [['agent', keyId, agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
      expect((await call(server.baseUrl, tenant.adminKey, 'POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex })).status).toBe(201);
    }
    const configured = await call(server.baseUrl, tenant.adminKey, 'PUT', '/v1/admin/settlement/config', {
      rails: ['processor_mpp'], mpp_profile_id: 'profile_live_settle_crash', processor_destination: destination,
      mpp_processor_url: processor.url, mpp_processor_secret_key: processor.secretKey,
    });
    expect(configured.status, configured.text).toBe(200);

    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, settlementRail: 'processor_mpp', amountCents: 1500 });
    const intentId = body['intent_id'] as string;
    expect((await mutate('/harbor/intents', recognitionPurposes.intentCreate, body)).status).toBe(201);
    const fundPath = `/harbor/intents/${intentId}/fund`;
    const challenge = await mutate(fundPath, recognitionPurposes.intentFund, {});
    expect(challenge.status, challenge.text).toBe(402);
    const credential = Credential.serialize({ challenge: Challenge.deserialize(challenge.headers.get('www-authenticate')!), payload: { spt: 'spt_success_settle_crash' } });
    const funded = await mutate(fundPath, recognitionPurposes.intentFund, {}, { 'x-svc-payment-authorization': credential });
    expect(funded.status, funded.text).toBe(200);

    const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
    expect((await mutate(`/harbor/intents/${intentId}/evidence`, recognitionPurposes.evidenceSubmit, evidence)).status).toBe(200);
    const confirmed = await mutate(`/harbor/intents/${intentId}/settlement/confirm`, recognitionPurposes.settlementConfirm, {});
    expect(confirmed.json?.state, confirmed.text).toBe('released');

    // The sweeper's pass transfers; the process dies before recording it.
    expect(await server.exited).toBeNull();
    expect(server.child.signalCode).toBe('SIGKILL');
    expect(processor.transfers).toHaveLength(1);
    expect(await instructions(intentId)).toEqual([{ kind: 'payout', status: 'pending', amount: 1500, reference: null, claimed: true }]);

    server = await start();
    const deadline = Date.now() + 120_000;
    while ((await instructions(intentId)).some((row) => row.status === 'pending')) {
      if (Date.now() > deadline) throw new Error(`the payout was not recovered:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(processor.transfers).toHaveLength(1);
    expect(processor.transfers[0]).toMatchObject({ amount: 1500, destination });
    expect(await instructions(intentId)).toEqual([{ kind: 'payout', status: 'succeeded', amount: 1500, reference: processor.transfers[0]!.id, claimed: false }]);
    const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 300_000);
});
