// `svc key create --scopes` as an operator meets it: presets expanded and the key's scopes echoed by --json, an
// unknown scope refused with its code (exit 1), and a minted restricted key seeing exactly its scopes' MCP tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { runCli } from '../../helpers/server-process.ts';

let database: TestDatabase;
let env: Record<string, string>;
const tenantId = 'mcp-cli';

beforeAll(async () => {
  database = await createTestDatabase();
  env = { DATABASE_URL: database.url! };
  const created = await runCli(['tenant', 'create', '--tenant-id', tenantId, '--environment', 'sandbox', '--json'], env);
  expect(created.code, created.stderr).toBe(0);
});

afterAll(async () => {
  await database?.drop();
});

describe('svc key create --scopes', () => {
  it('echoes the key\'s scopes with --json, presets expanded, and the key carries them', async () => {
    const result = await runCli(['key', 'create', '--tenant-id', tenantId, '--role', 'agent', '--scopes', 'mcp-sandbox-agent,mcp.settlement:write', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer).toMatchObject({ role: 'agent', key_kind: 'restricted', scopes: ['mcp.discovery:read', 'mcp.sandbox:write', 'mcp.settlement:write', 'mcp.spend:write'] });
    expect(answer.api_key).toMatch(/^svc_rk_sandbox_/);

    const app = await buildTestApp(database.connection);
    try {
      const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(answer.api_key) });
      expect(principal.json().mcp_scopes).toEqual(answer.scopes);
    } finally {
      await app.close();
    }
  });

  it('echoes an empty scope list and key_kind standard for a key without --scopes', async () => {
    const result = await runCli(['key', 'create', '--tenant-id', tenantId, '--role', 'auditor', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ role: 'auditor', key_kind: 'standard', scopes: [] });
  });

  it('refuses an unknown scope with api_key.scope_unknown (exit 1), naming it, as one JSON line under --json', async () => {
    const result = await runCli(['key', 'create', '--tenant-id', tenantId, '--role', 'agent', '--scopes', 'mcp.spend:write,bogus', '--json'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const { error } = JSON.parse(result.stdout);
    expect(error).toMatchObject({ code: 'api_key.scope_unknown', message: expect.stringContaining('"bogus"'), details: { unknown_scopes: ['bogus'] } });
  });
});
