// Session JWTs on protected routes: a valid token works with the role of its membership; every forged, confused,
// stale or foreign token is refused with 401 in the envelope, without echoing the token.
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt, type JwtAudience } from '../../../src/credentials/gateway-jwt.ts';
import { Database } from '../../../src/infra/database.ts';
import { GatewayKeyring, newKeyFileEntry } from '../../../src/infra/gateway-keys.ts';
import { createUser, type CreatedMembership } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { josePrivateKeyOf } from '../../helpers/jose-keys.ts';

// A key whose seed the test knows, so that jose can sign with it (josePrivateKeyOf).
const keyEntry = newKeyFileEntry();
let database: TestDatabase;
let app: FastifyInstance;
let system: Database;
let admin: CreatedMembership;
let auditor: CreatedMembership;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { gatewayKeys: new GatewayKeyring({ keys: [keyEntry] }) });
  system = new Database({ ...database.connection, max: 2 });
  await createTestTenant(database.connection, 'sandbox', 'acme');
  await createTestTenant(database.connection, 'live', 'globex');
  admin = await createUser(system, { tenantId: 'acme', email: 'admin@acme.example', role: 'admin' });
  auditor = await createUser(system, { tenantId: 'acme', email: 'auditor@acme.example', role: 'auditor' });
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const adminRoute = '/v1/admin/api-keys';

interface TokenOptions {
  readonly member?: CreatedMembership;
  readonly roles?: unknown;
  readonly audience?: JwtAudience;
  readonly keyring?: GatewayKeyring;
  readonly now?: Date;
  readonly expiresInSeconds?: number;
  readonly tenantId?: string;
  readonly subject?: string;
}

function token(options: TokenOptions = {}): Promise<string> {
  const member = options.member ?? admin;
  return signGatewayJwt(options.keyring ?? app.gatewayKeys, { roles: options.roles ?? [member.role] }, {
    audience: options.audience ?? jwtAudiences.session,
    subject: options.subject ?? member.userId,
    tenantId: options.tenantId ?? member.tenantId,
    expiresInSeconds: options.expiresInSeconds ?? 900,
    ...(options.now ? { now: options.now } : {}),
  });
}

const secondsAgo = (seconds: number) => new Date(Date.now() - seconds * 1000);

async function expectRefused(presented: string, code = 'auth.credential_invalid', url = adminRoute) {
  const response = await app.inject({ url, headers: bearer(presented) });
  expect(response.statusCode, presented).toBe(401);
  const body = response.json();
  expect(body.error.code).toBe(code);
  expect(body.request_id).toMatch(/\S/);
  expect(response.headers['x-request-id']).toBe(body.request_id);
  for (const part of presented.split('.').filter((segment) => segment.length > 8)) expect(response.body).not.toContain(part);
}

describe('a valid session token', () => {
  it('works on the principal route and on an admin route, with the role of its membership', async () => {
    const principal = await app.inject({ url: '/v1/auth/principal', headers: bearer(await token()) });
    expect(principal.statusCode).toBe(200);
    expect(principal.json()).toMatchObject({ tenant_id: 'acme', key_kind: 'session', subject: admin.userId, roles: ['admin'], mcp_scopes: [] });
    expect((await app.inject({ url: adminRoute, headers: bearer(await token()) })).statusCode).toBe(200);

    const auditorToken = await token({ member: auditor });
    expect((await app.inject({ url: '/v1/auth/principal', headers: bearer(auditorToken) })).json().service_account_role).toBe('auditor');
    const forbidden = await app.inject({ url: adminRoute, headers: bearer(auditorToken) });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('auth.role_insufficient');
  });

  it('is accepted within the 30 s clock tolerance, and x-tenant-id must still name its tenant', async () => {
    // Expired 10 s ago, and not valid for another 10 s: both within tolerance.
    expect((await app.inject({ url: adminRoute, headers: bearer(await token({ now: secondsAgo(910) })) })).statusCode).toBe(200);
    expect((await app.inject({ url: adminRoute, headers: bearer(await token({ now: secondsAgo(-10) })) })).statusCode).toBe(200);
    const mismatch = await app.inject({ url: adminRoute, headers: { ...bearer(await token()), 'x-tenant-id': 'globex' } });
    expect(mismatch.statusCode).toBe(401);
    expect(mismatch.json().error.code).toBe('request.tenant_hint_mismatch');
  });
});

