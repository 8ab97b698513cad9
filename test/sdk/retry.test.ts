// The retry rules against a local server that scripts 500/503/429/401/409/… answers: how many attempts, which
// delays, the same idempotency key, body bytes and proof on every attempt, and no retry where the spec says none.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  generateKey,
  SvcAuthenticationError,
  SvcConfigurationError,
  SvcConflictError,
  SvcConnectionError,
  SvcIdempotencyError,
  SvcInvalidRequestError,
  SvcNotFoundError,
  SvcPermissionError,
  SvcRateLimitError,
  SvcServerError,
  SvcUnprocessableError,
} from '../../src/sdk/index.ts';
import { requestInProgressRetryMsMax } from '../../src/sdk/defaults.ts';
import { backoffDelayMs, decideRetry, parseRetryAfterMs } from '../../src/sdk/retry.ts';
import { envelope, intentFixture, intentIdFixture, json, openScriptedClient, policyVersionFixture, startScriptedServer, type ScriptedAnswer, type ScriptedServer } from './support.ts';

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer(() => json(500, {}));
});
afterEach(async () => server.close());

/** Answers in order; the last one repeats. */
const sequence = (...answers: (ScriptedAnswer | 'destroy')[]) => (_request: unknown, index: number) => answers[Math.min(index, answers.length - 1)]!;

const intentPath = `/harbor/intents/${intentIdFixture}`;
const confirmPath = `${intentPath}/settlement/confirm`;
const settled = () =>
  json(200, { ...intentFixture({ state: 'released', released_cents: 500, refunded_cents: 0 }), settlement: { action: 'release', reason: 'predicate_passed', transaction_id: 'x', released_cents: 500, refunded_cents: 0 } });

describe('GET', () => {
  it('retries 500 and 503 with exponential backoff and jitter, up to 3 attempts', async () => {
    server.script = sequence(envelope(500, 'internal.error'), envelope(503, 'internal.unavailable'), json(200, intentFixture()));
    const { client, clock } = await openScriptedClient(server);
    expect((await client.intents.get(intentIdFixture)).intent_id).toBe(intentIdFixture);
    expect(server.to(intentPath)).toHaveLength(3);
    expect(clock.delays).toEqual([250, 450]);
  });

  it('gives up after attemptsMax attempts with the last error', async () => {
    server.script = sequence(envelope(503, 'internal.unavailable'));
    const { client, clock } = await openScriptedClient(server);
    const error = await client.intents.get(intentIdFixture).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SvcServerError);
    expect(error).toMatchObject({ status_code: 503, code: 'internal.unavailable', request_id: 'req_test' });
    expect(server.to(intentPath)).toHaveLength(3);
    expect(clock.delays).toEqual([250, 450]);

    server.requests.length = 0;
    const { client: patient } = await openScriptedClient(server, { attemptsMax: 5 });
    await expect(patient.intents.get(intentIdFixture)).rejects.toThrow(SvcServerError);
    expect(server.to(intentPath)).toHaveLength(5);
  });

  it('caps backoff at 5 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMs(retry, () => 0))).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
    expect(backoffDelayMs(0, () => 0.999)).toBe(299);
  });

  it('retries a dropped connection and a per-attempt timeout', async () => {
    server.script = sequence('destroy', json(200, intentFixture()));
    const { client } = await openScriptedClient(server);
    expect((await client.intents.get(intentIdFixture)).state).toBe('open');
    expect(server.to(intentPath)).toHaveLength(2);

    server.requests.length = 0;
    server.script = (_request, index) => (index === 2 ? new Promise(() => {}) : json(200, intentFixture()));
    const { client: impatient } = await openScriptedClient(server, { timeoutMs: 50 });
    expect((await impatient.intents.get(intentIdFixture)).state).toBe('open');
    expect(server.to(intentPath)).toHaveLength(2);

    server.script = () => new Promise(() => {});
    const error = await impatient.intents.get(intentIdFixture).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SvcConnectionError);
    expect((error as SvcConnectionError).timedOut).toBe(true);
  });

  it('stops when the next delay would pass the time budget', async () => {
    server.script = sequence(json(429, {}, { 'retry-after': '20' }));
    const { client, clock } = await openScriptedClient(server, { attemptsMax: 10, retryBudgetMs: 45_000 });
    await expect(client.intents.get(intentIdFixture)).rejects.toThrow(SvcRateLimitError);
    expect(clock.delays).toEqual([20_000, 20_000]);
    expect(server.to(intentPath)).toHaveLength(3);
  });
});

