// The public client's wire, played exactly, against a fresh sandbox tenant whose agent key nobody registered: the
// headers it sends on each call (Bearer key, accept, x-tenant-id from the principal except on the sandbox guardrail
// routes, idempotency-key, a fresh recognition proof on every engine mutation), the bytes it signs, and the echo
// checks it makes on each answer. No raw call outside that wire: the flow must work as the client runs it.
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
/** What the client learned from `GET /v1/auth/principal` when it opened, and then sends as x-tenant-id. */
let principalAnswer: Record<string, any>;
let principalTenantId: string;

/** The agent key lives only in the client's local key file: the service has never been told of it. */
const agentSigner = ed25519SignerFromSeed(randomBytes(32));
const agentKeyId = 'agent-wire-1';
const principal = party('did:principal:wire-alice');
const payee = party('did:payee:wire-tools');
const clientRails = ['stripe_connect', 'stripe_ach_debit', 'stripe_mpp', 'adyen_manual_capture', 'x402_usdc_base', 'processor_mpp'];
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection, 'sandbox');
  // Opening the client: one principal read, with the key alone.
  principalAnswer = okObject(await wire('GET', '/v1/auth/principal', { tenantHeader: false }), [200]);
  principalTenantId = principalAnswer.tenant_id;
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

interface WireCall {
  readonly body?: string;
  /** Tenant-bound clients send x-tenant-id; the principal lookup and the sandbox guardrail routes do not. */
  readonly tenantHeader?: boolean;
  readonly idempotencyKey?: string;
  /** Engine mutations carry a fresh recognition proof for this purpose over the exact path and body bytes. */
  readonly proofPurpose?: string;
  readonly extraHeaders?: Record<string, string>;
}

