// The cross-tenant sweep: tenant A holds one of every resource; every registered route is called with tenant B's
// admin credential on A's resources. Routes that name a resource answer 404; lists, reads and verifications show
// none of A's data. A route without a case here fails the test, so no route can be added unswept.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { ed25519SignerFromSeed } from '../../../src/signing/ed25519.ts';
import { createRecognitionProof } from '../../../src/signing/recognition.ts';
import { signArtifact } from '../../../src/signing/artifacts.ts';
import { appendLeaf, publishTreeHeads } from '../../../src/receipts/transparency-log.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let a: TestTenant;
let b: TestTenant;
const routes: string[] = [];
const principal = party('did:principal:alice');
const payee = party('did:payee:tools');
/** The payee of every sandbox guardrail intent: A's held intent is paid to it. */
const sandboxPayee = 'did:svc:sandbox:payee';
const agent = ed25519SignerFromSeed(new Uint8Array(32).fill(7));
/** A's resources: every id that must never be reachable or visible from B. */
const secrets: Record<string, string> = {};
/** A's signed receipts, which B presents to the verify routes. */
const receiptsOfA: Record<string, Record<string, unknown>> = {};

async function asA(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) {
  const response = await app.inject({ method, url, headers: { ...bearer(a.adminKey), ...headers }, ...(payload ? { payload } : {}) });
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json();
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { appOptions: { secretsKey: Buffer.alloc(32, 5).toString('base64') }, beforeApp: (instance) => {
    instance.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
    });
  } });
  a = await createTestTenant(database.connection);
  b = await createTestTenant(database.connection);
  secrets.tenant = a.tenantId;
  secrets.apiKey = (await asA('POST', '/v1/admin/api-keys', { role: 'agent' })).key_id;
  secrets.registeredKey = (await asA('POST', '/v1/registry/keys', { kind: 'agent', subject: 'agent-a', public_key_ed25519_hex: agent.publicKey.hex })).id;
  const version = await asA('POST', '/harbor/policy/v1/drafts', { template_id: 'completion_v1' });
  await asA('POST', '/harbor/policy/v1/rollout', { template_id: 'completion_v1', version_seq: version.version_seq });
  secrets.policyDigest = version.content_digest;
  await asA('PUT', '/v1/admin/settlement/config', { rails: ['x402_usdc_base'], x402_address: '0x1111111111111111111111111111111111111111' });
  secrets.ssoClientId = `sso-client-of-${a.tenantId}`;
  await asA('PUT', '/v1/admin/sso/config', {
    issuer: 'https://idp.a.example', client_id: secrets.ssoClientId, client_secret: 'sso-secret-of-a', redirect_uri: 'https://console.a.example/sso', allowed_email_domains: ['a.example'],
  });

  const body = signedCreateBody({ tenantId: a.tenantId, principal, payee, allowedTools: ['search.web'] });
  secrets.intent = (await asA('POST', '/harbor/intents', body)).intent_id;
  const challenge = await app.inject({ method: 'POST', url: `/harbor/intents/${secrets.intent}/fund`, headers: bearer(a.adminKey), payload: {} });
  const funded = await asA('POST', `/harbor/intents/${secrets.intent}/fund`, {}, {
    'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }),
  });
  secrets.capabilityToken = funded.capability_token;
  secrets.decision = (await asA('POST', '/verify', { intent_id: secrets.intent, token: funded.capability_token, operation: 'search.web', requested_spend_cents: 10 })).decision_id;
  // An agent run of A's, with one trace event.
  secrets.agentRun = '6d1f0c52-8f4e-4c1e-9a57-0d1c2e3f4a5b';
  await asA('PUT', `/v1/agent-runs/${secrets.agentRun}`, { intent_id: secrets.intent, operation: 'search.web', sandbox: false, allowed_tools: ['search.web'], completion_preset: '' });
  await asA('POST', `/v1/agent-runs/${secrets.agentRun}/trace-events`, { events: [traceEventOf(secrets.agentRun)] });
  const auditExport = await asA('POST', '/v1/compliance/audit-exports', {});
  secrets.auditExport = auditExport.job_id;
  secrets.auditExportToken = auditExport.download_token;
  // A's newest event (the audit export's): its id named by B, and as B's cursor.
  secrets.event = (await asA('GET', '/v1/events?limit=1')).data[0].id;
  secrets.webhookEndpoint = (await asA('POST', '/v1/webhook-endpoints', { url: 'https://hooks.a.example/svc', enabled_events: ['*'] })).id;
  secrets.sandboxIntent = (await asA('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).intent_id;
  // A's transparency log under a signed head, so the merkle routes have something of A's to withhold from B.
  await app.database.tenant(a.tenantId, (tx) => appendLeaf(tx, a.tenantId, {
    kind: 'svc.protocol_settlement_receipt_v1', artifactId: 'log-leaf-of-a', canonicalBytes: new Uint8Array([1, 2, 3]), artifact: { of: a.tenantId },
  }));
  secrets.logLeaf = 'log-leaf-of-a';
  // A settled sandbox intent: its settlement receipt, its intent-terminal and action agent receipts, under a head.
  secrets.settledIntent = (await asA('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).intent_id;
  const settled = await asA('POST', `/v1/sandbox/guardrails/${secrets.settledIntent}/evidence`, { payload: {}, metadata: { tool_call_id: 'call-of-a' } });
  secrets.actionReceipt = settled.agent_receipt.receipt_id;
  await publishTreeHeads(app.database, app.gatewayKeys);
  receiptsOfA.settlement = await asA('GET', `/protocol/v2/receipts/${secrets.settledIntent}`);
  receiptsOfA.agent = settled.agent_receipt;
  // A can read the proofs B must not.
  secrets.receiptDigest = receiptsOfA.settlement!.message_digest_sha256_hex as string;
  secrets.rootOfA = (await asA('GET', `/protocol/v2/receipts/${secrets.settledIntent}/inclusion-proof`)).root_hash_sha256_hex;
  // A's release gate holds a sandbox release (docs/release-gate.md); a reviewer of A records a finding about it.
  await asA('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold', amount_limit_cents: 99, first_settlement: true });
  secrets.heldIntent = (await asA('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' })).intent_id;
  expect((await asA('POST', `/v1/sandbox/guardrails/${secrets.heldIntent}/evidence`, { payload: {} })).sandbox_lifecycle_status).toBe('held');
  secrets.reviewEvent = (await asA('POST', `/signal/v1/operators/${encodeURIComponent(sandboxPayee)}/review-events`, {
    event_type: 'review_open_requested', intent_id: secrets.heldIntent, summary: 'review-summary-of-a',
  })).event_id;
  secrets.reviewSummary = 'review-summary-of-a';
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** A mandate authorizing `tenantId`, signed by a principal key no tenant registered (sandbox tenants take it). */
function mandateFor(tenantId: string): Record<string, unknown> {
  return signArtifact('svc.agent_mandate_v1', {
    authorization: { kind: 'tenant', tenant_id: tenantId, principal_subject: '', principal_type: '' },
    agent: { subject: 'agent-b', issuer: '', key_id: '', display_name: '' },
    allowed_actions: ['harbor.intent.fund'],
    allowed_tools: ['search.web'],
    spend_ceiling: { amount_minor: 100000, currency: 'usd' },
    settlement: { default_rail: 'x402_usdc_base', allowed_rails: ['x402_usdc_base'] },
    constraint: { kind: 'predicate', id: '', version: '', digest_sha256_hex: '', uri: '' },
    expires_at: new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    nonce: `nonce-${tenantId}`,
    human_presence_mode: 'human_not_present',
  }, principal.signer);
}

const traceEventOf = (runId: string) => ({ type: 'tool_selected', runId, toolName: 'search.web', toolCallId: 'call-of-a', operation: 'search.web', recordedAt: '2026-11-25T04:00:00.000Z' });

const asB = (method: string, url: string, payload?: object): Promise<LightMyRequestResponse> =>
  app.inject({ method: method as 'GET', url, headers: bearer(b.adminKey), ...(payload ? { payload } : {}) });

/** Routes that name one of A's resources: B must get 404. */
const namedResource: Record<string, () => [string, object | undefined]> = {
  'GET /v1/admin/api-keys/:key_id': () => [`/v1/admin/api-keys/${secrets.apiKey}`, undefined],
  'DELETE /v1/admin/api-keys/:key_id': () => [`/v1/admin/api-keys/${secrets.apiKey}`, undefined],
  'POST /v1/admin/api-keys/:key_id/rotate': () => [`/v1/admin/api-keys/${secrets.apiKey}/rotate`, { previous_secret_expires_in_seconds: 0 }],
  'DELETE /v1/registry/keys/:id': () => [`/v1/registry/keys/${secrets.registeredKey}`, undefined],
  'GET /harbor/intents/:intent_id': () => [`/harbor/intents/${secrets.intent}`, undefined],
  'GET /harbor/operator/v1/intents/:intent_id': () => [`/harbor/operator/v1/intents/${secrets.intent}`, undefined],
  'GET /harbor/intents/:intent_id/budget': () => [`/harbor/intents/${secrets.intent}/budget`, undefined],
  'GET /harbor/intents/:intent_id/evidence': () => [`/harbor/intents/${secrets.settledIntent}/evidence`, undefined],
  'POST /harbor/intents/:intent_id/fund': () => [`/harbor/intents/${secrets.intent}/fund`, {}],
  'POST /harbor/intents/:intent_id/evidence': () => [
    `/harbor/intents/${secrets.intent}/evidence`,
    signedEvidenceBody({ tenantId: b.tenantId, intentId: secrets.intent!, payee, payload: { status: 'completed' } }),
  ],
  'POST /harbor/intents/:intent_id/settlement/confirm': () => [`/harbor/intents/${secrets.intent}/settlement/confirm`, {}],
  // A is a sandbox tenant, whose intents carry no rail instruction: B's 404 for A's intent is checked here, and for a
  // real instruction of a live tenant in test/rails/live-x402.test.ts.
  'POST /harbor/intents/:intent_id/rail-instructions/:instruction_id/done': () => [
    `/harbor/intents/${secrets.settledIntent}/rail-instructions/${secrets.intent}/done`, { reference: '0xabc' },
  ],
  'POST /v1/spend/decisions/:decision_id/complete': () => [`/v1/spend/decisions/${secrets.decision}/complete`, { outcome: 'consumed' }],
  // A's held intent: B can neither resolve it nor record a finding about it; A's operator has no review in B.
  'POST /harbor/intents/:intent_id/review/resolve': () => [`/harbor/intents/${secrets.heldIntent}/review/resolve`, { resolution: 'release' }],
  'POST /signal/v1/operators/:operator_did/review-events': () => [
    `/signal/v1/operators/${encodeURIComponent(sandboxPayee)}/review-events`, { event_type: 'appeal_requested', intent_id: secrets.heldIntent, summary: 'b' },
  ],
  'GET /signal/v1/operators/:operator_did/review-status': () => [`/signal/v1/operators/${encodeURIComponent(sandboxPayee)}/review-status`, undefined],
  // A's rolled-out completion_v1 is no org policy of B's.
  'POST /v1/org-policies/:policy_id/effective': () => ['/v1/org-policies/completion_v1/effective', {
    version: 2, name: 'b-overlay', default_deny: true, extends: { org_policy_id: 'completion_v1', org_id: 'org_b' },
    tools: { 'search.web': { side_effecting: false } },
  }],
  // A's run by its id, A's intent by its id: B's own run id space holds neither.
  'PUT /v1/agent-runs/:run_id': () => [`/v1/agent-runs/${secrets.agentRun}`, { intent_id: secrets.intent, operation: 'search.web' }],
  'POST /v1/agent-runs/:run_id/trace-events': () => [`/v1/agent-runs/${secrets.agentRun}/trace-events`, { events: [traceEventOf(secrets.agentRun!)] }],
  'GET /v1/agent-runs/:run_id': () => [`/v1/agent-runs/${secrets.agentRun}`, undefined],
  'GET /v1/agent-runs': () => [`/v1/agent-runs?intent_id=${secrets.intent}`, undefined],
  'POST /v1/spend/preflight': () => ['/v1/spend/preflight', { intent_id: secrets.intent, operation: 'search.web', requested_spend_cents: 1 }],
  'POST /v1/sandbox/guardrails/:intent_id/evidence': () => [`/v1/sandbox/guardrails/${secrets.sandboxIntent}/evidence`, { payload: {} }],
  'GET /v1/compliance/audit-exports/:job_id': () => [`/v1/compliance/audit-exports/${secrets.auditExport}?issue_download=1`, undefined],
  'DELETE /v1/compliance/audit-exports/:job_id': () => [`/v1/compliance/audit-exports/${secrets.auditExport}`, undefined],
  'GET /v1/events/:event_id': () => [`/v1/events/${secrets.event}`, undefined],
  'GET /v1/webhook-endpoints/:endpoint_id': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}`, undefined],
  'POST /v1/webhook-endpoints/:endpoint_id': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}`, { url: 'https://hooks.b.example/steal' }],
  'DELETE /v1/webhook-endpoints/:endpoint_id': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}`, undefined],
  'POST /v1/webhook-endpoints/:endpoint_id/rotate-secret': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}/rotate-secret`, {}],
  'GET /v1/webhook-endpoints/:endpoint_id/deliveries': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}/deliveries`, undefined],
  'POST /v1/webhook-endpoints/:endpoint_id/events/:event_id/redeliver': () => [`/v1/webhook-endpoints/${secrets.webhookEndpoint}/events/${secrets.event}/redeliver`, {}],
  // A's payee as an operator: B has no history of it, whatever A has (test/surfaces/standing/standing.test.ts settles both).
  'GET /reputation/:operator_did': () => [`/reputation/${encodeURIComponent(payee.did)}`, undefined],
  'GET /signal/v1/operators/:operator_did/explanation': () => [`/signal/v1/operators/${encodeURIComponent(payee.did)}/explanation`, undefined],
  'GET /protocol/v2/receipts/:receipt_id': () => [`/protocol/v2/receipts/${secrets.settledIntent}`, undefined],
  'GET /protocol/v2/receipts/:receipt_id/inclusion-proof': () => [`/protocol/v2/receipts/${secrets.settledIntent}/inclusion-proof`, undefined],
  'GET /protocol/v2/agent-receipts/:receipt_id': () => [`/protocol/v2/agent-receipts/${secrets.actionReceipt}`, undefined],
  'GET /protocol/v2/agent-receipts/:receipt_id/inclusion-proof': () => [`/protocol/v2/agent-receipts/${secrets.actionReceipt}/inclusion-proof`, undefined],
  'GET /protocol/v2/a2a/task-contracts/:contract_id': () => [`/protocol/v2/a2a/task-contracts/${secrets.intent}`, undefined],
  // B imports a mandate of its own for A's intent: the intent is not found (B is a sandbox tenant, so its keys are
  // taken on first use and the mandate and proof verify).
  'POST /protocol/v2/mandates': () => {
    const body = { signed_mandate: mandateFor(b.tenantId), intent_id: secrets.intent };
    const { proof } = createRecognitionProof({
      signer: agent, keyId: 'agent-b', purpose: 'protocol.mandate.import', tenantId: b.tenantId, method: 'POST', path: '/protocol/v2/mandates', body,
    });
    return ['/protocol/v2/mandates', { ...body, recognition_proof: proof }];
  },
};

/** Reads and verifications without a resource in the path: B gets its own (empty) view or a refusal, never A's data. */
const views: Record<string, () => [string, object | undefined]> = {
  'GET /v1/auth/principal': () => ['/v1/auth/principal', undefined],
  'GET /v1/admin/api-keys': () => ['/v1/admin/api-keys', undefined],
  'GET /v1/registry/keys': () => ['/v1/registry/keys', undefined],
  'GET /v1/admin/settlement/config': () => ['/v1/admin/settlement/config', undefined],
  'GET /v1/admin/sso/config': () => ['/v1/admin/sso/config', undefined],
  'GET /harbor/intents': () => ['/harbor/intents', undefined],
  'GET /harbor/operator/v1/intents': () => ['/harbor/operator/v1/intents', undefined],
  'GET /harbor/funding-attempts': () => ['/harbor/funding-attempts', undefined],
  'GET /harbor/policy/v1/versions': () => ['/harbor/policy/v1/versions?template_id=completion_v1', undefined],
  'GET /harbor/ledger/v1/tip': () => ['/harbor/ledger/v1/tip', undefined],
  'GET /harbor/ledger/v1/events': () => ['/harbor/ledger/v1/events', undefined],
  'GET /harbor/ledger/v1/authority': () => ['/harbor/ledger/v1/authority', undefined],
  // B's own log has no head: 404 merkle.tree_head_missing, never A's head or proofs.
  'GET /harbor/ledger/v1/merkle/latest': () => ['/harbor/ledger/v1/merkle/latest', undefined],
  'GET /harbor/ledger/v1/merkle/proof': () => ['/harbor/ledger/v1/merkle/proof?leaf_index=0&tree_size=1', undefined],
  'GET /harbor/ledger/v1/merkle/consistency': () => ['/harbor/ledger/v1/merkle/consistency?first=1&second=1', undefined],
  'GET /v1/compliance/audit-exports': () => ['/v1/compliance/audit-exports', undefined],
  // A's event id as B's cursor: B's own log (its key's creation, its audit export), never an event of A's.
  'GET /v1/events': () => [`/v1/events?cursor=${secrets.event}`, undefined],
  'GET /v1/webhook-endpoints': () => [`/v1/webhook-endpoints?cursor=${secrets.webhookEndpoint}`, undefined],
  'GET /protocol/v2/agent-receipts': () => ['/protocol/v2/agent-receipts', undefined],
  'GET /protocol/v2/a2a/task-contracts': () => ['/protocol/v2/a2a/task-contracts', undefined],
  'POST /protocol/v2/receipts/verify': () => ['/protocol/v2/receipts/verify', { receipt: receiptsOfA.settlement }],
  'POST /protocol/v2/agent-receipts/verify': () => ['/protocol/v2/agent-receipts/verify', { receipt: receiptsOfA.agent }],
  'POST /protocol/v2/mandates/verify': () => ['/protocol/v2/mandates/verify', { signed_mandate: mandateFor(a.tenantId) }],
  'GET /signal/v1/portfolio/signed-export': () => ['/signal/v1/portfolio/signed-export', undefined],
  // A document bound to A's head, digest and all: judged against B's registry, which has no head.
  'POST /v1/policy/validate': () => ['/v1/policy/validate', {
    version: 1, name: 'b-policy', default_deny: true, tools: { 'search.web': { side_effecting: false } },
    intent: { policy_binding: { template_id: 'completion_v1', head_digest: `sha256:${secrets.policyDigest}` } },
  }],
  'GET /signal/v1/portfolio/summary': () => ['/signal/v1/portfolio/summary', undefined],
  // B's own gate (the defaults), queue (empty, every state) and metrics (zero): none of A's holds, signals or settings.
  'GET /signal/v1/fraud/release-gate': () => ['/signal/v1/fraud/release-gate', undefined],
  'GET /signal/v1/review-queue': () => ['/signal/v1/review-queue?state=all', undefined],
  'GET /signal/v1/fraud/metrics': () => ['/signal/v1/fraud/metrics?window=30d', undefined],
  // A's intent and decision ids as B's filter and cursor: B's empty lists, never a row of A's.
  'GET /v1/admin/spend-controls/policy': () => ['/v1/admin/spend-controls/policy', undefined],
  'GET /v1/admin/spend-controls/decisions': () => [`/v1/admin/spend-controls/decisions?intent_id=${secrets.intent}`, undefined],
  'GET /v1/admin/spend-controls/reservations': () => [`/v1/admin/spend-controls/reservations?status=all&cursor=${secrets.decision}`, undefined],
  'POST /verify': () => ['/verify', { intent_id: secrets.intent, token: secrets.capabilityToken, operation: 'search.web', requested_spend_cents: 1 }],
  'POST /harbor/verify': () => ['/harbor/verify', { intent_id: secrets.intent, token: secrets.capabilityToken, operation: 'search.web', requested_spend_cents: 1 }],
  'POST /v1/policy/rollback': () => ['/v1/policy/rollback', { template_id: 'completion_v1', expected_head_digest: secrets.policyDigest, target_digest: secrets.policyDigest, confirm: true }],
  'POST /protocol/v2/recognition/verify': () => {
    const proof = createRecognitionProof({ signer: agent, keyId: 'agent-a', purpose: 'harbor.intent.fund', tenantId: a.tenantId, method: 'POST', path: '/x', body: '{}' }).proof;
    return ['/protocol/v2/recognition/verify', { proof, expected_purpose: 'harbor.intent.fund', expected_request: { method: 'POST', path: '/x', body_digest_sha256_hex: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a' } }];
  },
};

/** Routes that touch no tenant's resources, or create in the caller's own tenant only. */
const notCrossTenant = new Set([
  'GET /healthz', 'GET /readyz', 'GET /.well-known/jwks.json', 'POST /v1/public/auth/login/start', 'POST /v1/public/auth/challenges/verify',
  'POST /v1/admin/api-keys', 'POST /v1/registry/keys', 'PUT /v1/admin/settlement/config', 'POST /harbor/intents',
  'POST /harbor/policy/v1/drafts', 'POST /harbor/policy/v1/rollout', 'GET /harbor/policy/v1/templates', 'POST /harbor/policy/v1/preview',
  'POST /harbor/policy/v1/test', 'POST /v1/sandbox/guardrails/bootstrap',
  // The release gate is set in the caller's own tenant (B's gate leaves A's holding: the views below read both).
  'PUT /signal/v1/fraud/release-gate',
  // SSO: the configuration is written in the caller's tenant; start and callback are public (the person names the
  // tenant; the callback's state names it), covered in test/surfaces/gateway/sso.test.ts.
  'PUT /v1/admin/sso/config', 'POST /v1/auth/sso/start', 'POST /v1/auth/sso/callback',
  // Builds an export of the caller's own tenant (B's bundle holding none of A's data: test/surfaces/gateway/audit-exports.test.ts).
  'POST /v1/compliance/audit-exports',
  // Creates an endpoint in the caller's own tenant.
  'POST /v1/webhook-endpoints',
  // The MCP endpoint names no resource itself; its tools call the routes above with the caller's own credential, and a
  // foreign intent id through a tool is covered in test/surfaces/mcp/mcp-endpoint.test.ts.
  'POST /mcp', 'GET /mcp', 'DELETE /mcp',
  // Public discovery documents: the same for everyone, naming no tenant.
  'GET /.well-known/agent-card.json', 'GET /.well-known/agent-receipt-v1.json', 'GET /.well-known/agent-receipt-signing-keys.json',
  // Device login: the device's two routes are public and name no tenant; the approval routes take only a session
  // token (an API key, B's included, is refused with 403), and a request decided in A being 404 for B's signed-in
  // person is covered in test/surfaces/gateway/device-login.test.ts.
  'POST /v1/public/auth/device/code', 'POST /v1/public/auth/device/start', 'POST /v1/public/auth/device/token', 'GET /v1/auth/device/:user_code', 'POST /v1/auth/device/approve',
  // The client's CLI usage report: public, checked and dropped, naming no tenant.
  'POST /v1/public/analytics/kit-cli',
  // Provider integrations the service does not run: 422 integration.not_supported for every tenant and id, naming no
  // resource (test/surfaces/gateway/provider-integrations.test.ts).
  'GET /v1/admin/plaid/bank-accounts', 'GET /v1/admin/plaid/bank-accounts/:bank_account_id',
  'POST /v1/admin/settlement/stripe/ach/intents/:intent_id/fund', 'GET /v1/admin/shopify/payments/sessions/:session_id',
  // The API's description, its reference page and the metrics scrape: the same for every caller, naming no tenant
  // (the metrics carry no tenant label: test/plugins/metrics.test.ts).
  'GET /openapi.json', 'GET /docs', 'GET /docs/', 'GET /docs/js/scalar.js', 'GET /metrics',
  // The console's icon: one image for everyone.
  'GET /favicon.ico',
]);

/** The download route takes no API key at all: B's admin key is refused (401), and so is B's download token for
 * its own job on A's job; a token bound to A's tenant but naming B is covered in audit-exports.test.ts. */
const downloadRoutes: Record<string, () => Promise<LightMyRequestResponse[]>> = {
  'POST /v1/compliance/audit-exports/:job_id/bundle': async () => {
    const url = `/v1/compliance/audit-exports/${secrets.auditExport}/bundle`;
    const ownOfB = (await asB('POST', '/v1/compliance/audit-exports', {})).json() as { download_token: string };
    return [await asB('POST', url), await app.inject({ method: 'POST', url, headers: bearer(ownOfB.download_token) })];
  },
};

it('gives another tenant 404 on every resource and none of its data anywhere', async () => {
  const leaks = Object.values(secrets).filter((value) => value !== undefined);
  for (const route of routes) {
    const namedCase = namedResource[route];
    const viewCase = views[route];
    if (namedCase) {
      const [url, payload] = namedCase();
      const response = await asB(route.split(' ')[0]!, url, payload);
      expect(response.statusCode, `${route}: ${response.body}`).toBe(404);
      for (const secret of leaks) expect(response.body, route).not.toContain(secret);
    } else if (viewCase) {
      const [url, payload] = viewCase();
      const response = await asB(route.split(' ')[0]!, url, payload);
      expect(response.statusCode, `${route}: ${response.body}`).toBeLessThan(500);
      // The requests above carry A's intent id, token and digests as B's own input; the answers must not add any
      // other of A's identifiers.
      const echoed = new Set([secrets.intent, secrets.capabilityToken, secrets.policyDigest]);
      for (const secret of leaks.filter((value) => !echoed.has(value))) expect(response.body, route).not.toContain(secret);
      if (route === 'POST /verify') expect(response.json()).toMatchObject({ allow: false });
      if (route === 'POST /harbor/verify') expect(response.json()).toMatchObject({ allow: false });
      // B is a sandbox tenant, so an unknown key would be registered on first use: A's proof fails on its tenant binding first.
      if (route === 'POST /protocol/v2/recognition/verify') expect(response.json()).toMatchObject({ valid: false, code: 'recognition.tenant_mismatch' });
      if (route === 'POST /v1/policy/rollback') expect(response.statusCode).toBe(409);
      // A's receipts and mandates verify as signatures, and are refused as another tenant's.
      if (route.endsWith('/verify') && route.startsWith('POST /protocol/v2/') && !route.includes('recognition')) {
        expect(response.json()).toMatchObject({ valid: false, code: 'artifact.tenant_mismatch' });
      }
      if (route === 'GET /protocol/v2/agent-receipts' || route === 'GET /protocol/v2/a2a/task-contracts') expect(response.json().items).toEqual([]);
      if (route === 'POST /v1/policy/validate') expect(response.json().errors.map((issue: { code: string }) => issue.code)).toEqual(['policy.template_not_rolled_out']);
      if (route === 'GET /signal/v1/portfolio/summary') expect(response.json()).toMatchObject({ tenant_id: b.tenantId, operator_count: 0, total_terminal_intents: 0 });
      if (route.startsWith('GET /v1/admin/spend-controls/') && !route.endsWith('/policy')) expect(response.json().data).toEqual([]);
      if (route === 'GET /v1/events' || route === 'GET /v1/webhook-endpoints') expect(response.json().data).toEqual([]);
      if (route === 'GET /harbor/funding-attempts') for (const attempt of response.json().data) expect(attempt.tenant_id).toBe(b.tenantId);
      if (route.startsWith('GET /harbor/ledger/v1/merkle/')) expect(response.json().error.code).toBe('merkle.tree_head_missing');
      if (route === 'GET /signal/v1/fraud/release-gate') expect(response.json()).toMatchObject({ tenant_id: b.tenantId, config: { mode: 'review_only', amount_limit_cents: null } });
      if (route === 'GET /signal/v1/review-queue') expect(response.json()).toMatchObject({ tenant_id: b.tenantId, items: [] });
      if (route === 'GET /signal/v1/fraud/metrics') expect(response.json()).toMatchObject({ tenant_id: b.tenantId, holds_placed_count: 0, critical_signal_count: 0, flagged_operator_count: 0 });
    } else if (downloadRoutes[route]) {
      for (const response of await downloadRoutes[route]()) {
        expect(response.statusCode, `${route}: ${response.body}`).toBe(401);
        for (const secret of leaks) expect(response.body, route).not.toContain(secret);
      }
    } else {
      // Console pages call the routes above with the session's bearer; another tenant's ids in their URLs answer the
      // 404 page (test/surfaces/console/security.test.ts).
      expect(notCrossTenant.has(route) || / \/console(\/|$)/.test(route), `no cross-tenant case for ${route}`).toBe(true);
    }
  }
  // A's receipts named by id, as the client asks for them, are not found for B either: by intent (the terminal
  // receipt), by intent and tool call, and to the verify routes.
  const byName: Array<[string, string, object | undefined]> = [
    ['GET', `/protocol/v2/agent-receipts?intent_id=${secrets.settledIntent}`, undefined],
    ['GET', `/protocol/v2/agent-receipts?intent_id=${secrets.settledIntent}&tool_call_id=call-of-a`, undefined],
    ['POST', '/protocol/v2/receipts/verify', { receipt_id: secrets.settledIntent }],
    ['POST', '/protocol/v2/agent-receipts/verify', { receipt_id: secrets.actionReceipt }],
  ];
  for (const [method, url, payload] of byName) {
    const response = await asB(method, url, payload);
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(404);
    expect(response.json().error.code).toBe('receipt.not_found');
    for (const secret of leaks.filter((value) => value !== secrets.settledIntent && value !== secrets.actionReceipt)) expect(response.body).not.toContain(secret);
  }
  // A's resources are untouched.
  expect((await app.inject({ url: `/harbor/intents/${secrets.intent}`, headers: bearer(a.adminKey) })).json().state).toBe('funded');
  expect((await app.inject({ url: `/v1/admin/api-keys/${secrets.apiKey}`, headers: bearer(a.adminKey) })).json().revoked_at).toBeNull();
  expect((await app.inject({ url: `/v1/compliance/audit-exports/${secrets.auditExport}`, headers: bearer(a.adminKey) })).json().status).toBe('ready');
  expect((await app.inject({ method: 'POST', url: `/v1/compliance/audit-exports/${secrets.auditExport}/bundle`, headers: bearer(secrets.auditExportToken!) })).statusCode).toBe(200);
});
