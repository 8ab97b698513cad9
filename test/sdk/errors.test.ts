// Error parsing: both error body forms of the spec (and problem+json), the status class as the fallback for
// unknown codes, the fields EngineHttpError carries, and the open-session failures (GatewayAuthError).
import { afterEach, describe, expect, it } from 'vitest';
import {
  EngineHttpError,
  generateKey,
  GatewayAuthError,
  isRetryableError,
  parseErrorBody,
  SvcAuthenticationError,
  SvcClient,
  SvcConflictError,
  SvcConnectionError,
  SvcContractError,
  SvcError,
  SvcIdempotencyError,
  SvcInvalidRequestError,
  SvcInvalidStateError,
  SvcNotFoundError,
  SvcRecognitionError,
  SvcResponseError,
  SvcServerError,
  TenantBindingError,
} from '../../src/sdk/index.ts';
import { engineHttpErrorFor } from '../../src/sdk/errors.ts';
import { envelope, evidenceAnswerFixture, intentFixture, intentIdFixture, json, openScriptedClient, principalAnswer, startScriptedServer, type ScriptedServer } from './support.ts';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('error bodies', () => {
  it('reads the envelope and the older string form', () => {
    expect(parseErrorBody('{"error":{"code":"intent.not_found","message":"No such intent.","details":{"a":1}},"request_id":"req_1"}')).toEqual({
      code: 'intent.not_found', message: 'No such intent.', requestId: 'req_1', details: { a: 1 },
    });
    expect(parseErrorBody('{"error":"recognition_proof_required","message":"send a proof"}')).toEqual({
      code: 'recognition_proof_required', message: 'send a proof', requestId: undefined, details: undefined,
    });
    expect(parseErrorBody('{"type":"https://paymentauth.org/problems/invalid-challenge","title":"Invalid Challenge","detail":"expired"}').message).toBe('expired');
    expect(parseErrorBody('{"code":"x.y","message":"m"}')).toMatchObject({ code: 'x.y', message: 'm' });
    expect(parseErrorBody('<html>Bad gateway</html>')).toEqual({ code: undefined, message: undefined, requestId: undefined, details: undefined });
    expect(parseErrorBody('[1,2]').code).toBeUndefined();
  });

  it('carries status_code, url, body_text, code, message and request_id', () => {
    const body = '{"error":{"code":"intent.not_found","message":"No such intent."},"request_id":"req_9"}';
    const error = engineHttpErrorFor(404, 'http://127.0.0.1/harbor/intents/x', body);
    expect(error).toBeInstanceOf(SvcNotFoundError);
    expect(error).toBeInstanceOf(EngineHttpError);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status_code: 404, url: 'http://127.0.0.1/harbor/intents/x', body_text: body, code: 'intent.not_found', message: 'No such intent.', request_id: 'req_9', name: 'SvcNotFoundError' });
    expect(engineHttpErrorFor(500, 'u', 'oops', 'req_from_header')).toMatchObject({ request_id: 'req_from_header', code: undefined, message: 'HTTP 500 from u' });
  });

  it('chooses the class by status, refined by known codes; unknown codes fall back to the status class', () => {
    expect(engineHttpErrorFor(409, 'u', JSON.stringify({ error: { code: 'idempotency.key_reused' } }))).toBeInstanceOf(SvcIdempotencyError);
    expect(engineHttpErrorFor(409, 'u', JSON.stringify({ error: { code: 'intent.invalid_state' } }))).toBeInstanceOf(SvcInvalidStateError);
    expect(engineHttpErrorFor(401, 'u', JSON.stringify({ error: 'recognition.nonce_replayed' }))).toBeInstanceOf(SvcRecognitionError);
    const unknown = engineHttpErrorFor(409, 'u', JSON.stringify({ error: { code: 'brand.new_code' } }));
    expect(unknown.constructor).toBe(SvcConflictError);
    expect(unknown.code).toBe('brand.new_code');
    // A known code under another status does not change the class.
    expect(engineHttpErrorFor(400, 'u', JSON.stringify({ error: { code: 'idempotency.key_reused' } })).constructor).toBe(SvcInvalidRequestError);
    expect(engineHttpErrorFor(401, 'u', '{}').constructor).toBe(SvcAuthenticationError);
    expect(engineHttpErrorFor(599, 'u', '').constructor).toBe(SvcServerError);
    expect(engineHttpErrorFor(418, 'u', '').constructor).toBe(EngineHttpError);
  });

  it('says which errors are retryable', () => {
    expect(isRetryableError(engineHttpErrorFor(503, 'u', ''))).toBe(true);
    expect(isRetryableError(engineHttpErrorFor(429, 'u', ''))).toBe(true);
    expect(isRetryableError(engineHttpErrorFor(409, 'u', ''))).toBe(false);
    expect(isRetryableError(new SvcConnectionError('u', true))).toBe(true);
    expect(isRetryableError(new Error('x'))).toBe(false);
  });

  it('parses both forms from a real answer', async () => {
    server = await startScriptedServer((_request, index) => (index === 0 ? envelope(404, 'intent.not_found') : json(422, { error: 'evidence_invalid', message: 'old form' })));
    const { client } = await openScriptedClient(server);
    await expect(client.intents.get(intentIdFixture)).rejects.toMatchObject({ status_code: 404, code: 'intent.not_found', request_id: 'req_test' });
    await expect(client.intents.get(intentIdFixture)).rejects.toMatchObject({ status_code: 422, code: 'evidence_invalid', message: 'old form' });
  });
});

