// The event log (docs/events.md): every change a tenant's integrator must hear of records exactly one event in the
// transaction that makes it (none for a change that rolled back), with the object after the change and its ledger
// transaction and receipts; GET /v1/events lists them newest first with a cursor and a type filter, to admins,
// operators and auditors; the maintenance pass deletes them after the retention.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineEffects } from '../../../src/engine/effects.ts';
import { Database } from '../../../src/infra/database.ts';
import { ephemeralKeyring } from '../../../src/infra/gateway-keys.ts';
import { eventRetentionMs } from '../../../src/limits.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { runMaintenance } from '../../../src/services/maintenance.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let acme: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools');

interface EventBody {
  id: string;
  type: string;
  created_at: string;
  data: { object: Record<string, unknown> };
  ledger_transaction_id: string | null;
  receipt_ids: string[];
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const inject = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}, key = acme.adminKey) =>
  app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload === undefined ? {} : { payload }) });

async function eventsOf(filter = ''): Promise<EventBody[]> {
  const response = await inject('GET', `/v1/events?limit=200${filter}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/** The events recorded while `work` ran, oldest first. */
async function recordedBy(work: () => Promise<unknown>): Promise<EventBody[]> {
  const before = new Set((await eventsOf()).map((event) => event.id));
  await work();
  return (await eventsOf()).filter((event) => !before.has(event.id)).reverse();
}

async function createIntent(deadline?: string): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, ...(deadline ? { deadline } : {}) });
  const response = await inject('POST', '/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

async function fund(intentId: string, from: string = sandboxX402Payers.success): Promise<LightMyRequestResponse> {
  const challenge = await inject('POST', `/harbor/intents/${intentId}/fund`, {});
  return inject('POST', `/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from }) });
}

describe('the intent lifecycle', () => {
  it('records created, funded, evidence_recorded and released, each once, with the intent after the change', async () => {
    let intentId = '';
    const events = await recordedBy(async () => {
      intentId = await createIntent();
      expect((await fund(intentId)).statusCode).toBe(200);
      const evidence = await inject('POST', `/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }));
      expect(evidence.statusCode, evidence.body).toBe(200);
      const confirmed = await inject('POST', `/harbor/intents/${intentId}/settlement/confirm`, {});
      expect(confirmed.statusCode, confirmed.body).toBe(200);
    });
    expect(events.map((event) => event.type)).toEqual(['intent.created', 'intent.funded', 'intent.evidence_recorded', 'intent.released']);
    expect(events.map((event) => event.data.object.state)).toEqual(['open', 'funded', 'evidence_recorded', 'released']);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
      expect(event.data.object).toMatchObject({ object: 'intent', intent_id: intentId });
    }
    // The funding and the release posted ledger transactions; the release issued the settlement receipt.
    const ledger = await inject('GET', '/harbor/ledger/v1/events?limit=200');
    const transactions = new Set((ledger.json().data ?? ledger.json().events ?? []).map((row: { transaction_id?: string }) => row.transaction_id));
    expect(events[1]!.ledger_transaction_id).toBeTruthy();
    expect(events[3]!.ledger_transaction_id).toBeTruthy();
    if (transactions.size > 0) expect(transactions.has(events[3]!.ledger_transaction_id)).toBe(true);
    expect(events[3]!.receipt_ids).toEqual([intentId]);
    expect(events[0]!.ledger_transaction_id).toBeNull();
    // The intent as its event shows it is the intent as the API answers it.
    const read = (await inject('GET', `/harbor/intents/${intentId}`)).json();
    expect(read).toMatchObject(events[3]!.data.object);
  });

  it('records a decline and a pending funding (once, not per poll), and a refund by the sweeper at the deadline', async () => {
    const declined = await createIntent();
    expect((await recordedBy(() => fund(declined, sandboxX402Payers.decline))).map((event) => event.type)).toEqual(['intent.funding_declined']);

    const pending = await createIntent();
    const challenge = await inject('POST', `/harbor/intents/${pending}/fund`, {});
    const credential = { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.pending }), 'idempotency-key': `fund-${pending}` };
    const first = await recordedBy(async () => expect((await inject('POST', `/harbor/intents/${pending}/fund`, {}, credential)).statusCode).toBe(202));
    expect(first.map((event) => event.type)).toEqual(['intent.funding_pending']);
    const polled = await recordedBy(() => inject('POST', `/harbor/intents/${pending}/fund`, {}, credential));
    expect(polled.map((event) => event.type)).toEqual(['intent.funded']);

    const expiring = await createIntent(new Date(Date.now() + 2_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    expect((await fund(expiring)).statusCode).toBe(200);
    const swept = await recordedBy(() => runMaintenance(db, engineEffects(ephemeralKeyring()), new Date(Date.now() + 60_000)));
    // The sweeper refunds every funded intent past its deadline: this one among them, once.
    const refunds = swept.filter((event) => event.data.object.intent_id === expiring);
    expect(refunds.map((event) => event.type)).toEqual(['intent.refunded']);
    expect(refunds[0]!.ledger_transaction_id).toBeTruthy();
    expect(refunds[0]!.receipt_ids).toEqual([expiring]);
  });

  it('records nothing for a change that rolled back', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    expect((await inject('POST', '/harbor/intents', body)).statusCode).toBe(201);
    const again = await recordedBy(async () => expect((await inject('POST', '/harbor/intents', body)).statusCode).toBe(409));
    expect(again).toEqual([]);
    // A refused command (evidence on an open intent) records nothing either.
    const intentId = body.intent_id as string;
    const refused = await recordedBy(async () => {
      const response = await inject('POST', `/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }));
      expect(response.statusCode).toBe(409);
    });
    expect(refused).toEqual([]);
  });

  it('records the sandbox guardrails: bootstrap as funded, evidence as the settlement', async () => {
    let intentId = '';
    const events = await recordedBy(async () => {
      const bootstrap = await inject('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' });
      expect(bootstrap.statusCode, bootstrap.body).toBe(200);
      intentId = bootstrap.json().intent_id;
      const evidence = await inject('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, { payload: {} });
      expect(evidence.statusCode, evidence.body).toBe(200);
    });
    expect(events.map((event) => [event.type, event.data.object.intent_id])).toEqual([['intent.funded', intentId], [expect.stringMatching(/^intent\.(released|refunded)$/), intentId]]);
  });
});

