// Gateway signing keys: loading, first-start creation, rotation, and JWTs verified through our published JWKS.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt, verifyGatewayJwt } from '../../../src/credentials/gateway-jwt.ts';
import {
  GatewayKeyring, loadGatewayKeys, newKeyFileEntry, readKeyFile, removeFromKeyFile, rotateKeyFile, stageKeyFile, writeKeyFile,
} from '../../../src/infra/gateway-keys.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { josePrivateKeyOf } from '../../helpers/jose-keys.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const tokenOptions = { audience: jwtAudiences.session, subject: 'user_1', tenantId: 'acme', expiresInSeconds: 900 } as const;
const temporaryDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'svc-keys-'));
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('loading the key set', () => {
  it('creates a key file with one active key on first start, mode 0600, and reuses it after', () => {
    const dataDir = temporaryDir();
    const first = loadGatewayKeys({ dataDir });
    expect(first.created).toBe(true);
    const filePath = path.join(dataDir, 'signing-keys.json');
    expect(fs.statSync(filePath).mode & 0o777).toBe(0o600);
    const second = loadGatewayKeys({ dataDir });
    expect(second.created).toBe(false);
    expect(second.keyring.active.kid).toBe(first.keyring.active.kid);
  });

  it('prefers SVC_SIGNING_KEYS, then SVC_SIGNING_KEY_FILE', () => {
    const fromJson = loadGatewayKeys({ signingKeysJson: JSON.stringify({ keys: [{ ...newKeyFileEntry(), kid: 'from-json' }] }), dataDir: temporaryDir() });
    expect(fromJson.keyring.active.kid).toBe('from-json');
    const filePath = path.join(temporaryDir(), 'keys.json');
    writeKeyFile(filePath, { keys: [{ ...newKeyFileEntry(), kid: 'from-file' }] });
    expect(loadGatewayKeys({ signingKeyFile: filePath, dataDir: temporaryDir() }).keyring.active.kid).toBe('from-file');
    expect(() => loadGatewayKeys({ signingKeyFile: path.join(temporaryDir(), 'missing.json'), dataDir: temporaryDir() })).toThrow(/cannot read/);
  });

  it.each([
    ['no keys', { keys: [] }, /no keys/],
    ['two active keys', { keys: [newKeyFileEntry(), newKeyFileEntry()] }, /exactly one active/],
    ['a bad seed', { keys: [{ ...newKeyFileEntry(), seed_hex: 'zz' }] }, /seed_hex/],
    ['a bad status', { keys: [{ ...newKeyFileEntry(), status: 'spare' }] }, /status/],
    ['a duplicate kid', { keys: [{ ...newKeyFileEntry(), kid: 'a' }, { ...newKeyFileEntry(), kid: 'a', status: 'retired' }] }, /share a kid/],
  ])('refuses a key set with %s', (_name, file, message) => {
    expect(() => new GatewayKeyring(file as never)).toThrow(message);
  });

  it('derives the published key from the seed (RFC 8032 test 1 seed)', () => {
    const keyring = new GatewayKeyring({
      keys: [{ kid: 'rfc8032', seed_hex: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', status: 'active', created_at: '' }],
    });
    expect(keyring.active.publicKeyHex).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  });
});

describe('gateway JWTs', () => {
  const keyEntry = newKeyFileEntry();
  const keyring = new GatewayKeyring({ keys: [keyEntry] });

  it('signs and verifies, carrying tid, and binds the audience', async () => {
    const token = await signGatewayJwt(keyring, { roles: ['admin'] }, tokenOptions);
    const payload = await verifyGatewayJwt(keyring, token, jwtAudiences.session);
    expect(payload).toMatchObject({ tid: 'acme', sub: 'user_1', aud: 'svc-session', iss: 'svc-gateway', roles: ['admin'] });
    await expect(verifyGatewayJwt(keyring, token, jwtAudiences.auditExportDownload)).rejects.toMatchObject({ reason: 'invalid' });
  });

  it('signs the very bytes jose\'s SignJWT signs for the same claims', async () => {
    const now = new Date('2026-11-25T10:00:00.500Z');
    const claims = { intent_id: 'int_1', allowed_tools: ['search.web'], amount_cents: 500, sub: 'placed first' };
    const token = await signGatewayJwt(keyring, claims, { ...tokenOptions, now });
    const { jti } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string };
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expected = await new SignJWT({ ...claims, tid: tokenOptions.tenantId })
      .setProtectedHeader({ alg: 'EdDSA', kid: keyring.active.kid, typ: 'JWT' })
      .setIssuer('svc-gateway')
      .setSubject(tokenOptions.subject)
      .setAudience(tokenOptions.audience)
      .setIssuedAt(issuedAt)
      .setNotBefore(issuedAt)
      .setExpirationTime(issuedAt + tokenOptions.expiresInSeconds)
      .setJti(jti)
      .sign(josePrivateKeyOf(keyEntry));
    expect(token).toBe(expected);
    await expect(signGatewayJwt(keyring, {}, { ...tokenOptions, now: new Date(Number.NaN) })).rejects.toThrow(TypeError);
  });

  it('rejects alg none, HS256 keyed with our public key, unknown and missing kid, tampering and expiry', async () => {
    const good = await signGatewayJwt(keyring, {}, tokenOptions);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const algNone = `${b64({ alg: 'none', kid: keyring.active.kid })}.${payload}.`;
    const hsHeader = b64({ alg: 'HS256', kid: keyring.active.kid, typ: 'JWT' });
    const hsSignature = createHmac('sha256', Buffer.from(keyring.active.publicKeyHex, 'hex')).update(`${hsHeader}.${payload}`).digest('base64url');
    const unknownKid = `${b64({ alg: 'EdDSA', kid: 'someone-else', typ: 'JWT' })}.${payload}.${signature}`;
    const missingKid = `${b64({ alg: 'EdDSA', typ: 'JWT' })}.${payload}.${signature}`;
    const tampered = `${header}.${b64({ ...claims, tid: 'globex' })}.${signature}`;
    for (const token of [algNone, `${hsHeader}.${payload}.${hsSignature}`, unknownKid, missingKid, tampered, 'not.a.jwt', '']) {
      await expect(verifyGatewayJwt(keyring, token, jwtAudiences.session)).rejects.toMatchObject({ reason: 'invalid' });
    }
    const expired = await signGatewayJwt(keyring, {}, { ...tokenOptions, expiresInSeconds: 60, now: new Date(Date.now() - 3_600_000) });
    await expect(verifyGatewayJwt(keyring, expired, jwtAudiences.session)).rejects.toMatchObject({ reason: 'expired' });
    const future = await signGatewayJwt(keyring, {}, { ...tokenOptions, now: new Date(Date.now() + 3_600_000) });
    await expect(verifyGatewayJwt(keyring, future, jwtAudiences.session)).rejects.toMatchObject({ reason: 'invalid' });
  });

  it('refuses a token signed by a key that is not ours', async () => {
    const stranger = new GatewayKeyring({ keys: [{ ...newKeyFileEntry(), kid: keyring.active.kid }] });
    const token = await signGatewayJwt(stranger, {}, tokenOptions);
    await expect(verifyGatewayJwt(keyring, token, jwtAudiences.session)).rejects.toMatchObject({ reason: 'invalid' });
  });
});

describe('/.well-known/jwks.json and rotation', () => {
  let database: TestDatabase;
  const running: FastifyInstance[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const app of running) await app.close();
    await database?.drop();
  });

  async function serve(keyFile: string): Promise<{ app: FastifyInstance; jwksUrl: URL }> {
    const app = await buildTestApp(database.connection, { gatewayKeys: new GatewayKeyring(readKeyFile(keyFile)) });
    running.push(app);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    return { app, jwksUrl: new URL('/.well-known/jwks.json', address) };
  }

  const verifyRemote = (jwksUrl: URL, token: string) =>
    jwtVerify(token, createRemoteJWKSet(jwksUrl), { algorithms: ['EdDSA'], audience: 'svc-session', issuer: 'svc-gateway' });

  it('publishes OKP Ed25519 keys that verify our JWTs; old and new verify after rotation until the old key is retired', async () => {
    const keyFile = path.join(temporaryDir(), 'keys.json');
    writeKeyFile(keyFile, { keys: [newKeyFileEntry()] });

    const before = await serve(keyFile);
    const jwks = (await (await fetch(before.jwksUrl)).json()) as { keys: Array<Record<string, string>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const oldToken = await signGatewayJwt(before.app.gatewayKeys, {}, tokenOptions);
    await expect(verifyRemote(before.jwksUrl, oldToken)).resolves.toBeDefined();

    // Across replicas: stage first (published, not signing), then rotate.
    writeKeyFile(keyFile, stageKeyFile(readKeyFile(keyFile)));
    const staged = await serve(keyFile);
    expect(((await (await fetch(staged.jwksUrl)).json()) as { keys: unknown[] }).keys).toHaveLength(2);
    expect(staged.app.gatewayKeys.active.kid).toBe(before.app.gatewayKeys.active.kid);

    writeKeyFile(keyFile, rotateKeyFile(readKeyFile(keyFile)));
    const after = await serve(keyFile);
    const newToken = await signGatewayJwt(after.app.gatewayKeys, {}, tokenOptions);
    expect(after.app.gatewayKeys.active.kid).not.toBe(before.app.gatewayKeys.active.kid);
    await expect(verifyRemote(after.jwksUrl, oldToken)).resolves.toBeDefined();
    await expect(verifyRemote(after.jwksUrl, newToken)).resolves.toBeDefined();

    writeKeyFile(keyFile, removeFromKeyFile(readKeyFile(keyFile), before.app.gatewayKeys.active.kid));
    const retired = await serve(keyFile);
    await expect(verifyRemote(retired.jwksUrl, oldToken)).rejects.toThrow();
    await expect(verifyRemote(retired.jwksUrl, newToken)).resolves.toBeDefined();
  });

  it('refuses to retire the active key', () => {
    const file = { keys: [newKeyFileEntry()] };
    expect(() => removeFromKeyFile(file, file.keys[0]!.kid)).toThrow(/active/);
  });
});
