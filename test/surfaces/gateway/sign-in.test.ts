// Sign-in with a one-time code on real Postgres: the full flow to a session JWT verified against our published JWKS,
// no account enumeration, lockout, single use, expiry, a person in two tenants, SMTP delivery to a real (loopback)
// SMTP server, and the operator CLI (`svc user create`, `svc auth outbox`).
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { ephemeralKeyring } from '../../../src/infra/gateway-keys.ts';
import { createLogger } from '../../../src/infra/logging.ts';
import { app as serviceApp } from '../../../src/app.ts';
import { createFastify } from '../../../src/server-options.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, LogCapture } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { runCli } from '../../helpers/server-process.ts';

let database: TestDatabase;
let app: FastifyInstance;
let system: Database;
let jwksUrl: URL;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { logs });
  jwksUrl = new URL('/.well-known/jwks.json', await app.listen({ host: '127.0.0.1', port: 0 }));
  system = new Database({ ...database.connection, max: 2 });
  await createTestTenant(database.connection, 'sandbox', 'acme');
  await createTestTenant(database.connection, 'live', 'globex');
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

let emailCounter = 0;
const freshEmail = (name: string) => `${name}.${++emailCounter}@example.com`;

const start = (email: string) => app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
const verify = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/public/auth/challenges/verify', payload });

/** Starts a sign-in and reads the code the way a local operator does (the outbox). */
async function challengeFor(email: string): Promise<{ challengeId: string; code: string }> {
  const response = await start(email);
  expect(response.statusCode).toBe(200);
  const challengeId = response.json().challenge_id as string;
  const message = await takeOutboxCode(system, email);
  expect(message?.challengeId).toBe(challengeId);
  return { challengeId, code: message!.code };
}

const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

function expectError(response: { statusCode: number; json(): any }, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  expect(response.json().error.code).toBe(code);
  expect(response.json().request_id).toMatch(/\S/);
}

async function challengeRow(challengeId: string) {
  return system.system(async (tx) => (await tx.query('SELECT attempts, locked, consumed_at FROM login_challenges WHERE challenge_id = $1', [challengeId])).rows[0]);
}