describe('engine POSTs', () => {
  it('retries 500, 503 and 502 with the same idempotency key, body bytes and recognition proof', async () => {
    server.script = sequence(envelope(500, 'internal.error'), envelope(503, 'internal.unavailable'), settled());
    const { key } = generateKey();
    const { client, clock } = await openScriptedClient(server, { agent: { keyId: 'agent-1', key } });
    await client.intents.confirm(intentIdFixture, { expectedAction: 'release' });
    const attempts = server.to(confirmPath);
    expect(attempts).toHaveLength(3);
    expect(clock.delays).toEqual([250, 450]);
    const first = attempts[0]!;
    expect(first.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.headers['x-svc-agent-recognition-proof']).toBeTruthy();
    expect(first.headers['x-tenant-id']).toBe('acme');
    expect(first.body.toString()).toBe('{"expected_action":"release"}');
    for (const attempt of attempts) {
      expect(attempt.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
      expect(attempt.headers['x-svc-agent-recognition-proof']).toBe(first.headers['x-svc-agent-recognition-proof']);
      expect(attempt.body.equals(first.body)).toBe(true);
    }
  });

  it('sends the caller\'s idempotency key on every attempt, and a fresh one for each new call', async () => {
    server.script = sequence(envelope(502, 'bad_gateway'), settled());
    const { client } = await openScriptedClient(server);
    await client.intents.confirm(intentIdFixture, { idempotencyKey: 'confirm-once' });
    expect(server.to(confirmPath).map((request) => request.headers['idempotency-key'])).toEqual(['confirm-once', 'confirm-once']);
    server.requests.length = 0;
    server.script = sequence(settled());
    await client.intents.confirm(intentIdFixture);
    await client.intents.confirm(intentIdFixture);
    const [one, two] = server.to(confirmPath).map((request) => request.headers['idempotency-key']);
    expect(one).not.toBe(two);
  });

  it('never retries 400, 403, 404, 409 and 422', async () => {
    const cases = [
      [envelope(400, 'request.invalid'), SvcInvalidRequestError],
      [envelope(403, 'auth.role_insufficient'), SvcPermissionError],
      [envelope(404, 'intent.not_found'), SvcNotFoundError],
      [envelope(409, 'idempotency.key_reused'), SvcIdempotencyError],
      [envelope(409, 'something.new'), SvcConflictError],
      [envelope(422, 'evidence.schema_mismatch'), SvcUnprocessableError],
    ] as const;
    const { client, clock } = await openScriptedClient(server);
    for (const [answer, errorClass] of cases) {
      server.requests.length = 0;
      server.script = sequence(answer);
      const error = await client.intents.confirm(intentIdFixture).catch((caught: unknown) => caught);
      expect(error, String(answer.status)).toBeInstanceOf(errorClass);
      expect(server.to(confirmPath), String(answer.status)).toHaveLength(1);
      server.requests.length = 0;
      await client.intents.get(intentIdFixture).catch(() => undefined);
      expect(server.to(intentPath), `GET ${answer.status}`).toHaveLength(1);
    }
    expect(clock.delays).toEqual([]);
  });
});

describe('429', () => {
  it('honours Retry-After in seconds (fractions too) and caps it at 30 s', async () => {
    server.script = sequence(json(429, {}, { 'retry-after': '1.5' }), json(429, {}, { 'retry-after': '120' }), settled());
    const { client, clock } = await openScriptedClient(server);
    await client.intents.confirm(intentIdFixture);
    expect(clock.delays).toEqual([1500, 30_000]);
    expect(server.to(confirmPath)).toHaveLength(3);
  });

  it('falls back to backoff without Retry-After, and retries even requests that are not retry-safe', async () => {
    server.script = sequence(json(429, { error: 'rate_limited' }), json(201, policyVersionFixture()));
    const { client, clock } = await openScriptedClient(server);
    await client.policies.draft({ templateId: 'true_v1' });
    expect(server.to('/harbor/policy/v1/drafts')).toHaveLength(2);
    expect(clock.delays).toEqual([250]);
  });

  it('reads Retry-After as an HTTP date too', () => {
    const nowMs = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfterMs('Tue, 01 Jan 2030 00:00:05 GMT', nowMs)).toBe(5000);
    expect(parseRetryAfterMs('nonsense', nowMs)).toBeUndefined();
    expect(parseRetryAfterMs(null, nowMs)).toBeUndefined();
  });

  it('surfaces the last 429 with its Retry-After', async () => {
    server.script = sequence(json(429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '2' }));
    const { client } = await openScriptedClient(server);
    const error = (await client.intents.get(intentIdFixture).catch((caught: unknown) => caught)) as SvcRateLimitError;
    expect(error).toBeInstanceOf(SvcRateLimitError);
    expect([error.code, error.message, error.retry_after_ms]).toEqual(['rate_limited', 'slow down', 2000]);
  });
});

