// kill -9 of the delivering process mid-batch loses no event (docs/events.md#delivery). A backlog of events waits for
// an endpoint; a real server process (its deliverer, as every replica runs it) claims a batch and sends it, all at
// once, to a real HTTP receiver on loopback that checks each delivery's Standard Webhooks signatures with the test's
// own implementation (test/helpers/webhook-receiver.ts). The process dies mid-batch, twice over:
// - by itself at `webhook.after_send` (src/engine/crash-points.ts): an attempt was answered 200 and its outcome not
//   yet recorded, the rest of the batch in flight;
// - by the test's SIGKILL while the receiver holds every answer of the batch.
// Restarted on the same database, the server sends what the dead one had claimed once the claims' leases end (three
// times SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS, shortened here through that setting) and the rest at once: every event is
// received at least once, each delivery with valid signatures, and every delivery is recorded succeeded.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { webhookClaimBatchMax } from '../../src/limits.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

// More than one claim's batch: the dead process claimed the first batch, the rest was never claimed.
const backlog = webhookClaimBatchMax + 8;
// One attempt's deadline, so a claim's lease lasts 9 s: long enough that no held attempt times out before the kill.
const attemptTimeoutMs = 3_000;
const secretsKey = randomBytes(32).toString('base64');
let database: TestDatabase;
let db: Database;
// The in-process app (no deliverer: its maintenance is off) that makes the endpoint and the events.
let app: FastifyInstance;
let tenant: TestTenant;
let server: ServerProcess | undefined;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection, { appOptions: { secretsKey } });
  tenant = await createTestTenant(database.connection);
});

afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
  await receiver?.close();
  receiver = undefined;
  // The next test's events go to its own endpoint alone.
  for (const endpoint of (await inject('GET', '/v1/webhook-endpoints')).json().data) await inject('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const start = (crashAt?: string) =>
  startServerProcess({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    SVC_SECRETS_KEY: secretsKey,
    SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: String(attemptTimeoutMs),
    ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}),
  }, 90_000);

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: bearer(tenant.adminKey), ...(payload === undefined ? {} : { payload }) });

/** An endpoint for api_key.created with a backlog of events queued for it, disabled so that no deliverer claims
 * them until the server under test is up (its deliverer starts before it listens). Answers the endpoint and the
 * events' ids. */
async function endpointWithBacklog(url: string): Promise<{ endpointId: string; secret: string; events: string[] }> {
  const created = await inject('POST', '/v1/webhook-endpoints', { url, enabled_events: ['api_key.created'] });
  expect(created.statusCode, created.body).toBe(201);
  const { id: endpointId, secret } = created.json() as { id: string; secret: string };
  for (let i = 0; i < backlog; i += 1) expect((await inject('POST', '/v1/admin/api-keys', { role: 'auditor', name: `crash-${i}` })).statusCode).toBe(201);
  const listed = (await inject('GET', `/v1/events?limit=${backlog}&type=api_key.created`)).json();
  const events = listed.data.map((event: { id: string }) => event.id) as string[];
  expect(events).toHaveLength(backlog);
  expect((await inject('POST', `/v1/webhook-endpoints/${endpointId}`, { enabled: false })).statusCode).toBe(200);
  return { endpointId, secret, events };
}

async function enable(endpointId: string): Promise<void> {
  expect((await inject('POST', `/v1/webhook-endpoints/${endpointId}`, { enabled: true })).statusCode).toBe(200);
}