describe('the other changes', () => {
  it('records API key creation, rotation and revocation (once), the settlement configuration and audit exports', async () => {
    let keyId = '';
    const events = await recordedBy(async () => {
      const created = await inject('POST', '/v1/admin/api-keys', { role: 'agent', name: 'worker' });
      keyId = created.json().key_id;
      expect((await inject('POST', `/v1/admin/api-keys/${keyId}/rotate`, {})).statusCode).toBe(200);
      expect((await inject('DELETE', `/v1/admin/api-keys/${keyId}`)).statusCode).toBe(200);
      expect((await inject('DELETE', `/v1/admin/api-keys/${keyId}`)).statusCode).toBe(200);
      expect((await inject('PUT', '/v1/admin/settlement/config', { rails: ['x402_usdc_base'], x402_address: '0x1111111111111111111111111111111111111111' })).statusCode).toBe(200);
      expect((await inject('POST', '/v1/compliance/audit-exports', {})).statusCode).toBe(201);
    });
    expect(events.map((event) => event.type)).toEqual(['api_key.created', 'api_key.rotated', 'api_key.revoked', 'settlement_config.updated', 'audit_export.ready']);
    expect(events[0]!.data.object).toMatchObject({ object: 'api_key', key_id: keyId, role: 'agent' });
    expect(events[2]!.data.object.revoked_at).toEqual(expect.any(String));
    // Never a secret: the events carry the key record, not the key.
    expect(JSON.stringify(events)).not.toMatch(/sk_|api_key":"/);
    expect(events[3]!.data.object).toMatchObject({ object: 'settlement_config', rails: ['x402_usdc_base'] });
    expect(events[4]!.data.object).toMatchObject({ status: 'ready' });
  });
});

describe('reading', () => {
  it('pages newest first with a cursor, filters by type, reads one event, and lets admins, operators and auditors only', async () => {
    const all = await eventsOf();
    expect(all.length).toBeGreaterThan(4);
    const first = (await inject('GET', '/v1/events?limit=2')).json();
    expect(first.data.map((event: EventBody) => event.id)).toEqual(all.slice(0, 2).map((event) => event.id));
    expect(first.has_more).toBe(true);
    const second = (await inject('GET', `/v1/events?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.data.map((event: EventBody) => event.id)).toEqual(all.slice(2, 4).map((event) => event.id));
    const funded = await eventsOf('&type=intent.funded');
    expect(funded.length).toBeGreaterThan(0);
    expect(funded.every((event) => event.type === 'intent.funded')).toBe(true);
    expect((await inject('GET', `/v1/events/${all[0]!.id}`)).json()).toEqual(all[0]);
    expect((await inject('GET', `/v1/events/evt_${'0'.repeat(32)}`)).json().error.code).toBe('event.not_found');
    expect((await inject('GET', '/v1/events?type=intent.unknown')).statusCode).toBe(400);
    for (const role of ['operator', 'auditor'] as const) expect((await inject('GET', '/v1/events', undefined, {}, await acme.key(role))).statusCode).toBe(200);
    expect((await inject('GET', '/v1/events', undefined, {}, await acme.key('agent'))).statusCode).toBe(403);
  });

  it('keeps events for the retention, then the maintenance pass deletes them', async () => {
    const before = await eventsOf();
    const report = await runMaintenance(db, engineEffects(ephemeralKeyring()), new Date(Date.now() + eventRetentionMs + 60_000));
    expect(report.deleted.events).toBeGreaterThanOrEqual(before.length);
    expect(await eventsOf()).toEqual([]);
  });
});
