// The service as an operator runs it: real processes, real Postgres or the embedded database.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { latestMigrationVersion } from '../../src/infra/migrate.ts';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot, runCli, startServerProcess } from '../helpers/server-process.ts';
import { spawn } from 'node:child_process';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function principal(baseUrl: string, apiKey: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/v1/auth/principal`, { headers: { authorization: `Bearer ${apiKey}` } });
  return { status: response.status, body: await response.json() };
}

/** Starts the server with `env` and waits for it to exit on its own (a refused start); kills it after `timeoutMs`. */
function runServerUntilExit(env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: projectRoot,
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A refused start: a non-zero exit and exactly one line on stderr, naming `variable`, with no stack trace. */
function expectOneLineRefusal(result: { code: number | null; stderr: string }, variable: string): void {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.code, result.stderr).not.toBeNull();
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^svc: cannot start: /);
  expect(lines[0]).toContain(variable);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('a bad setting stops the start with one line naming it', () => {
  it.each([
    ['PORT', { PORT: '80a' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db.example.com/svc' }],
    ['SVC_RATE_LIMIT_PER_MINUTE', { SVC_RATE_LIMIT_PER_MINUTE: '0' }],
    ['SMTP_URL', { SMTP_URL: 'http://smtp.example.com' }],
    ['SVC_SIGNING_KEY_FILE', { SVC_SIGNING_KEY_FILE: '/nonexistent/signing-keys.json', DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/unused' }],
  ])('%s', async (variable, env) => {
    expectOneLineRefusal(await runServerUntilExit(env), variable);
  });

  // A folder that cannot be created under a parent that exists but refuses every entry (procfs) once kept Node's
  // recursive mkdir spinning forever; the start (and the CLI) must end at once, saying which folder and why.
  const validKeySet = JSON.stringify({ keys: [{ kid: 'k1', seed_hex: '1'.repeat(64), status: 'active', created_at: '2026-01-01T00:00:00Z' }] });
  it.each([
    ['the signing key file in it', { SVC_DATA_DIR: '/proc/nope' }],
    ['the embedded database in it', { SVC_DATA_DIR: '/proc/nope', SVC_SIGNING_KEYS: validKeySet }],
  ])('SVC_DATA_DIR where no folder can be made (%s) is refused in one line, not a hang', async (_case, env) => {
    const result = await runServerUntilExit(env, 20_000);
    expectOneLineRefusal(result, 'SVC_DATA_DIR');
    expect(result.stderr).toContain('no such file or directory (ENOENT)');
  });

  it('the CLI on an SVC_DATA_DIR where no folder can be made says so in one line, exit 1', async () => {
    const result = await runCli(['migrate'], { SVC_DATA_DIR: '/proc/nope', DATABASE_URL: undefined });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe('svc: SVC_DATA_DIR: cannot create /proc/nope: no such file or directory (ENOENT)\n');
  });

  it('an unreachable DATABASE_URL says so, names the variable, and never repeats its password', async () => {
    const result = await runServerUntilExit({ DATABASE_URL: 'postgresql://svc:hunter2@127.0.0.1:1/svc' });
    expectOneLineRefusal(result, 'DATABASE_URL');
    expect(result.stderr).toContain('cannot connect to the database at 127.0.0.1:1/svc');
    expect(result.stdout + result.stderr).not.toContain('hunter2');
  });

  it('a DATABASE_URL naming a database that does not exist says which', async () => {
    const result = await runServerUntilExit({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/svc_no_such_database' });
    expectOneLineRefusal(result, 'DATABASE_URL');
    expect(result.stderr).toContain('svc_no_such_database');
  });

  it.each([
    ['not JSON', '{"keys": ['],
    ['no keys', '{"keys":[]}'],
    ['two active keys', JSON.stringify({ keys: [1, 2].map((index) => ({ kid: `k${index}`, seed_hex: String(index).repeat(64), status: 'active', created_at: '2026-01-01T00:00:00Z' })) })],
  ])('a bad SVC_SIGNING_KEYS (%s) is refused before any migration runs, and no seed is echoed', async (_case, keys) => {
    const database = await createTestDatabase({ migrate: false });
    cleanups.push(() => database.drop());
    const result = await runServerUntilExit({ DATABASE_URL: database.url!, SVC_SIGNING_KEYS: keys });
    expectOneLineRefusal(result, 'SVC_SIGNING_KEYS');
    expect(result.stderr).not.toContain('1111111111');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query(`SELECT to_regclass('public.schema_migrations') AS migrations, to_regclass('public.tenants') AS tenants`);
    await client.end();
    expect(rows[0]).toEqual({ migrations: null, tenants: null });
  });
});

describe('two servers started at once on an empty database', () => {
  it('both become ready and the migrations are applied once', async () => {
    const database: TestDatabase = await createTestDatabase({ migrate: false });
    cleanups.push(() => database.drop());
    const servers = await Promise.all([1, 2].map(() => startServerProcess({ DATABASE_URL: database.url })));
    cleanups.push(...servers.map((server) => () => server.stop()));
    for (const server of servers) {
      const ready = await fetch(`${server.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query('SELECT version, count(*)::int AS applications FROM schema_migrations GROUP BY version ORDER BY version');
    await client.end();
    expect(rows).toHaveLength(latestMigrationVersion());
    expect(rows.every((row) => row.applications === 1)).toBe(true);
    // Exactly one process did the work; the other found nothing to apply.
    const appliers = servers.filter((server) => server.output().includes('migrations applied'));
    expect(appliers).toHaveLength(1);
  });
});

