// The MCP endpoint through the official MCP client (Client + StreamableHTTPClientTransport) against a listening
// server on a real Postgres: authentication, the tools each role and restricted key sees, every tool's input schema
// against its route's, whole lifecycles through tools only, and refusals that leak nothing.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { verifyTenantLedger } from '../../../src/services/ledger-verifier.ts';
import { ed25519SignerFromSeed } from '../../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../../src/signing/recognition.ts';
import { sandboxEvidenceBody } from '../../../src/surfaces/gateway/routes/sandbox-guardrails.ts';
import { confirmBody } from '../../../src/surfaces/harbor/routes/settlement.ts';
import { resolveTools } from '../../../src/surfaces/mcp/resolved-tools.ts';
import { toolDefinitions } from '../../../src/surfaces/mcp/tools.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../../helpers/intents.ts';
import { projectRoot } from '../../helpers/server-process.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let baseUrl: string;
let acme: TestTenant;
let globex: TestTenant;
const clients: Client[] = [];
/** `METHOD /path` → the schema object the route was registered with, seen by an onRoute hook of the test's own. */
const registeredSchemas = new Map<string, { body?: unknown; querystring?: unknown }>();

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection, { beforeApp: (instance) => {
    instance.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) registeredSchemas.set(`${method} ${route.url}`, (route.schema ?? {}) as { body?: unknown });
    });
  } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await app?.close();
  await db?.close();
  await database?.drop();
});

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(apiKey) } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function toolNames(apiKey: string): Promise<string[]> {
  const { tools } = await (await connect(apiKey)).listTools();
  return tools.map((tool) => tool.name).sort();
}

/** A successful tool call's structured answer; fails the test with the tool error otherwise. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  const text = (result.content[0] as { text: string }).text;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent as Record<string, any>;
}

/** A refused tool call: the code and message of the route's error envelope. */
async function refusedCall(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, name).toBe(true);
  const text = (result.content[0] as { text: string }).text;
  return { ...JSON.parse(text), text };
}

const allTools = toolDefinitions.map((tool) => tool.name).sort();
const readTools = ['svc_explain_policy', 'svc_get_budget_remaining', 'svc_get_intent', 'svc_get_principal', 'svc_list_intents', 'svc_preview_policy'];
/** Standing reads: admins and auditors only. */
const standingTools = ['svc_get_portfolio_summary'];

