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

describe('groups, typos and wrong options', () => {
  const groups = [...new Set(cliCommands.filter((command) => command.name.includes(' ')).map((command) => command.name.split(' ')[0]!))];

  it('finds the groups (so the checks below cannot pass on none)', () => {
    expect(groups).toEqual(expect.arrayContaining(['tenant', 'key', 'ledger', 'audit', 'signing-key']));
  });

  it.each(groups)('`svc %s --help` lists that group\'s commands, exit 0', async (group) => {
    const help = await runCli([group, '--help'], {});
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout.startsWith(`usage: svc ${group} <command> [options]`)).toBe(true);
    for (const command of cliCommands.filter((entry) => entry.name.startsWith(`${group} `))) expect(help.stdout).toContain(`  ${command.name} `);
  });

  it('`svc help <group>` is the same page; a group without a command says one is needed, exit 2', async () => {
    expect((await runCli(['help', 'signing-key'], {})).stdout).toBe((await runCli(['signing-key', '-h'], {})).stdout);
    const bare = await runCli(['tenant'], {});
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('"svc tenant" needs a command');
    expect(bare.stderr).toContain('usage: svc tenant <command>');
  });

  it('a mistyped command gets "did you mean", with its group\'s usage when the group is right', async () => {
    const typo = await runCli(['tenant', 'craete'], {});
    expect(typo.code).toBe(2);
    expect(typo.stderr.split('\n')[0]).toBe('svc: unknown command "tenant craete"; did you mean "tenant create"?');
    expect(typo.stderr).toContain('usage: svc tenant <command>');
    expect((await runCli(['ledgr', 'verify'], {})).stderr).toContain('did you mean "ledger verify"?');
    // One word that is the second word of commands names them all.
    expect((await runCli(['verify'], {})).stderr).toContain('did you mean "ledger verify", "audit verify" or "receipt verify"?');
  });

  it('an unknown option gets the closest known ones; a missing value and a stray word are said in our words', async () => {
    const unknown = await runCli(['key', 'create', '--tenant', 'acme'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('svc: unknown option --tenant; did you mean --tenant-id?');
    for (const args of [['key', 'create', '--tenant-id'], ['key', 'create', '--tenant-id', '--role', 'agent']]) {
      const missing = await runCli(args, {});
      expect(missing.code).toBe(2);
      expect(missing.stderr.split('\n')[0]).toBe('svc: --tenant-id needs a value (one that starts with a dash is written --tenant-id=-…)');
      // Not Node's parser wording.
      expect(missing.stderr).not.toMatch(/argument missing|ambiguous|<value>/);
    }
    expect((await runCli(['migrate', '--json=yes'], {})).stderr.split('\n')[0]).toBe('svc: --json takes no value');
    expect((await runCli(['migrate', 'now'], {})).stderr.split('\n')[0]).toBe('svc: unexpected argument "now"');
  });

  it('--scopes with an unknown scope names it and suggests the closest, with every scope and preset in the details, before any database work', async () => {
    const result = await runCli(['key', 'create', '--tenant-id', 'nobody', '--role', 'agent', '--scopes', 'mcp-readonly,foo,mcp.spend:wrte'], { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/unused' });
    expect(result.code).toBe(1);
    const [first, details] = result.stderr.split('\n');
    expect(first).toBe('svc: api_key.scope_unknown: unknown scopes "foo", "mcp.spend:wrte": neither a catalogue scope at an allowed level nor a preset; did you mean "mcp.spend:write"?');
    expect(JSON.parse(details!.replace(/^ {2}details: /, ''))).toMatchObject({
      unknown_scopes: ['foo', 'mcp.spend:wrte'],
      known_scopes: expect.arrayContaining(['mcp.spend:write', 'mcp.discovery:read']),
      known_presets: ['mcp-readonly', 'mcp-spend-operator', 'mcp-sandbox-agent'],
      did_you_mean: ['mcp.spend:write'],
    });
  });

  it('with --json a failure is one JSON line on stdout, with its code, whatever failed', async () => {
    const usage = await runCli(['tenant', 'craete', '--json'], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('');
    expect(JSON.parse(usage.stdout)).toEqual({ error: { code: 'cli.usage', message: 'unknown command "tenant craete"; did you mean "tenant create"?', details: { did_you_mean: ['tenant create'] } } });

    const missingValue = await runCli(['key', 'create', '--tenant-id', '--json'], {});
    expect(missingValue.code).toBe(2);
    expect(JSON.parse(missingValue.stdout).error).toMatchObject({ code: 'cli.usage', message: expect.stringContaining('--tenant-id needs a value') });

    const operation = await runCli(['key', 'create', '--tenant-id', 'nobody', '--role', 'agent', '--json'], env);
    expect(operation.code).toBe(1);
    expect(operation.stderr).toBe('');
    expect(JSON.parse(operation.stdout)).toEqual({ error: { code: 'tenant.not_found', message: expect.any(String), details: { tenant_id: 'nobody' } } });

    const configuration = await runCli(['migrate', '--json'], { DATABASE_URL: 'mysql://db.example.com/svc' });
    expect(configuration.code).toBe(1);
    expect(JSON.parse(configuration.stdout).error).toMatchObject({ code: 'cli.configuration', message: expect.stringContaining('DATABASE_URL') });
  });

  it('without --json an operation\'s error details follow its code and message', async () => {
    const result = await runCli(['key', 'create', '--tenant-id', 'nobody', '--role', 'agent'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^svc: tenant\.not_found: .+\n {2}details: \{"tenant_id":"nobody"\}\n$/);
  });
});

describe('svc audit verify on what is not a bundle', () => {
  it('a missing file is one line (exit 2), with --json a JSON error; a key that is not a key is refused before any work', async () => {
    const missing = await runCli(['audit', 'verify', '--bundle', '/nonexistent/bundle.zip'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe('svc: cannot read --bundle /nonexistent/bundle.zip: no such file or directory (ENOENT)');
    expect(missing.stderr).not.toContain('open \'');
    const missingJson = await runCli(['audit', 'verify', '--bundle', '/nonexistent/bundle.zip', '--json'], {});
    expect(JSON.parse(missingJson.stdout).error).toMatchObject({ code: 'cli.usage', message: expect.stringContaining('ENOENT') });

    const badKey = await runCli(['audit', 'verify', '--bundle', '/nonexistent/bundle.zip', '--public-key', 'not-a-key'], {});
    expect(badKey.code).toBe(2);
    expect(badKey.stderr.split('\n')[0]).toBe('svc: --public-key must be 64 hex digits: an Ed25519 public key, as GET /harbor/ledger/v1/authority answers it');
    expect(badKey.stdout).toBe('');
  });

  it('a file that is not a bundle tells its problem without "job ? of ?" lines', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-not-bundle-'));
    try {
      const file = path.join(directory, 'notes.txt');
      fs.writeFileSync(file, 'not a zip');
      const result = await runCli(['audit', 'verify', '--bundle', file], {});
      expect(result.code).toBe(1);
      expect(result.stdout).toBe(`bundle ${file}: not verified, its manifest could not be read\n1 problem(s):\n  - not a readable ZIP (invalid zip data)\n`);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
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

      // Another deployment's key: the bundle is still read and described, and the signature is the problem.
      const otherKey = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
      const wrongKey = await runCli(['audit', 'verify', '--bundle', bundlePath, '--public-key', otherKey], {});
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stdout).toContain(`job ${job.job_id} of ${tenant.tenantId}`);
      expect(wrongKey.stdout).not.toContain('?');
      expect(wrongKey.stdout).toMatch(/ {2}- manifest signature: /);
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
