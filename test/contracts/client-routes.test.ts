// Every route the public client can call (its TypeScript SDK, CLI and MCP server, in our names; the list below was
// built from its source and is kept here), walked against the service with the client's methods: none answers 404
// `request.route_not_found` but those docs/wire-compatibility.md lists as not served, and the provider integrations
// answer the documented 422. The list and the document's table are held equal.
import fs from 'node:fs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

/**
 * What a route is here:
 * - `served`: it answers (any status but 404 `request.route_not_found`);
 * - `integration`: a provider integration we do not run, 422 `integration.not_supported`;
 * - `not_served`: no route (404 `request.route_not_found`), for the reason given in the document.
 */
type Status = 'served' | 'integration' | 'not_served';

interface ClientRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** As the document's table writes it: path parameters in braces, no query. */
  readonly route: string;
  readonly status: Status;
  /** The request sent (path with real or placeholder ids, query, body); default: the route with placeholders, no body. */
  readonly request?: (fixture: Fixture) => { url: string; body?: unknown };
}

interface Fixture {
  readonly intentId: string;
  readonly settledIntentId: string;
  readonly actionReceiptId: string;
  readonly decisionId: string;
  readonly keyId: string;
  readonly jobId: string;
  readonly operatorDid: string;
}

const placeholderUuid = '00000000-0000-4000-8000-000000000001';
const evidenceBody = { payload: { status: 'completed' } };