/** The receiver also checks each `v1a,` signature, by the keys the server publishes. */
async function trustKeysOf(running: ServerProcess): Promise<void> {
  const jwks = (await (await fetch(`${running.baseUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ x: string }> };
  receiver!.jwks = [...receiver!.jwks, ...jwks.keys];
}

type DeliveryRow = {
  readonly event_id: string;
  readonly status: string;
  readonly attempts: number;
  readonly leased_by: string | null;
};

async function deliveries(endpointId: string): Promise<DeliveryRow[]> {
  return db.system(async (tx) =>
    (await tx.query<DeliveryRow>('SELECT event_id, status, attempts, leased_by FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id', [endpointId])).rows);
}

async function attemptsLogged(endpointId: string): Promise<Array<{ delivery_id: string; attempt: number; succeeded: boolean }>> {
  return db.system(async (tx) =>
    (await tx.query<{ delivery_id: string; attempt: number; succeeded: boolean }>('SELECT delivery_id, attempt, succeeded FROM webhook_delivery_attempts WHERE endpoint_id = $1', [endpointId])).rows);
}

/** Waits for the process to die of its SIGKILL, and checks what it left: every delivery pending, the first batch
 * claimed by it (leased), the rest never claimed, and no attempt recorded. */
async function expectKilledMidBatch(running: ServerProcess, endpointId: string): Promise<void> {
  expect(await running.exited).toBeNull();
  expect(running.child.signalCode).toBe('SIGKILL');
  const left = await deliveries(endpointId);
  expect(left).toHaveLength(backlog);
  expect(left.every((row) => row.status === 'pending')).toBe(true);
  expect(left.filter((row) => row.leased_by !== null && row.attempts === 1)).toHaveLength(webhookClaimBatchMax);
  expect(left.filter((row) => row.leased_by === null && row.attempts === 0)).toHaveLength(backlog - webhookClaimBatchMax);
  expect(await attemptsLogged(endpointId)).toEqual([]);
}

/** Restarts the server on the same database and waits until every delivery of the endpoint is succeeded; then
 * checks that the receiver has every event, each delivery signed by the endpoint's secret and the gateway's key and
 * carrying the event as the API reads it, and that the attempts log has one success per delivery. */
async function expectRecoveredByRestart(endpointId: string, events: readonly string[]): Promise<void> {
  server = await start();
  await trustKeysOf(server);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const rows = await deliveries(endpointId);
    if (rows.every((row) => row.status === 'succeeded')) break;
    if (Date.now() > deadline) throw new Error(`deliveries not recovered: ${JSON.stringify(rows.filter((row) => row.status !== 'succeeded'))}\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(receiver!.refused).toEqual([]);
  expect(new Set(receiver!.deliveries.map((delivery) => delivery.id))).toEqual(new Set(events));
  const read = new Map<string, unknown>();
  for (const delivery of receiver!.deliveries) {
    expect(delivery.hmacMatches).toEqual([0]);
    expect(delivery.ed25519Verified).toBe(true);
    if (!read.has(delivery.id)) read.set(delivery.id, (await inject('GET', `/v1/events/${delivery.id}`)).json());
    expect(delivery.event).toEqual(read.get(delivery.id));
  }
  const logged = await attemptsLogged(endpointId);
  expect(logged.filter((attempt) => attempt.succeeded)).toHaveLength(backlog);
  expect(new Set(logged.map((attempt) => attempt.delivery_id)).size).toBe(backlog);
  // The claimed batch was sent again as its second attempt (the claim counted the first); the rest at its first.
  expect(logged.filter((attempt) => attempt.attempt === 2)).toHaveLength(webhookClaimBatchMax);
  expect(logged.filter((attempt) => attempt.attempt === 1)).toHaveLength(backlog - webhookClaimBatchMax);
}

describe('kill -9 of the delivering process mid-batch', () => {
  it('between an answered attempt and its record: the batch is sent again after the lease, nothing lost', async () => {
    receiver = await startWebhookReceiver(0);
    const { endpointId, secret, events } = await endpointWithBacklog(receiver.url);
    receiver.secrets = [secret];
    const crashing = await start('webhook.after_send');
    server = crashing;
    await trustKeysOf(crashing);
    await enable(endpointId);
    await expectKilledMidBatch(crashing, endpointId);
    // The receiver took at least the answered attempt, which the dead process never recorded.
    const receivedBeforeCrash = new Set(receiver.deliveries.map((delivery) => delivery.id));
    expect(receivedBeforeCrash.size).toBeGreaterThanOrEqual(1);

    await expectRecoveredByRestart(endpointId, events);
    // At least once: what arrived before the crash arrived again.
    for (const id of receivedBeforeCrash) expect(receiver.deliveries.filter((delivery) => delivery.id === id).length).toBeGreaterThanOrEqual(2);
  }, 300_000);

  it('while the receiver holds every answer of the batch: the held attempts are sent again, nothing lost', async () => {
    receiver = await startWebhookReceiver(0);
    const { endpointId, secret, events } = await endpointWithBacklog(receiver.url);
    receiver.secrets = [secret];
    const running = await start();
    server = running;
    await trustKeysOf(running);
    receiver.answer = 'hang';
    receiver.onHold = (held) => {
      if (held === webhookClaimBatchMax) void running.stop('SIGKILL');
    };
    await enable(endpointId);
    await expectKilledMidBatch(running, endpointId);
    expect(receiver.deliveries).toEqual([]);

    receiver.onHold = undefined;
    receiver.dropHeld();
    receiver.answer = 200;
    await expectRecoveredByRestart(endpointId, events);
  }, 300_000);
});
