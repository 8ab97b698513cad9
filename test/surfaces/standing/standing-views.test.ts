// The standing read by people, over HTTP on a real Postgres: the portfolio summary and the operator explanation, read
// the way the public client reads them (the tenant echoed, the operator echoed, a 404 read as "no explanation"),
// recomputed here from the operators' signed receipts; score versions, another tenant's view and roles.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { runMaintenance } from '../../../src/services/maintenance.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type Party } from '../../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const alpha = party('did:payee:alpha');
const beta = party('did:web:ops.example:team/b#1');

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...headers }, payload });
const get = (url: string, key = acme.adminKey) => app.inject({ url, headers: bearer(key) });
const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function createFunded(payee: Party, amountCents: number, currency = 'usd', deadline?: string): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, amountCents, currency, ...(deadline ? { deadline } : {}) });
  expect((await post('/harbor/intents', body)).statusCode).toBe(201);
  const intentId = body.intent_id as string;
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  expect((await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': paymentSignature })).statusCode).toBe(200);
  return intentId;
}

async function settle(payee: Party, amountCents: number, passes: boolean): Promise<void> {
  const intentId = await createFunded(payee, amountCents);
  const evidence = signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: passes ? 'completed' : 'failed' } });
  expect((await post(`/harbor/intents/${intentId}/evidence`, evidence)).statusCode).toBeLessThan(300);
  expect((await post(`/harbor/intents/${intentId}/settlement/confirm`, {})).json().state).toBe(passes ? 'released' : 'refunded');
}

/** The client's signal reads: a 200 answer must echo the tenant (and the operator it asked about); a 404 on the
 * explanation is "none". Anything else is an error it raises. */
async function clientRead(url: string, operatorDid?: string): Promise<Record<string, any> | null> {
  const response: LightMyRequestResponse = await get(url);
  if (response.statusCode === 404 && operatorDid !== undefined) return null;
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  expect(body.tenant_id).toBe(acme.tenantId);
  if (operatorDid !== undefined) expect(body.operator_did).toBe(operatorDid);
  return body;
}

describe('portfolio summary and operator explanation', () => {
  it('answer an empty portfolio before anything settled', async () => {
    const summary = await clientRead('/signal/v1/portfolio/summary');
    expect(summary).toMatchObject({
      schema_version: 1, score_model_version: '1', scoring_model: 'svc.standing.smoothed_release_ratio_v1', operator_count: 0,
      average_score: null, total_terminal_intents: 0, total_receipted_volume_cents: 0, volume_by_currency: [], operators_under_review: 0,
    });
    expect(await clientRead(`/signal/v1/operators/${encodeURIComponent(alpha.did)}/explanation`, alpha.did)).toBeNull();
  });

  it('aggregate and explain the settled history, agreeing with the signed receipts', async () => {
    await settle(alpha, 500, true);
    await settle(alpha, 300, true);
    await settle(alpha, 700, false);
    await settle(beta, 200, false);
    // One of beta's expires: its deadline passes without evidence and the sweeper refunds it.
    await createFunded(beta, 900, 'usd', inSeconds(2));
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await runMaintenance(db, app.engineEffects)).refunded).toBeGreaterThanOrEqual(1);

    const explanationOf = async (operator: Party) => (await clientRead(`/signal/v1/operators/${encodeURIComponent(operator.did)}/explanation`, operator.did))!;
    const alphaExplained = await explanationOf(alpha);
    expect(alphaExplained).toMatchObject({
      object: 'operator_explanation', score_version: '1', score: 600, score_max: 1000, under_review: false,
      factors: [
        { factor: 'released', count: 2, weight: 1, effect: 'raises' },
        { factor: 'refunded', count: 1, weight: 1, effect: 'lowers' },
        { factor: 'expired', count: 0, weight: 2, effect: 'lowers' },
        { factor: 'prior', count: 1, weight: 1, effect: 'raises' },
      ],
    });
    expect(alphaExplained.summary).toBe('Score 600 of 1000 from 2 released, 1 refunded after failed evidence and 0 expired intents with this tenant.');
    const betaExplained = await explanationOf(beta);
    // floor(1000 × (0 + 1) / (0 + 1 + 2 + 2)) = 200.
    expect(betaExplained.score).toBe(200);

    // The explanation's numbers are the signed receipt's: same score, same metrics, same checkpoint.
    for (const [operator, explained] of [[alpha, alphaExplained], [beta, betaExplained]] as const) {
      const { receipt } = (await get(`/reputation/${encodeURIComponent(operator.did)}`)).json();
      expect(explained.score).toBe(receipt.score);
      expect(explained.metrics.all_time).toEqual(receipt.metrics.all_time);
      expect(explained.checkpoint_last_ledger_seq).toBe(receipt.checkpoint_last_ledger_seq);
    }

    const summary = (await clientRead('/signal/v1/portfolio/summary'))!;
    expect(summary).toMatchObject({
      operator_count: 2,
      average_score: 400,
      total_terminal_intents: 5,
      total_receipted_volume_cents: 500 + 300 + 700 + 200 + 900,
      volume_by_currency: [{ currency: 'usd', terminal_intents: 5, receipted_volume_cents: '2600' }],
      operators_under_review: 0,
    });
    const snapshot = (await clientRead('/signal/v1/portfolio/signed-export'))!;
    expect(summary.checkpoint_last_ledger_seq).toBe(snapshot.checkpoint_last_ledger_seq);
    expect(summary.operator_count).toBe(snapshot.operators.length);
    const mean = snapshot.operators.reduce((total: number, operator: { score: number }) => total + operator.score, 0) / snapshot.operators.length;
    expect(summary.average_score).toBe(Math.round(mean * 100) / 100);
  });

  it('rounds the average to two decimals, half up', async () => {
    // Alpha 600, beta 200, and gamma with one release: floor(1000 × 2 / 3) = 666. Mean 488.666… → 488.67.
    await settle(party('did:payee:gamma'), 100, true);
    expect((await clientRead('/signal/v1/portfolio/summary'))!.average_score).toBe(488.67);
  });

  it('refuse an unknown score version, show another tenant nothing of this one, and are for admins and auditors', async () => {
    for (const url of ['/signal/v1/portfolio/summary?score_version=9', `/signal/v1/operators/${encodeURIComponent(alpha.did)}/explanation?score_version=9`]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'standing.score_version_unsupported', details: { supported_versions: ['1'] } });
    }
    expect((await get('/signal/v1/portfolio/summary?score_version=1')).statusCode).toBe(200);

    const foreign = await get(`/signal/v1/operators/${encodeURIComponent(alpha.did)}/explanation`, globex.adminKey);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('standing.operator_unknown');
    expect((await get('/signal/v1/portfolio/summary', globex.adminKey)).json()).toMatchObject({ tenant_id: globex.tenantId, operator_count: 0 });

    expect((await get('/signal/v1/portfolio/summary', await acme.key('auditor'))).statusCode).toBe(200);
    for (const role of ['operator', 'agent'] as const) {
      expect((await get('/signal/v1/portfolio/summary', await acme.key(role))).statusCode, role).toBe(403);
    }
    expect((await get('/signal/v1/portfolio/summary', await acme.key('auditor', ['mcp.signal:read']))).statusCode).toBe(200);
  });
});
