// kill -9 between the facilitator's capture and our record of it (docs/rails.md#rail-instructions-and-the-sweeper):
// the server process kills itself at `instruct.after_rail_call`, after its sweeper's capture of an auth-capture hold
// was answered and before the outcome is committed. The claim stays; after its lease the restarted server's sweeper
// takes it over and asks the facilitator again under the same idempotency key, which replays the capture: the
// payee is paid once, the instruction succeeds with the capture's transaction, nothing is lost or doubled.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { testAccount } from '../helpers/x402-facilitator.ts';
import { signEscrowPayment, startEscrowFacilitator, type EscrowFacilitator } from '../helpers/x402-escrow-facilitator.ts';

const apiKey = 'fac_escrow_crash_0c1f';
const secretsKey = randomBytes(32).toString('base64');
let database: TestDatabase;
let db: Database;
let facilitator: EscrowFacilitator;
let server: ServerProcess | undefined;
let tenant: TestTenant;
const agent = ed25519SignerFromSeed(randomBytes(32));
const principal = party('did:principal:escrow-crash');
const payee = party('did:payee:escrow-crash');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  facilitator = await startEscrowFacilitator({ apiKey });
  tenant = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await facilitator?.close();
  await db?.close();
  await database?.drop();
});

const start = (crashAt?: string) =>
  startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_SECRETS_KEY: secretsKey, ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) }, 90_000);

function post(path: string, purpose: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const proof = createRecognitionProof({ signer: agent, keyId: 'agent-escrow-crash', purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
  return call(server!.baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
}

async function instructions(intentId: string) {
  return db.tenant(tenant.tenantId, async (tx) =>
    (await tx.query(`SELECT kind, status, reference, claimed_at IS NOT NULL AS claimed FROM rail_instructions WHERE intent_id = $1`, [intentId])).rows);
}

describe('a crash between the facilitator\'s capture and our record', () => {
  it('is recovered by the sweeper after the claim\'s lease: captured once, recorded once, the ledger verifies', async () => {
    server = await start('instruct.after_rail_call');
    for (const [kind, subject, hex] of [['agent', 'agent-escrow-crash', agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
      expect((await call(server.baseUrl, tenant.adminKey, 'POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex })).status).toBe(201);
    }
    const configured = await call(server.baseUrl, tenant.adminKey, 'PUT', '/v1/admin/settlement/config', {
      rails: ['x402_usdc_base'],
      x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      x402_facilitator_url: facilitator.url,
      x402_facilitator_api_key: apiKey,
      x402_scheme: 'auth-capture',
      x402_capture_authorizer: facilitator.captureAuthorizer,
      x402_receiver_authorizer_key: `0x${randomBytes(32).toString('hex')}`,
    });
    expect(configured.status, configured.text).toBe(200);

    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, amountCents: 900 });
    const intentId = body.intent_id as string;
    expect((await post('/harbor/intents', recognitionPurposes.intentCreate, body)).status).toBe(201);
    const fundPath = `/harbor/intents/${intentId}/fund`;
    const challenge = await post(fundPath, recognitionPurposes.intentFund, {});
    expect(challenge.status).toBe(402);
    const signature = await signEscrowPayment(challenge.headers.get('payment-required')!, testAccount());
    const funded = await post(fundPath, recognitionPurposes.intentFund, {}, { 'payment-signature': signature });
    expect(funded.status, funded.text).toBe(200);
    const hold = facilitator.payments.get(funded.json.funding.authorization_id)!;
    expect(hold.capturable).toBe(9_000_000n);

    const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
    expect((await post(`/harbor/intents/${intentId}/evidence`, recognitionPurposes.evidenceSubmit, evidence)).status).toBe(200);
    const confirmed = await post(`/harbor/intents/${intentId}/settlement/confirm`, recognitionPurposes.settlementConfirm, {});
    expect(confirmed.json?.state, confirmed.text).toBe('released');

    // The sweeper's next pass captures; the process dies before recording the outcome.
    expect(await server.exited).toBeNull();
    expect(server.child.signalCode).toBe('SIGKILL');
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold).toMatchObject({ capturable: 0n, paidToReceiver: 9_000_000n });
    expect(await instructions(intentId)).toEqual([{ kind: 'payout', status: 'pending', reference: null, claimed: true }]);

    // Restarted: after the claim's lease, a pass takes it over and asks again under the same idempotency key.
    server = await start();
    const deadline = Date.now() + 120_000;
    while ((await instructions(intentId))[0]!.status === 'pending') {
      if (Date.now() > deadline) throw new Error(`the capture was not recovered:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(await instructions(intentId)).toEqual([{ kind: 'payout', status: 'succeeded', reference: hold.transactions.capture[0], claimed: false }]);
    expect(hold.transactions.capture).toHaveLength(1);
    expect(hold).toMatchObject({ capturable: 0n, refundable: 9_000_000n, paidToReceiver: 9_000_000n, returnedToPayer: 0n });
    const captures = facilitator.settles.filter((settle) => settle.operation === 'capture');
    expect(captures).toHaveLength(2);
    expect(captures[0]!.idempotencyKey).toBe(captures[1]!.idempotencyKey);

    const read = await call(server.baseUrl, tenant.adminKey, 'GET', `/harbor/intents/${intentId}`);
    expect(read.json).toMatchObject({ state: 'released', capture_id: hold.transactions.capture[0], void_id: null });
    const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 300_000);
});
