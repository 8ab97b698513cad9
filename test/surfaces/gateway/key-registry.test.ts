// The tenant key registry over HTTP on a real Postgres, and the service function the operator CLI registers with.
import { generateKeyPairSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { registerKey } from '../../../src/services/key-registry-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

function freshPublicKeyHex(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const register = (key: string, body: object) => app.inject({ method: 'POST', url: '/v1/registry/keys', headers: bearer(key), payload: body });

describe('key registry', () => {
  it('registers principal, agent and operator keys and lists them newest first', async () => {
    const made = [];
    for (const [kind, subject] of [['principal', 'did:principal:alice'], ['agent', 'agent-1'], ['operator', 'did:operator:ops']]) {
      const response = await register(acme.adminKey, { kind, subject, public_key_ed25519_hex: freshPublicKeyHex() });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ object: 'registered_key', kind, subject, registered_by: 'api', revoked_at: null, id: expect.stringMatching(/^rkey_[0-9a-f]{32}$/) });
      made.push(response.json().id);
    }
    const list = (await app.inject({ url: '/v1/registry/keys', headers: bearer(acme.adminKey) })).json();
    expect(list.data.map((key: { id: string }) => key.id)).toEqual([...made].reverse());
    const agents = (await app.inject({ url: '/v1/registry/keys?kind=agent', headers: bearer(acme.adminKey) })).json();
    expect(agents.data).toHaveLength(1);
    expect(agents.data[0].subject).toBe('agent-1');
  });

  it('refuses a string that is not an Ed25519 point, and a small-order point', async () => {
    for (const hex of ['ff'.repeat(32), '00'.repeat(32), `01${'00'.repeat(31)}`]) {
      const response = await register(acme.adminKey, { kind: 'principal', subject: 'did:x', public_key_ed25519_hex: hex });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('registry.public_key_invalid');
    }
    const malformed = await register(acme.adminKey, { kind: 'principal', subject: 'did:x', public_key_ed25519_hex: 'AB'.repeat(32) });
    expect(malformed.json().error.code).toBe('request.invalid');
  });

  it('refuses the same live key twice, and a second live key for one agent key id', async () => {
    const publicKey = freshPublicKeyHex();
    expect((await register(acme.adminKey, { kind: 'principal', subject: 'did:dup', public_key_ed25519_hex: publicKey })).statusCode).toBe(201);
    const again = await register(acme.adminKey, { kind: 'principal', subject: 'did:dup', public_key_ed25519_hex: publicKey });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('registry.key_already_registered');
    // A principal may rotate: a second, different key for the same DID is fine.
    expect((await register(acme.adminKey, { kind: 'principal', subject: 'did:dup', public_key_ed25519_hex: freshPublicKeyHex() })).statusCode).toBe(201);

    const first = await register(acme.adminKey, { kind: 'agent', subject: 'agent-dup', public_key_ed25519_hex: freshPublicKeyHex() });
    const second = await register(acme.adminKey, { kind: 'agent', subject: 'agent-dup', public_key_ed25519_hex: freshPublicKeyHex() });
    expect(second.statusCode).toBe(409);
    expect(second.json().error.code).toBe('registry.agent_key_id_taken');
    // After revoking the first, the key id can be given a new key.
    await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${first.json().id}`, headers: bearer(acme.adminKey) });
    expect((await register(acme.adminKey, { kind: 'agent', subject: 'agent-dup', public_key_ed25519_hex: freshPublicKeyHex() })).statusCode).toBe(201);
  });

  it('requires agent subjects to be recognition-proof key ids', async () => {
    const response = await register(acme.adminKey, { kind: 'agent', subject: 'Agent One', public_key_ed25519_hex: freshPublicKeyHex() });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.fields[0].path).toBe('/subject');
  });

  it('revokes idempotently, keeping the first revocation time', async () => {
    const key = (await register(acme.adminKey, { kind: 'operator', subject: 'did:op:2', public_key_ed25519_hex: freshPublicKeyHex() })).json();
    const first = (await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${key.id}`, headers: bearer(acme.adminKey) })).json();
    const second = (await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${key.id}`, headers: bearer(acme.adminKey) })).json();
    expect(first.revoked_at).not.toBeNull();
    expect(second.revoked_at).toBe(first.revoked_at);
  });

  it('keeps tenants apart: another tenant neither lists nor revokes our keys', async () => {
    const key = (await register(acme.adminKey, { kind: 'principal', subject: 'did:private', public_key_ed25519_hex: freshPublicKeyHex() })).json();
    const theirs = (await app.inject({ url: '/v1/registry/keys', headers: bearer(globex.adminKey) })).json();
    expect(theirs.data.find((item: { id: string }) => item.id === key.id)).toBeUndefined();
    const revoke = await app.inject({ method: 'DELETE', url: `/v1/registry/keys/${key.id}`, headers: bearer(globex.adminKey) });
    expect(revoke.statusCode).toBe(404);
    expect(revoke.json().error.code).toBe('registry.key_not_found');
    const ours = (await app.inject({ url: `/v1/registry/keys?subject=did:private`, headers: bearer(acme.adminKey) })).json();
    expect(ours.data[0].revoked_at).toBeNull();
  });

  it('lets auditors read but not write, and agents do neither', async () => {
    const auditor = await acme.key('auditor');
    expect((await app.inject({ url: '/v1/registry/keys', headers: bearer(auditor) })).statusCode).toBe(200);
    expect((await register(auditor, { kind: 'principal', subject: 'did:a', public_key_ed25519_hex: freshPublicKeyHex() })).statusCode).toBe(403);
    const agent = await acme.key('agent');
    expect((await app.inject({ url: '/v1/registry/keys', headers: bearer(agent) })).statusCode).toBe(403);
  });

  it('pages with next_cursor', async () => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = (await app.inject({ url: `/v1/registry/keys?limit=3${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer(acme.adminKey) })).json();
      page.data.forEach((key: { id: string }) => seen.add(key.id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    const all = (await app.inject({ url: '/v1/registry/keys?limit=200', headers: bearer(acme.adminKey) })).json();
    expect(seen.size).toBe(all.data.length);
    expect(pages).toBeGreaterThan(1);
  });
});

