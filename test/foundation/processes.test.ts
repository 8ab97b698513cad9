// The service as an operator runs it: real processes, real Postgres or the embedded database.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { latestMigrationVersion } from '../../src/platform/migrate.ts';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCli, startServerProcess } from '../helpers/server-process.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function principal(baseUrl: string, apiKey: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/v1/auth/principal`, { headers: { authorization: `Bearer ${apiKey}` } });
  return { status: response.status, body: await response.json() };
}

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