/** Every route the client can call: the SDK, the CLI, the MCP server and their constants. */
export const clientRoutes: readonly ClientRoute[] = [
  { method: 'GET', route: '/v1/auth/principal', status: 'served' },
  { method: 'POST', route: '/harbor/intents', status: 'served', request: () => ({ url: '/harbor/intents', body: {} }) },
  { method: 'POST', route: '/harbor/intents/{intent_id}/fund', status: 'served', request: (f) => ({ url: `/harbor/intents/${f.intentId}/fund`, body: {} }) },
  { method: 'POST', route: '/harbor/intents/{intent_id}/evidence', status: 'served', request: (f) => ({ url: `/harbor/intents/${f.intentId}/evidence`, body: {} }) },
  { method: 'POST', route: '/harbor/intents/{intent_id}/settlement/confirm', status: 'served', request: (f) => ({ url: `/harbor/intents/${f.intentId}/settlement/confirm`, body: {} }) },
  { method: 'GET', route: '/harbor/operator/v1/intents/{intent_id}', status: 'served', request: (f) => ({ url: `/harbor/operator/v1/intents/${f.intentId}` }) },
  { method: 'GET', route: '/harbor/operator/v1/intents', status: 'served', request: () => ({ url: '/harbor/operator/v1/intents?limit=10' }) },
  { method: 'POST', route: '/verify', status: 'served', request: (f) => ({ url: '/verify', body: { intent_id: f.intentId, token: 'x', operation: 'search.web', requested_spend_cents: 0 } }) },
  { method: 'POST', route: '/harbor/verify', status: 'served', request: (f) => ({ url: '/harbor/verify', body: { intent_id: f.intentId, token: 'x', operation: 'search.web', requested_spend_cents: 0 } }) },
  { method: 'POST', route: '/v1/spend/decisions/{decision_id}/complete', status: 'served', request: (f) => ({ url: `/v1/spend/decisions/${f.decisionId}/complete`, body: { outcome: 'consumed' } }) },
  { method: 'POST', route: '/v1/spend/preflight', status: 'served', request: (f) => ({ url: '/v1/spend/preflight', body: { intent_id: f.intentId, operation: '*', requested_spend_cents: 0 } }) },
  { method: 'POST', route: '/v1/policy/validate', status: 'served', request: () => ({ url: '/v1/policy/validate?strict=1', body: { version: 1, name: 'agent', default_deny: true, tools: { 'search.web': { side_effecting: false } } } }) },
  {
    method: 'POST', route: '/v1/org-policies/{policy_id}/effective', status: 'served',
    request: () => ({ url: '/v1/org-policies/completion_v1/effective', body: { version: 2, name: 'overlay', default_deny: true, extends: { org_policy_id: 'completion_v1', org_id: 'org_acme' }, tools: { 'search.web': { side_effecting: false } } } }),
  },
  { method: 'POST', route: '/v1/sandbox/guardrails/bootstrap', status: 'served', request: () => ({ url: '/v1/sandbox/guardrails/bootstrap', body: { operation: 'search.web', requested_spend_cents: 100 } }) },
  { method: 'POST', route: '/v1/sandbox/guardrails/{intent_id}/evidence', status: 'served', request: (f) => ({ url: `/v1/sandbox/guardrails/${f.intentId}/evidence`, body: evidenceBody }) },
  { method: 'PUT', route: '/v1/agent-runs/{run_id}', status: 'served', request: (f) => ({ url: '/v1/agent-runs/walk-run', body: { intent_id: f.intentId, operation: 'search.web', sandbox: true, allowed_tools: ['search.web'], completion_preset: '' } }) },
  {
    method: 'POST', route: '/v1/agent-runs/{run_id}/trace-events', status: 'served',
    request: () => ({ url: '/v1/agent-runs/walk-run/trace-events', body: { events: [{ type: 'tool_selected', runId: 'walk-run', toolName: 'search.web', toolCallId: 'c1', operation: 'search.web', recordedAt: '2026-11-25T04:00:00.000Z' }] } }),
  },
  { method: 'GET', route: '/harbor/ledger/v1/tip', status: 'served' },
  { method: 'GET', route: '/harbor/ledger/v1/authority', status: 'served' },
  { method: 'GET', route: '/harbor/ledger/v1/events', status: 'served', request: () => ({ url: '/harbor/ledger/v1/events?after_seq=0&limit=64' }) },
  { method: 'GET', route: '/harbor/ledger/v1/merkle/latest', status: 'served' },
  { method: 'GET', route: '/reputation/{operator_did}', status: 'served', request: (f) => ({ url: `/reputation/${encodeURIComponent(f.operatorDid)}` }) },
  { method: 'GET', route: '/signal/v1/portfolio/summary', status: 'served' },
  { method: 'GET', route: '/signal/v1/portfolio/signed-export', status: 'served' },
  { method: 'GET', route: '/signal/v1/operators/{operator_did}/explanation', status: 'served', request: (f) => ({ url: `/signal/v1/operators/${encodeURIComponent(f.operatorDid)}/explanation` }) },
  { method: 'GET', route: '/signal/v1/operators/{operator_did}/review-status', status: 'served', request: (f) => ({ url: `/signal/v1/operators/${encodeURIComponent(f.operatorDid)}/review-status` }) },
  { method: 'POST', route: '/signal/v1/operators/{operator_did}/review-events', status: 'served', request: (f) => ({ url: `/signal/v1/operators/${encodeURIComponent(f.operatorDid)}/review-events`, body: { event_type: 'review_open_requested', summary: 'x' } }) },
  { method: 'GET', route: '/signal/v1/review-queue', status: 'served' },
  { method: 'GET', route: '/signal/v1/fraud/metrics', status: 'served', request: () => ({ url: '/signal/v1/fraud/metrics?window=24h' }) },
  { method: 'GET', route: '/signal/v1/fraud/release-gate', status: 'served' },
  { method: 'PUT', route: '/signal/v1/fraud/release-gate', status: 'served', request: () => ({ url: '/signal/v1/fraud/release-gate', body: { mode: 'review_only' } }) },
  { method: 'GET', route: '/.well-known/agent-card.json', status: 'served' },
  { method: 'GET', route: '/.well-known/agent-receipt-v1.json', status: 'served' },
  { method: 'GET', route: '/.well-known/agent-receipt-signing-keys.json', status: 'served' },
  { method: 'GET', route: '/protocol/v2/a2a/task-contracts', status: 'served' },
  { method: 'GET', route: '/protocol/v2/a2a/task-contracts/{contract_id}', status: 'served', request: (f) => ({ url: `/protocol/v2/a2a/task-contracts/${f.intentId}` }) },
  { method: 'POST', route: '/protocol/v2/mandates', status: 'served', request: () => ({ url: '/protocol/v2/mandates', body: {} }) },
  { method: 'POST', route: '/protocol/v2/mandates/verify', status: 'served', request: () => ({ url: '/protocol/v2/mandates/verify', body: {} }) },
  { method: 'GET', route: '/protocol/v2/receipts/{receipt_id}', status: 'served', request: (f) => ({ url: `/protocol/v2/receipts/${f.settledIntentId}` }) },
  { method: 'POST', route: '/protocol/v2/receipts/verify', status: 'served', request: (f) => ({ url: '/protocol/v2/receipts/verify', body: { receipt_id: f.settledIntentId } }) },
  { method: 'GET', route: '/protocol/v2/agent-receipts/{receipt_id}', status: 'served', request: (f) => ({ url: `/protocol/v2/agent-receipts/${f.actionReceiptId}` }) },
  { method: 'GET', route: '/protocol/v2/agent-receipts', status: 'served', request: (f) => ({ url: `/protocol/v2/agent-receipts?intent_id=${f.settledIntentId}&tool_call_id=walk-call` }) },
  { method: 'POST', route: '/protocol/v2/agent-receipts/verify', status: 'served', request: () => ({ url: '/protocol/v2/agent-receipts/verify', body: {} }) },
  { method: 'POST', route: '/protocol/v2/recognition/verify', status: 'served', request: () => ({ url: '/protocol/v2/recognition/verify', body: {} }) },
  { method: 'GET', route: '/v1/compliance/audit-exports', status: 'served', request: () => ({ url: '/v1/compliance/audit-exports?limit=50' }) },
  { method: 'POST', route: '/v1/compliance/audit-exports', status: 'served', request: () => ({ url: '/v1/compliance/audit-exports', body: {} }) },
  { method: 'GET', route: '/v1/compliance/audit-exports/{job_id}', status: 'served', request: (f) => ({ url: `/v1/compliance/audit-exports/${f.jobId}?issue_download=1` }) },
  { method: 'DELETE', route: '/v1/compliance/audit-exports/{job_id}', status: 'served', request: (f) => ({ url: `/v1/compliance/audit-exports/${f.jobId}` }) },
  { method: 'POST', route: '/v1/compliance/audit-exports/{job_id}/bundle', status: 'served', request: (f) => ({ url: `/v1/compliance/audit-exports/${f.jobId}/bundle` }) },
  { method: 'GET', route: '/harbor/policy/v1/templates', status: 'served' },
  { method: 'GET', route: '/harbor/policy/v1/versions', status: 'served', request: () => ({ url: '/harbor/policy/v1/versions?template_id=completion_v1' }) },
  { method: 'POST', route: '/harbor/policy/v1/preview', status: 'served', request: () => ({ url: '/harbor/policy/v1/preview', body: { template_id: 'completion_v1', parameters: {} } }) },
  { method: 'POST', route: '/harbor/policy/v1/test', status: 'served', request: () => ({ url: '/harbor/policy/v1/test', body: { template_id: 'completion_v1', parameters: {}, evidence: { status: 'completed' } } }) },
  { method: 'GET', route: '/v1/admin/spend-controls/policy', status: 'served' },
  { method: 'GET', route: '/v1/admin/spend-controls/decisions', status: 'served', request: () => ({ url: '/v1/admin/spend-controls/decisions?limit=10' }) },
  { method: 'GET', route: '/v1/admin/spend-controls/reservations', status: 'served', request: () => ({ url: '/v1/admin/spend-controls/reservations?status=active&limit=10' }) },
  { method: 'GET', route: '/v1/admin/api-keys', status: 'served' },
  { method: 'POST', route: '/v1/admin/api-keys', status: 'served', request: () => ({ url: '/v1/admin/api-keys', body: { role: 'agent' } }) },
  { method: 'POST', route: '/v1/admin/api-keys/{key_id}/rotate', status: 'served', request: (f) => ({ url: `/v1/admin/api-keys/${f.keyId}/rotate` }) },
  { method: 'DELETE', route: '/v1/admin/api-keys/{key_id}', status: 'served', request: (f) => ({ url: `/v1/admin/api-keys/${f.keyId}` }) },
  { method: 'GET', route: '/v1/admin/settlement/config', status: 'served' },
  { method: 'GET', route: '/v1/admin/plaid/bank-accounts', status: 'integration' },
  { method: 'GET', route: '/v1/admin/plaid/bank-accounts/{bank_account_id}', status: 'integration' },
  { method: 'POST', route: '/v1/admin/settlement/stripe/ach/intents/{intent_id}/fund', status: 'integration', request: (f) => ({ url: `/v1/admin/settlement/stripe/ach/intents/${f.intentId}/fund`, body: { plaid_bank_account_id: placeholderUuid } }) },
  { method: 'GET', route: '/v1/admin/shopify/payments/sessions/{session_id}', status: 'integration' },
  {
    method: 'POST', route: '/v1/public/auth/device/start', status: 'served',
    request: () => ({ url: '/v1/public/auth/device/start', body: { client_id: 'svc-kit-cli', client_name: 'Svc CLI', requested_environment: 'sandbox', service_account_role: 'operator' } }),
  },
  { method: 'POST', route: '/v1/public/auth/device/token', status: 'served', request: () => ({ url: '/v1/public/auth/device/token', body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'dvc_x', client_id: 'svc-kit-cli' } }) },
  { method: 'POST', route: '/v1/oauth/token', status: 'not_served', request: () => ({ url: '/v1/oauth/token', body: {} }) },
  { method: 'POST', route: '/v1/public/analytics/kit-cli', status: 'served', request: () => ({ url: '/v1/public/analytics/kit-cli', body: { command_path: 'dev loop', success: true, offline: false, kit_version: '0.12.16', runtime: 'node', os_name: 'linux', client_context: { format: 'json' } } }) },
];

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
let fixture: Fixture;

