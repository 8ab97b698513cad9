// kill -9 between the facilitator's settle and our second phase (docs/engine.md "Funding in two phases",
// docs/rails.md#x402-live): the server process kills itself at `fund.after_rail_call`, after the facilitator
// settled the payment and before the outcome is committed. The retry with the same idempotency key funds the
// intent once, and the facilitator saw one settlement: the retry asks about the payment (a repeated settle of the
// same authorization), it does not pay again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundingClaimLeaseMs } from '../../src/limits.ts';
import { recognitionPurposes } from '../../src/signing/recognition.ts';
import type { HttpAnswer } from '../helpers/http-client.ts';
import { signX402Payment, startX402Facilitator, testAccount, type X402Facilitator } from '../helpers/x402-facilitator.ts';
import { setUpCrashRig, type CrashRig } from './live-crash-fixtures.ts';

const apiKey = 'fac_crash_test_key_31d2';
let rig: CrashRig;
let facilitator: X402Facilitator;

beforeAll(async () => {
  rig = await setUpCrashRig('crash');
  facilitator = await startX402Facilitator({ apiKey });
});

afterAll(async () => {
  await rig?.close();
  await facilitator?.close();
});

describe('a crash after the facilitator settled', () => {
  it('is recovered by the retry with the same key: funded once, settled once, the ledger verifies', async () => {
    await rig.start('fund.after_rail_call');
    await rig.configure({
      rails: ['x402_usdc_base'], x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', x402_facilitator_url: facilitator.url, x402_facilitator_api_key: apiKey,
    });

    const intentId = await rig.createIntent();
    const fundPath = `/harbor/intents/${intentId}/fund`;
    const challenge = await rig.post(fundPath, recognitionPurposes.intentFund, {});
    expect(challenge.status).toBe(402);
    const payer = testAccount();
    const headers = { 'payment-signature': await signX402Payment(challenge.headers.get('payment-required')!, payer), 'idempotency-key': `fund-${intentId}` };

    // The facilitator settles; the server dies before committing the outcome: the client sees no answer.
    await expect(rig.post(fundPath, recognitionPurposes.intentFund, {}, headers)).rejects.toThrow();
    await rig.crashed();
    expect(facilitator.settlements.filter((settlement) => settlement.payer === payer.address)).toHaveLength(1);
    const claimed = await rig.db.tenant(rig.tenant.tenantId, async (tx) =>
      (await tx.query(`SELECT i.state, a.status, a.claimed_at IS NOT NULL AS claimed FROM intents i JOIN funding_attempts a USING (tenant_id, intent_id) WHERE i.intent_id = $1`, [intentId])).rows);
    expect(claimed).toEqual([{ state: 'open', status: 'challenged', claimed: true }]);

    await rig.start();
    const deadline = Date.now() + fundingClaimLeaseMs + 20_000;
    let recovered: HttpAnswer;
    for (;;) {
      recovered = await rig.post(fundPath, recognitionPurposes.intentFund, {}, headers);
      if (!(recovered.status === 409 && recovered.json?.error?.code === 'idempotency.request_in_progress')) break;
      if (Date.now() > deadline) throw new Error('the fund stayed in progress');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(recovered.status, recovered.text).toBe(200);
    const settlements = facilitator.settlements.filter((settlement) => settlement.payer === payer.address);
    expect(settlements).toHaveLength(1);
    expect(recovered.json).toMatchObject({ state: 'funded', funding: { transaction: settlements[0]!.transaction } });

    const rows = await rig.db.tenant(rig.tenant.tenantId, async (tx) => ({
      fund: (await tx.query(`SELECT count(DISTINCT transaction_id)::int AS n FROM ledger_rows WHERE intent_id = $1 AND event_kind = 'fund'`, [intentId])).rows[0]!.n,
      attempts: (await tx.query(`SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE intent_id = $1`, [intentId])).rows,
    }));
    expect(rows).toEqual({ fund: 1, attempts: [{ status: 'succeeded', claimed: false }] });
    await rig.expectLedgerVerifies();
  }, 300_000);
});
