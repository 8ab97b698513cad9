// The public client's MCP read tools that need the spend preflight and the portfolio summary, through our /mcp with
// the official MCP client: called with the arguments the client's own tools take, each answer carries every member
// the client's tool output declares; a foreign intent is the route's 404; the scopes are the client's catalogue's.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let acme: TestTenant;
let globex: TestTenant;
const clients: Client[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await app?.close();
  await database?.drop();
});

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'svc-client-tools', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(apiKey) } }));
  clients.push(client);
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The members each of the client's tools declares in its output schema. */
const clientOutputs = {
  svc_get_budget_remaining: ['remaining_cents', 'spend_scope', 'policy_version'],
  svc_explain_policy: ['outcome', 'reason_codes', 'explanation', 'remaining_cents'],
  svc_get_portfolio_summary: [
    'schema_version', 'tenant_id', 'score_model_version', 'scoring_model', 'checkpoint_last_ledger_seq', 'operator_count',
    'average_score', 'total_terminal_intents', 'total_receipted_volume_cents', 'operators_under_review',
  ],
};

describe('the client\'s read tools through /mcp', () => {
  it('budget remaining and explain policy: the client\'s arguments, the client\'s output members', async () => {
    const agent = await connect(await acme.key('agent', ['mcp-sandbox-agent']));
    const boot = (await callTool(agent, 'svc_bootstrap_sandbox_guardrail', { operation: 'search.web', requested_spend_cents: 500 })).structuredContent as Record<string, string>;
    // As the client's tools take them: the intent, and optionally the operation, the cents and scope hints.
    const args = { intent_id: boot.intent_id, operation: 'search.web', requested_spend_cents: 200, vendor_id: 'vendor-1', tool_name: 'search.web' };

    const budget = (await callTool(agent, 'svc_get_budget_remaining', args)).structuredContent as Record<string, unknown>;
    for (const member of clientOutputs.svc_get_budget_remaining) expect(budget, member).toHaveProperty(member);
    expect(budget).toMatchObject({ remaining_cents: 500, spend_scope: { scope_type: 'intent', scope_key: boot.intent_id }, policy_version: 1 });

    const explained = (await callTool(agent, 'svc_explain_policy', { ...args, requested_spend_cents: 900 })).structuredContent as Record<string, unknown>;
    for (const member of clientOutputs.svc_explain_policy) expect(explained, member).toHaveProperty(member);
    expect(explained).toMatchObject({ outcome: 'deny', reason_codes: ['capability.budget_exceeded'], remaining_cents: 500 });
    expect(String(explained.explanation)).toMatch(/^Denied: /);
    // With the intent alone (the client's defaults): the budget, whatever the tool.
    expect((await callTool(agent, 'svc_explain_policy', { intent_id: boot.intent_id })).structuredContent).toMatchObject({ outcome: 'allow', operation: '*' });

    // Another tenant's intent through the tool is the route's 404, and nothing of it.
    const foreign = await callTool(await connect(globex.adminKey), 'svc_get_budget_remaining', { intent_id: boot.intent_id });
    expect(foreign.isError).toBe(true);
    const refusal = JSON.parse((foreign.content[0] as { text: string }).text);
    expect(refusal.code).toBe('intent.not_found');
    expect((foreign.content[0] as { text: string }).text).not.toContain(acme.tenantId);
  });

  it('portfolio summary: the client\'s output members, for the roles and scope that read standing', async () => {
    const auditor = await connect(await acme.key('auditor', ['mcp.signal:read']));
    const summary = (await callTool(auditor, 'svc_get_portfolio_summary', { score_version: '1' })).structuredContent as Record<string, unknown>;
    for (const member of clientOutputs.svc_get_portfolio_summary) expect(summary, member).toHaveProperty(member);
    expect(summary).toMatchObject({ schema_version: 1, tenant_id: acme.tenantId, score_model_version: '1', operator_count: 0, operators_under_review: 0 });
    expect((await callTool(auditor, 'svc_get_portfolio_summary', {})).isError).toBeFalsy();
    const unsupported = await callTool(auditor, 'svc_get_portfolio_summary', { score_version: '7' });
    expect(JSON.parse((unsupported.content[0] as { text: string }).text).code).toBe('standing.score_version_unsupported');

    const agentTools = (await (await connect(await acme.key('agent'))).listTools()).tools.map((tool) => tool.name);
    expect(agentTools).not.toContain('svc_get_portfolio_summary');
    expect(agentTools).toEqual(expect.arrayContaining(['svc_get_budget_remaining', 'svc_explain_policy']));
  });
});
