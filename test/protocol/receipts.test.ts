// Receipts over HTTP on a real Postgres: v6 and v7 intents to released and to refunded, each with its settlement
// receipt and intent-terminal agent receipt, read, verified by the route and checked independently (noble Ed25519
// over the bytes docs/protocol.md defines, ajv against the published schema); inclusion proofs once a tree head
// covers them; action receipts from the sandbox evidence route and from completed spend decisions; every refusal of
// the verify routes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { GatewayKeyring, newKeyFileEntry } from '../../src/infra/gateway-keys.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { actionReceiptId } from '../../src/services/agent-receipt-service.ts';
import { publishTreeHeads } from '../../src/services/transparency-log.ts';
import { signArtifact } from '../../src/signing/artifacts.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../helpers/intents.ts';
import { agentReceiptsChecked, expectReceipt, inclusionProofHolds, independentCanonicalBytes } from '../helpers/receipts.ts';
import { runCli } from '../helpers/server-process.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let keyring: GatewayKeyring;
let acme: TestTenant;
let globex: TestTenant;
let trusted: string[];
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
const retiredSeedHex = 'aa'.repeat(32);

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  // A retired key beside the active one: still published, no longer trusted by the verify routes.
  keyring = new GatewayKeyring({ keys: [{ kid: 'gk_retired', seed_hex: retiredSeedHex, status: 'retired', created_at: '2026-01-01T00:00:00Z' }, newKeyFileEntry()] });
  trusted = [keyring.active.publicKeyHex];
  app = await buildTestApp(database.connection, undefined, keyring);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

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
  const read = settlement.json();
  expect(read).toMatchObject({ kind: 'svc.protocol_settlement_receipt_v1', receipt_id: intentId, tenant_id: acme.tenantId, leaf_index: expect.any(Number) });
  expect(read.receipt).toMatchObject({
    receipt_id: intentId, intent_id: intentId, tenant_id: acme.tenantId, harbor_state: state, amount_cents: 500, currency: 'usd',
    principal_did: principal.did, payee_did: payee.did, settlement_mode: 'ledger_escrow', authorization_receipt_id: '', mandate_digest_sha256_hex: '',
  });
  expectReceipt(read.receipt, trusted);
  expect((await post('/protocol/v2/receipts/verify', { receipt: read.receipt })).json()).toMatchObject({
    valid: true, kind: 'svc.protocol_settlement_receipt_v1', receipt_id: intentId, tenant_id: acme.tenantId,
  });

  const terminal = await get(`/protocol/v2/agent-receipts/${intentId}`);
  expect(terminal.statusCode, terminal.body).toBe(200);
  const agent = terminal.json().receipt;
  expect(agent).toMatchObject({
    scope: 'intent_terminal', receipt_id: intentId, tenant_id: acme.tenantId,
    outcome: { harbor_state: state, settlement_outcome: state === 'released' ? 'SETTLED' : 'REVERSED', predicate_passed: state === 'released' },
    references: { intent_id: intentId, settlement_receipt_id: intentId },
  });
  expect(agent.authorization.policy.template_id).toBe(signingVersion === 7 ? 'completion_budget_v1' : 'predicate_dsl');
  expectReceipt(agent, trusted);
  // The verify route accepts the wire itself as the body, too.
  expect((await post('/protocol/v2/agent-receipts/verify', agent)).json()).toMatchObject({ valid: true, kind: 'svc.agent_receipt_v1', receipt_id: intentId });
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
    const agent = (await get(`/protocol/v2/agent-receipts/${released}`)).json().receipt;
    expect(agent.authorization.policy).toMatchObject({ version_seq: version.version_seq, content_digest_sha256_hex: version.content_digest });
    await expectTerminalReceipts(await settle({ policy }, { status: 'completed', cost_cents: 501 }, 'mpp', 'refunded'), 'refunded', 7);
  });

  it('carries an inclusion proof once a signed tree head covers the receipt', async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    const before = (await get(`/protocol/v2/receipts/${intentId}`)).json();
    expect(before.inclusion_proof).toMatchObject({ tree_head: null, inclusion_proof: null });
    await publishTreeHeads(db, keyring);
    for (const url of [`/protocol/v2/receipts/${intentId}`, `/protocol/v2/agent-receipts/${intentId}`]) {
      const read = (await get(url)).json();
      const { tree_head: head, inclusion_proof: proof } = read.inclusion_proof;
      expect(head.tree_size).toBeGreaterThan(read.leaf_index);
      expect(inclusionProofHolds(read.leaf_index, head.tree_size, independentCanonicalBytes(read.receipt), proof, head.root_hash)).toBe(true);
      // A changed receipt is not the leaf the head commits to.
      const tampered = independentCanonicalBytes({ ...read.receipt, issued_at: '2020-01-01T00:00:00Z' });
      expect(inclusionProofHolds(read.leaf_index, head.tree_size, tampered, proof, head.root_hash)).toBe(false);
    }
  });

  it('svc receipt verify passes the read answer of each receipt kind, and names a tampered one', async () => {
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
      const answers = {
        settlement: (await get(`/protocol/v2/receipts/${released}`)).json(),
        terminal: (await get(`/protocol/v2/agent-receipts/${released}`)).json(),
        action: (await get(`/protocol/v2/agent-receipts/${action.receipt_id}`)).json(),
      };
      for (const [name, answer] of Object.entries(answers)) {
        expect(answer.inclusion_proof.tree_head, name).not.toBeNull();
        const result = await runCli(['receipt', 'verify', write(`${name}.json`, answer), '--jwks', jwks, '--json'], {});
        expect(result.code, `${name}: ${result.stdout}${result.stderr}`).toBe(0);
        expect(JSON.parse(result.stdout), name).toMatchObject({ ok: true, problems: [] });
      }
      const tampered = write('tampered.json', { ...answers.terminal, receipt: { ...answers.terminal.receipt, tenant_id: globex.tenantId } });
      const refused = await runCli(['receipt', 'verify', tampered, '--jwks', jwks, '--json'], {});
      expect(refused.code).not.toBe(0);
      expect(refused.stdout + refused.stderr).toMatch(/artifact\.signature_invalid/);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('lists agent receipts, by intent and paged', async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    const byIntent = (await get(`/protocol/v2/agent-receipts?intent_id=${intentId}`)).json();
    expect(byIntent.items.map((item: { receipt_id: string }) => item.receipt_id)).toEqual([intentId]);
    for (const item of byIntent.items) expectReceipt(item.receipt, trusted);
    const first = (await get('/protocol/v2/agent-receipts?limit=2')).json();
    expect(first).toMatchObject({ object: 'list', limit: 2, has_more: true });
    const second = (await get(`/protocol/v2/agent-receipts?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.items.length).toBeGreaterThan(0);
    const ids = [...first.items, ...second.items].map((item: { receipt_id: string }) => item.receipt_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const item of [...first.items, ...second.items]) expectReceipt(item.receipt, trusted);
    expect((await get(`/protocol/v2/agent-receipts?cursor=${'0'.repeat(64)}`)).json().error.code).toBe('receipt.not_found');
    expect((await get('/protocol/v2/receipts/no-such-receipt')).statusCode).toBe(404);
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
    for (const wire of [answer.agent_receipt, answer.agent_receipt_intent_terminal]) expectReceipt(wire, trusted);
    const settlement = (await get(`/protocol/v2/receipts/${boot.intent_id}`)).json().receipt;
    expect(settlement).toMatchObject({ settlement_mode: 'simulated', harbor_state: 'released' });
    expectReceipt(settlement, trusted);
    // Found again by intent and tool call.
    const found = (await get(`/protocol/v2/agent-receipts?intent_id=${boot.intent_id}&tool_call_id=${toolCallId}`)).json();
    expect(found.receipt).toEqual(answer.agent_receipt);
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
    expectReceipt(receipt, trusted);
    // Completing again answers the same receipt; the sandbox evidence naming the same call reuses it.
    expect((await post(`/v1/spend/decisions/${decision.decision_id}/complete`, { outcome: 'consumed', tool_call_id: 'call_777' })).json().agent_receipt).toEqual(receipt);
    const evidence = (await post(`/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { payload: {}, metadata: { tool_call_id: 'call_777', decision_id: decision.decision_id } })).json();
    expect(evidence.agent_receipt).toEqual(receipt);
    expectReceipt(evidence.agent_receipt_intent_terminal, trusted);
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
    expectReceipt(receipt, trusted);
  });
});

describe('verify refusals', () => {
  let settlementWire: Record<string, unknown>;
  let agentWire: Record<string, unknown>;

  beforeAll(async () => {
    const intentId = await settle({}, { status: 'completed' }, 'x402', 'released');
    settlementWire = (await get(`/protocol/v2/receipts/${intentId}`)).json().receipt;
    agentWire = (await get(`/protocol/v2/agent-receipts/${intentId}`)).json().receipt;
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

  it('refuses another tenant\'s receipt', async () => {
    expect(await verdict('receipts', settlementWire, globex)).toMatchObject({ valid: false, code: 'artifact.tenant_mismatch' });
    expect(await verdict('agent-receipts', agentWire, globex)).toMatchObject({ valid: false, code: 'artifact.tenant_mismatch' });
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
