// `svc login` as a child process against a listening server: it prints a code, a person signed in with a one-time
// code approves it over HTTP, and the CLI keeps the session in a 0600 credentials file that `svc whoami`, the
// TypeScript SDK and the Python SDK use when given no key, and that `svc logout` removes. A denied code exits 1 and
// writes nothing. The CLI waits the server's real interval (5 s) between polls.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SvcClient } from '../../../src/sdk/index.ts';
import { Database } from '../../../src/infra/database.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { projectRoot, runCli } from '../../helpers/server-process.ts';

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let system: Database;
let configHome: string;
let acme: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  system = new Database({ ...database.connection, max: 2 });
  acme = await createTestTenant(database.connection, 'sandbox', 'acme');
  configHome = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-login-'));
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
  if (configHome) fs.rmSync(configHome, { recursive: true, force: true });
});

async function signedIn(email: string): Promise<{ userId: string; token: string }> {
  const user = await createUser(system, { tenantId: 'acme', email, role: 'operator' });
  const started = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
  const message = await takeOutboxCode(system, email);
  const verified = await app.inject({ method: 'POST', url: '/v1/public/auth/challenges/verify', payload: { challenge_id: started.json().challenge_id, code: message!.code } });
  return { userId: user.userId, token: verified.json().access_token };
}

/** Starts `svc login` and resolves with the user code as soon as it prints one, and the exit once it exits. */
function startLogin(args: string[]) {
  const child = spawn(process.execPath, ['bin/svc.js', 'login', '--server', baseUrl, ...args], {
    cwd: projectRoot,
    env: { ...process.env, XDG_CONFIG_HOME: configHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const userCode = new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = /confirm the code ([A-Z]{4}-[A-Z]{4})/.exec(stdout + stderr);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), look()));
    child.stderr.on('data', (chunk: Buffer) => ((stderr += chunk.toString()), look()));
    child.once('exit', () => reject(new Error(`svc login exited before printing a code:\n${stdout}${stderr}`)));
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { userCode, exited };
}

/** Runs Debian's python3 with the repository's Python SDK on its path. */
function runPython(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/python3', ['-B', ...args], { cwd: projectRoot, env: { ...process.env, ...env, PYTHONPATH: path.join(projectRoot, 'python') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const approve = (token: string, userCode: string, decision: 'approve' | 'deny') =>
  app.inject({ method: 'POST', url: '/v1/auth/device/approve', headers: bearer(token), payload: { user_code: userCode, decision } });

it('svc login: the person approves the printed code, the session lands in a 0600 file, svc logout removes it', async () => {
  const ann = await signedIn('ann.cli@example.com');
  const login = startLogin(['--json', '--client-name', 'ci runner']);
  const userCode = await login.userCode;
  const shown = await app.inject({ method: 'GET', url: `/v1/auth/device/${userCode}`, headers: bearer(ann.token) });
  expect(shown.json()).toMatchObject({ client_name: 'ci runner', status: 'pending' });
  expect((await approve(ann.token, userCode, 'approve')).statusCode).toBe(200);

  const result = await login.exited;
  expect(result.code, result.stderr).toBe(0);
  // With --json the prompt goes to stderr and stdout is one JSON line, without the token.
  expect(result.stderr).toContain(`${baseUrl}/console/device?user_code=${userCode}`);
  const printed = JSON.parse(result.stdout);
  const file = path.join(configHome, 'svc', 'credentials.json');
  expect(printed).toMatchObject({ server: baseUrl, tenant_id: 'acme', user_id: ann.userId, roles: ['operator'], credentials_file: file });
  expect(result.stdout).not.toContain('eyJ');

  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  const kept = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(kept).toMatchObject({ server: baseUrl, credential_type: 'session', token_type: 'Bearer', tenant_id: 'acme', user_id: ann.userId, roles: ['operator'] });
  const principal = await app.inject({ method: 'GET', url: '/v1/auth/principal', headers: bearer(kept.access_token) });
  expect(principal.json()).toMatchObject({ key_kind: 'session', subject: ann.userId });

  // Nothing else given, the CLI and both SDKs act as Ann through the stored session, on the server it came from.
  const noKey = { XDG_CONFIG_HOME: configHome, SVC_API_KEY: undefined, SVC_GATEWAY_URL: undefined, SVC_GATEWAY_BASE_URL: undefined };
  const whoami = await runCli(['whoami', '--json'], noKey);
  expect(whoami.code, whoami.stderr).toBe(0);
  expect(JSON.parse(whoami.stdout)).toMatchObject({ server: baseUrl, credential_source: 'stored_login', tenant_id: 'acme', key_kind: 'session', subject: ann.userId, role: 'operator' });
  const client = await SvcClient.open({ env: { XDG_CONFIG_HOME: configHome } });
  expect(client).toMatchObject({ credentialSource: 'stored_login', gatewayBaseUrl: baseUrl, tenantId: 'acme' });
  expect(client.principal.subject).toBe(ann.userId);
  const python = await runPython(['-c', 'from svc_settlement import SvcClient\nwith SvcClient.open() as client: print(client.credential_source, client.principal["subject"])'], noKey);
  expect(python.code, python.output).toBe(0);
  expect(python.output.trim()).toBe(`stored_login ${ann.userId}`);
  // An API key given wins over the stored login: --api-key, then SVC_API_KEY.
  const fromEnvironment = await runCli(['whoami', '--json'], { ...noKey, SVC_API_KEY: acme.adminKey, SVC_GATEWAY_URL: baseUrl });
  expect(JSON.parse(fromEnvironment.stdout)).toMatchObject({ credential_source: 'environment', key_kind: 'standard', role: 'admin' });
  const fromOption = await runCli(['whoami', '--api-key', acme.adminKey, '--server', baseUrl], { ...noKey, SVC_API_KEY: 'svc_sk_sandbox_not_this_one' });
  expect(fromOption.code, fromOption.stderr).toBe(0);
  expect(fromOption.stdout).toContain('credential from --api-key');

  const logout = await runCli(['logout', '--json'], { XDG_CONFIG_HOME: configHome });
  expect(logout.code).toBe(0);
  expect(JSON.parse(logout.stdout)).toEqual({ credentials_file: file, removed: true });
  expect(fs.existsSync(file)).toBe(false);
  const again = await runCli(['logout'], { XDG_CONFIG_HOME: configHome });
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('Not signed in');
  // Signed out and given no key: said in one line, exit 1.
  const signedOut = await runCli(['whoami'], noKey);
  expect(signedOut.code).toBe(1);
  expect(signedOut.stderr).toBe('svc: apiKey is required (or set SVC_API_KEY, or sign in with `svc login`).\n');
}, 60_000);

it('svc login: a denied code exits 1 and keeps nothing', async () => {
  const bob = await signedIn('bob.cli@example.com');
  const login = startLogin([]);
  const userCode = await login.userCode;
  expect((await approve(bob.token, userCode, 'deny')).statusCode).toBe(200);
  const result = await login.exited;
  expect(result.code).toBe(1);
  expect(result.stdout).toContain('To sign in, open');
  expect(result.stderr).toContain('denied');
  expect(fs.existsSync(path.join(configHome, 'svc', 'credentials.json'))).toBe(false);
}, 60_000);
