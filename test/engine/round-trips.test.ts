// Pins the Postgres round trips of one sandbox intent lifecycle over HTTP (docs/decisions.md "Engine throughput"):
// every `pg.Client.prototype.query` call is one round trip, counted per request against the budget table below.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { parseApiKey } from '../../src/credentials/api-key.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

/** Round trips per request, and what they are. Every step starts with the rate limiter's UPSERT. */
const budget = {
  create: { roundTrips: 3, breakdown: 'rate limiter; BEGIN + insert; COMMIT' },
  fundChallenge: { roundTrips: 3, breakdown: 'rate limiter; BEGIN + intent + config; challenge insert + COMMIT' },
  // Two phases, the rail called between them with no lock held (docs/engine.md "Funding in two phases").
  fundPaid: {
    roundTrips: 4,
    breakdown: 'rate limiter; phase 1: BEGIN + intent + config + claim + the attempt the credential names; claim + COMMIT; '
      + 'phase 2: BEGIN + guard + attempt update + funded transition + ledger_post + COMMIT',
  },
  evidence: { roundTrips: 3, breakdown: 'rate limiter; BEGIN + intent; evidence insert + transition + COMMIT' },
  // The receipts (docs/protocol.md#receipts) read the intent's mandate import before they are signed; their log leaves
  // and rows travel with COMMIT.
  // A release first meets the release gate (docs/release-gate.md): the tenant's gate and its history with the payee.
  confirm: { roundTrips: 5, breakdown: 'rate limiter; BEGIN + intent; release gate inputs; mandate import; transition + ledger_post + leaves + receipts + COMMIT' },
} as const;
type Step = keyof typeof budget;
const lifecycleRoundTrips = 18;

interface Call {
  readonly text: string;
  /** The pg.Client that sent it. */
  readonly client: unknown;
}

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let queries: MockInstance;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  // buildTestApp turns the maintenance timer off, so no sweep can land in a measured request.
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  queries?.mockRestore();
  await app?.close();
  await database?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(acme.adminKey), ...headers }, payload });

/** Fills the per-process credential cache and waits for the coarse `last_used_at` write it starts in the background
 * (at most one per key per minute per process), so that neither lands in a measured request. */
async function warmUp(): Promise<void> {
  const response = await app.inject({ url: '/v1/auth/principal', headers: bearer(acme.adminKey) });
  expect(response.statusCode, response.body).toBe(200);
  const keyId = parseApiKey(acme.adminKey)!.keyId;
  await vi.waitFor(async () => {
    const { rows } = await app.database.system((tx) => tx.query('SELECT last_used_at FROM api_keys WHERE key_id = $1', [keyId]));
    expect(rows[0]?.last_used_at).not.toBeNull();
  });
}

const queryText = (argument: unknown): string => (typeof argument === 'string' ? argument : ((argument as { text?: string } | undefined)?.text ?? ''));

/** Sends one request and answers the calls issued while it was in flight. */
async function measure(send: () => Promise<LightMyRequestResponse>): Promise<{ response: LightMyRequestResponse; calls: Call[] }> {
  queries.mockClear();
  const response = await send();
  const calls = queries.mock.calls.map((args, index) => ({ text: queryText(args[0]), client: queries.mock.contexts[index] }));
  queries.mockClear();
  return { response, calls: withoutCredentialBookkeeping(calls) };
}

/**
 * Drops the authenticator's own transactions: the API key lookup when its 5 s cache entry has expired, and the
 * `last_used_at` write once a minute. Each is a system transaction of two calls on one client, the statement naming
 * `api_keys` (sent with BEGIN) and then a lone COMMIT. The warm-up makes both unlikely, but on a slow machine the
 * cache can expire mid-test, and they belong to authentication, not to the engine whose budget this test pins.
 */
