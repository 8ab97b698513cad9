// Whole lifecycles through the SDK against the real app listening on loopback, on a real Postgres: one per rail
// (x402 to released, MPP to refunded), a v7 one bound to the policy head, pending and declined funding, capability
// verification, recognition proofs (sandbox and live), and the ledger verified by the SDK's client-side chain check.
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import {
  FundingFailedError,
  generateKey,
  sandboxCredential,
  SvcCapabilityError,
  SvcClient,
  SvcInvalidStateError,
  SvcNotFoundError,
  SvcRecognitionError,
  SvcUnprocessableError,
  type CreateIntentParams,
  type SigningParty,
} from '../../src/sdk/index.ts';
import { buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let baseUrl: string;
let acme: TestTenant;
let client: SvcClient;

const principal: SigningParty = { did: 'did:principal:alice', key: generateKey().key };
const payee: SigningParty = { did: 'did:payee:tools-inc', key: generateKey().key };
const inOneHour = () => new Date(Date.now() + 3_600_000);

const intentParams = (overrides: Partial<CreateIntentParams> = {}): CreateIntentParams => ({
  principal,
  payee: { did: payee.did, publicKey: payee.key },
  amountCents: 500,
  deadline: inOneHour(),
  settlementRail: 'x402_usdc_base',
  allowedTools: ['search.web'],
  evidenceSchema: { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } }, required: ['status'] },
  predicate: { version: 1, root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] } },
  ...overrides,
});

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  acme = await createTestTenant(database.connection, 'sandbox');
  client = await SvcClient.open({ apiKey: acme.adminKey, gatewayBaseUrl: baseUrl, expectedEnvironment: 'sandbox' });
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

/** The SDK's client-side check, cross-checked against the server's own verifier. */
async function expectLedgerVerified(sdk: SvcClient, tenant: TestTenant) {
  const verification = await sdk.ledger.verifyChain();
  expect(verification.problems).toEqual([]);
  expect(verification).toMatchObject({ ok: true, checkpoint: { signatureValid: true, chainMatches: true } });
  const report = await verifyTenantLedger(db, tenant.tenantId);
  expect(report.ok).toBe(true);
  expect(verification.rows).toBe(report.rows);
  expect(verification.balances).toEqual(report.balances);
  return verification;
}

