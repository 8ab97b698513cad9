// The SDK's deviceLogin() against the real gateway over HTTP: approved by a person signed in with a one-time code,
// slowed down by the server, denied, expired, refused before sending for plain http off loopback, and aborted.
// Time passing between polls is the test's `sleep`: it records the interval the SDK chose and moves the previous poll
// into the past in the database, whose clock the server judges polls by.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { deviceLogin, DeviceLoginDeniedError, DeviceLoginExpiredError, InsecureGatewayUrlError, type DeviceLoginPrompt } from '../../src/sdk/index.ts';
import { takeOutboxCode } from '../../src/services/sign-in-service.ts';
import { createUser } from '../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let system: Database;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  system = new Database({ ...database.connection, max: 2 });
  await createTestTenant(database.connection, 'sandbox', 'acme');
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

let personCounter = 0;

async function signedIn(role: 'admin' | 'operator' = 'operator'): Promise<{ userId: string; token: string }> {
  const email = `sdk.person.${++personCounter}@example.com`;
  const user = await createUser(system, { tenantId: 'acme', email, role });
  const started = await fetch(`${baseUrl}/v1/public/auth/login/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const message = await takeOutboxCode(system, email);
  const verified = await fetch(`${baseUrl}/v1/public/auth/challenges/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ challenge_id: ((await started.json()) as { challenge_id: string }).challenge_id, code: message!.code }),
  });
  return { userId: user.userId, token: ((await verified.json()) as { access_token: string }).access_token };
}

async function decide(person: { token: string }, userCode: string, decision: 'approve' | 'deny'): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/auth/device/approve`, {
    method: 'POST',
    headers: { ...bearer(person.token), 'content-type': 'application/json' },
    body: JSON.stringify({ user_code: userCode, decision }),
  });
  expect(response.status).toBe(200);
}

/** A sleep that lets the interval pass instantly: the previous poll is moved an hour into the past. */
function passingTime(slept: number[], skipFirstPasses = 0) {
  let calls = 0;
  return async (ms: number) => {
    slept.push(ms);
    calls += 1;
    if (calls > skipFirstPasses) {
      await system.system((tx) => tx.query(`UPDATE device_authorizations SET last_polled_at = last_polled_at - interval '1 hour' WHERE last_polled_at IS NOT NULL`));
    }
  };
}

describe('deviceLogin()', () => {
  it('prompts, polls while the code waits, and returns the session the person approved', async () => {
    const ann = await signedIn('admin');
    const prompts: DeviceLoginPrompt[] = [];
    const slept: number[] = [];
    let polls = 0;
    const session = await deviceLogin({
      baseUrl,
      clientName: 'sdk test',
      onPrompt: (prompt) => {
        prompts.push(prompt);
      },
      sleep: async (ms) => {
        await passingTime(slept)(ms);
        // The person approves after the device's second poll.
        if (++polls === 2) await decide(ann, prompts[0]!.userCode, 'approve');
      },
    });
    expect(prompts[0]).toMatchObject({ verificationUri: `${baseUrl}/console/device`, expiresInSeconds: 600 });
    expect(prompts[0]!.verificationUriComplete).toBe(`${baseUrl}/console/device?user_code=${prompts[0]!.userCode}`);
    expect(slept).toEqual([5000, 5000]);
    expect(session).toMatchObject({ kind: 'session', tokenType: 'Bearer', expiresInSeconds: 900, tenantId: 'acme', userId: ann.userId, roles: ['admin'] });
    expect(session.kind === 'session' && session.expiresAt.getTime() - Date.now()).toBeGreaterThan(890_000);
    const principal = await fetch(`${baseUrl}/v1/auth/principal`, { headers: bearer(session.accessToken) });
    expect(await principal.json()).toMatchObject({ key_kind: 'session', subject: ann.userId });
  });

  it('waits 5 s longer after each slow_down', async () => {
    const bob = await signedIn();
    const slept: number[] = [];
    let userCode = '';
    // The second poll comes too soon (the first sleep does not pass time); the server answers slow_down.
    const sleep = passingTime(slept, 2);
    const session = await deviceLogin({
      baseUrl,
      onPrompt: (prompt) => {
        userCode = prompt.userCode;
      },
      sleep: async (ms) => {
        await sleep(ms);
        if (slept.length === 3) await decide(bob, userCode, 'approve');
      },
    });
    expect(slept).toEqual([5000, 5000, 10000]);
    expect(session).toMatchObject({ kind: 'session', userId: bob.userId });
  });

  it('returns the API key a sandbox admin granted instead of a session', async () => {
    const admin = await signedIn('admin');
    const slept: number[] = [];
    const credential = await deviceLogin({
      baseUrl,
      clientName: 'load generator',
      onPrompt: async (prompt) => {
        const response = await fetch(`${baseUrl}/v1/auth/device/approve`, {
          method: 'POST',
          headers: { ...bearer(admin.token), 'content-type': 'application/json' },
          body: JSON.stringify({ user_code: prompt.userCode, decision: 'approve', grant: 'api_key', key_role: 'agent' }),
        });
        expect(response.status).toBe(200);
      },
      sleep: passingTime(slept),
    });
    expect(credential).toMatchObject({ kind: 'api_key', tokenType: 'Bearer', tenantId: 'acme', roles: ['agent'] });
    expect(credential.accessToken).toMatch(/^svc_sk_sandbox_/);
    const principal = await fetch(`${baseUrl}/v1/auth/principal`, { headers: bearer(credential.accessToken) });
    expect(await principal.json()).toMatchObject({ roles: ['agent'], key_kind: 'standard' });
  });

  it('rejects with DeviceLoginDeniedError when the person denies', async () => {
    const carol = await signedIn();
    const slept: number[] = [];
    const attempt = deviceLogin({ baseUrl, onPrompt: (prompt) => decide(carol, prompt.userCode, 'deny'), sleep: passingTime(slept) });
    await expect(attempt).rejects.toBeInstanceOf(DeviceLoginDeniedError);
  });

  it('rejects with DeviceLoginExpiredError when the code expires unapproved', async () => {
    const slept: number[] = [];
    const attempt = deviceLogin({
      baseUrl,
      onPrompt: () => system.system((tx) => tx.query(`UPDATE device_authorizations SET created_at = now() - interval '20 minutes', expires_at = now() - interval '1 second' WHERE status = 'pending'`)).then(() => undefined),
      sleep: passingTime(slept),
    });
    await expect(attempt).rejects.toBeInstanceOf(DeviceLoginExpiredError);
  });

  it('refuses plain http to a host that is not loopback before sending anything', async () => {
    let sent = 0;
    const attempt = deviceLogin({ baseUrl: 'http://svc.example.com', onPrompt: () => undefined, fetch: async () => { sent += 1; return new Response('{}'); } });
    await expect(attempt).rejects.toBeInstanceOf(InsecureGatewayUrlError);
    expect(sent).toBe(0);
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    const attempt = deviceLogin({ baseUrl, signal: controller.signal, onPrompt: () => controller.abort(new Error('the person pressed Ctrl-C')) });
    await expect(attempt).rejects.toThrow('the person pressed Ctrl-C');
  });
});