describe('401', () => {
  it('retries once after refreshing the API key, with the same key and body', async () => {
    server.script = sequence(envelope(401, 'auth.credential_invalid'), settled());
    let refreshes = 0;
    const { client, clock } = await openScriptedClient(server, { refreshApiKey: async () => `svc_sk_sandbox_fresh_${++refreshes}` });
    await client.intents.confirm(intentIdFixture);
    const attempts = server.to(confirmPath);
    expect(refreshes).toBe(1);
    expect(attempts.map((request) => request.headers.authorization)).toEqual(['Bearer svc_sk_sandbox_test', 'Bearer svc_sk_sandbox_fresh_1']);
    expect(attempts[1]!.headers['idempotency-key']).toBe(attempts[0]!.headers['idempotency-key']);
    expect(attempts[1]!.body.equals(attempts[0]!.body)).toBe(true);
    expect(clock.delays).toEqual([]);
  });

  it('does not retry a second 401, nor a 401 without a refresh callback', async () => {
    server.script = sequence(envelope(401, 'auth.credential_invalid'));
    let refreshes = 0;
    const { client } = await openScriptedClient(server, { refreshApiKey: () => `k${++refreshes}` });
    await expect(client.intents.confirm(intentIdFixture)).rejects.toThrow(SvcAuthenticationError);
    expect(server.to(confirmPath)).toHaveLength(2);
    expect(refreshes).toBe(1);

    server.requests.length = 0;
    const { client: broken } = await openScriptedClient(server, { refreshApiKey: () => '' });
    await expect(broken.intents.get(intentIdFixture)).rejects.toThrow(SvcConfigurationError);
    expect(server.to(intentPath)).toHaveLength(1);

    server.requests.length = 0;
    const { client: plain } = await openScriptedClient(server);
    await expect(plain.intents.get(intentIdFixture)).rejects.toThrow(SvcAuthenticationError);
    expect(server.to(intentPath)).toHaveLength(1);
  });
});

describe('requests that are not retry-safe', () => {
  it('does not retry a policy draft on 5xx or a dropped connection (the route honours no idempotency key)', async () => {
    const { client } = await openScriptedClient(server);
    server.script = sequence(envelope(503, 'internal.unavailable'));
    await expect(client.policies.draft({ templateId: 'true_v1' })).rejects.toThrow(SvcServerError);
    server.script = sequence('destroy');
    await expect(client.policies.draft({ templateId: 'true_v1' })).rejects.toThrow(SvcConnectionError);
    expect(server.to('/harbor/policy/v1/drafts')).toHaveLength(2);
  });

  it('decides from the rules alone', () => {
    const state = { retrySafe: false, attempts: 1, attemptsMax: 3, inProgressAnswers: 0, inProgressElapsedMs: 0, refreshed: false, canRefresh: false };
    expect(decideRetry({ kind: 'status', status: 500 }, state).action).toBe('stop');
    expect(decideRetry({ kind: 'network' }, state).action).toBe('stop');
    expect(decideRetry({ kind: 'status', status: 429 }, state).action).toBe('retry');
    expect(decideRetry({ kind: 'status', status: 504 }, { ...state, retrySafe: true }).action).toBe('retry');
    expect(decideRetry({ kind: 'status', status: 504 }, { ...state, retrySafe: true, attempts: 3 }).action).toBe('stop');
    for (const status of [400, 402, 403, 404, 409, 410, 422, 428]) expect(decideRetry({ kind: 'status', status }, { ...state, retrySafe: true }).action).toBe('stop');
    // 409 request_in_progress: retry-safe requests only, backoff by in-progress answers, past the attempt bound,
    // until the next delay would end past requestInProgressRetryMsMax.
    const inProgress = { kind: 'status', status: 409, code: 'idempotency.request_in_progress' } as const;
    const waiting = { ...state, retrySafe: true, attempts: 3, inProgressAnswers: 4, inProgressElapsedMs: 3_000 };
    expect(decideRetry(inProgress, { ...waiting, retrySafe: false }).action).toBe('stop');
    expect(decideRetry(inProgress, waiting, () => 0)).toEqual({ action: 'retry', delayMs: 1600 });
    expect(decideRetry({ ...inProgress, retryAfterMs: 700 }, waiting)).toEqual({ action: 'retry', delayMs: 700 });
    expect(decideRetry(inProgress, { ...waiting, inProgressElapsedMs: requestInProgressRetryMsMax - 1600 }, () => 0).action).toBe('retry');
    expect(decideRetry(inProgress, { ...waiting, inProgressElapsedMs: requestInProgressRetryMsMax - 1599 }, () => 0).action).toBe('stop');
    expect(decideRetry({ ...inProgress, code: 'idempotency.key_reused' }, waiting).action).toBe('stop');
  });
});