describe('the endpoint', () => {
  it('answers 401 without a key, as every authenticated route does, and the official client cannot connect', async () => {
    const response = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error.code).toBe('auth.credential_missing');
    const client = new Client({ name: 'svc-test', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)))).rejects.toThrow();
    const wrong = new Client({ name: 'svc-test', version: '1.0.0' });
    await expect(wrong.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(`svc_sk_sandbox_${'0'.repeat(32)}_${'0'.repeat(64)}`) } }))).rejects.toThrow();
  });

  it('answers GET and DELETE without a session with 405 (Allow: POST), and /healthz while up', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${baseUrl}/mcp`, { method, headers: { ...bearer(acme.adminKey), accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as any).error.code).toBe('request.method_not_allowed');
    }
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });

  it('refuses what the SDK could not take in our envelope: a wrong Accept, a protocol version it does not speak, a body that is no JSON-RPC message', async () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const send = async (headers: Record<string, string>, body = message) => {
      const response = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers: { ...bearer(acme.adminKey), 'content-type': 'application/json', ...headers }, body });
      const answer = (await response.json()) as any;
      if (response.status >= 400) expect(answer.request_id).toBe(response.headers.get('x-request-id'));
      return { status: response.status, code: answer.error?.code, answer };
    };
    const accept = { accept: 'application/json, text/event-stream' };
    expect(await send({ accept: 'application/json' })).toMatchObject({ status: 406, code: 'request.not_acceptable' });
    const version = await send({ ...accept, 'mcp-protocol-version': '1999-01-01' });
    expect(version).toMatchObject({ status: 400, code: 'mcp.protocol_version_unsupported' });
    expect(version.answer.error.details.supported_versions).toContain('2025-06-18');
    expect(await send(accept, '{}')).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(await send(accept, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', extra: 1 }))).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(await send(accept, JSON.stringify(Array.from({ length: 17 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' }))))).toMatchObject({ status: 400, code: 'request.invalid' });
    expect((await send({ ...accept, 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('counts MCP requests against the key\'s rate limit like any route (the headers travel with the SDK\'s answer)', async () => {
    const response = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...bearer(acme.adminKey), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    // The server names itself as the package does.
    const packageVersion = (JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
    expect(((await response.json()) as any).result.serverInfo).toEqual({ name: 'svc-settlement', version: packageVersion });
  });

  it('counts a tool call once, as the HTTP call it stands for would be counted, and not its inner route again', async () => {
    const key = await acme.key('admin');
    const remaining = async () => Number((await fetch(`${baseUrl}/v1/auth/principal`, { headers: bearer(key) })).headers.get('x-ratelimit-remaining'));
    const client = await connect(key);
    const before = await remaining();
    await call(client, 'svc_get_principal', {});
    // One for the /mcp request that carries the tool call, one for the principal read that measures it.
    expect(before - (await remaining())).toBe(2);
    // The marker header with any other value is no exemption: the call is counted as usual.
    const forged = await fetch(`${baseUrl}/v1/auth/principal`, { headers: { ...bearer(key), 'x-svc-already-counted': 'guess' } });
    expect(before - Number(forged.headers.get('x-ratelimit-remaining'))).toBe(3);
  });
});

describe('tools per credential', () => {
  it('shows each role the tools whose routes admit it', async () => {
    expect(await toolNames(acme.adminKey)).toEqual(allTools);
    expect(await toolNames(await acme.key('operator'))).toEqual(allTools.filter((name) => !standingTools.includes(name)));
    // The event log is for admins, operators and auditors (docs/events.md).
    expect(await toolNames(await acme.key('agent'))).toEqual(allTools.filter((name) => ![...standingTools, 'svc_confirm_settlement', 'svc_get_audit_export', 'svc_list_audit_exports', 'svc_list_events'].includes(name)));
    expect(await toolNames(await acme.key('auditor'))).toEqual(
      [...readTools, ...standingTools, 'svc_get_audit_export', 'svc_list_audit_exports', 'svc_list_events', 'svc_verify_agent_recognition_proof_v1'].sort(),
    );
  });

  it('shows a restricted key only what its scopes grant (and its role allows)', async () => {
    expect(await toolNames(await acme.key('agent', []))).toEqual(['svc_get_principal']);
    expect(await toolNames(await acme.key('agent', ['mcp.discovery:read']))).toEqual(readTools);
    expect(await toolNames(await acme.key('agent', ['mcp-sandbox-agent']))).toEqual(
      [...readTools, 'svc_authorize_agent_spend', 'svc_bootstrap_sandbox_guardrail', 'svc_create_intent', 'svc_submit_sandbox_guardrail_evidence', 'svc_verify_capability'].sort(),
    );
    // `write` covers `read`; a role still caps the scopes (an agent never confirms).
    expect(await toolNames(await acme.key('agent', ['mcp.a2a:write']))).toEqual(['svc_get_principal', 'svc_verify_agent_recognition_proof_v1']);
    expect(await toolNames(await acme.key('agent', ['mcp.settlement:write']))).toEqual(['svc_fund_intent', 'svc_get_principal']);
    expect(await toolNames(await acme.key('admin', ['mcp.settlement:write']))).toEqual(['svc_confirm_settlement', 'svc_fund_intent', 'svc_get_principal']);
  });

  it('refuses a tool outside the key\'s scope, and an unknown tool, with an MCP error that names what is missing', async () => {
    const client = await connect(await acme.key('agent', ['mcp-spend-operator']));
    const outside = client.callTool({ name: 'svc_fund_intent', arguments: { intent_id: randomUUID() } });
    await expect(outside).rejects.toBeInstanceOf(McpError);
    await expect(outside).rejects.toThrow(/mcp\.settlement:write/);
    await expect(client.callTool({ name: 'svc_bootstrap_sandbox_guardrail', arguments: { operation: 'x', requested_spend_cents: 1 } })).rejects.toThrow(/mcp\.sandbox:write/);
    await expect(client.callTool({ name: 'svc_transfer_everything', arguments: {} })).rejects.toThrow(/Unknown tool svc_transfer_everything/);
    const agent = await connect(await acme.key('agent'));
    await expect(agent.callTool({ name: 'svc_confirm_settlement', arguments: { intent_id: randomUUID() } })).rejects.toThrow(/roles admin, operator/);
    // The client's McpError says "MCP error -32602:" once: the server's message is the reason alone.
    const refused = await client.callTool({ name: 'svc_fund_intent', arguments: { intent_id: randomUUID() } }).catch((error: McpError) => error);
    expect(refused).toMatchObject({ code: -32602, data: { code: 'auth.scope_insufficient', required_scope: 'mcp.settlement:write' } });
    expect((refused as McpError).message).toBe('MCP error -32602: Tool svc_fund_intent needs the scope mcp.settlement:write, which this restricted key does not carry.');
  });
});

describe('input schemas', () => {
  /** The two routes that check an optional body in the handler, with the schema constant they check it with. */
  const checkedInHandler: Record<string, object> = {
    'POST /harbor/intents/:intent_id/settlement/confirm': confirmBody,
    'POST /v1/sandbox/guardrails/:intent_id/evidence': sandboxEvidenceBody,
  };

  it('is, for every tool, the very schema object its route registered (or the one its route checks its body with)', async () => {
    const tools = resolveTools(app.routeContracts);
    expect(tools.map((tool) => tool.name).sort()).toEqual(allTools);
    for (const tool of tools) {
      const registered = registeredSchemas.get(`${tool.method} ${tool.path}`);
      expect(registered, tool.name).toBeDefined();
      if (tool.input === 'body') expect(tool.inputSchema, tool.name).toBe(registered!.body);
      else if (tool.input === 'query') expect(tool.inputSchema, tool.name).toBe(registered!.querystring);
      else if (registered!.body !== undefined) expect((tool.inputSchema as { properties: { body: unknown } }).properties.body, tool.name).toBe(registered!.body);
      else if (checkedInHandler[`${tool.method} ${tool.path}`]) expect((tool.inputSchema as { properties: { body: unknown } }).properties.body, tool.name).toBe(checkedInHandler[`${tool.method} ${tool.path}`]);
      else expect((tool.inputSchema as { properties: Record<string, unknown> }).properties['body'], tool.name).toBeUndefined();
      // A tool that also takes the body's fields as arguments takes each with the body schema's own property schema.
      const bodyProperties = (tool.routeBodySchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
      for (const name of tool.bodyFieldArguments) expect((tool.inputSchema as { properties: Record<string, unknown> }).properties[name], `${tool.name} ${name}`).toBe(bodyProperties[name]);
    }
    expect(tools.find((tool) => tool.name === 'svc_submit_sandbox_guardrail_evidence')!.bodyFieldArguments).toEqual(expect.arrayContaining(['payload', 'completion_preset_id']));
  });

  it('reaches the MCP host unchanged: each listed input schema equals its route\'s schema', async () => {
    const { tools } = await (await connect(acme.adminKey)).listTools();
    const resolved = new Map(resolveTools(app.routeContracts).map((tool) => [tool.name, tool]));
    for (const listed of tools) {
      const tool = resolved.get(listed.name)!;
      const routeSchema = tool.input === 'query' ? registeredSchemas.get(`${tool.method} ${tool.path}`)!.querystring : tool.routeBodySchema;
      const roundTripped = JSON.parse(JSON.stringify(routeSchema ?? null));
      if (tool.input === 'envelope') expect((listed.inputSchema.properties as Record<string, unknown> | undefined)?.['body'] ?? null, listed.name).toEqual(tool.method === 'POST' ? roundTripped : null);
      else expect(listed.inputSchema, listed.name).toEqual(roundTripped);
    }
  });
});

describe('lifecycles through tools only', () => {
  it('sandbox: bootstrap → verify capability → sandbox evidence → released, with a preset-scoped restricted key', async () => {
    const client = await connect(await acme.key('agent', ['mcp-sandbox-agent']));
    const boot = await call(client, 'svc_bootstrap_sandbox_guardrail', { operation: 'search.web', requested_spend_cents: 120 });
    expect(boot).toMatchObject({ tenant_id: acme.tenantId, sandbox_lifecycle_status: 'funded', capability_token: expect.any(String) });
    const verdict = await call(client, 'svc_verify_capability', { intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 100 });
    expect(verdict).toMatchObject({ allow: true, tenant: acme.tenantId, intent_id: boot.intent_id });
    const spend = await call(client, 'svc_authorize_agent_spend', { intent_id: boot.intent_id, token: boot.capability_token, operation: 'search.web', requested_spend_cents: 10 });
    expect(spend.allow).toBe(true);
    const budget = await call(client, 'svc_get_budget_remaining', { intent_id: boot.intent_id });
    expect(budget).toMatchObject({ intent_id: boot.intent_id, amount_cents: 120, reserved_cents: 110, remaining_cents: 10, spend_scope: { scope_type: 'intent', scope_key: boot.intent_id }, policy_version: 1 });
    const settled = await call(client, 'svc_submit_sandbox_guardrail_evidence', { intent_id: boot.intent_id, body: { payload: { status: 'completed' } }, idempotency_key: `mcp-evidence-${boot.intent_id}` });
    expect(settled).toMatchObject({ intent_id: boot.intent_id, sandbox_lifecycle_status: 'released', predicate_passed: true });
    const intent = await call(client, 'svc_get_intent', { intent_id: boot.intent_id });
    expect(intent.state).toBe('released');
    expect((await verifyTenantLedger(db, acme.tenantId)).ok).toBe(true);
  });

  it('signed v6: create → fund with the sandbox x402 credential → evidence → confirm, each with a recognition proof', async () => {
    const agent = await connect(await acme.key('agent'));
    const operator = await connect(await acme.key('operator'));
    const agentSigner = ed25519SignerFromSeed(randomBytes(32));
    const principal = party('did:example:principal');
    const payee = party('did:example:payee');
    const proof = (purpose: string, path: string, body: unknown) =>
      createRecognitionProof({ signer: agentSigner, keyId: 'agent-mcp-1', purpose, tenantId: acme.tenantId, method: 'POST', path, body }).headerValue;

    const createBody = signedCreateBody({ tenantId: acme.tenantId, principal, payee, amountCents: 250 });
    const intentId = createBody.intent_id as string;
    const created = await call(agent, 'svc_create_intent', {
      body: createBody, idempotency_key: `create-${intentId}`, recognition_proof: proof(recognitionPurposes.intentCreate, '/harbor/intents', createBody),
    });
    expect(created).toMatchObject({ intent_id: intentId, state: 'open', amount_cents: 250 });

    const fundPath = `/harbor/intents/${intentId}/fund`;
    const challenge = await call(agent, 'svc_fund_intent', { intent_id: intentId, recognition_proof: proof(recognitionPurposes.intentFund, fundPath, {}) });
    expect(challenge).toMatchObject({ http_status: 402, state: 'open', payment_challenge: { 'payment-required': expect.any(String) } });
    const funded = await call(agent, 'svc_fund_intent', {
      intent_id: intentId,
      idempotency_key: `fund-${intentId}`,
      recognition_proof: proof(recognitionPurposes.intentFund, fundPath, {}),
      payment_signature: sandboxX402PaymentSignature(challenge.payment_challenge['payment-required'], { from: sandboxX402Payers.success }),
    });
    expect(funded).toMatchObject({ state: 'funded', capability_token: expect.any(String) });

    const evidenceBody = signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed', cost_cents: 200 } });
    const evidence = await call(agent, 'svc_submit_evidence', {
      intent_id: intentId, body: evidenceBody, recognition_proof: proof(recognitionPurposes.evidenceSubmit, `/harbor/intents/${intentId}/evidence`, evidenceBody),
    });
    expect(evidence).toMatchObject({ intent_id: intentId, predicate_passed: true, state: 'evidence_recorded' });

    const confirmPath = `/harbor/intents/${intentId}/settlement/confirm`;
    const confirmed = await call(operator, 'svc_confirm_settlement', {
      intent_id: intentId, body: { expected_action: 'release' }, recognition_proof: proof(recognitionPurposes.settlementConfirm, confirmPath, { expected_action: 'release' }),
    });
    expect(confirmed).toMatchObject({ state: 'released', settlement: { action: 'release', reason: 'predicate_passed' } });
    expect((await verifyTenantLedger(db, acme.tenantId)).ok).toBe(true);
  });

  it('holds a mutation to its recognition proof: a proof over other bytes is refused with the route\'s code', async () => {
    const agent = await connect(await acme.key('agent'));
    const principal = party('did:example:principal');
    const payee = party('did:example:payee');
    const createBody = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const wrongProof = createRecognitionProof({
      signer: ed25519SignerFromSeed(randomBytes(32)), keyId: 'agent-mcp-2', purpose: recognitionPurposes.intentCreate, tenantId: acme.tenantId,
      method: 'POST', path: '/harbor/intents', body: { ...createBody, amount_cents: 1 },
    }).headerValue;
    const refused = await refusedCall(agent, 'svc_create_intent', { body: createBody, recognition_proof: wrongProof });
    expect(refused.code).toMatch(/^recognition\./);
    const unsigned = await refusedCall(agent, 'svc_create_intent', { body: { ...createBody, amount_cents: 9 } });
    expect(unsigned.code).toBe('signing.signature_invalid');
  });
});

describe('the public client\'s tool arguments', () => {
  it('sandbox evidence with the body\'s fields as arguments (payload, completion_preset_id), as its MCP tool passes them', async () => {
    const client = await connect(await acme.key('agent', ['mcp-sandbox-agent']));
    const boot = async () => call(client, 'svc_bootstrap_sandbox_guardrail', { operation: 'search.web', requested_spend_cents: 50 });
    const first = await boot();
    // The payload checked against the preset it was prepared for, then judged by the intent's own rule.
    const mismatched = await refusedCall(client, 'svc_submit_sandbox_guardrail_evidence', {
      intent_id: first.intent_id, payload: { status: 'completed' }, completion_preset_id: 'cost_and_completion',
    });
    expect(mismatched.code).toBe('sandbox.preset_evidence_mismatch');
    expect((await call(client, 'svc_get_intent', { intent_id: first.intent_id })).state).toBe('funded');
    expect((await refusedCall(client, 'svc_submit_sandbox_guardrail_evidence', { intent_id: first.intent_id, payload: {}, completion_preset_id: 'no_such_preset' })).code).toBe('sandbox.preset_unknown');
    const both = await refusedCall(client, 'svc_submit_sandbox_guardrail_evidence', { intent_id: first.intent_id, payload: {}, body: { payload: {} } });
    expect(both.code).toBe('request.invalid');

    const settled = await call(client, 'svc_submit_sandbox_guardrail_evidence', {
      intent_id: first.intent_id, payload: { status: 'completed', cost_cents: 20 }, completion_preset_id: 'cost_and_completion',
      operation: 'search.web', metadata: { run: 'r-1' }, idempotency_key: `client-evidence-${first.intent_id}`,
    });
    expect(settled).toMatchObject({ intent_id: first.intent_id, sandbox_lifecycle_status: 'released', predicate_passed: true });
    // The same arguments again replay the first answer: the body they make is the same bytes.
    const replayed = await call(client, 'svc_submit_sandbox_guardrail_evidence', {
      idempotency_key: `client-evidence-${first.intent_id}`, completion_preset_id: 'cost_and_completion', metadata: { run: 'r-1' },
      operation: 'search.web', payload: { status: 'completed', cost_cents: 20 }, intent_id: first.intent_id,
    });
    expect(replayed).toEqual(settled);
  });

  it('takes recognition_proof as the proof object, as its MCP tools pass it, or as the header text', async () => {
    const agent = await connect(await acme.key('agent'));
    const agentSigner = ed25519SignerFromSeed(randomBytes(32));
    const createBody = signedCreateBody({ tenantId: acme.tenantId, principal: party('did:example:principal'), payee: party('did:example:payee') });
    const intentId = createBody.intent_id as string;
    const { proof } = createRecognitionProof({
      signer: agentSigner, keyId: 'agent-mcp-object', purpose: recognitionPurposes.intentCreate, tenantId: acme.tenantId, method: 'POST', path: '/harbor/intents', body: createBody,
    });
    expect(typeof proof).toBe('object');
    const created = await call(agent, 'svc_create_intent', { body: createBody, recognition_proof: proof });
    expect(created).toMatchObject({ intent_id: intentId, state: 'open' });

    const fundPath = `/harbor/intents/${intentId}/fund`;
    const fundProof = createRecognitionProof({ signer: agentSigner, keyId: 'agent-mcp-object', purpose: recognitionPurposes.intentFund, tenantId: acme.tenantId, method: 'POST', path: fundPath, body: {} });
    const challenge = await call(agent, 'svc_fund_intent', { intent_id: intentId, recognition_proof: fundProof.proof });
    expect(challenge).toMatchObject({ http_status: 402 });
    // The same proof again is a replay, refused whether it came as an object or as text.
    const replayedProof = await refusedCall(agent, 'svc_fund_intent', { intent_id: intentId, recognition_proof: fundProof.proof });
    expect(replayedProof.code).toMatch(/^recognition\./);
    expect((await refusedCall(agent, 'svc_fund_intent', { intent_id: intentId, recognition_proof: 7 })).code).toBe('request.invalid');
    expect((await refusedCall(agent, 'svc_fund_intent', { intent_id: intentId, idempotency_key: { key: 'x' } })).code).toBe('request.invalid');
  });
});

describe('refusals', () => {
  it('answers another tenant\'s intent as a tool error with the route\'s code, and shows nothing of that tenant', async () => {
    const acmeAdmin = await connect(acme.adminKey);
    const boot = await call(acmeAdmin, 'svc_bootstrap_sandbox_guardrail', { operation: 'search.web', requested_spend_cents: 5 });
    const foreign = await connect(globex.adminKey);
    const refused = await refusedCall(foreign, 'svc_get_intent', { intent_id: boot.intent_id });
    expect(refused).toMatchObject({ code: 'intent.not_found', message: 'No such intent.' });
    expect(refused.text).not.toContain(acme.tenantId);
    expect(refused.text).not.toMatch(/stack|at .*\.ts/);
    const evidence = await refusedCall(foreign, 'svc_submit_sandbox_guardrail_evidence', { intent_id: boot.intent_id, body: { payload: { status: 'completed' } } });
    expect(evidence.code).toBe('intent.not_found');
    expect(evidence.text).not.toContain(acme.tenantId);
    expect(evidence.text).not.toContain(boot.capability_token);
  });

  it('turns a bad argument into the route\'s validation error, never a 500', async () => {
    const client = await connect(acme.adminKey);
    expect((await refusedCall(client, 'svc_bootstrap_sandbox_guardrail', { operation: 'x', requested_spend_cents: -1 })).code).toBe('request.invalid');
    expect((await refusedCall(client, 'svc_get_intent', { intent_id: 'not-a-uuid' })).code).toBe('request.invalid');
    expect((await refusedCall(client, 'svc_get_intent', {})).code).toBe('request.invalid');
    expect((await refusedCall(client, 'svc_get_intent', { intent_id: randomUUID(), tenant_id: 'other' })).code).toBe('request.invalid');
    expect((await refusedCall(client, 'svc_list_intents', { limit: 0 })).code).toBe('request.invalid');
  });

  it('reads the principal with the key\'s scopes', async () => {
    const principal = await call(await connect(await acme.key('agent', ['mcp.discovery:read', 'mcp.spend:write'])), 'svc_get_principal', {});
    expect(principal).toMatchObject({ tenant_id: acme.tenantId, key_kind: 'restricted', mcp_scopes: ['mcp.discovery:read', 'mcp.spend:write'] });
  });
});

describe('issuing restricted keys', () => {
  const create = (scopes: unknown) =>
    app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(acme.adminKey), payload: { role: 'agent', scopes } });

  it('refuses a scope outside the catalogue, or above its highest level, with api_key.scope_unknown naming it', async () => {
    for (const scopes of [['bogus'], ['mcp.spend:write', 'mcp.discovery:write'], ['mcp.spend'], ['mcp.nothing:read']]) {
      const response = await create(scopes);
      expect(response.statusCode, JSON.stringify(scopes)).toBe(400);
      expect(response.json().error.code).toBe('api_key.scope_unknown');
      expect(response.json().error.details.unknown_scopes).toEqual(scopes.filter((scope) => scope !== 'mcp.spend:write'));
    }
  });

  it('expands a preset, and keeps mcp.settlement:write out of every preset', async () => {
    const response = await create(['mcp-spend-operator', 'mcp.spend:write']);
    expect(response.statusCode).toBe(201);
    expect(response.json().scopes).toEqual(['mcp.compliance:read', 'mcp.discovery:read', 'mcp.evidence:write', 'mcp.receipts:read', 'mcp.signal:read', 'mcp.spend:write']);
    for (const preset of ['mcp-readonly', 'mcp-spend-operator', 'mcp-sandbox-agent']) {
      expect((await create([preset])).json().scopes, preset).not.toContain('mcp.settlement:write');
    }
  });
});
