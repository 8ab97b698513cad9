// kill -9 between the facilitator's settle and our second phase (docs/engine.md "Funding in two phases",
// docs/rails.md#x402-live): the server process kills itself at `fund.after_rail_call`, after the facilitator
// settled the payment and before the outcome is committed. The retry with the same idempotency key funds the
// intent once, and the facilitator saw one settlement: the retry asks about the payment (a repeated settle of the
// same authorization), it does not pay again.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { fundingClaimLeaseMs } from '../../src/limits.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { signX402Payment, startX402Facilitator, testAccount, type X402Facilitator } from '../helpers/x402-facilitator.ts';

const apiKey = 'fac_crash_test_key_31d2';
const secretsKey = randomBytes(32).toString('base64');
let database: TestDatabase;
let db: Database;
let facilitator: X402Facilitator;
let server: ServerProcess | undefined;
let tenant: TestTenant;
const agent = ed25519SignerFromSeed(randomBytes(32));
const principal = party('did:principal:crash');
const payee = party('did:payee:crash');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  facilitator = await startX402Facilitator({ apiKey });
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

/** A live engine POST: its recognition proof for the exact body. */
function post(path: string, purpose: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const proof = createRecognitionProof({ signer: agent, keyId: 'agent-crash', purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
  return call(server!.baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
}

describe('a crash after the facilitator settled', () => {
  it('is recovered by the retry with the same key: funded once, settled once, the ledger verifies', async () => {
    server = await start('fund.after_rail_call');
    for (const [kind, subject, hex] of [['agent', 'agent-crash', agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
      expect((await call(server.baseUrl, tenant.adminKey, 'POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex })).status).toBe(201);
    }
    const configured = await call(server.baseUrl, tenant.adminKey, 'PUT', '/v1/admin/settlement/config', {
      rails: ['x402_usdc_base'], x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', x402_facilitator_url: facilitator.url, x402_facilitator_api_key: apiKey,
    });
    expect(configured.status, configured.text).toBe(200);

    const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    expect((await post('/harbor/intents', recognitionPurposes.intentCreate, body)).status).toBe(201);
    const fundPath = `/harbor/intents/${intentId}/fund`;
    const challenge = await post(fundPath, recognitionPurposes.intentFund, {});
    expect(challenge.status).toBe(402);
    const payer = testAccount();
    const headers = { 'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, payer), 'idempotency-key': `fund-${intentId}` };

    // The facilitator settles; the server dies before committing the outcome: the client sees no answer.
    await expect(post(fundPath, recognitionPurposes.intentFund, {}, headers)).rejects.toThrow();
    expect(await server.exited).toBeNull();
    expect(server.child.signalCode).toBe('SIGKILL');
    expect(facilitator.settlements.filter((settlement) => settlement.payer === payer.address)).toHaveLength(1);
    const claimed = await db.tenant(tenant.tenantId, async (tx) =>
      (await tx.query(`SELECT i.state, a.status, a.claimed_at IS NOT NULL AS claimed FROM intents i JOIN funding_attempts a USING (tenant_id, intent_id) WHERE i.intent_id = $1`, [intentId])).rows);
    expect(claimed).toEqual([{ state: 'open', status: 'challenged', claimed: true }]);

    server = await start();
    const deadline = Date.now() + fundingClaimLeaseMs + 20_000;
    let recovered: HttpAnswer;
    for (;;) {
      recovered = await post(fundPath, recognitionPurposes.intentFund, {}, headers);
      if (!(recovered.status === 409 && recovered.json?.error?.code === 'idempotency.request_in_progress')) break;
      if (Date.now() > deadline) throw new Error('the fund stayed in progress');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(recovered.status, recovered.text).toBe(200);
    const settlements = facilitator.settlements.filter((settlement) => settlement.payer === payer.address);
    expect(settlements).toHaveLength(1);
    expect(recovered.json).toMatchObject({ state: 'funded', funding: { transaction: settlements[0]!.transaction } });

    const rows = await db.tenant(tenant.tenantId, async (tx) => ({
      fund: (await tx.query(`SELECT count(DISTINCT transaction_id)::int AS n FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [intentId])).rows[0]!.n,
      attempts: (await tx.query(`SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1`, [intentId])).rows,
    }));
    expect(rows).toEqual({ fund: 1, attempts: [{ status: 'succeeded', claimed: false }] });
    const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 300_000);
});