describe('the full flow', () => {
  it('mails a code, trades it for a session JWT that verifies against /.well-known/jwks.json and calls routes per its role', async () => {
    const email = freshEmail('ann');
    const user = await createUser(system, { tenantId: 'acme', email, role: 'admin' });
    // Emails are compared lowercased.
    const started = await start(email.toUpperCase());
    expect(started.statusCode).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    const { challenge_id: challengeId, expires_at: expiresAt } = started.json();
    expect(challengeId).toMatch(/^lch_[0-9a-f]{32}$/);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(10 * 60_000 + 1_000);

    const message = await takeOutboxCode(system, email);
    expect(message).toEqual({ email, challengeId, code: expect.stringMatching(/^[0-9]{6}$/) });
    // Without SMTP the code is also in the server log, at info, in one clearly worded line.
    const logLine = logs.lines.find((line) => line.includes(challengeId) && line.includes('sign-in code'));
    expect(JSON.parse(logLine!)).toMatchObject({ level: 30, email, sign_in_code: message!.code });

    const verified = await verify({ challenge_id: challengeId, code: message!.code });
    expect(verified.statusCode).toBe(200);
    expect(verified.headers['cache-control']).toBe('no-store');
    const body = verified.json();
    expect(body).toEqual({
      access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, tenant_id: 'acme', user_id: user.userId, roles: ['admin'],
    });

    const { payload, protectedHeader } = await jwtVerify(body.access_token, createRemoteJWKSet(jwksUrl), {
      algorithms: ['EdDSA'], audience: 'svc-session', issuer: 'svc-gateway',
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: app.gatewayKeys.active.kid });
    expect(payload).toMatchObject({ sub: user.userId, tid: 'acme', roles: ['admin'] });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload.jti).toEqual(expect.any(String));

    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(body.access_token) });
    expect(principal.statusCode).toBe(200);
    expect(principal.json()).toMatchObject({
      tenant_id: 'acme', environment: 'sandbox', service_account_role: 'admin', roles: ['admin'], key_kind: 'session', mcp_scopes: [], subject: user.userId,
    });
    const adminRoute = await app.inject({ url: '/v1/admin/api-keys', headers: bearer(body.access_token) });
    expect(adminRoute.statusCode).toBe(200);
    // The token is never logged.
    expect(logs.text).not.toContain(body.access_token.split('.')[2]);
  });

  it('gives a non-admin the role of its membership: an admin route answers 403', async () => {
    const email = freshEmail('olga');
    await createUser(system, { tenantId: 'acme', email, role: 'operator' });
    const { challengeId, code } = await challengeFor(email);
    const token = (await verify({ challenge_id: challengeId, code })).json().access_token;
    expect(decodeProtectedHeader(token).alg).toBe('EdDSA');
    expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(token) })).json().service_account_role).toBe('operator');
    expectError(await app.inject({ url: '/v1/admin/api-keys', headers: bearer(token) }), 403, 'auth.role_insufficient');
    // Engine routes take session tokens too.
    expect((await app.inject({ url: '/harbor/policy/v1/templates', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('refuses a code that does not belong to the challenge, and malformed input with 400', async () => {
    const email = freshEmail('bob');
    await createUser(system, { tenantId: 'acme', email, role: 'agent' });
    const first = await challengeFor(email);
    const second = await challengeFor(email);
    expectError(await verify({ challenge_id: second.challengeId, code: first.code === second.code ? otherCode(first.code) : first.code }), 401, 'auth.code_invalid');
    expectError(await verify({ challenge_id: `lch_${'0'.repeat(32)}`, code: '123456' }), 401, 'auth.code_invalid');
    for (const payload of [{ challenge_id: first.challengeId, code: '12345' }, { challenge_id: 'lch_x', code: '123456' }, { challenge_id: first.challengeId, code: first.code, extra: 1 }]) {
      expectError(await verify(payload), 400, 'request.invalid');
    }
    for (const email of ['no-at-sign', 'a b@example.com', 'a@b\r\nBcc: c@d', `${'a'.repeat(250)}@example.com`]) {
      expectError(await start(email), 400, 'request.invalid');
    }
    // The right code still works after those (one wrong attempt counted on `second`).
    expect((await verify({ challenge_id: second.challengeId, code: second.code })).statusCode).toBe(200);
  });
});

describe('no account enumeration', () => {
  it('answers an unknown email exactly like a known one, sends it nothing, and its challenge never verifies but locks alike', async () => {
    const known = freshEmail('known');
    await createUser(system, { tenantId: 'acme', email: known, role: 'admin' });
    const unknown = freshEmail('unknown');
    const [knownStart, unknownStart] = [await start(known), await start(unknown)];
    expect(unknownStart.statusCode).toBe(knownStart.statusCode);
    expect(Object.keys(unknownStart.json()).sort()).toEqual(Object.keys(knownStart.json()).sort());
    expect(unknownStart.json().challenge_id).toMatch(/^lch_[0-9a-f]{32}$/);
    expect(unknownStart.headers['cache-control']).toBe(knownStart.headers['cache-control']);
    expect(unknownStart.headers['content-type']).toBe(knownStart.headers['content-type']);
    expect(await takeOutboxCode(system, unknown)).toBeUndefined();
    expect(logs.text).not.toContain(unknown);

    const knownChallenge = knownStart.json().challenge_id;
    const unknownChallenge = unknownStart.json().challenge_id;
    const knownCode = (await takeOutboxCode(system, known))!.code;
    const strip = (response: { json(): any }) => ({ ...response.json(), request_id: undefined });
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const guess = otherCode(knownCode);
      const [a, b] = [await verify({ challenge_id: knownChallenge, code: guess }), await verify({ challenge_id: unknownChallenge, code: guess })];
      expect(a.statusCode).toBe(401);
      expect(strip(b)).toEqual(strip(a));
    }
    expect(await challengeRow(knownChallenge)).toMatchObject({ attempts: 5, locked: true });
    expect(await challengeRow(unknownChallenge)).toMatchObject({ attempts: 5, locked: true });
  });
});

describe('code rules', () => {
  it('locks the challenge after 5 wrong codes: the 6th attempt fails even with the right code', async () => {
    const email = freshEmail('locked');
    await createUser(system, { tenantId: 'acme', email, role: 'admin' });
    const { challengeId, code } = await challengeFor(email);
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expectError(await verify({ challenge_id: challengeId, code: otherCode(code) }), 401, 'auth.code_invalid');
    }
    expect(await challengeRow(challengeId)).toMatchObject({ attempts: 5, locked: true, consumed_at: null });
    expectError(await verify({ challenge_id: challengeId, code }), 401, 'auth.code_invalid');
    // A new challenge works.
    const next = await challengeFor(email);
    expect((await verify({ challenge_id: next.challengeId, code: next.code })).statusCode).toBe(200);
  });

  it('takes a code once, also when two requests present it at the same moment', async () => {
    const email = freshEmail('once');
    await createUser(system, { tenantId: 'acme', email, role: 'admin' });
    const { challengeId, code } = await challengeFor(email);
    const answers = await Promise.all([1, 2, 3].map(() => verify({ challenge_id: challengeId, code })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401, 401]);
    expectError(await verify({ challenge_id: challengeId, code }), 401, 'auth.code_invalid');
  });

  it('refuses an expired code', async () => {
    const email = freshEmail('late');
    await createUser(system, { tenantId: 'acme', email, role: 'admin' });
    const { challengeId, code } = await challengeFor(email);
    await system.system((tx) =>
      tx.query(`UPDATE login_challenges SET created_at = now() - interval '11 minutes', expires_at = now() - interval '1 minute' WHERE challenge_id = $1`, [challengeId]),
    );
    expectError(await verify({ challenge_id: challengeId, code }), 401, 'auth.code_invalid');
    // Expiry is not a wrong attempt, and an expired code is not offered by the outbox either.
    expect(await challengeRow(challengeId)).toMatchObject({ attempts: 0, locked: false, consumed_at: null });
  });
});

