// Test doubles for the SDK's unit tests: a local node:http server that answers from a script and records every
// request byte for byte, a scripted fetch for fake-timer tests, and a fake clock whose sleep only records delays.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SvcClient, type SvcClientOptions } from '../../src/sdk/index.ts';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  readonly body?: unknown;
}

/** `destroy` drops the connection without an answer (a network failure). */
export type Script = (request: RecordedRequest, index: number) => ScriptedAnswer | 'destroy' | Promise<ScriptedAnswer | 'destroy'>;

/** `GET /v1/auth/principal` as the gateway answers it for an admin API key (src/contracts/principal.ts). */
export const principalAnswer = {
  tenant_id: 'acme', tenant_uuid: '5b0e7c1e-8d43-4a8a-9f0e-0b7a3e3c2d11', environment: 'sandbox', service_account_role: 'admin', roles: ['admin'],
  key_kind: 'standard', mcp_scopes: [], subject: 'key_0123456789abcdef0123456789abcdef',
};

export interface ScriptedServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests to a path, the principal lookup excluded unless asked for. */
  to(path: string): RecordedRequest[];
  script: Script;
  close(): Promise<void>;
}

/** A server that answers `GET /v1/auth/principal` with `principalAnswer` and everything else from `script`. */
export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const state: { script: Script } = { script };
  let index = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const url = request.url ?? '/';
      const recorded: RecordedRequest = { method: request.method ?? 'GET', path: url.split('?')[0]!, url, headers: request.headers, body: Buffer.concat(chunks) };
      requests.push(recorded);
      if (recorded.path === '/v1/auth/principal' && recorded.method === 'GET') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(principalAnswer));
        return;
      }
      const answer = await state.script(recorded, index++);
      if (answer === 'destroy') {
        request.socket.destroy();
        return;
      }
      const text = typeof answer.body === 'string' ? answer.body : answer.body === undefined ? '' : JSON.stringify(answer.body);
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    to: (path) => requests.filter((request) => request.path === path),
    get script() {
      return state.script;
    },
    set script(next: Script) {
      state.script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clock whose `sleep` records the delay and advances time at once. */
export function fakeClock(startMs = 1_800_000_000_000) {
  const clock = {
    nowMs: startMs,
    delays: [] as number[],
    now: () => clock.nowMs,
    sleep: async (ms: number) => {
      clock.delays.push(ms);
      clock.nowMs += ms;
    },
  };
  return clock;
}

/** Jitter fixed at half its range: every backoff delay is 200·2^n + 50. */
export const halfRandom = () => 0.5;

export async function openScriptedClient(server: ScriptedServer, options: Partial<SvcClientOptions> = {}) {
  const clock = fakeClock();
  const client = await SvcClient.open({ apiKey: 'svc_sk_sandbox_test', gatewayBaseUrl: server.url, sleep: clock.sleep, now: clock.now, random: halfRandom, ...options });
  return { client, clock };
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): ScriptedAnswer => ({ status, body, headers });

/** The envelope of the spec, `{error: {code, message}, request_id}`. */
export const envelope = (status: number, code: string, message = `failed: ${code}`): ScriptedAnswer => json(status, { error: { code, message }, request_id: 'req_test' });

export const intentIdFixture = '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401';

/** An intent as the engine presents it, for scripted answers. */
export function intentFixture(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: 'intent', tenant: 'acme', tenant_id: 'acme', intent_id: intentIdFixture, state: 'open', funded: false, signing_version: 6,
    principal_did: 'did:principal:a', principal_key_registered: false, payee_did: 'did:payee:b', amount_cents: 500, currency: 'usd',
    budget: { max: 500 }, evidence_schema: { type: 'object' }, deadline: '2030-01-02T15:04:05Z', predicate_dsl: { version: 1, root: { op: 'true' } },
    predicate_ref: '', policy_binding: null, settlement_rail: 'x402_usdc_base', allowed_tools: ['search.web'], completion_preset_id: null,
    predicate_passed: null, created_at: '2030-01-01T00:00:00.000Z', funded_at: null, evidence_recorded_at: null, settled_at: null,
    release_mode: 'full', released_cents: null, refunded_cents: null,
    ...overrides,
  };
}

/** The evidence answer of a passing rule, as the engine presents it. */
export function evidenceAnswerFixture(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tenant: 'acme', tenant_id: 'acme', intent_id: intentIdFixture, state: 'evidence_recorded', intent_state: 'evidence_recorded', predicate_passed: true,
    predicate_evaluation: { passed: true, trace: [{ kind: 'true', detail: 'always passes', data: { passed: true } }] },
    payload_digest: 'ab'.repeat(32), artifacts_digest: 'cd'.repeat(32),
    ...overrides,
  };
}

/** A policy version as the policy routes present it. */
export function policyVersionFixture(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: 'policy_version', template_id: 'true_v1', version_seq: 1, parameters: {}, materialized_predicate: { version: 1, root: { op: 'true' } },
    human_summary: 'Always passes.', content_digest: 'ef'.repeat(32), created_at: '2030-01-01T00:00:00.000Z', is_head: false,
    ...overrides,
  };
}
