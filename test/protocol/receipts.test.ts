// Receipts over HTTP on a real Postgres: v6 and v7 intents to released and to refunded, each with its settlement
// receipt and intent-terminal agent receipt, read, verified by the route and checked independently twice: by the
// verifier written from the public client's format (test/helpers/client-verifier.ts, against the keys of the
// signing-keys document) and by noble Ed25519 over the bytes docs/protocol.md defines (with ajv against the published
// schema); inclusion proofs in the client's format once a tree head covers them; action receipts from the sandbox
// evidence route and from completed spend decisions, found by the client's tool_call_id; the client's attestations;
// every refusal of the verify routes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { GatewayKeyring, newKeyFileEntry } from '../../src/infra/gateway-keys.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { actionReceiptId } from '../../src/receipts/agent-receipt-service.ts';
import { publishTreeHeads } from '../../src/receipts/transparency-log.ts';
import { signArtifact } from '../../src/signing/artifacts.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../helpers/intents.ts';
import { signingKeysOf, verifyClientAgentReceipt, verifyClientInclusionProof, verifyClientReceipt, verifyClientSettlementReceipt } from '../helpers/client-verifier.ts';
import { agentReceiptsChecked, expectReceipt, inclusionProofHolds, independentCanonicalBytes } from '../helpers/receipts.ts';
import { runCli } from '../helpers/server-process.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let keyring: GatewayKeyring;
let acme: TestTenant;
let globex: TestTenant;
let trusted: string[];
/** The keys the client pins, from the signing-keys discovery document (as it would fetch them). */
let clientTrusted: string[];
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
const retiredSeedHex = 'aa'.repeat(32);

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  // A retired key beside the active one: still published, no longer trusted by the verify routes.
  keyring = new GatewayKeyring({ keys: [{ kid: 'gk_retired', seed_hex: retiredSeedHex, status: 'retired', created_at: '2026-01-01T00:00:00Z' }, newKeyFileEntry()] });
  trusted = [keyring.active.publicKeyHex];
  app = await buildTestApp(database.connection, { gatewayKeys: keyring });
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  const document = (await app.inject({ url: '/.well-known/agent-receipt-signing-keys.json' })).json();
  // The retired key is published (what it signed still verifies offline); a client pins the ones it chooses to.
  clientTrusted = signingKeysOf({ keys: document.keys.filter((key: { status: string }) => key.status !== 'retired') });
  expect(clientTrusted).toEqual([keyring.active.publicKeyHex]);
});

/** Every check of a receipt a getter answered: the client's verifier, then the service-independent one. */
function expectClientVerified(wire: Record<string, unknown>): void {
  expect(verifyClientReceipt(wire, clientTrusted)).toBe(wire.message_digest_sha256_hex);
  expectReceipt(wire, trusted);
}

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object | undefined, headers: Record<string, string> = {}, tenant = acme) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, ...(payload === undefined ? {} : { payload }) });
const get = (url: string, tenant = acme) => app.inject({ method: 'GET', url, headers: bearer(tenant.adminKey) });
const header = (response: LightMyRequestResponse, name: string) => response.headers[name] as string;

async function createIntent(options: Partial<CreateOptions> = {}): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, ...options });
  const response = await post('/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

async function fund(intentId: string, rail: 'x402' | 'mpp'): Promise<void> {
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
  expect(challenge.statusCode, challenge.body).toBe(402);
  const credential: Record<string, string> = rail === 'x402'
    ? { 'payment-signature': sandboxX402PaymentSignature(header(challenge, 'payment-required'), { from: sandboxX402Payers.success }) }
    : { 'x-svc-payment-authorization': sandboxMppAuthorization(header(challenge, 'www-authenticate'), sandboxMppTokens.success) };
  const funded = await post(`/harbor/intents/${intentId}/fund`, {}, credential);
  expect(funded.statusCode, funded.body).toBe(200);
}

/** Create → fund → evidence → confirm; answers the intent id. */
async function settle(options: Partial<CreateOptions>, payload: unknown, rail: 'x402' | 'mpp', expected: 'released' | 'refunded'): Promise<string> {
  const intentId = await createIntent(rail === 'mpp' ? { ...options, settlementRail: 'processor_mpp' } : options);
  await fund(intentId, rail);
  const evidence = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload }));
  expect(evidence.statusCode, evidence.body).toBe(200);
  const confirmed = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
  expect(confirmed.json().state).toBe(expected);
  return intentId;
}

