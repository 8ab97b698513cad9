// Regression: concurrent fund requests (no idempotency key) for one intent with the same rail credential. Phase 2
// once took a funding attempt's row before the intent's while phase 1 took them the other way round: Postgres
// deadlocked (40P01) and answered 500. Every round must fund the intent exactly once and answer nothing but 200 and
// 409s (the claim in progress, or the intent already funded).
import { it, expect } from 'vitest';
import { buildTestApp, createTestTenant, LogCapture, bearer } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';

it('concurrent unkeyed fund requests fund once, never deadlock, never 500', async () => {
  const database = await createTestDatabase();
  const logs = new LogCapture();
  const app = await buildTestApp(database.connection, { logs });
  const acme = await createTestTenant(database.connection);
  const principal = party('did:p:a'), payee = party('did:p:b');
  const seen: string[] = [];
  for (let round = 0; round < 10; round++) {
    for (const rail of ['x402_usdc_base', 'processor_mpp']) {
      const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, settlementRail: rail });
      await app.inject({ method: 'POST', url: '/harbor/intents', headers: bearer(acme.adminKey), payload: body });
      const url = `/harbor/intents/${body.intent_id}/fund`;
      const ch = await app.inject({ method: 'POST', url, headers: bearer(acme.adminKey), payload: {} });
      const cred = rail === 'x402_usdc_base' ? { 'payment-signature': sandboxX402PaymentSignature(ch.headers['payment-required'] as string, { from: sandboxX402Payers.success }) } : { 'x-svc-payment-authorization': sandboxMppAuthorization(ch.headers['www-authenticate'] as string, sandboxMppTokens.success) };
      const answers = await Promise.all([1, 2, 3, 4].map(() => app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...cred }, payload: {} })));
      const classes = answers.map((a) => `${a.statusCode} ${a.json().error?.code ?? ''}`).sort().join(', ');
      seen.push(`${rail}: ${classes}`);
      expect(answers.filter((a) => a.statusCode === 200), classes).toHaveLength(1);
      for (const a of answers.filter((a) => a.statusCode !== 200)) {
        expect(a.statusCode, classes).toBe(409);
        expect(['idempotency.request_in_progress', 'intent.invalid_state'], classes).toContain(a.json().error.code);
      }
    }
  }
  expect(logs.lines.filter((l) => l.includes('"level":50'))).toEqual([]);
  await app.close(); await database.drop();
}, 120000);
