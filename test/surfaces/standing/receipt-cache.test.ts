// The per-process receipt cache (docs/standing.md#caching): a read right after a settlement in the same process
// shows it, even when the previous receipt was read and cached a moment before; a receipt read while a settlement
// was between its effect and its COMMIT is not stored; the cache and its memory of invalidations are bounded.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { StandingReceiptCache } from '../../../src/services/standing-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type Party } from '../../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
const principal = party('did:principal:alice');
const operator = party('did:payee:cached');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const post = (tenant: TestTenant, url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });

async function settle(tenant: TestTenant, payee: Party, amountCents: number): Promise<void> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, amountCents });
  expect((await post(tenant, '/harbor/intents', body)).statusCode).toBe(201);
  const intentId = body.intent_id as string;
  const challenge = await post(tenant, `/harbor/intents/${intentId}/fund`, {});
  const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  expect((await post(tenant, `/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': paymentSignature })).statusCode).toBe(200);
  const evidence = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } });
  expect((await post(tenant, `/harbor/intents/${intentId}/evidence`, evidence)).statusCode).toBeLessThan(300);
  expect((await post(tenant, `/harbor/intents/${intentId}/settlement/confirm`, {})).json()).toMatchObject({ state: 'released' });
}

const receipt = async () => {
  const response = await app.inject({ url: `/reputation/${encodeURIComponent(operator.did)}`, headers: bearer(acme.adminKey) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().receipt;
};

describe('the receipt cache', () => {
  it('a read right after a settlement in this process shows it', async () => {
    await settle(acme, operator, 100);
    const first = await receipt();
    // Within the cache's lifetime the same receipt is answered: the cache is in use.
    expect(await receipt()).toEqual(first);
    for (let round = 2; round <= 4; round += 1) {
      await settle(acme, operator, 100);
      const next = await receipt();
      expect(next.metrics.all_time.released_count).toBe(round);
      expect(next.checkpoint_last_ledger_seq).toBeGreaterThan(first.checkpoint_last_ledger_seq);
      expect(next.metrics.all_time.amounts[0].released_cents).toBe(String(100 * round));
    }
  });

  it('does not store a receipt read before an invalidation, nor serve one stored before it', () => {
    const cache = new StandingReceiptCache(8, 60_000, 8);
    // A read that began before a settlement's effect (or before its COMMIT, when the effect invalidates again).
    const stamp = cache.stamp();
    cache.invalidate('t1', 'did:x');
    cache.set('t1', 'did:x', '1', stamp, { old: true });
    expect(cache.get('t1', 'did:x', '1')).toBeUndefined();
    // A read after it is stored; the next invalidation hides it; other operators are untouched.
    cache.set('t1', 'did:x', '1', cache.stamp(), { fresh: true });
    cache.set('t1', 'did:y', '1', cache.stamp(), { other: true });
    expect(cache.get('t1', 'did:x', '1')).toEqual({ fresh: true });
    cache.invalidate('t1', 'did:x');
    expect(cache.get('t1', 'did:x', '1')).toBeUndefined();
    expect(cache.get('t1', 'did:y', '1')).toEqual({ other: true });
  });

  it('is bounded: the least recently read receipts and the oldest invalidations go first, never serving stale', () => {
    const cache = new StandingReceiptCache(2, 60_000, 2);
    for (const did of ['did:a', 'did:b', 'did:c']) cache.set('t1', did, '1', cache.stamp(), { did });
    expect(cache.get('t1', 'did:a', '1')).toBeUndefined();
    expect(cache.get('t1', 'did:c', '1')).toEqual({ did: 'did:c' });
    // Three invalidations with room for two: a read stamped before the forgotten one is no longer stored.
    const stamp = cache.stamp();
    for (const did of ['did:p', 'did:q', 'did:r']) cache.invalidate('t1', did);
    cache.set('t1', 'did:p', '1', stamp, { stale: true });
    cache.set('t1', 'did:z', '1', stamp, { stale: true });
    expect(cache.get('t1', 'did:p', '1')).toBeUndefined();
    expect(cache.get('t1', 'did:z', '1')).toBeUndefined();
    cache.set('t1', 'did:p', '1', cache.stamp(), { fresh: true });
    expect(cache.get('t1', 'did:p', '1')).toEqual({ fresh: true });
  });

  it('expires a receipt after its lifetime', async () => {
    const cache = new StandingReceiptCache(2, 20, 2);
    cache.set('t1', 'did:a', '1', cache.stamp(), { did: 'did:a' });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(cache.get('t1', 'did:a', '1')).toBeUndefined();
  });

  it('the invalidation after COMMIT runs once the transaction committed, and never after a rollback', async () => {
    const db = new Database({ ...database.connection, max: 2 });
    try {
      const seen: string[] = [];
      await db.tenant(acme.tenantId, async (tx) => {
        await tx.query('SELECT 1');
        tx.afterCommit(() => seen.push('after commit'));
        seen.push('work done');
      });
      expect(seen).toEqual(['work done', 'after commit']);
      await expect(
        db.tenant(acme.tenantId, async (tx) => {
          await tx.query('SELECT 1');
          tx.afterCommit(() => seen.push('after a rollback'));
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(seen).toEqual(['work done', 'after commit']);
    } finally {
      await db.close();
    }
  });
});