describe('a person in two tenants', () => {
  it('is one identity; verify names the tenant (409 with the choices, only after the code verified)', async () => {
    const email = freshEmail('pat');
    const inAcme = await createUser(system, { tenantId: 'acme', email, role: 'operator' });
    const inGlobex = await createUser(system, { tenantId: 'globex', email, role: 'auditor' });
    expect(inGlobex.userId).toBe(inAcme.userId);
    await expect(createUser(system, { tenantId: 'acme', email, role: 'admin' })).rejects.toMatchObject({ code: 'user.already_member' });

    const { challengeId, code } = await challengeFor(email);
    expectError(await verify({ challenge_id: challengeId, code: otherCode(code) }), 401, 'auth.code_invalid');
    const ambiguous = await verify({ challenge_id: challengeId, code });
    expectError(ambiguous, 409, 'auth.tenant_required');
    expect(ambiguous.json().error.details).toEqual({ tenant_ids: ['acme', 'globex'] });
    expectError(await verify({ challenge_id: challengeId, code, tenant_id: 'initech' }), 409, 'auth.tenant_required');

    const granted = await verify({ challenge_id: challengeId, code, tenant_id: 'globex' });
    expect(granted.statusCode).toBe(200);
    expect(granted.json()).toMatchObject({ tenant_id: 'globex', user_id: inAcme.userId, roles: ['auditor'] });
    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(granted.json().access_token) });
    expect(principal.json()).toMatchObject({ tenant_id: 'globex', environment: 'live', service_account_role: 'auditor' });
    // Consumed: the same code does not also open acme.
    expectError(await verify({ challenge_id: challengeId, code, tenant_id: 'acme' }), 401, 'auth.code_invalid');
  });

  it('lets a one-tenant person name their tenant, and answers 409 with their one tenant for another', async () => {
    const email = freshEmail('solo');
    await createUser(system, { tenantId: 'globex', email, role: 'agent' });
    const { challengeId, code } = await challengeFor(email);
    const wrongTenant = await verify({ challenge_id: challengeId, code, tenant_id: 'acme' });
    expectError(wrongTenant, 409, 'auth.tenant_required');
    expect(wrongTenant.json().error.details).toEqual({ tenant_ids: ['globex'] });
    expect((await verify({ challenge_id: challengeId, code, tenant_id: 'globex' })).json().tenant_id).toBe('globex');
  });
});

