// Runs the Python SDK's pytest suite (python/tests) from `npm test`: starts the real app listening on loopback on a
// fresh Postgres database, creates a sandbox and a live tenant, and hands their keys to pytest in the environment.
// Debian's python3-pytest, python3-httpx and python3-nacl belong to /usr/bin/python3, so that interpreter is used.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot } from '../helpers/server-process.ts';

const python = process.env['SVC_TEST_PYTHON'] ?? '/usr/bin/python3';
const pytestTimeoutMs = 600_000;

let database: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
let sandbox: TestTenant;
let live: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  sandbox = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function runPython(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Bytecode is not written: the tree stays clean, and a stale .pyc can never stand in for a changed module.
    const child = spawn(python, ['-B', ...args], {
      cwd: `${projectRoot}python`,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

it('the Python SDK passes its pytest suite against the live server', { timeout: pytestTimeoutMs }, async () => {
  const install = 'apt-get install -y python3 python3-pytest python3-httpx python3-nacl (.ci/run does it)';
  expect(existsSync(python), `${python} is missing: ${install}`).toBe(true);
  const preflight = await runPython(['-c', 'import pytest, httpx, nacl']);
  expect(preflight.code, `${python} lacks a test dependency: ${install}\n${preflight.output}`).toBe(0);
  const { code, output } = await runPython(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
    SVC_TEST_GATEWAY_URL: baseUrl,
    SVC_TEST_SANDBOX_API_KEY: sandbox.adminKey,
    SVC_TEST_SANDBOX_TENANT_ID: sandbox.tenantId,
    SVC_TEST_LIVE_API_KEY: live.adminKey,
    SVC_TEST_LIVE_TENANT_ID: live.tenantId,
  });
  if (code !== 0) console.error(output);
  else console.log(`pytest: ${output.trim().split('\n').at(-1)}`);
  expect(code, 'pytest failed; its output is above').toBe(0);
  // Every live-server test ran: none was skipped for want of the server.
  expect(output).not.toMatch(/skipped/);
});