function withoutCredentialBookkeeping(calls: readonly Call[]): Call[] {
  const dropped = new Set<number>();
  calls.forEach((call, index) => {
    if (!/\bapi_keys\b/.test(call.text)) return;
    dropped.add(index);
    // A client runs one transaction at a time, so the first later COMMIT on it is this transaction's.
    const commit = calls.findIndex((later, laterIndex) => laterIndex > index && later.client === call.client && later.text.trim() === 'COMMIT');
    if (commit !== -1) dropped.add(commit);
  });
  return calls.filter((_, index) => !dropped.has(index));
}

/** The one call that carries the ledger posting; it must also carry the COMMIT (the head lock is held only there). */
function expectPostingWithCommit(step: Step, calls: readonly Call[]): void {
  const postings = calls.filter((call) => call.text.includes('ledger_post('));
  expect(postings, `${step}: exactly one round trip posts to the ledger`).toHaveLength(1);
  expect(postings[0]!.text, `${step}: ledger_post travels with COMMIT`).toMatch(/\bCOMMIT\s*$/);
}

describe('round trips of one sandbox x402 lifecycle', () => {
  it('create → 402 → paid fund → evidence → confirm stays within the budget, and the ledger verifies', async () => {
    await warmUp();
    queries = vi.spyOn(pg.Client.prototype, 'query');
    const measured = {} as Record<Step, readonly Call[]>;

    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const intentId = body.intent_id as string;
    const created = await measure(() => post('/harbor/intents', body));
    expect(created.response.statusCode, created.response.body).toBe(201);
    measured.create = created.calls;

    const fundUrl = `/harbor/intents/${intentId}/fund`;
    const challenge = await measure(() => post(fundUrl, {}));
    expect(challenge.response.statusCode, challenge.response.body).toBe(402);
    measured.fundChallenge = challenge.calls;

    const paymentRequired = challenge.response.headers['payment-required'] as string;
    const credential = sandboxX402PaymentSignature(paymentRequired, { from: sandboxX402Payers.success });
    const funded = await measure(() => post(fundUrl, {}, { 'payment-signature': credential }));
    expect(funded.response.statusCode, funded.response.body).toBe(200);
    expect(funded.response.json()).toMatchObject({ state: 'funded', funded: true });
    measured.fundPaid = funded.calls;

    const evidenceBody = signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed', cost_cents: 120 } });
    const recorded = await measure(() => post(`/harbor/intents/${intentId}/evidence`, evidenceBody));
    expect(recorded.response.statusCode, recorded.response.body).toBe(200);
    expect(recorded.response.json()).toMatchObject({ state: 'evidence_recorded', predicate_passed: true });
    measured.evidence = recorded.calls;

    const settled = await measure(() => post(`/harbor/intents/${intentId}/settlement/confirm`, {}));
    expect(settled.response.statusCode, settled.response.body).toBe(200);
    expect(settled.response.json()).toMatchObject({ state: 'released' });
    measured.confirm = settled.calls;
    queries.mockRestore();

    const steps = Object.keys(budget) as Step[];
    const counts = Object.fromEntries(steps.map((step) => [step, measured[step].length]));
    const expected = Object.fromEntries(steps.map((step) => [step, budget[step].roundTrips]));
    const sent = steps.map((step) => `${step} (budget: ${budget[step].breakdown}):\n${measured[step].map((call) => `  - ${call.text.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n')}`);
    expect(counts, `round trips per request differ from the budget; what was sent:\n${sent.join('\n')}`).toEqual(expected);
    expect(steps.reduce((total, step) => total + measured[step].length, 0)).toBe(lifecycleRoundTrips);
    for (const step of steps) {
      const limiterCalls = measured[step].filter((call) => call.text.includes('rate_limit_counters'));
      expect(limiterCalls, `${step}: one rate-limiter UPSERT`).toHaveLength(1);
    }
    expectPostingWithCommit('fundPaid', measured.fundPaid);
    expectPostingWithCommit('confirm', measured.confirm);

    const report = await verifyTenantLedger(app.database, acme.tenantId);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