describe('lifecycles through the SDK', () => {
  it('x402, v6: create → fund (402 handshake) → guarded tool → evidence → confirm → released', async () => {
    expect(client.tenantId).toBe(acme.tenantId);
    const intent = await client.intents.create(intentParams());
    expect(intent).toMatchObject({ state: 'open', signing_version: 6, amount_cents: 500, principal_key_registered: false });

    const funded = await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
    expect(funded).toMatchObject({ requests: 2, intent: { state: 'funded', funded: true, funding: { status: 'authorization_succeeded' } } });
    expect(funded.paymentResponse).toBeTruthy();

    const toolResult = await client.capabilities.guard(
      { intentId: intent.intent_id, token: funded.capabilityToken, operation: 'search.web', requestedSpendCents: 120 },
      async (decision) => {
        expect(decision).toMatchObject({ allow: true, tenant: acme.tenantId, remaining_cents: 380 });
        return { results: 3, cost_cents: 120 };
      },
    );
    const recorded = await client.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'completed', cost_cents: toolResult.cost_cents } });
    expect(recorded).toMatchObject({ state: 'evidence_recorded', predicate_passed: true, predicate_evaluation: { passed: true } });

    const settled = await client.intents.confirm(intent.intent_id, { expectedAction: 'release' });
    expect(settled).toMatchObject({ state: 'released', settlement: { action: 'release', reason: 'predicate_passed' } });
    expect((await client.intents.get(intent.intent_id)).state).toBe('released');

    const revoked = await client.capabilities.verify({ intentId: intent.intent_id, token: funded.capabilityToken, operation: 'search.web' }, { throwOnDeny: false });
    expect(revoked).toMatchObject({ allow: false, code: 'capability.revoked' });
    const verification = await expectLedgerVerified(client, acme);
    expect(verification.balances[`payee:${payee.did}:payable`]).toBeGreaterThanOrEqual(500n);
  });

  it('MPP, v6: failing evidence → confirm → refunded', async () => {
    const intent = await client.intents.create(intentParams({ settlementRail: 'processor_mpp' }));
    const funded = await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
    expect(funded.intent).toMatchObject({ state: 'funded', settlement_rail: 'processor_mpp', funding: { status: 'payment_succeeded' } });
    expect(funded.paymentReceipt).toBeTruthy();
    expect(await client.intents.listEvidence(intent.intent_id)).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    const recorded = await client.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'failed' } });
    expect(recorded.predicate_passed).toBe(false);
    // The evidence as stored, with the same evaluation the answer carried.
    const evidence = await client.intents.listEvidence(intent.intent_id);
    expect(evidence.data).toHaveLength(1);
    expect(evidence.data[0]).toMatchObject({
      intent_id: intent.intent_id,
      submission_id: `evs_${recorded.payload_digest}`,
      payee_did: payee.did,
      payee_signed: true,
      evidence: { payload: { status: 'failed' }, artifacts: [] },
      outcome: 'fail',
      predicate_evaluation: recorded.predicate_evaluation,
    });
    const settled = await client.intents.confirm(intent.intent_id);
    expect(settled).toMatchObject({ state: 'refunded', settlement: { action: 'refund', reason: 'predicate_failed' } });
    await expectLedgerVerified(client, acme);
  });

  it('v7 bound to the policy head (published through the SDK), and v6 by predicate_ref', async () => {
    const templates = await client.policies.templates();
    expect(templates.map((template) => template.template_id)).toContain('completion_budget_v1');
    const preview = await client.policies.preview({ templateId: 'completion_budget_v1' });
    const tested = await client.policies.test({ templateId: 'completion_budget_v1', evidence: { status: 'completed', cost_cents: 10 }, amountCents: 100 });
    expect(tested.predicate_evaluation.passed).toBe(true);

    const head = await client.policies.publish({ templateId: 'completion_budget_v1' });
    expect(head).toMatchObject({ is_head: true, materialized_predicate: preview.materialized_dsl });
    const bound = await client.intents.create(intentParams({ predicate: undefined, policyBinding: { templateId: 'completion_budget_v1' } }));
    expect(bound).toMatchObject({ signing_version: 7, policy_binding: { template_id: 'completion_budget_v1', version_seq: head.version_seq } });
    await client.intents.fund(bound.intent_id, { credential: sandboxCredential() });
    expect((await client.intents.submitEvidence(bound.intent_id, { payee, payload: { status: 'completed', cost_cents: 500 } })).predicate_passed).toBe(true);
    expect((await client.intents.confirm(bound.intent_id)).state).toBe('released');

    const byRef = await client.intents.create(intentParams({ predicate: undefined, predicateRef: `completion_budget_v1@${head.version_seq}`, settlementRail: 'processor_mpp' }));
    expect(byRef).toMatchObject({ signing_version: 6, predicate_ref: `completion_budget_v1@${head.version_seq}` });
    await client.intents.fund(byRef.intent_id, { credential: sandboxCredential() });
    expect((await client.intents.submitEvidence(byRef.intent_id, { payee, payload: { status: 'completed', cost_cents: 501 } })).predicate_passed).toBe(false);
    expect((await client.intents.confirm(byRef.intent_id)).state).toBe('refunded');
    await expectLedgerVerified(client, acme);
  });
});

describe('funding outcomes', () => {
  it('pending: polls the 202 until funded; the same idempotency key later replays the 200', async () => {
    const intent = await client.intents.create(intentParams());
    const funded = await client.intents.fund(intent.intent_id, { credential: sandboxCredential('pending'), idempotencyKey: `fund-${intent.intent_id}`, pollIntervalMs: 10 });
    expect(funded).toMatchObject({ requests: 3, replayed: false, intent: { state: 'funded' } });
    const replay = await client.intents.fund(intent.intent_id, { credential: sandboxCredential(), idempotencyKey: `fund-${intent.intent_id}` });
    expect(replay).toMatchObject({ requests: 1, replayed: true, capabilityToken: funded.capabilityToken });
    await expectLedgerVerified(client, acme);
  });

  it('declined: FundingFailedError with the rail\'s status, nothing moved, and a later fund succeeds', async () => {
    for (const rail of ['x402_usdc_base', 'processor_mpp'] as const) {
      const intent = await client.intents.create(intentParams({ settlementRail: rail }));
      const error = await client.intents.fund(intent.intent_id, { credential: sandboxCredential('decline') }).catch((caught: unknown) => caught);
      expect(error, rail).toBeInstanceOf(FundingFailedError);
      expect((error as FundingFailedError).lastResult.funding?.status).toBe(rail === 'x402_usdc_base' ? 'authorization_failed' : 'payment_failed');
      expect((await client.intents.get(intent.intent_id)).state).toBe('open');
      expect((await client.intents.fund(intent.intent_id, { credential: sandboxCredential() })).intent.state).toBe('funded');
    }
    await expectLedgerVerified(client, acme);
  });
});