describe('409 idempotency.request_in_progress', () => {
  it('is retried with backoff, the same key, body and proof, past the attempt bound, until the request completes', async () => {
    const inProgress = envelope(409, 'idempotency.request_in_progress', 'A request with this idempotency-key is still being processed; retry shortly with the same key and body.');
    server.script = sequence(inProgress, inProgress, inProgress, envelope(503, 'internal.unavailable'), inProgress, settled());
    const { key } = generateKey();
    const { client, clock } = await openScriptedClient(server, { agent: { keyId: 'agent-1', key } });
    const answer = await client.intents.confirm(intentIdFixture, { idempotencyKey: 'confirm-after-crash' });
    expect(answer.state).toBe('released');
    const attempts = server.to(confirmPath);
    expect(attempts).toHaveLength(6);
    // Exponential backoff with jitter, counted by in-progress answers; the 503 between them backs off as a 5xx does.
    expect(clock.delays).toEqual([250, 450, 850, 250, 1650]);
    for (const attempt of attempts) {
      expect(attempt.headers['idempotency-key']).toBe('confirm-after-crash');
      expect(attempt.headers['x-svc-agent-recognition-proof']).toBe(attempts[0]!.headers['x-svc-agent-recognition-proof']);
      expect(attempt.body.equals(attempts[0]!.body)).toBe(true);
    }
  });

  it('gives up after requestInProgressRetryMsMax with the last answer, and honours Retry-After', async () => {
    server.script = sequence(envelope(409, 'idempotency.request_in_progress'));
    const { client, clock } = await openScriptedClient(server);
    const error = await client.intents.confirm(intentIdFixture).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SvcIdempotencyError);
    expect(error).toMatchObject({ status_code: 409, code: 'idempotency.request_in_progress' });
    const waitedMs = clock.delays.reduce((sum, delay) => sum + delay, 0);
    expect(waitedMs).toBeLessThanOrEqual(requestInProgressRetryMsMax);
    expect(clock.delays).toEqual([250, 450, 850, 1650, 3250, 5000, 5000]);
    expect(server.to(confirmPath)).toHaveLength(8);

    let answered = 0;
    server.script = () => (answered++ === 0 ? json(409, { error: { code: 'idempotency.request_in_progress' } }, { 'retry-after': '2' }) : settled());
    const { client: polite, clock: politeClock } = await openScriptedClient(server);
    await polite.intents.confirm(intentIdFixture);
    expect(politeClock.delays).toEqual([2000]);
  });

  it('is not retried for a request that is not retry-safe', async () => {
    server.script = sequence(envelope(409, 'idempotency.request_in_progress'));
    const { client, clock } = await openScriptedClient(server);
    await expect(client.policies.draft({ templateId: 'true_v1' })).rejects.toThrow(SvcIdempotencyError);
    expect(server.to('/harbor/policy/v1/drafts')).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });
});