/** A minimal SMTP server on loopback (RFC 5321 happy path), recording each message's envelope and DATA. */
async function startSmtpServer(): Promise<{ port: number; messages: Array<{ from: string; to: string[]; data: string }>; close(): Promise<void> }> {
  const messages: Array<{ from: string; to: string[]; data: string }> = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let envelope = { from: '', to: [] as string[] };
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 localhost test SMTP');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          messages.push({ ...envelope, data: buffer.slice(0, end).replace(/^\.\./gm, '.') });
          buffer = buffer.slice(end + 5);
          inData = false;
          envelope = { from: '', to: [] };
          reply('250 2.0.0 queued');
          continue;
        }
        const newline = buffer.indexOf('\r\n');
        if (newline === -1) return;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250 localhost');
        else if (verb === 'MAIL') (envelope.from = /<([^>]*)>/.exec(line)?.[1] ?? ''), reply('250 2.1.0 ok');
        else if (verb === 'RCPT') (envelope.to.push(/<([^>]*)>/.exec(line)?.[1] ?? ''), reply('250 2.1.5 ok'));
        else if (verb === 'DATA') (inData = true), reply('354 end with <CRLF>.<CRLF>');
        else if (verb === 'QUIT') (reply('221 bye'), socket.end());
        else reply('250 ok');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('SMTP delivery (SMTP_URL)', () => {
  it('mails the code through a real SMTP server, never logs it, and keeps nothing in the outbox', async () => {
    const smtp = await startSmtpServer();
    const smtpLogs = new LogCapture();
    const mailing = createFastify(createLogger('trace', smtpLogs));
    await mailing.register(serviceApp, {
      connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true,
      mail: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'Acme sign-in <sign-in@acme.example>' },
    });
    await mailing.ready();
    try {
      const email = freshEmail('mailed');
      const user = await createUser(system, { tenantId: 'acme', email, role: 'auditor' });
      // An unknown email first: it gets nothing.
      expect((await mailing.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email: freshEmail('nobody') } })).statusCode).toBe(200);

      const started = await mailing.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
      const challengeId = started.json().challenge_id;
      const message = await waitFor(() => smtp.messages[0]);
      expect(smtp.messages).toHaveLength(1);
      expect(message.from).toBe('sign-in@acme.example');
      expect(message.to).toEqual([email]);
      expect(message.data).toMatch(/^Subject: Your sign-in code\r?$/m);
      expect(message.data).toContain(`To: ${email}`);
      const code = /sign-in code is ([0-9]{6})\./.exec(message.data)?.[1];
      expect(code).toMatch(/^[0-9]{6}$/);
      await waitFor(() => (smtpLogs.text.includes('sign-in code mailed') ? true : undefined));

      expect(await takeOutboxCode(system, email)).toBeUndefined();
      const granted = await mailing.inject({ method: 'POST', url: '/v1/public/auth/challenges/verify', payload: { challenge_id: challengeId, code } });
      expect(granted.statusCode).toBe(200);
      expect(granted.json()).toMatchObject({ user_id: user.userId, roles: ['auditor'] });
      expect(smtpLogs.text).toContain(challengeId);
      expect(smtpLogs.text).not.toContain(code);
      expect(smtpLogs.text).not.toContain('sign_in_code');
    } finally {
      await mailing.close();
      await smtp.close();
    }
  });

  it('answers login/start the same when the relay is down, and logs the failure without the code', async () => {
    const closed = await startSmtpServer();
    await closed.close(); // Nothing listens on this port now.
    const smtpLogs = new LogCapture();
    const mailing = createFastify(createLogger('trace', smtpLogs));
    await mailing.register(serviceApp, {
      connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true, mail: { smtpUrl: `smtp://127.0.0.1:${closed.port}` },
    });
    await mailing.ready();
    try {
      const email = freshEmail('down');
      await createUser(system, { tenantId: 'acme', email, role: 'auditor' });
      const started = await mailing.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
      expect(started.statusCode).toBe(200);
      await waitFor(() => (smtpLogs.text.includes('could not be mailed') ? true : undefined));
      expect(smtpLogs.text).not.toContain('sign_in_code');
    } finally {
      await mailing.close();
    }
  });
});