describe('refused with 401', () => {
  it('alg none', async () => {
    const [, payload] = (await token()).split('.') as [string, string, string];
    await expectRefused(`${b64({ alg: 'none', kid: app.gatewayKeys.active.kid, typ: 'JWT' })}.${payload}.`);
    await expectRefused(`${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`);
  });

  it('HS256 signed with our public key (raw bytes, JWK x, SPKI PEM)', async () => {
    const [, payload] = (await token()).split('.') as [string, string, string];
    const header = b64({ alg: 'HS256', kid: app.gatewayKeys.active.kid, typ: 'JWT' });
    const publicKey = app.gatewayKeys.active.publicKey;
    const secrets = [
      Buffer.from(app.gatewayKeys.active.publicKeyHex, 'hex'),
      Buffer.from(publicKey.export({ format: 'jwk' }).x!),
      Buffer.from(publicKey.export({ format: 'pem', type: 'spki' }) as string),
    ];
    for (const secret of secrets) {
      await expectRefused(`${header}.${payload}.${createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url')}`);
    }
  });

  it('a wrong audience, including a download token on an admin route and on the principal route', async () => {
    await expectRefused(await token({ audience: jwtAudiences.auditExportDownload }));
    await expectRefused(await token({ audience: jwtAudiences.auditExportDownload }), 'auth.credential_invalid', '/v1/auth/principal');
    await expectRefused(await token({ audience: jwtAudiences.capability }));
    // Audience is also checked before expiry: an expired download token is "invalid", not "expired".
    await expectRefused(await token({ audience: jwtAudiences.auditExportDownload, now: secondsAgo(3600) }));
  });

  it('expired (past the tolerance): auth.credential_expired', async () => {
    await expectRefused(await token({ now: secondsAgo(900 + 60) }), 'auth.credential_expired');
  });

  it('not yet valid (past the tolerance)', async () => {
    await expectRefused(await token({ now: secondsAgo(-60) }));
    await expectRefused(await token({ now: secondsAgo(-3600) }));
  });

  it('an unknown kid, a missing kid', async () => {
    const [, payload, signature] = (await token()).split('.') as [string, string, string];
    await expectRefused(`${b64({ alg: 'EdDSA', kid: 'someone-else', typ: 'JWT' })}.${payload}.${signature}`);
    await expectRefused(`${b64({ alg: 'EdDSA', typ: 'JWT' })}.${payload}.${signature}`);
  });

  it('a tampered payload (role raised, tenant changed)', async () => {
    const [header, payload, signature] = (await token({ member: auditor })).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    await expectRefused(`${header}.${b64({ ...claims, roles: ['admin'] })}.${signature}`);
    await expectRefused(`${header}.${b64({ ...claims, tid: 'globex' })}.${signature}`);
    await expectRefused(`${header}.${payload}.${signature.slice(0, -4)}AAAA`);
  });

  it('a token signed by another keyring, even under our kid', async () => {
    const stranger = new GatewayKeyring({ keys: [{ ...newKeyFileEntry(), kid: app.gatewayKeys.active.kid }] });
    await expectRefused(await token({ keyring: stranger }));
    await expectRefused(await token({ keyring: new GatewayKeyring({ keys: [newKeyFileEntry()] }) }));
  });

  it('our signature over claims we never issue: another issuer, a long life, odd roles, a subject that is not a user', async () => {
    const key = app.gatewayKeys.active;
    const foreignIssuer = await new SignJWT({ tid: 'acme', roles: ['admin'] })
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
      .setIssuer('someone-else').setSubject(admin.userId).setAudience('svc-session').setIssuedAt().setExpirationTime('10m').setJti('j1')
      .sign(josePrivateKeyOf(keyEntry));
    await expectRefused(foreignIssuer);
    await expectRefused(await token({ expiresInSeconds: 24 * 3600 }));
    await expectRefused(await token({ roles: ['admin', 'auditor'] }));
    await expectRefused(await token({ roles: ['owner'] }));
    await expectRefused(await token({ roles: 'admin' }));
    await expectRefused(await token({ subject: 'key_0123456789abcdef0123456789abcdef' }));
    await expectRefused(await token({ tenantId: 'Not A Tenant' }));
  });

  it('garbage, and a bearer longer than any session token', async () => {
    await expectRefused('not.a.jwt');
    await expectRefused(`${'eyJ'.repeat(2000)}.e30.AAAA`);
  });

  it('a genuine token whose membership is gone or whose role changed: auth.credential_revoked', async () => {
    // admin is not a member of globex.
    await expectRefused(await token({ tenantId: 'globex' }), 'auth.credential_revoked');
    // The membership is auditor; a token claiming admin is not the current truth.
    await expectRefused(await token({ member: auditor, roles: ['admin'] }), 'auth.credential_revoked');
    const leaver = await createUser(system, { tenantId: 'acme', email: 'leaver@acme.example', role: 'operator' });
    const leaverToken = await token({ member: leaver });
    await system.system((tx) => tx.query('DELETE FROM tenant_memberships WHERE tenant_id = $1 AND user_id = $2', ['acme', leaver.userId]));
    await expectRefused(leaverToken, 'auth.credential_revoked', '/v1/auth/principal');
  });
});