describe('embedded database (no DATABASE_URL)', () => {
  it('start, create a tenant with the CLI while the server runs, call the principal route, restart, key still works', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-embedded-'));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = { DATABASE_URL: '', SVC_DATA_DIR: dataDir };

    const first = await startServerProcess(env, 60_000);
    cleanups.push(() => first.stop());
    const created = await runCli(['tenant', 'create', '--tenant-id', 'acme', '--environment', 'sandbox', '--json'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const tenant = JSON.parse(created.stdout);
    expect(tenant).toMatchObject({ tenant_id: 'acme', environment: 'sandbox' });
    expect(tenant.api_key).toMatch(/^svc_sk_sandbox_/);

    const before = await principal(first.baseUrl, tenant.api_key);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ tenant_id: 'acme', environment: 'sandbox', tenant_uuid: tenant.tenant_uuid });
    expect(await first.stop()).toBe(0);

    const second = await startServerProcess(env, 60_000);
    cleanups.push(() => second.stop());
    const after = await principal(second.baseUrl, tenant.api_key);
    expect(after.status).toBe(200);
    expect(after.body.tenant_id).toBe('acme');
    // A second server on the same embedded database is refused with a clear message, not a corrupted database.
    await expect(startServerProcess(env, 60_000)).rejects.toThrow(/is open in process/);
    expect(await second.stop()).toBe(0);
  }, 120_000);
});

describe('svc CLI on Postgres', () => {
  it('creates tenants and keys, and refuses bad arguments with exit 2 and failures with exit 1', async () => {
    const database = await createTestDatabase({ migrate: false });
    cleanups.push(() => database.drop());
    const env = { DATABASE_URL: database.url };
    expect((await runCli(['migrate', '--json'], env)).stdout).toContain('applied_versions');

    const tenant = await runCli(['tenant', 'create', '--tenant-id', 'initech', '--environment', 'live', '--json'], env);
    expect(tenant.code).toBe(0);
    expect(JSON.parse(tenant.stdout).api_key).toMatch(/^svc_sk_live_/);

    const key = await runCli(['key', 'create', '--tenant-id', 'initech', '--role', 'auditor', '--json'], env);
    expect(key.code).toBe(0);
    expect(JSON.parse(key.stdout)).toMatchObject({ role: 'auditor', key_id: expect.stringMatching(/^key_/) });

    const duplicate = await runCli(['tenant', 'create', '--tenant-id', 'initech', '--environment', 'live'], env);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('tenant.already_exists');

    const unknownTenant = await runCli(['key', 'create', '--tenant-id', 'nobody', '--role', 'agent'], env);
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr).toContain('tenant.not_found');

    for (const args of [
      ['tenant', 'create', '--tenant-id', 'x'],
      ['tenant', 'create', '--tenant-id', 'x', '--environment', 'prod'],
      ['key', 'create', '--tenant-id', 'initech', '--role', 'emperor'],
      ['frobnicate'],
      ['tenant', 'create', '--bogus-flag'],
    ]) {
      const result = await runCli(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('usage:');
    }
    const badId = await runCli(['tenant', 'create', '--tenant-id', 'Bad Id', '--environment', 'sandbox'], env);
    expect(badId.code).toBe(1);
    expect(badId.stderr).toContain('tenant.id_invalid');
  }, 60_000);
});

describe('graceful shutdown', () => {
  it('SIGTERM lets an in-flight request finish and exits 0', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const tenant = await createTestTenant(database.connection);
    const server = await startServerProcess({ DATABASE_URL: database.url });
    cleanups.push(() => server.stop());

    // A request whose body is only half sent when the signal arrives.
    const body = JSON.stringify({ role: 'agent', name: 'created during shutdown' });
    const url = new URL('/v1/admin/api-keys', server.baseUrl);
    const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = http.request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.adminKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      });
      request.on('error', reject);
      request.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => request.end(body.slice(10)), 300);
      }, 200);
    });
    const response = await answer;
    expect(response.status).toBe(201);
    expect(response.body.name).toBe('created during shutdown');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shutting down');
  });
});