describe('svc user create / svc auth outbox', () => {
  it('adds people to tenants and prints the latest undelivered code once', async () => {
    const env = { DATABASE_URL: database.url };
    const created = await runCli(['user', 'create', '--tenant-id', 'acme', '--email', 'Cli.User@Example.com', '--role', 'auditor', '--json'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const user = JSON.parse(created.stdout);
    expect(user).toEqual({ user_id: expect.stringMatching(/^usr_[0-9a-f]{32}$/), email: 'cli.user@example.com', tenant_id: 'acme', role: 'auditor' });

    const again = await runCli(['user', 'create', '--tenant-id', 'acme', '--email', 'cli.user@example.com', '--role', 'admin', '--json'], env);
    expect(again.code).toBe(1);
    // With --json the failure is a JSON line on stdout too.
    expect(JSON.parse(again.stdout).error.code).toBe('user.already_member');
    expect((await runCli(['user', 'create', '--tenant-id', 'nope', '--email', 'x@example.com', '--role', 'admin'], env)).stderr).toContain('tenant.not_found');
    expect((await runCli(['user', 'create', '--tenant-id', 'acme', '--email', 'x@example.com', '--role', 'owner'], env)).code).toBe(2);

    const none = await runCli(['auth', 'outbox', '--email', 'cli.user@example.com', '--json'], env);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error.message).toMatch(/no undelivered sign-in code/);

    await start('cli.user@example.com');
    const latest = (await start('cli.user@example.com')).json().challenge_id;
    const outbox = await runCli(['auth', 'outbox', '--email', 'CLI.user@example.com', '--json'], env);
    expect(outbox.stderr).toBe('');
    expect(outbox.code).toBe(0);
    const printed = JSON.parse(outbox.stdout);
    expect(printed).toEqual({ email: 'cli.user@example.com', challenge_id: latest, code: expect.stringMatching(/^[0-9]{6}$/) });
    const granted = await verify({ challenge_id: printed.challenge_id, code: printed.code });
    expect(granted.json()).toMatchObject({ user_id: user.user_id, tenant_id: 'acme', roles: ['auditor'] });

    // The latest was delivered, and the older one is still waiting: one code per call, newest first.
    expect((await runCli(['auth', 'outbox', '--email', 'cli.user@example.com', '--json'], env)).code).toBe(0);
    expect((await runCli(['auth', 'outbox', '--email', 'cli.user@example.com', '--json'], env)).code).toBe(1);

    const withSmtp = await runCli(['auth', 'outbox', '--email', 'cli.user@example.com'], { ...env, SMTP_URL: 'smtp://127.0.0.1:1' });
    expect(withSmtp.code).toBe(1);
    expect(withSmtp.stderr).toMatch(/SMTP_URL is set/);
  }, 60_000);
});