/** The receipts of a settled intent: read, verified by the route, checked independently. */
async function expectTerminalReceipts(intentId: string, state: 'released' | 'refunded', signingVersion: 6 | 7): Promise<void> {
  const settlement = await get(`/protocol/v2/receipts/${intentId}`);
  expect(settlement.statusCode, settlement.body).toBe(200);
  // The signed receipt itself, as the client's verifier takes it; no mandate is named by `none` and 64 zeros.
  const receipt = settlement.json();
  expect(receipt).toMatchObject({
    kind: 'svc.protocol_settlement_receipt_v1', receipt_id: intentId, intent_id: intentId, tenant_id: acme.tenantId, harbor_state: state,
    amount_cents: 500, currency: 'usd', principal_did: principal.did, payee_did: payee.did, settlement_mode: 'ledger_escrow',
    authorization_receipt_id: 'none', mandate_digest_sha256_hex: '0'.repeat(64),
  });
  expectClientVerified(receipt);
  // Verified by the route when sent, and when named by its id (the client's CLI sends `{receipt_id}`).
  for (const body of [{ receipt }, { receipt_id: intentId }]) {
    expect((await post('/protocol/v2/receipts/verify', body)).json()).toMatchObject({
      valid: true, kind: 'svc.protocol_settlement_receipt_v1', receipt_id: intentId, tenant_id: acme.tenantId, receipt,
    });
  }

  const terminal = await get(`/protocol/v2/agent-receipts/${intentId}`);
  expect(terminal.statusCode, terminal.body).toBe(200);
  const agent = terminal.json();
  expect(agent).toMatchObject({
    scope: 'intent_terminal', receipt_id: intentId, tenant_id: acme.tenantId,
    outcome: { harbor_state: state, settlement_outcome: state === 'released' ? 'SETTLED' : 'REVERSED', predicate_passed: state === 'released' },
    references: { intent_id: intentId, settlement_receipt_id: intentId },
  });
  expect(agent.authorization.policy.template_id).toBe(signingVersion === 7 ? 'completion_budget_v1' : 'predicate_dsl');
  expectClientVerified(agent);
  // The client asks for an intent's terminal receipt by intent id alone.
  const byIntent = (await get(`/protocol/v2/agent-receipts?intent_id=${intentId}`)).json();
  expect(byIntent).toEqual(agent);
  expectClientVerified(byIntent);
  // The verify route accepts the wire itself as the body, and the id.
  expect((await post('/protocol/v2/agent-receipts/verify', agent)).json()).toMatchObject({ valid: true, kind: 'svc.agent_receipt_v1', receipt_id: intentId });
  expect((await post('/protocol/v2/agent-receipts/verify', { receipt_id: intentId })).json()).toMatchObject({ valid: true, receipt: agent });
}

