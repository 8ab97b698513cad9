// The ledger routes over HTTP on a real Postgres: the tip with a checkpoint verified offline (node:crypto and
// @noble/ed25519), the authority, paging through events, tenant isolation, and who may read.
import { createHash, createPublicKey, randomUUID, verify } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { queueLedgerTransaction } from '../../src/services/ledger-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { posting } from './support.ts';

noble.hashes.sha512 = sha512;

let testDatabase: TestDatabase;
let database: Database;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const acmeIntents = [randomUUID(), randomUUID(), randomUUID()];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database(testDatabase.connection);
  app = await buildTestApp(testDatabase.connection);
  acme = await createTestTenant(testDatabase.connection);
  globex = await createTestTenant(testDatabase.connection);
  // Three funds and one release: 8 rows.
  await database.tenant(acme.tenantId, async (tx) => {
    for (const intentId of acmeIntents) queueLedgerTransaction(tx, acme.tenantId, posting('fund', intentId, 1000));
    queueLedgerTransaction(tx, acme.tenantId, posting('release', acmeIntents[0]!, 1000));
  });
});

afterAll(async () => {
  await app?.close();
  await database?.close();
  await testDatabase?.drop();
});

const get = (key: string, url: string) => app.inject({ url: `/harbor${url}`, headers: bearer(key) });

/** What an auditor does offline with a checkpoint and a trusted public key. */
function checkpointVerifies(checkpoint: Record<string, unknown>, publicKeyHex: string): { node: boolean; noble: boolean } {
  const { tenant_id, ledger_seq, row_hash_hex, issued_at } = checkpoint;
  const message = Buffer.from(JSON.stringify({ tenant_id, ledger_seq, row_hash_hex, issued_at }), 'utf8');
  const digest = createHash('sha256').update(message).digest();
  expect(checkpoint.message_digest_sha256_hex).toBe(digest.toString('hex'));
  const signature = Buffer.from(checkpoint.ed25519_signature_hex as string, 'hex');
  const publicKey = Buffer.from(publicKeyHex, 'hex');
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]);
  return {
    node: verify(null, digest, createPublicKey({ key: spki, format: 'der', type: 'spki' }), signature),
    noble: noble.verify(signature, digest, publicKey),
  };
}