describe('registerKey, the service function behind the route and the CLI', () => {
  it('registers with its source, listed by the route and filterable by registered_by', async () => {
    const db = new Database({ ...database.connection, max: 1 });
    try {
      const publicKeyHex = freshPublicKeyHex();
      const key = await registerKey(db, acme.tenantId, { kind: 'agent', subject: 'agent-cli', publicKeyHex, registeredBy: 'cli' });
      expect(key).toMatchObject({ tenantId: acme.tenantId, kind: 'agent', subject: 'agent-cli', registeredBy: 'cli', revokedAt: null });
      const listed = (await app.inject({ url: '/v1/registry/keys?registered_by=cli', headers: bearer(acme.adminKey) })).json();
      expect(listed.data).toEqual([expect.objectContaining({ id: key.registeredKeyId, subject: 'agent-cli', public_key_ed25519_hex: publicKeyHex, registered_by: 'cli' })]);
      const badFilter = await app.inject({ url: '/v1/registry/keys?registered_by=magic', headers: bearer(acme.adminKey) });
      expect(badFilter.statusCode).toBe(400);

      await registerKey(db, acme.tenantId, { kind: 'principal', subject: 'did:principal:cli', publicKeyHex, registeredBy: 'cli' });
      const refusals: [Parameters<typeof registerKey>[1], Parameters<typeof registerKey>[2], string][] = [
        ['no-such-tenant', { kind: 'agent', subject: 'agent-x', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'tenant.not_found'],
        ['Not A Tenant!', { kind: 'agent', subject: 'agent-x', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'tenant.not_found'],
        [acme.tenantId, { kind: 'agent', subject: 'agent-cli', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'registry.agent_key_id_taken'],
        [acme.tenantId, { kind: 'principal', subject: 'did:principal:cli', publicKeyHex, registeredBy: 'cli' }, 'registry.key_already_registered'],
        [acme.tenantId, { kind: 'agent', subject: 'Agent CLI', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'request.invalid'],
        [acme.tenantId, { kind: 'robot' as never, subject: 'r', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'request.invalid'],
        [acme.tenantId, { kind: 'principal', subject: '', publicKeyHex: freshPublicKeyHex(), registeredBy: 'cli' }, 'request.invalid'],
        [acme.tenantId, { kind: 'principal', subject: 'did:x', publicKeyHex: 'AB'.repeat(32), registeredBy: 'cli' }, 'registry.public_key_invalid'],
        [acme.tenantId, { kind: 'principal', subject: 'did:x', publicKeyHex: `01${'00'.repeat(31)}`, registeredBy: 'cli' }, 'registry.public_key_invalid'],
      ];
      for (const [tenantId, registration, code] of refusals) {
        await expect(registerKey(db, tenantId, registration), code).rejects.toMatchObject({ code });
      }
    } finally {
      await db.close();
    }
  });
});