describe('settlement and intent-terminal receipts', () => {
  it('v6 released and refunded', async () => {
    await expectTerminalReceipts(await settle({}, { status: 'completed' }, 'x402', 'released'), 'released', 6);
    await expectTerminalReceipts(await settle({}, { status: 'failed' }, 'mpp', 'refunded'), 'refunded', 6);
  });

  it('v7 released and refunded', async () => {
    const version = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1' })).json();
    await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: version.version_seq });
    const policy = { templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate };
    const released = await settle({ policy }, { status: 'completed', cost_cents: 500 }, 'x402', 'released');
    await expectTerminalReceipts(released, 'released', 7);
    const agent = (await get(`/protocol/v2/agent-receipts/${released}`)).json();
    expect(agent.authorization.policy).toMatchObject({ version_seq: version.version_seq, content_digest_sha256_hex: version.content_digest });
    await expectTerminalReceipts(await settle({ policy }, { status: 'completed', cost_cents: 501 }, 'mpp', 'refunded'), 'refunded', 7);
  });

  it('serves each receipt\'s inclusion proof in the client\'s format once a signed tree head covers it', async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    const pending = await get(`/protocol/v2/receipts/${intentId}/inclusion-proof`);
    expect(pending.statusCode).toBe(404);
    expect(pending.json().error).toMatchObject({ code: 'merkle.inclusion_pending', details: { leaf_index: expect.any(Number) } });
    expect(pending.headers['retry-after']).toBe('2');
    await publishTreeHeads(db, keyring);
    for (const [getter, proofUrl] of [[`/protocol/v2/receipts/${intentId}`, `/protocol/v2/receipts/${intentId}/inclusion-proof`], [`/protocol/v2/agent-receipts/${intentId}`, `/protocol/v2/agent-receipts/${intentId}/inclusion-proof`]] as const) {
      const receipt = (await get(getter)).json();
      const response = await get(proofUrl);
      expect(response.statusCode, response.body).toBe(200);
      const proof = response.json();
      expect(proof).toMatchObject({
        kind: 'svc.agent_receipt_transparency_inclusion_proof_v1', schema_version: 1, tenant_id: acme.tenantId, receipt_id: intentId,
        message_digest_sha256_hex: receipt.message_digest_sha256_hex, tree_head: { kind: 'svc.agent_receipt_transparency_sth_v1' },
      });
      // The client's check: the head verifies with a pinned key, and SHA-256(0x00 ‖ the receipt's digest) leads to its root.
      verifyClientInclusionProof(proof, clientTrusted);
      expect(proof.tree_size).toBeGreaterThan(proof.leaf_index);
      // Independently, from the RFC: the leaf is the 32 digest bytes; the canonical bytes are not the leaf.
      const digestBytes = new Uint8Array(Buffer.from(receipt.message_digest_sha256_hex, 'hex'));
      expect(inclusionProofHolds(proof.leaf_index, proof.tree_size, digestBytes, proof.audit_path_sha256_hex, proof.root_hash_sha256_hex)).toBe(true);
      expect(inclusionProofHolds(proof.leaf_index, proof.tree_size, independentCanonicalBytes(receipt), proof.audit_path_sha256_hex, proof.root_hash_sha256_hex)).toBe(false);
      // A proof moved to another leaf or another receipt's digest fails the client's check.
      expect(() => verifyClientInclusionProof({ ...proof, leaf_index: (proof.leaf_index + 1) % proof.tree_size }, clientTrusted)).toThrow();
      expect(() => verifyClientInclusionProof({ ...proof, message_digest_sha256_hex: '11'.repeat(32) }, clientTrusted)).toThrow(/leaf_hash/);
    }
    // Another tenant's receipt has no proof for this tenant.
    expect((await get(`/protocol/v2/receipts/${intentId}/inclusion-proof`, globex)).statusCode).toBe(404);
  });

  it('svc receipt verify passes each receipt kind with its inclusion proof, and names a tampered one', async () => {
    const released = await settle({}, { status: 'completed' }, 'x402', 'released');
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const action = (await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { payload: {}, metadata: { tool_call_id: 'call-cli' } })).json().agent_receipt;
    await publishTreeHeads(db, keyring);
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-receipts-'));
    try {
      const write = (name: string, value: unknown) => {
        const file = path.join(directory, name);
        fs.writeFileSync(file, JSON.stringify(value));
        return file;
      };
      const jwks = write('jwks.json', (await app.inject({ url: '/.well-known/jwks.json' })).json());
      const reads = {
        settlement: `/protocol/v2/receipts/${released}`,
        terminal: `/protocol/v2/agent-receipts/${released}`,
        action: `/protocol/v2/agent-receipts/${action.receipt_id}`,
      };
      for (const [name, url] of Object.entries(reads)) {
        const receipt = write(`${name}.json`, (await get(url)).json());
        const proof = write(`${name}-proof.json`, (await get(`${url}/inclusion-proof`)).json());
        const result = await runCli(['receipt', 'verify', receipt, '--inclusion-proof', proof, '--jwks', jwks, '--json'], {});
        expect(result.code, `${name}: ${result.stdout}${result.stderr}`).toBe(0);
        expect(JSON.parse(result.stdout), name).toMatchObject({ ok: true, problems: [], leaf_index: expect.any(Number), tree_size: expect.any(Number) });
      }
      const terminal = (await get(reads.terminal)).json();
      const tampered = write('tampered.json', { ...terminal, tenant_id: globex.tenantId });
      const refused = await runCli(['receipt', 'verify', tampered, '--inclusion-proof', path.join(directory, 'terminal-proof.json'), '--jwks', jwks, '--json'], {});
      expect(refused.code).not.toBe(0);
      expect(refused.stdout + refused.stderr).toMatch(/artifact\.signature_invalid/);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('lists agent receipts, by intent and paged', async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    // With a page size, an intent's receipts are a list of summaries, each with the signed receipt.
    const byIntent = (await get(`/protocol/v2/agent-receipts?intent_id=${intentId}&limit=10`)).json();
    expect(byIntent.items).toEqual([expect.objectContaining({
      kind: 'svc.agent_receipt_v1', receipt_id: intentId, scope: 'intent_terminal', intent_id: intentId, tool_call_id: null,
      message_digest_sha256_hex: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: expect.any(String), leaf_index: expect.any(Number),
    })]);
    for (const item of byIntent.items) {
      expect(item.message_digest_sha256_hex).toBe(item.receipt.message_digest_sha256_hex);
      expectClientVerified(item.receipt);
    }
    const first = (await get('/protocol/v2/agent-receipts?limit=2')).json();
    expect(first).toMatchObject({ object: 'list', limit: 2, has_more: true });
    const second = (await get(`/protocol/v2/agent-receipts?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.items.length).toBeGreaterThan(0);
    const ids = [...first.items, ...second.items].map((item: { receipt_id: string }) => item.receipt_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const item of [...first.items, ...second.items]) expectClientVerified(item.receipt);
    expect((await get(`/protocol/v2/agent-receipts?cursor=${'0'.repeat(64)}`)).json().error.code).toBe('receipt.not_found');
    expect((await get('/protocol/v2/receipts/no-such-receipt')).statusCode).toBe(404);
    // An intent that has not settled has no intent-terminal receipt yet.
    const open = await createIntent();
    expect((await get(`/protocol/v2/agent-receipts?intent_id=${open}`)).json().error.code).toBe('receipt.not_found');
  });
});

describe('action receipts', () => {
  it('the sandbox evidence answer carries the action and intent-terminal receipts', async () => {
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const toolCallId = 'call_123';
    const answer = (await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, {
      payload: { ok: true }, metadata: { tool_name: 'search.web', tool_call_id: toolCallId, user_prompt: 'never copied' },
    })).json();
    expect(answer.sandbox_lifecycle_status).toBe('released');
    expect(answer.agent_receipt).toMatchObject({
      scope: 'action', receipt_id: actionReceiptId(boot.intent_id, toolCallId),
      execution: { tool_call_id: toolCallId, tool_name: 'search.web', operation: 'search.web', outcome: 'executed', result_digest_sha256_hex: answer.payload_digest },
      evidence: { payload_digest_sha256_hex: answer.payload_digest, predicate_passed: true },
    });
    expect(answer.agent_receipt_intent_terminal).toMatchObject({ scope: 'intent_terminal', receipt_id: boot.intent_id });
    expect(JSON.stringify(answer.agent_receipt)).not.toContain('never copied');
    for (const wire of [answer.agent_receipt, answer.agent_receipt_intent_terminal]) expectClientVerified(wire);
    const settlement = (await get(`/protocol/v2/receipts/${boot.intent_id}`)).json();
    expect(settlement).toMatchObject({ settlement_mode: 'simulated', harbor_state: 'released' });
    expectClientVerified(settlement);
    // Found again by intent and tool call: the signed receipt itself.
    const found = (await get(`/protocol/v2/agent-receipts?intent_id=${boot.intent_id}&tool_call_id=${toolCallId}`)).json();
    expect(found).toEqual(answer.agent_receipt);
  });

  it('lists the attestations the client sends with sandbox evidence in both agent receipts', async () => {
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const attestations = [
      { source: 'X402', kind: 'delivery_receipt_v1', digest_sha256_hex: 'AB'.repeat(32), reference_id: ' https://vendor.example/r/1 ' },
      { source: 'sep2828_mcp', kind: 'decision_record', digest_sha256_hex: 'cd'.repeat(32) },
    ];
    const answer = (await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { payload: {}, metadata: { tool_call_id: 'call-attested', external_attestations: attestations } })).json();
    // Normalized as the client's verifier normalizes them, so its rebuilt bytes are the signed ones.
    const expected = [
      { source: 'x402', kind: 'delivery_receipt_v1', digest_sha256_hex: 'ab'.repeat(32), reference_id: 'https://vendor.example/r/1' },
      { source: 'sep2828_mcp', kind: 'decision_record', digest_sha256_hex: 'cd'.repeat(32) },
    ];
    for (const wire of [answer.agent_receipt, answer.agent_receipt_intent_terminal]) {
      expect(wire.external_attestations).toEqual(expected);
      expectClientVerified(wire);
    }
    const refused = await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { payload: {}, metadata: { external_attestations: [{ source: 'x402', kind: 'k', digest_sha256_hex: 'zz' }] } });
    expect(refused.statusCode).toBe(409); // already settled: the intent's state is judged first
    const another = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const bad = await post(`/v1/sandbox/guardrails/${another.intent_id}/evidence`, { payload: {}, metadata: { external_attestations: [{ source: 'x402', kind: 'k', digest_sha256_hex: 'zz' }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'evidence.attestations_invalid', details: { index: 0 } });
  });

  it('a guarded call\'s receipt is found by the tool_call_id the client sent to /verify, naming the agent it reported', async () => {
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const decision = (await post('/verify', {
      intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 25,
      tool_call_id: 'call_guarded_1', tool_name: 'Search.Web', agent_subject: 'agent:shopper', model_family: 'GPT-5',
      config_hash_hex: 'AA'.repeat(32), prompt_hash_hex: 'bb'.repeat(32), vendor_id: 'Vendor.Example',
    })).json();
    expect(decision.allow).toBe(true);
    // The client's spend guard completes with the outcome only.
    const completed = await post(`/v1/spend/decisions/${decision.decision_id}/complete`, { outcome: 'consumed' });
    expect(completed.statusCode, completed.body).toBe(200);
    const receipt = completed.json().agent_receipt;
    expect(receipt).toMatchObject({
      receipt_id: actionReceiptId(boot.intent_id, 'call_guarded_1'),
      authorization: { actor_subject: 'agent:shopper', agent: { model_family: 'gpt-5', config_hash_sha256_hex: 'aa'.repeat(32), prompt_hash_sha256_hex: 'bb'.repeat(32) } },
      execution: { tool_call_id: 'call_guarded_1', tool_name: 'search.web' },
      merchant: { vendor_id: 'vendor.example' },
    });
    expectClientVerified(receipt);
    const found = await get(`/protocol/v2/agent-receipts?intent_id=${boot.intent_id}&tool_call_id=call_guarded_1`);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json()).toEqual(receipt);
    // Served in its signed order (the order-based check rebuilds the bytes from the served order alone).
    expectClientVerified(found.json());
  });

  it('a completed spend decision issues its action receipt once, in its transaction', async () => {
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const decision = (await post('/verify', { intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 40 })).json();
    expect(decision.allow).toBe(true);
    const completed = await post(`/v1/spend/decisions/${decision.decision_id}/complete`, { outcome: 'consumed', tool_call_id: 'call_777', tool_name: 'search.web' });
    expect(completed.statusCode, completed.body).toBe(200);
    const receipt = completed.json().agent_receipt;
    expect(receipt).toMatchObject({
      scope: 'action', receipt_id: actionReceiptId(boot.intent_id, 'call_777'),
      authorization: { decision_id: decision.decision_id, audit_id: decision.audit_id, requested_spend_cents: 40 },
      execution: { tool_call_id: 'call_777', outcome: 'executed' },
      outcome: { harbor_state: 'funded', spend_reservation_outcome: 'consumed' },
      references: { settlement_receipt_id: null },
    });
    expectClientVerified(receipt);
    // Completing again answers the same receipt; the sandbox evidence naming the same call reuses it.
    expect((await post(`/v1/spend/decisions/${decision.decision_id}/complete`, { outcome: 'consumed', tool_call_id: 'call_777' })).json().agent_receipt).toEqual(receipt);
    const evidence = (await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { payload: {}, metadata: { tool_call_id: 'call_777', decision_id: decision.decision_id } })).json();
    expect(evidence.agent_receipt).toEqual(receipt);
    expectClientVerified(evidence.agent_receipt_intent_terminal);
  });

  it('a released reservation is a skipped execution, named by the decision id', async () => {
    const boot = (await post('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).json();
    const decision = (await post('/verify', { intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 10 })).json();
    const receipt = (await post(`/v1/spend/decisions/${decision.decision_id}/complete`, { outcome: 'released' })).json().agent_receipt;
    expect(receipt).toMatchObject({
      receipt_id: actionReceiptId(boot.intent_id, decision.decision_id),
      execution: { tool_call_id: decision.decision_id, tool_name: 'search.web', outcome: 'skipped' },
      outcome: { spend_reservation_outcome: 'released' },
    });
    expectClientVerified(receipt);
  });
});

describe('attestations sent with evidence', () => {
  const runId = '0b6f1c4e-4b7e-4c63-9d3e-2f1a7b8c9d01';
  const attestations = [{ source: 'ap2', kind: 'protocol_settlement_receipt_v1', digest_sha256_hex: 'ef'.repeat(32), reference_id: 'partner-42' }];

  async function funded(): Promise<string> {
    const intentId = await createIntent();
    await fund(intentId, 'x402');
    return intentId;
  }
  const evidence = (intentId: string, headers: Record<string, string>) =>
    post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }), headers);

  it('are stored with the evidence and listed in the intent-terminal receipt, which the client verifies', async () => {
    const intentId = await funded();
    const recorded = await evidence(intentId, { 'x-svc-agent-receipt-attestations': JSON.stringify(attestations), 'x-svc-agent-run-id': runId.toUpperCase() });
    expect(recorded.statusCode, recorded.body).toBe(200);
    const listed = (await get(`/harbor/intents/${intentId}/evidence`)).json().data[0];
    expect(listed).toMatchObject({ external_attestations: attestations, agent_run_id: runId });
    expect((await post(`/harbor/intents/${intentId}/settlement/confirm`, {})).json().state).toBe('released');
    const terminal = (await get(`/protocol/v2/agent-receipts?intent_id=${intentId}`)).json();
    expect(terminal.external_attestations).toEqual(attestations);
    expectClientVerified(terminal);
  });

  it('an empty list, or none, is no attestation: the receipt says null', async () => {
    const intentId = await funded();
    expect((await evidence(intentId, { 'x-svc-agent-receipt-attestations': '[]' })).statusCode).toBe(200);
    await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
    const terminal = (await get(`/protocol/v2/agent-receipts/${intentId}`)).json();
    expect(terminal.external_attestations).toBeNull();
    expect((await get(`/harbor/intents/${intentId}/evidence`)).json().data[0]).toMatchObject({ external_attestations: [], agent_run_id: null });
  });

  it.each([
    ['not JSON', { 'x-svc-agent-receipt-attestations': '[{' }, 'evidence.attestations_invalid'],
    ['not an array', { 'x-svc-agent-receipt-attestations': '{}' }, 'evidence.attestations_invalid'],
    ['a bad digest', { 'x-svc-agent-receipt-attestations': JSON.stringify([{ ...attestations[0], digest_sha256_hex: 'ef' }]) }, 'evidence.attestations_invalid'],
    ['a field no attestation has', { 'x-svc-agent-receipt-attestations': JSON.stringify([{ ...attestations[0], user_prompt: 'x' }]) }, 'evidence.attestations_invalid'],
    ['too many', { 'x-svc-agent-receipt-attestations': JSON.stringify(Array.from({ length: 17 }, () => attestations[0])) }, 'evidence.attestations_invalid'],
    ['a run id that is not a UUID', { 'x-svc-agent-run-id': 'run-1' }, 'evidence.agent_run_id_invalid'],
  ])('refuses %s with 400, recording nothing', async (_label, headers, code) => {
    const intentId = await funded();
    const refused = await evidence(intentId, headers);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error.code).toBe(code);
    expect((await evidence(intentId, {})).statusCode).toBe(200);
  });
});

describe('verify refusals', () => {
  let settlementWire: Record<string, unknown>;
  let agentWire: Record<string, unknown>;

  beforeAll(async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    settlementWire = (await get(`/protocol/v2/receipts/${intentId}`)).json();
    agentWire = (await get(`/protocol/v2/agent-receipts/${intentId}`)).json();
  });

  const verdict = async (route: 'receipts' | 'agent-receipts', wire: unknown, tenant = acme) => {
    const response = await post(`/protocol/v2/${route}/verify`, { receipt: wire }, {}, tenant);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  it('answers valid:false with the reason, each its own code', async () => {
    const cases: Array<[string, 'receipts' | 'agent-receipts', unknown, string]> = [
      ['unknown schema_version (before any signature work: the signature is garbage too)', 'receipts', { ...settlementWire, schema_version: 2, ed25519_signature_hex: 'zz' }, 'artifact.schema_version_unsupported'],
      ['an agent receipt sent to the protocol receipt route', 'receipts', agentWire, 'artifact.kind_mismatch'],
      ['a settlement receipt sent to the agent receipt route', 'agent-receipts', settlementWire, 'artifact.kind_mismatch'],
      ['an unknown kind', 'receipts', { ...settlementWire, kind: 'svc.something_else_v1' }, 'artifact.kind_unknown'],
      ['a tampered field', 'receipts', { ...settlementWire, amount_cents: 5000 }, 'artifact.signature_invalid'],
      ['a tampered agent receipt', 'agent-receipts', { ...agentWire, issued_at: '2020-01-01T00:00:00Z' }, 'artifact.signature_invalid'],
      ['a field no receipt has', 'agent-receipts', { ...agentWire, user_prompt: 'hello' }, 'artifact.malformed'],
    ];
    for (const [label, route, wire, code] of cases) expect((await verdict(route, wire)).code, label).toBe(code);
  });

  it('refuses another tenant\'s receipt, sent or named', async () => {
    expect(await verdict('receipts', settlementWire, globex)).toMatchObject({ valid: false, code: 'artifact.tenant_mismatch' });
    expect(await verdict('agent-receipts', agentWire, globex)).toMatchObject({ valid: false, code: 'artifact.tenant_mismatch' });
    // Named by id, another tenant's receipt is not found at all, like an unknown id.
    for (const [route, id] of [['receipts', settlementWire.receipt_id], ['agent-receipts', agentWire.receipt_id], ['receipts', 'authz:none']] as const) {
      const response = await post(`/protocol/v2/${route}/verify`, { receipt_id: id }, {}, id === 'authz:none' ? acme : globex);
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json().error.code).toBe('receipt.not_found');
    }
  });

  it('refuses a receipt signed by a retired gateway key, and one signed by a key of no deployment', async () => {
    const { signing_algorithm: _a, message_digest_sha256_hex: _d, signing_public_key_ed25519_hex: _k, ed25519_signature_hex: _s, ...body } = settlementWire;
    const retired = signArtifact('svc.protocol_settlement_receipt_v1', body, ed25519SignerFromSeed(Buffer.from(retiredSeedHex, 'hex')));
    expect(await verdict('receipts', retired)).toMatchObject({ valid: false, code: 'artifact.signing_key_retired' });
    const foreign = signArtifact('svc.protocol_settlement_receipt_v1', body, ed25519SignerFromSeed(new Uint8Array(32).fill(3)));
    expect(await verdict('receipts', foreign)).toMatchObject({ valid: false, code: 'artifact.key_untrusted' });
  });

  it('checked every agent receipt it read against the schema', () => {
    expect(agentReceiptsChecked.count).toBeGreaterThan(10);
  });
});
