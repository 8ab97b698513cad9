// The `svc` CLI as an operator meets it: every command's own --help, wrong options answered with that command's
// usage, progress of long jobs on a terminal (a real pseudo-terminal from util-linux `script`) and silence when
// stderr is a pipe or --json is given, and `svc key register` going through the registry's service code.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommands } from '../../src/cli/commands/index.ts';
import { bearer, buildTestApp, createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot, runCli } from '../helpers/server-process.ts';

const hasScript = spawnSync('script', ['--version']).status === 0;

/** Runs `svc args` with stdout and stderr on a pseudo-terminal (both arrive mixed in `output`). */
function runCliOnTerminal(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, 'bin/svc.js', ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: projectRoot, env: { ...process.env, ...env, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

let database: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  database = await createTestDatabase();
  env = { DATABASE_URL: database.url! };
});
afterAll(async () => {
  await database?.drop();
});

describe('help', () => {
  it('`svc --help` lists every command and exits 0', async () => {
    const result = await runCli(['--help'], {});
    expect(result.code).toBe(0);
    for (const command of cliCommands) expect(result.stdout).toContain(`  ${command.name} `);
  });

  it.each(cliCommands.map((command) => command.name))('`svc %s --help` prints that command\'s usage and options, exit 0', async (name) => {
    const result = await runCli([...name.split(' '), '--help'], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.startsWith(`usage: svc ${name} `)).toBe(true);
    // `svc help <command>` is the same page.
    expect((await runCli(['help', ...name.split(' ')], {})).stdout).toBe(result.stdout);
  });

  it.each(cliCommands.map((command) => command.name))('`svc %s --no-such-option` names the option and the command\'s usage, exit 2', async (name) => {
    const result = await runCli([...name.split(' '), '--no-such-option'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--no-such-option');
    expect(result.stderr).toContain(`usage: svc ${name} `);
  });

  it('an unknown command gets the list of commands, exit 2', async () => {
    const result = await runCli(['frobnicate'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain('usage: svc <command>');
  });
});

describe.skipIf(!hasScript)('progress of long jobs', () => {
  it('`svc migrate` shows each migration on a terminal, and nothing on a pipe or with --json', async () => {
    const first = await createTestDatabase({ migrate: false });
    try {
      const onTerminal = await runCliOnTerminal(['migrate'], { DATABASE_URL: first.url! });
      expect(onTerminal.code, onTerminal.output).toBe(0);
      expect(onTerminal.output).toMatch(/migrate: applying 1\/\d+: 0001_/);
      // The progress line is erased before the result is printed.
      expect(onTerminal.output).toContain('\r\x1b[2K');
      expect(onTerminal.output).toContain('applied migrations 1, 2');
    } finally {
      await first.drop();
    }

    const second = await createTestDatabase({ migrate: false });
    try {
      const quiet = await runCliOnTerminal(['migrate', '--json'], { DATABASE_URL: second.url! });
      expect(quiet.code, quiet.output).toBe(0);
      expect(quiet.output).not.toContain('migrate: applying');
      expect(quiet.output.trim()).toMatch(/^\{"applied_versions":\[1,2,/);
    } finally {
      await second.drop();
    }
    const third = await createTestDatabase({ migrate: false });
    try {
      const piped = await runCli(['migrate'], { DATABASE_URL: third.url! });
      expect(piped.code).toBe(0);
      expect(piped.stderr).toBe('');
      expect(piped.stdout).toMatch(/^applied migrations 1, 2/);
    } finally {
      await third.drop();
    }
  }, 60_000);

  it('`svc ledger verify` shows what it is doing on a terminal, and nothing on a pipe or with --json', async () => {
    const tenant = await createTestTenant(database.connection, 'sandbox');
    const onTerminal = await runCliOnTerminal(['ledger', 'verify', '--tenant-id', tenant.tenantId], env);
    expect(onTerminal.code, onTerminal.output).toBe(0);
    expect(onTerminal.output).toContain(`ledger verify: reading the ledger of ${tenant.tenantId}`);
    expect(onTerminal.output).toContain('ok: no problems found');
    // Amounts carry their unit.
    expect(onTerminal.output).toMatch(/escrow \(0 intents\) {2}0 cents/);

    const json = await runCliOnTerminal(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], env);
    expect(json.output).not.toContain('ledger verify:');
    expect(JSON.parse(json.output.trim())).toMatchObject({ tenant_id: tenant.tenantId, ok: true });

    const piped = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId], env);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('');
  }, 60_000);

  it('`svc audit verify` shows the files and ledger lines it checks on a terminal, and nothing on a pipe', async () => {
    const tenant = await createTestTenant(database.connection, 'sandbox');
    const app = await buildTestApp(database.connection);
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-bundle-'));
    try {
      const job = (await app.inject({ method: 'POST', url: '/v1/compliance/audit-exports', headers: bearer(tenant.adminKey), payload: { disclosure_tier: 'standard', retention_hours: 24 } })).json();
      const download = await app.inject({ method: 'POST', url: `/v1/compliance/audit-exports/${job.job_id}/bundle`, headers: bearer(job.download_token) });
      expect(download.statusCode, download.body).toBe(200);
      const bundlePath = path.join(directory, 'bundle.zip');
      fs.writeFileSync(bundlePath, download.rawPayload);

      const onTerminal = await runCliOnTerminal(['audit', 'verify', '--bundle', bundlePath], {});
      expect(onTerminal.code, onTerminal.output).toBe(0);
      expect(onTerminal.output).toMatch(/audit verify: (reading|file 1\/)/);
      expect(onTerminal.output).toContain('ok: no problems found');

      const piped = await runCli(['audit', 'verify', '--bundle', bundlePath], {});
      expect(piped.code).toBe(0);
      expect(piped.stderr).toBe('');
    } finally {
      await app.close();
      fs.rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('svc key register', () => {
  it('registers keys for a live tenant as the registry route does, and refuses what the route refuses', async () => {
    const tenant = await createTestTenant(database.connection, 'live');
    // Two valid Ed25519 public keys (RFC 8032 section 7.1, tests 1 and 2).
    const first = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
    const second = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';

    const registered = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'agent-1', '--public-key', first, '--kind', 'agent', '--json'], env);
    expect(registered.code, registered.stderr).toBe(0);
    expect(JSON.parse(registered.stdout)).toMatchObject({ object: 'registered_key', kind: 'agent', subject: 'agent-1', public_key_ed25519_hex: first, registered_by: 'cli', revoked_at: null });

    // Base64 of the same 32 bytes is accepted too.
    const base64 = Buffer.from(second, 'hex').toString('base64');
    const fromBase64 = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'operator-1', '--public-key', base64, '--kind', 'operator'], env);
    expect(fromBase64.code, fromBase64.stderr).toBe(0);
    expect(fromBase64.stdout).toContain(second);

    // The registry route lists what the CLI registered.
    const app = await buildTestApp(database.connection);
    try {
      const listed = await app.inject({ method: 'GET', url: '/v1/registry/keys?kind=agent', headers: bearer(tenant.adminKey) });
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data).toEqual([expect.objectContaining({ subject: 'agent-1', public_key_ed25519_hex: first, registered_by: 'cli' })]);
    } finally {
      await app.close();
    }

    const again = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'agent-1', '--public-key', first, '--kind', 'agent'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('registry.key_already_registered');

    const taken = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'agent-1', '--public-key', second, '--kind', 'agent'], env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('registry.agent_key_id_taken');

    const badKey = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'agent-3', '--public-key', 'abcd', '--kind', 'agent'], env);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('registry.public_key_invalid');

    const unknownTenant = await runCli(['key', 'register', '--tenant-id', 'nobody', '--key-id', 'agent-4', '--public-key', second, '--kind', 'agent'], env);
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr).toContain('tenant.not_found');

    const badKind = await runCli(['key', 'register', '--tenant-id', tenant.tenantId, '--key-id', 'agent-5', '--public-key', second, '--kind', 'robot'], env);
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toContain('usage: svc key register ');
  }, 60_000);
});

describe('an unreachable DATABASE_URL', () => {
  it('is named in one line, exit 1', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: 'postgresql://svc:hunter2@127.0.0.1:1/svc' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('DATABASE_URL: cannot connect');
    expect(result.stderr).not.toContain('hunter2');
  });
});
