// Sandbox agent keys registered on first use, through the engine's own mutations on a real Postgres: an unregistered
// key's valid proof registers it and the mutation runs; a failed mutation keeps nothing; concurrent first uses of
// one key id end with one row, whichever transaction wins, and a different key for that id is refused.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519SignerFromSeed, type Ed25519Signer } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let sandbox: TestTenant;
let live: TestTenant;
const principal = party('did:principal:first-use');
const payee = party('did:payee:first-use');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  sandbox = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** POST /harbor/intents as the client sends it: the exact body bytes, and a proof over them by `signer`. */
function create(tenant: TestTenant, signer: Ed25519Signer, keyId: string, body = JSON.stringify(signedCreateBody({ tenantId: tenant.tenantId, principal, payee }))) {
  const { headerValue } = createRecognitionProof({
    signer, keyId, purpose: recognitionPurposes.intentCreate, tenantId: tenant.tenantId, method: 'POST', path: '/harbor/intents', body,
  });
  return app.inject({
    method: 'POST', url: '/harbor/intents', payload: body,
    headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json', 'x-svc-agent-recognition-proof': headerValue },
  });
}

async function agentKeys(tenant: TestTenant, keyId: string) {
  const response = await app.inject({ url: `/v1/registry/keys?kind=agent&subject=${keyId}`, headers: bearer(tenant.adminKey) });
  expect(response.statusCode).toBe(200);
  return response.json().data as { public_key_ed25519_hex: string; registered_by: string }[];
}

const freshSigner = () => ed25519SignerFromSeed(randomBytes(32));

describe('first use on engine mutations', () => {
  it('sandbox: an unregistered key\'s valid proof registers the key and the mutation runs', async () => {
    const signer = freshSigner();
    const response = await create(sandbox, signer, 'agent-engine-1');
    expect(response.statusCode, response.body).toBe(201);
    expect(await agentKeys(sandbox, 'agent-engine-1')).toEqual([
      expect.objectContaining({ public_key_ed25519_hex: signer.publicKey.hex, registered_by: 'first_use' }),
    ]);
    expect((await create(sandbox, signer, 'agent-engine-1')).statusCode).toBe(201);
    const impostor = await create(sandbox, freshSigner(), 'agent-engine-1');
    expect([impostor.statusCode, impostor.json().error.code]).toEqual([401, 'recognition.key_mismatch']);
    expect(await agentKeys(sandbox, 'agent-engine-1')).toHaveLength(1);
  });

  it('sandbox: a mutation that fails after the proof verified keeps no key (one transaction)', async () => {
    const signer = freshSigner();
    const body = JSON.stringify({ ...signedCreateBody({ tenantId: sandbox.tenantId, principal, payee }), amount_cents: 501 });
    const response = await create(sandbox, signer, 'agent-engine-2', body);
    expect([response.statusCode, response.json().error.code]).toEqual([400, 'signing.signature_invalid']);
    expect(await agentKeys(sandbox, 'agent-engine-2')).toEqual([]);
  });

  it('live: an unregistered key is refused and nothing is stored', async () => {
    const response = await create(live, freshSigner(), 'agent-engine-live');
    expect([response.statusCode, response.json().error.code]).toEqual([401, 'recognition.key_unknown']);
    expect(await agentKeys(live, 'agent-engine-live')).toEqual([]);
  });

  it('sandbox: many concurrent first uses of one new key id all succeed and register one row', async () => {
    const signer = freshSigner();
    const responses = await Promise.all(Array.from({ length: 6 }, () => create(sandbox, signer, 'agent-engine-burst')));
    expect(responses.map((response) => response.statusCode)).toEqual(Array(6).fill(201));
    expect(await agentKeys(sandbox, 'agent-engine-burst')).toHaveLength(1);
  });
});

describe('a first use racing another transaction on the same key id', () => {
  let holder: pg.Client;
  let watcher: pg.Client;

  beforeAll(async () => {
    holder = new pg.Client(database.connection);
    watcher = new pg.Client(database.connection);
    await Promise.all([holder.connect(), watcher.connect()]);
  });

  afterAll(async () => {
    await Promise.all([holder?.end(), watcher?.end()]);
  });

  /** Until a session of this database waits on a lock: the request's insert, queued behind the holder's row. */
  async function untilSomeoneWaits(): Promise<void> {
    for (let attempt = 0; attempt < 250; attempt += 1) {
      const { rows } = await watcher.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if (rows[0]!.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no request came to wait on the key registry row');
  }

  /** Registers `publicKeyHex` under `keyId` in an open transaction, sends the request, then ends the transaction. */
  async function race(keyId: string, holderKeyHex: string, requester: Ed25519Signer, end: 'COMMIT' | 'ROLLBACK') {
    await holder.query('BEGIN');
    await holder.query(
      `INSERT INTO registered_keys (registered_key_id, tenant_id, kind, subject, public_key, registered_by)
       VALUES ($1, $2, 'agent', $3, $4, 'first_use')`,
      [`rkey_${randomBytes(16).toString('hex')}`, sandbox.tenantId, keyId, Buffer.from(holderKeyHex, 'hex')],
    );
    const pending = create(sandbox, requester, keyId);
    await untilSomeoneWaits();
    await holder.query(end);
    return pending;
  }

  it('the other committed the same key: the request goes through on it', async () => {
    const signer = freshSigner();
    const response = await race('agent-race-same', signer.publicKey.hex, signer, 'COMMIT');
    expect(response.statusCode, response.body).toBe(201);
    expect(await agentKeys(sandbox, 'agent-race-same')).toHaveLength(1);
  });

  it('the other committed a different key: the request is refused with key_mismatch', async () => {
    const theirs = freshSigner();
    const response = await race('agent-race-other', theirs.publicKey.hex, freshSigner(), 'COMMIT');
    expect([response.statusCode, response.json().error.code]).toEqual([401, 'recognition.key_mismatch']);
    expect(await agentKeys(sandbox, 'agent-race-other')).toEqual([expect.objectContaining({ public_key_ed25519_hex: theirs.publicKey.hex })]);
  });

  it('the other rolled back: the request registers its own key', async () => {
    const signer = freshSigner();
    const response = await race('agent-race-rollback', freshSigner().publicKey.hex, signer, 'ROLLBACK');
    expect(response.statusCode, response.body).toBe(201);
    expect(await agentKeys(sandbox, 'agent-race-rollback')).toEqual([
      expect.objectContaining({ public_key_ed25519_hex: signer.publicKey.hex, registered_by: 'first_use' }),
    ]);
  });
});