/** One HTTP call shaped as the client shapes it. */
function wire(method: 'GET' | 'POST', path: string, call: WireCall = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${tenant.adminKey}`, accept: 'application/json' };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.tenantHeader !== false) headers['x-tenant-id'] = principalTenantId;
  if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
  if (call.proofPurpose !== undefined) {
    headers['x-svc-agent-recognition-proof'] = createRecognitionProof({
      signer: agentSigner, keyId: agentKeyId, purpose: call.proofPurpose, tenantId: principalTenantId, method, path, body: call.body ?? '',
    }).headerValue;
  }
  return app.inject({ method, url: path, headers: { ...headers, ...call.extraHeaders }, ...(call.body === undefined ? {} : { payload: call.body }) });
}

/** The client accepts any 2xx and parses a JSON object; anything else is its HarborHttpError. */
function okObject(response: LightMyRequestResponse, statuses: readonly number[] = [200, 201]): Record<string, any> {
  expect(statuses, `${response.statusCode} ${response.body}`).toContain(response.statusCode);
  const body = response.json();
  expect(typeof body === 'object' && body !== null && !Array.isArray(body)).toBe(true);
  return body;
}

/** The fund answer checks (200, 202 and 402 alike): tenant and intent echoed, typed fields, a boolean `funded`. */
function expectFundAnswer(response: LightMyRequestResponse, intentId: string): Record<string, any> {
  const answer = okObject(response, [200, 202, 402]);
  expect(answer.tenant).toBe(principalTenantId);
  expect(answer.intent_id).toBe(intentId);
  expect(typeof answer.state).toBe('string');
  expect(answer.state.length).toBeGreaterThan(0);
  expect(clientRails).toContain(answer.settlement_rail);
  expect(typeof answer.currency).toBe('string');
  expect(Number.isFinite(answer.amount_cents)).toBe(true);
  expect(typeof answer.funded).toBe('boolean');
  if (answer.capability_token !== undefined) expect(typeof answer.capability_token).toBe('string');
  if (answer.funding !== undefined && answer.funding !== null) expect(clientRails).toContain(answer.funding.settlement_rail);
  return answer;
}

/** The x402 handshake loop: 402 → answer the challenge with a fresh proof → poll 202s with fresh proofs → funded. */
async function fundWithX402(intentId: string, payer: string): Promise<{ answer: Record<string, any>; pendingPolls: number }> {
  const path = `/harbor/intents/${intentId}/fund`;
  const fundCall = (extraHeaders: Record<string, string> = {}) =>
    wire('POST', path, { body: '{}', idempotencyKey: `fund-${intentId}`, proofPurpose: recognitionPurposes.intentFund, extraHeaders });
  const challenge = await fundCall();
  expect(challenge.statusCode).toBe(402);
  expect(expectFundAnswer(challenge, intentId)).toMatchObject({ state: 'open', funded: false });
  const paymentRequired = challenge.headers['payment-required'];
  expect(typeof paymentRequired === 'string' && paymentRequired.length > 0).toBe(true);
  expect(challenge.headers['cache-control']).toContain('no-store');
  const paymentSignature = sandboxX402PaymentSignature(paymentRequired as string, { from: payer });
  for (let poll = 0; poll <= 30; poll += 1) {
    const response = await fundCall({ 'payment-signature': paymentSignature });
    const answer = expectFundAnswer(response, intentId);
    if ((typeof answer.capability_token === 'string' && answer.capability_token !== '') || (response.statusCode === 200 && answer.funded === true)) {
      return { answer, pendingPolls: poll };
    }
    expect(response.statusCode).toBe(202);
  }
  throw new Error('funding never completed');
}

/** POST /verify as the spend guard sends it, and the checks on its answer. */
async function verifyCapability(intentId: string, token: string, operation: string, cents: number): Promise<Record<string, any>> {
  const idempotencyKey = `verify-${randomUUID()}`;
  const body = JSON.stringify({ intent_id: intentId, token, operation, requested_spend_cents: cents, tool_name: operation, idempotency_key: idempotencyKey });
  const answer = okObject(await wire('POST', '/verify', { body, idempotencyKey }), [200]);
  expect(typeof answer.allow).toBe('boolean');
  expect(answer.tenant).toBe(principalTenantId);
  expect(answer.intent_id).toBe(intentId);
  expect(answer.audit_id).toMatch(uuidPattern);
  return answer;
}

/** The guard's completion of a reserved spend after the tool ran. */
async function completeDecision(decisionId: string): Promise<void> {
  okObject(await wire('POST', `/v1/spend/decisions/${decisionId}/complete`, { body: JSON.stringify({ outcome: 'consumed' }) }), [200]);
}

/** The MCP discovery read of one intent, with the fields its output schema names. */
async function readIntent(intentId: string): Promise<Record<string, any>> {
  const answer = okObject(await wire('GET', `/harbor/operator/v1/intents/${intentId}`), [200]);
  expect(answer).toMatchObject({ intent_id: intentId, tenant_id: principalTenantId });
  expect(typeof answer.state).toBe('string');
  expect(Array.isArray(answer.allowed_tools)).toBe(true);
  return answer;
}

describe('the public client against a fresh sandbox tenant', () => {
  it('opens: the principal names the tenant, without any x-tenant-id', () => {
    expect(principalAnswer).toMatchObject({ tenant_id: tenant.tenantId, environment: 'sandbox', tenant_uuid: expect.stringMatching(uuidPattern) });
  });

  async function signedLifecycle(createBody: Record<string, unknown>): Promise<void> {
    const intentId = createBody.intent_id as string;
    // Create: the signed body, serialized once; the proof binds exactly these bytes.
    const created = okObject(await wire('POST', '/harbor/intents', {
      body: JSON.stringify(createBody), idempotencyKey: `create-${intentId}`, proofPurpose: recognitionPurposes.intentCreate,
    }));
    expect(created).toMatchObject({ intent_id: intentId, state: 'open' });

    // Fund through the 402 handshake, with a payer that leaves the authorization pending for one poll.
    const { answer: funded, pendingPolls } = await fundWithX402(intentId, sandboxX402Payers.pending);
    expect(pendingPolls).toBeGreaterThan(0);
    expect(funded).toMatchObject({ state: 'funded', funded: true });
    const token = funded.capability_token as string;

    // The spend guard before the tool runs, then its completion.
    const allowed = await verifyCapability(intentId, token, 'search.web', 120);
    expect(allowed).toMatchObject({ allow: true, decision_id: expect.any(String) });
    await completeDecision(allowed.decision_id);

    // The payee's signed evidence, in the client's key order, with a proof for the evidence purpose.
    const evidenceBody = signedEvidenceBody({ tenantId: principalTenantId, intentId, payee, payload: { status: 'completed', cost_cents: 120 } });
    const recorded = okObject(await wire('POST', `/harbor/intents/${intentId}/evidence`, {
      body: JSON.stringify(evidenceBody), idempotencyKey: `evidence:${intentId}:call-1`, proofPurpose: recognitionPurposes.evidenceSubmit,
    }), [200]);
    expect(recorded).toMatchObject({ tenant: principalTenantId, intent_id: intentId, state: 'evidence_recorded', predicate_passed: true });

    // Confirm carries out what the stored evaluation implies.
    const confirmed = okObject(await wire('POST', `/harbor/intents/${intentId}/settlement/confirm`, {
      body: '{}', idempotencyKey: `confirm-${intentId}`, proofPurpose: recognitionPurposes.settlementConfirm,
    }), [200]);
    expect(confirmed).toMatchObject({ intent_id: intentId, state: 'released' });

    expect(await readIntent(intentId)).toMatchObject({ state: 'released' });
    // The token is revoked by state: the guard now denies, still with a 200 and the echoes.
    expect(await verifyCapability(intentId, token, 'search.web', 1)).toMatchObject({ allow: false });
  }

  it('signed v6: create, fund (402 handshake), verify, evidence, confirm, with a key it never registered', async () => {
    await signedLifecycle(signedCreateBody({ tenantId: principalTenantId, principal, payee }));
    // The agent key was registered by its first valid proof, and is listed like any other.
    const keys = okObject(await wire('GET', `/v1/registry/keys?kind=agent&subject=${agentKeyId}`), [200]);
    expect(keys.data).toEqual([expect.objectContaining({ subject: agentKeyId, public_key_ed25519_hex: agentSigner.publicKey.hex, registered_by: 'first_use', revoked_at: null })]);
  });

  it('signed v7: bound to the published policy head, the same flow', async () => {
    const draft = okObject(await wire('POST', '/harbor/policy/v1/drafts', { body: JSON.stringify({ template_id: 'completion_v1' }) }));
    okObject(await wire('POST', '/harbor/policy/v1/rollout', { body: JSON.stringify({ template_id: 'completion_v1', version_seq: draft.version_seq }) }));
    await signedLifecycle(signedCreateBody({
      tenantId: principalTenantId, principal, payee,
      policy: { templateId: 'completion_v1', versionSeq: draft.version_seq, contentDigestHex: draft.content_digest, materializedPredicate: draft.materialized_predicate },
    }));
  });

  it('the first-run sandbox bootstrap (operation and amount only) and its evidence, without x-tenant-id', async () => {
    const bootstrapBody = JSON.stringify({ operation: 'search.web', requested_spend_cents: 250 });
    const bootstrapped = okObject(await wire('POST', '/v1/sandbox/guardrails/bootstrap', {
      body: bootstrapBody, tenantHeader: false, idempotencyKey: `bootstrap-${randomUUID()}`,
    }), [200]);
    for (const field of ['tenant_id', 'intent_id', 'capability_token', 'operation', 'sandbox_lifecycle_status']) {
      expect(typeof bootstrapped[field] === 'string' && bootstrapped[field].length > 0, field).toBe(true);
    }
    expect(typeof bootstrapped.requested_spend_cents).toBe('number');
    expect(bootstrapped).toMatchObject({
      tenant_id: principalTenantId, operation: 'search.web', sandbox_lifecycle_status: 'funded', requested_spend_cents: 250,
      completion_source: 'default', template_id: 'completion_v1', settlement_mode: 'simulated',
    });
    const intentId = bootstrapped.intent_id as string;
    expect(intentId).toMatch(uuidPattern);

    const allowed = await verifyCapability(intentId, bootstrapped.capability_token, 'search.web', 100);
    expect(allowed.allow).toBe(true);
    await completeDecision(allowed.decision_id);

    const evidenceBody = JSON.stringify({
      payload: { status: 'completed' }, artifacts: [], operation: 'search.web', requested_spend_cents: 100,
      metadata: { tool_name: 'search.web', tool_call_id: 'call-1', decision_id: allowed.decision_id },
    });
    const settled = okObject(await wire('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, {
      body: evidenceBody, tenantHeader: false, idempotencyKey: `sandbox-evidence:${intentId}:call-1`,
    }), [200]);
    for (const field of ['tenant_id', 'intent_id', 'operation', 'sandbox_lifecycle_status']) expect(typeof settled[field], field).toBe('string');
    expect(typeof settled.requested_spend_cents).toBe('number');
    expect(settled).toMatchObject({ tenant_id: principalTenantId, intent_id: intentId, sandbox_lifecycle_status: 'released', predicate_passed: true });
    expect(await readIntent(intentId)).toMatchObject({ state: 'released' });
  });
});