describe('opening a session', () => {
  const open = (answer: { status: number; body: string }) =>
    SvcClient.open({ apiKey: 'svc_sk_sandbox_x', fetch: async () => new Response(answer.body, { status: answer.status }), attemptsMax: 1 });

  it('throws GatewayAuthError when the principal lookup is refused or unusable', async () => {
    const refused = await open({ status: 401, body: '{"error":{"code":"auth.credential_invalid","message":"no"}}' }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(GatewayAuthError);
    expect(refused).toMatchObject({ status_code: 401 });
    expect((refused as GatewayAuthError).cause).toBeInstanceOf(SvcAuthenticationError);
    await expect(open({ status: 200, body: 'not json' })).rejects.toThrow(GatewayAuthError);
    await expect(open({ status: 200, body: '{"environment":"sandbox"}' })).rejects.toThrow(GatewayAuthError);
    const unlike = await open({ status: 200, body: JSON.stringify({ ...principalAnswer, environment: 'staging' }) }).catch((caught: unknown) => caught);
    expect(unlike).toBeInstanceOf(GatewayAuthError);
    expect((unlike as GatewayAuthError).cause).toMatchObject({ contract: 'Principal', problems: expect.arrayContaining([expect.objectContaining({ path: '/environment' })]) });
    await expect(open({ status: 503, body: '' })).rejects.toThrow(GatewayAuthError);
  });

  it('checks the expected environment and never sends x-tenant-id to the principal route', async () => {
    const seen: Headers[] = [];
    const fetchRecorder = async (_input: string, init: RequestInit) => {
      seen.push(new Headers(init.headers));
      return new Response(JSON.stringify(principalAnswer));
    };
    await expect(SvcClient.open({ apiKey: 'k', fetch: fetchRecorder, expectedEnvironment: 'live' })).rejects.toThrow(GatewayAuthError);
    const client = await SvcClient.open({ apiKey: 'k', fetch: fetchRecorder, expectedEnvironment: 'sandbox' });
    expect([client.tenantId, client.environment]).toEqual(['acme', 'sandbox']);
    expect(seen[0]!.get('x-tenant-id')).toBeNull();
    expect(seen[0]!.get('authorization')).toBe('Bearer k');
  });
});

describe('echo checks', () => {
  it('refuses an answer about another tenant or another intent', async () => {
    server = await startScriptedServer((_request, index) => json(200, index === 0 ? intentFixture({ tenant: 'globex', tenant_id: 'globex' }) : intentFixture({ intent_id: '00000000-0000-4000-8000-000000000001' })));
    const { client } = await openScriptedClient(server);
    await expect(client.intents.get(intentIdFixture)).rejects.toThrow(TenantBindingError);
    await expect(client.intents.get(intentIdFixture)).rejects.toThrow(/names intent/);
  });
});

describe('contract checks', () => {
  it('refuses an answer its contract does not allow, naming the contract and where the answer differs', async () => {
    const drifted = intentFixture({ state: 'frozen', amount_cents: '500', created_at: undefined });
    server = await startScriptedServer(() => json(200, drifted));
    const { client } = await openScriptedClient(server);
    const refused = await client.intents.get(intentIdFixture).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(SvcContractError);
    expect(refused).toBeInstanceOf(SvcResponseError);
    const error = refused as SvcContractError;
    expect(error).toMatchObject({ contract: 'Intent', status_code: 200, body_text: JSON.stringify(drifted), name: 'SvcContractError' });
    expect(error.url).toBe(`${server.url}/harbor/intents/${intentIdFixture}`);
    expect(error.problems.map((problem) => problem.path).sort()).toEqual(['/', '/amount_cents', '/state']);
    expect(error.message).toMatch(/does not match the Intent contract: .*\/state/);
  });

  it('lets through members a contract does not list, as a newer server may add them', async () => {
    server = await startScriptedServer(() => json(200, intentFixture({ added_later: { any: 'thing' } })));
    const { client } = await openScriptedClient(server);
    await expect(client.intents.get(intentIdFixture)).resolves.toMatchObject({ intent_id: intentIdFixture, added_later: { any: 'thing' } });
  });

  it('checks list items, and an evaluation trace as the evaluator writes it', async () => {
    const list = (data: unknown[]) => json(200, { object: 'list', data, has_more: false, next_cursor: null });
    server = await startScriptedServer((_request, index) =>
      index === 0 ? list([intentFixture(), intentFixture({ currency: 5 })]) : json(200, evidenceAnswerFixture({ predicate_evaluation: { passed: true, trace: [{ kind: 'true', detail: 'd', data: {} }] } })));
    const { client } = await openScriptedClient(server);
    await expect(client.intents.list()).rejects.toMatchObject({ contract: 'IntentList', problems: [expect.objectContaining({ path: '/data/1/currency' })] });
    const payee = { did: 'did:payee:b', key: generateKey().key };
    await expect(client.intents.submitEvidence(intentIdFixture, { payee, payload: {} })).rejects.toMatchObject({
      contract: 'EvidenceAnswer', problems: [expect.objectContaining({ path: '/predicate_evaluation/trace/0/data' })],
    });
  });
});