async function call(method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url,
    // As the client sends them: its key, JSON both ways, and a JSON content type even on a POST without a body.
    headers: { ...bearer(tenant.adminKey), accept: 'application/json', ...(method === 'POST' || method === 'PUT' ? { 'content-type': 'application/json' } : {}) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function json(method: string, url: string, body?: unknown): Promise<Record<string, any>> {
  const response = await call(method, url, body);
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json();
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection, 'sandbox');
  const created = signedCreateBody({ tenantId: tenant.tenantId, principal: party('did:principal:walk'), payee: party('did:payee:walk') });
  await json('POST', '/harbor/intents', created);
  const boot = await json('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100 });
  const decision = await json('POST', '/verify', { intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 1 });
  const settled = await json('POST', `/v1/sandbox/guardrails/${boot.intent_id}/evidence`, { ...evidenceBody, metadata: { tool_call_id: 'walk-call' } });
  const draft = await json('POST', '/harbor/policy/v1/drafts', { template_id: 'completion_v1' });
  await json('POST', '/harbor/policy/v1/rollout', { template_id: 'completion_v1', version_seq: draft.version_seq });
  fixture = {
    intentId: created.intent_id as string,
    settledIntentId: boot.intent_id,
    actionReceiptId: settled.agent_receipt?.receipt_id ?? placeholderUuid,
    decisionId: decision.decision_id,
    keyId: (await json('POST', '/v1/admin/api-keys', { role: 'agent' })).key_id,
    jobId: (await json('POST', '/v1/compliance/audit-exports', {})).job_id,
    operatorDid: 'did:svc:sandbox:payee',
  };
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** The route with its placeholders filled in, for the rows that need no fixture. */
const withPlaceholders = (route: string) => route.replace(/\{[a-z_]+\}/g, (name) => (name === '{operator_did}' ? 'did%3Apayee%3Anobody' : placeholderUuid));

describe('every route the public client calls', () => {
  it('answers: none is 404 request.route_not_found but the ones not served, and the integrations are 422', async () => {
    const outcomes: string[] = [];
    for (const row of clientRoutes) {
      const { url, body } = row.request?.(fixture) ?? { url: withPlaceholders(row.route) };
      const response = await call(row.method, url, body);
      const code = response.headers['content-type']?.toString().startsWith('application/json') ? response.json().error?.code : undefined;
      const missing = response.statusCode === 404 && code === 'request.route_not_found';
      const expected = row.status;
      const seen = missing ? 'not_served' : response.statusCode === 422 && code === 'integration.not_supported' ? 'integration' : 'served';
      outcomes.push(`${row.method} ${row.route}: ${seen === expected ? 'ok' : `expected ${expected}, answered ${response.statusCode} ${code ?? ''}`}`);
    }
    expect(outcomes.filter((outcome) => !outcome.endsWith(': ok'))).toEqual([]);
    expect(clientRoutes.filter((row) => row.status === 'served').length).toBeGreaterThanOrEqual(55);
  });

  it('is the table of docs/wire-compatibility.md, row for row', () => {
    const document = fs.readFileSync(new URL('../../docs/wire-compatibility.md', import.meta.url), 'utf8');
    const documented = document
      .split('\n')
      .map((line) => /^\| (GET|POST|PUT|DELETE) \| `([^`]+)` \| [^|]+ \| (served|422 integration\.not_supported|not served)[^|]* \|/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map(([, method, route, status]) => `${method} ${route} ${status === 'served' ? 'served' : status === 'not served' ? 'not_served' : 'integration'}`);
    expect(documented).toEqual(clientRoutes.map((row) => `${row.method} ${row.route} ${row.status}`));
  });
});