describe('capabilities and errors from the real server', () => {
  it('denies an operation the intent does not allow, with the reason', async () => {
    const intent = await client.intents.create(intentParams());
    const { capabilityToken } = await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
    const denied = await client.capabilities.verify({ intentId: intent.intent_id, token: capabilityToken, operation: 'wire.transfer' }).catch((caught: unknown) => caught);
    expect(denied).toBeInstanceOf(SvcCapabilityError);
    expect(denied).toMatchObject({ code: 'capability.operation_not_allowed', reason_codes: ['capability.operation_not_allowed'] });
    const tooMuch = await client.capabilities.verify({ intentId: intent.intent_id, token: capabilityToken, operation: 'search.web', requestedSpendCents: 501 }, { throwOnDeny: false });
    expect(tooMuch).toMatchObject({ allow: false, code: 'capability.budget_exceeded' });
    const allowed = await client.capabilities.verify({ intentId: intent.intent_id, token: capabilityToken, operation: 'search.web', requestedSpendCents: 100 });
    expect((await client.spend.complete(allowed.decision_id!, 'released')).status).toBe('released');
  });

  it('maps engine refusals to typed errors', async () => {
    await expect(client.intents.get('00000000-0000-4000-8000-000000000001')).rejects.toMatchObject({ constructor: SvcNotFoundError, code: 'intent.not_found' });
    const open = await client.intents.create(intentParams());
    await expect(client.intents.submitEvidence(open.intent_id, { payee, payload: { status: 'completed' } })).rejects.toMatchObject({ constructor: SvcInvalidStateError, status_code: 409 });
    const list = await client.intents.list({ limit: 2, state: 'open' });
    expect(list.data.length).toBeGreaterThanOrEqual(1);
    expect(list.data.every((intent) => intent.state === 'open')).toBe(true);
  });
});

describe('recognition proofs', () => {
  it('sandbox: every mutation carries a proof of the registered agent key; another key under its key_id is refused', async () => {
    const agentKey = generateKey().key;
    await client.registry.register({ kind: 'agent', subject: 'agent-sdk-1', publicKey: agentKey });
    const agent = await SvcClient.open({ apiKey: acme.adminKey, gatewayBaseUrl: baseUrl, agent: { keyId: 'agent-sdk-1', key: agentKey } });
    const intent = await agent.intents.create(intentParams());
    await agent.intents.fund(intent.intent_id, { credential: sandboxCredential('pending'), pollIntervalMs: 10 });
    await agent.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'completed', cost_cents: 1 } });
    expect((await agent.intents.confirm(intent.intent_id)).state).toBe('released');

    // A sandbox tenant registers an unknown key_id on first use, but never a second key under a registered key_id.
    const stranger = await SvcClient.open({ apiKey: acme.adminKey, gatewayBaseUrl: baseUrl, agent: { keyId: 'agent-sdk-1', key: generateKey().key } });
    await expect(stranger.intents.create(intentParams())).rejects.toMatchObject({ constructor: SvcRecognitionError, code: 'recognition.key_mismatch' });
    await expectLedgerVerified(client, acme);
  });

  it('live: proofs are required; with a registered principal and agent the intent is created, and funding says the rail is not configured', async () => {
    const live = await createTestTenant(database.connection, 'live');
    const admin = await SvcClient.open({ apiKey: live.adminKey, gatewayBaseUrl: baseUrl, expectedEnvironment: 'live' });
    await expect(admin.intents.create(intentParams())).rejects.toMatchObject({ constructor: SvcRecognitionError, code: 'recognition.required' });

    const agentKey = generateKey().key;
    await admin.registry.register({ kind: 'agent', subject: 'agent-live-1', publicKey: agentKey });
    await admin.registry.register({ kind: 'principal', subject: principal.did, publicKey: principal.key });
    const agent = await SvcClient.open({ apiKey: live.adminKey, gatewayBaseUrl: baseUrl, agent: { keyId: 'agent-live-1', key: agentKey } });
    const intent = await agent.intents.create(intentParams());
    expect(intent).toMatchObject({ state: 'open', principal_key_registered: true });
    await expect(agent.intents.fund(intent.intent_id, { credential: sandboxCredential() })).rejects.toMatchObject({
      constructor: SvcUnprocessableError,
      code: 'funding.rail_not_configured',
    });
    const keys = await admin.registry.list({ kind: 'agent' });
    expect(keys.data.map((key) => key.subject)).toEqual(['agent-live-1']);
    await expectLedgerVerified(admin, live);
  });
});

describe('ledger verification', () => {
  it('fails when the checkpoint is checked against a key the caller does not trust', async () => {
    const untrusted = await client.ledger.verifyChain({ trustedPublicKeysHex: [generateKey().key.publicKeyHex] });
    expect(untrusted).toMatchObject({ ok: false, checkpoint: { signatureValid: false, chainMatches: true } });
    const authority = await client.ledger.authority();
    expect((await client.ledger.verifyChain({ trustedPublicKeysHex: [authority.public_key_hex] })).ok).toBe(true);
  });
});