describe('GET /harbor/ledger/v1/tip', () => {
  it('answers the last row with a checkpoint signed by the gateway key', async () => {
    const response = await get(acme.adminKey, '/ledger/v1/tip');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const events = (await get(acme.adminKey, '/ledger/v1/events?after_seq=7')).json().events;
    expect(body).toMatchObject({ tenant: acme.tenantId, tenant_id: acme.tenantId, ledger_seq: 8, row_hash_hex: events[0].row_hash_hex });
    const { checkpoint } = body;
    expect(Object.keys(checkpoint)).toEqual([
      'tenant_id', 'ledger_seq', 'row_hash_hex', 'issued_at',
      'signing_public_key_ed25519_hex', 'message_digest_sha256_hex', 'ed25519_signature_hex', 'kid',
    ]);
    expect(checkpoint).toMatchObject({
      tenant_id: acme.tenantId,
      ledger_seq: 8,
      row_hash_hex: body.row_hash_hex,
      signing_public_key_ed25519_hex: app.gatewayKeys.active.publicKeyHex,
      kid: app.gatewayKeys.active.kid,
    });
    expect(checkpoint.issued_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(checkpointVerifies(checkpoint, app.gatewayKeys.active.publicKeyHex)).toEqual({ node: true, noble: true });
  });

  it('signs nothing else: a checkpoint with a changed field does not verify', async () => {
    const { checkpoint } = (await get(await acme.key('auditor'), '/ledger/v1/tip')).json();
    const forged = { ...checkpoint, ledger_seq: 9 };
    const message = Buffer.from(JSON.stringify({ tenant_id: forged.tenant_id, ledger_seq: 9, row_hash_hex: forged.row_hash_hex, issued_at: forged.issued_at }));
    const digest = createHash('sha256').update(message).digest();
    expect(noble.verify(Buffer.from(forged.ed25519_signature_hex, 'hex'), digest, Buffer.from(app.gatewayKeys.active.publicKeyHex, 'hex'))).toBe(false);
  });

  it('answers an empty ledger as seq 0 at the genesis hash, signed too', async () => {
    const body = (await get(globex.adminKey, '/ledger/v1/tip')).json();
    expect(body).toMatchObject({ tenant: globex.tenantId, tenant_id: globex.tenantId, ledger_seq: 0, row_hash_hex: '0'.repeat(64) });
    expect(body.checkpoint).toMatchObject({ tenant_id: globex.tenantId, ledger_seq: 0, row_hash_hex: '0'.repeat(64) });
    expect(checkpointVerifies(body.checkpoint, app.gatewayKeys.active.publicKeyHex)).toEqual({ node: true, noble: true });
  });
});

describe('GET /harbor/ledger/v1/authority', () => {
  it('publishes the signing key and every key a checkpoint may verify against', async () => {
    const response = await get(acme.adminKey, '/ledger/v1/authority');
    expect(response.statusCode).toBe(200);
    const active = app.gatewayKeys.active;
    expect(response.json()).toEqual({
      tenant: acme.tenantId,
      tenant_id: acme.tenantId,
      algorithm: 'ed25519',
      public_key_hex: active.publicKeyHex,
      kid: active.kid,
      verification_keys: [{ kid: active.kid, public_key_hex: active.publicKeyHex }],
    });
    expect(active.publicKeyHex).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('GET /harbor/ledger/v1/events', () => {
  it('pages through every row in order, then answers next_after_seq null', async () => {
    const seen: any[] = [];
    let afterSeq: number | null = 0;
    const pages: number[] = [];
    while (afterSeq !== null) {
      const response = await get(acme.adminKey, `/ledger/v1/events?after_seq=${afterSeq}&limit=3`);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ tenant: acme.tenantId, tenant_id: acme.tenantId });
      pages.push(body.events.length);
      seen.push(...body.events);
      afterSeq = body.next_after_seq;
    }
    expect(pages).toEqual([3, 3, 2]);
    expect(seen.map((event) => event.ledger_seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    let prev = '0'.repeat(64);
    for (const event of seen) {
      expect(event.prev_row_hash_hex).toBe(prev);
      const hash = createHash('sha256').update(Buffer.from(prev + event.body_hex, 'hex')).digest('hex');
      expect(event.row_hash_hex).toBe(hash);
      prev = hash;
    }
    expect(seen[0]).toEqual({
      ledger_seq: 1,
      transaction_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      intent_id: acmeIntents[0],
      entry_index: 0,
      account: `intent:${acmeIntents[0]}:escrow`,
      side: 'debit',
      amount_cents: 1000,
      currency: 'usd',
      event_kind: 'fund',
      recorded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      body_hex: expect.stringMatching(/^02/),
      prev_row_hash_hex: '0'.repeat(64),
      row_hash_hex: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(seen[7]).toMatchObject({ side: 'credit', event_kind: 'release', account: `intent:${acmeIntents[0]}:escrow` });
  });

  it('defaults to after_seq 0 and 64 events; a page that ends exactly at the tip says null', async () => {
    const body = (await get(acme.adminKey, '/ledger/v1/events')).json();
    expect(body.events).toHaveLength(8);
    expect(body.next_after_seq).toBeNull();
    const exact = (await get(acme.adminKey, '/ledger/v1/events?after_seq=4&limit=4')).json();
    expect(exact.events.map((event: { ledger_seq: number }) => event.ledger_seq)).toEqual([5, 6, 7, 8]);
    expect(exact.next_after_seq).toBeNull();
    expect((await get(acme.adminKey, '/ledger/v1/events?after_seq=8')).json()).toMatchObject({ events: [], next_after_seq: null });
  });

  it.each(['limit=0', 'limit=257', 'limit=abc', 'after_seq=-1', 'after_seq=1.5', 'cursor=3'])('refuses %s with 400', async (query) => {
    const response = await get(acme.adminKey, `/ledger/v1/events?${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('request.invalid');
  });

  it('accepts the largest page', async () => {
    expect((await get(acme.adminKey, '/ledger/v1/events?limit=256')).statusCode).toBe(200);
  });
});

describe('isolation and roles', () => {
  it('shows another tenant only its own, empty ledger', async () => {
    const events = (await get(globex.adminKey, '/ledger/v1/events')).json();
    expect(events).toEqual({ tenant: globex.tenantId, tenant_id: globex.tenantId, events: [], next_after_seq: null });
    const tip = (await get(globex.adminKey, '/ledger/v1/tip')).json();
    expect(tip.ledger_seq).toBe(0);
  });

  it('lets admin, operator and auditor read, refuses agent (403) and anonymous callers (401)', async () => {
    const keys = { operator: await acme.key('operator'), auditor: await acme.key('auditor'), agent: await acme.key('agent') };
    for (const path of ['/ledger/v1/tip', '/ledger/v1/authority', '/ledger/v1/events']) {
      expect((await get(keys.operator, path)).statusCode).toBe(200);
      expect((await get(keys.auditor, path)).statusCode).toBe(200);
      const agent = await get(keys.agent, path);
      expect(agent.statusCode).toBe(403);
      expect(agent.json().error.code).toBe('auth.role_insufficient');
      const anonymous = await app.inject({ url: `/harbor${path}` });
      expect(anonymous.statusCode).toBe(401);
    }
  });

  it('refuses an x-tenant-id that names another tenant', async () => {
    const response = await app.inject({ url: '/harbor/ledger/v1/tip', headers: { ...bearer(acme.adminKey), 'x-tenant-id': globex.tenantId } });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('request.tenant_hint_mismatch');
  });
});
