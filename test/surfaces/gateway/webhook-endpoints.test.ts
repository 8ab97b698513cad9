// Webhook endpoints and delivery (docs/events.md): the endpoint routes (secret answered once and sealed at rest,
// destinations judged per environment), and the deliverer against a real HTTP receiver on loopback that checks every
// signature with its own implementation of Standard Webhooks (test/helpers/webhook-receiver.ts): a receiver down for
// a while receives everything once back; a rotation's overlap signs with both secrets; one event redelivered; an
// endpoint failing for days disabled with an event; two deliverers (replicas) never send the same attempt twice.
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { ephemeralKeyring } from '../../../src/infra/gateway-keys.ts';
import { SecretBox } from '../../../src/infra/secret-box.ts';
import { webhookRetryDelaysMs } from '../../../src/limits.ts';
import { WebhookDeliverer } from '../../../src/services/webhook-deliverer.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const secretsKey = Buffer.alloc(32, 9).toString('base64');
const keyring = ephemeralKeyring();
let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let sandbox: TestTenant;
let live: TestTenant;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 4 });
  app = await buildTestApp(database.connection, { gatewayKeys: keyring, appOptions: { secretsKey } });
  sandbox = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, key = sandbox.adminKey) =>
  app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });

const deliverer = (options: { replicaId?: string; random?: () => number } = {}) =>
  new WebhookDeliverer({ database: db, secretBox: SecretBox.fromBase64(secretsKey), keyring, log: { info() {}, warn() {}, error: (object: object, message: string) => console.error(message, object) }, attemptTimeoutMs: 2_000, random: () => 0.5, ...options });

async function createEndpoint(url: string, enabledEvents: string[] = ['*'], key = sandbox.adminKey) {
  const response = await inject('POST', '/v1/webhook-endpoints', { url, enabled_events: enabledEvents, description: 'test' }, key);
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: string; secret: string };
}

/** Makes `count` events (API keys created) and answers their ids. */
async function makeEvents(count: number, tenant = sandbox): Promise<string[]> {
  for (let i = 0; i < count; i += 1) expect((await inject('POST', '/v1/admin/api-keys', { role: 'auditor', name: `k${i}` }, tenant.adminKey)).statusCode).toBe(201);
  const listed = (await inject('GET', `/v1/events?limit=${count}&type=api_key.created`, undefined, tenant.adminKey)).json();
  return listed.data.map((event: { id: string }) => event.id).reverse();
}

async function deleteAllEndpoints(tenant = sandbox) {
  for (const endpoint of (await inject('GET', '/v1/webhook-endpoints', undefined, tenant.adminKey)).json().data) {
    await inject('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, undefined, tenant.adminKey);
  }
}

describe('the endpoint routes', () => {
  it('answer the secret once, seal it at rest, and read, update and delete the endpoint', async () => {
    const created = await createEndpoint('http://127.0.0.1:7719/hooks', ['intent.funded', 'intent.released']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = (await inject('GET', `/v1/webhook-endpoints/${created.id}`)).json();
    expect(read).toMatchObject({ object: 'webhook_endpoint', id: created.id, enabled: true, enabled_events: ['intent.funded', 'intent.released'], description: 'test' });
    expect(JSON.stringify(read)).not.toContain(created.secret.slice(6));
    const stored = await db.system(async (tx) => (await tx.query('SELECT secret_sealed FROM webhook_endpoints WHERE endpoint_id = $1', [created.id])).rows[0]!.secret_sealed as Buffer);
    expect(stored.toString('latin1')).not.toContain(created.secret.slice(6, 20));
    expect(stored.toString('base64')).not.toContain(created.secret.slice(6, 20));

    const updated = (await inject('POST', `/v1/webhook-endpoints/${created.id}`, { enabled: false, enabled_events: ['*'] })).json();
    expect(updated).toMatchObject({ enabled: false, disabled_reason: 'manual', enabled_events: ['*'] });
    expect((await inject('GET', '/v1/webhook-endpoints')).json().data.map((endpoint: { id: string }) => endpoint.id)).toContain(created.id);
    for (const role of ['operator', 'auditor'] as const) expect((await inject('GET', '/v1/webhook-endpoints', undefined, await sandbox.key(role))).statusCode).toBe(200);
    expect((await inject('POST', '/v1/webhook-endpoints', { url: 'https://example.com/h', enabled_events: ['*'] }, await sandbox.key('operator'))).statusCode).toBe(403);
    expect((await inject('DELETE', `/v1/webhook-endpoints/${created.id}`)).json()).toEqual({ object: 'webhook_endpoint', id: created.id, deleted: true });
    expect((await inject('GET', `/v1/webhook-endpoints/${created.id}`)).json().error.code).toBe('webhook_endpoint.not_found');
    expect((await inject('POST', '/v1/webhook-endpoints', { url: 'https://example.com/h', enabled_events: ['intent.nope'] })).statusCode).toBe(400);
  });

  it('refuses private, loopback and link-local destinations for a live tenant, loopback allowed in the sandbox', async () => {
    const refused = async (url: string, key: string) => {
      const response = await inject('POST', '/v1/webhook-endpoints', { url, enabled_events: ['*'] }, key);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(400);
      return response.json().error.code;
    };
    for (const url of ['https://127.0.0.1/h', 'https://localhost:8443/h', 'https://10.1.2.3/h', 'https://192.168.1.1/h', 'https://169.254.169.254/latest', 'https://[::1]/h', 'https://[fe80::1]/h', 'http://example.com/h']) {
      expect(await refused(url, live.adminKey)).toBe('webhook_endpoint.destination_refused');
    }
    for (const url of ['https://10.1.2.3/h', 'https://169.254.169.254/latest']) expect(await refused(url, sandbox.adminKey)).toBe('webhook_endpoint.destination_refused');
    expect(await refused('ftp://example.com/h', sandbox.adminKey)).toBe('webhook_endpoint.url_invalid');
    expect(await refused('https://user:pw@example.com/h', sandbox.adminKey)).toBe('webhook_endpoint.url_invalid');
    const liveEndpoint = await createEndpoint('https://hooks.example.com/svc', ['*'], live.adminKey);
    await inject('DELETE', `/v1/webhook-endpoints/${liveEndpoint.id}`, undefined, live.adminKey);

    // The operator's switch lets a live tenant use its own network.
    const allowing = await buildTestApp(database.connection, { appOptions: { secretsKey, webhooks: { allowPrivateDestinations: true } } });
    try {
      const response = await allowing.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: bearer(live.adminKey), payload: { url: 'http://10.1.2.3/h', enabled_events: ['*'] } });
      expect(response.statusCode, response.body).toBe(201);
      await allowing.inject({ method: 'DELETE', url: `/v1/webhook-endpoints/${response.json().id}`, headers: bearer(live.adminKey) });
    } finally {
      await allowing.close();
    }
    // Without SVC_SECRETS_KEY no secret can be stored.
    const keyless = await buildTestApp(database.connection);
    try {
      const response = await keyless.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: bearer(sandbox.adminKey), payload: { url: 'https://example.com/h', enabled_events: ['*'] } });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
      expect(response.json().error.code).toBe('webhook_endpoint.secrets_key_missing');
    } finally {
      await keyless.close();
    }
  });

  it('refuses at delivery time a live endpoint whose name resolves to loopback', async () => {
    receiver = await startWebhookReceiver(7712);
    // Written through the repository: the route refuses it, as the previous test shows; a name could also be
    // re-pointed at loopback after the endpoint was written.
    const endpoint = await createEndpoint('https://hooks.example.com/svc', ['*'], live.adminKey);
    await db.system((tx) => tx.query('UPDATE webhook_endpoints SET url = $1 WHERE endpoint_id = $2', ['http://localhost:7712/hooks', endpoint.id]));
    await makeEvents(1, live);
    await deliverer().drain();
    expect(receiver.deliveries).toEqual([]);
    const attempts = (await inject('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, undefined, live.adminKey)).json().data;
    expect(attempts[0]).toMatchObject({ succeeded: false, response_status: null, delivery_status: 'pending' });
    expect(attempts[0].error).toMatch(/destination refused/);
    await deleteAllEndpoints(live);
  });
});

describe('delivery', () => {
  it('delivers every event with a valid signature by the secret and by the gateway key, and logs each attempt', async () => {
    receiver = await startWebhookReceiver(7710);
    const endpoint = await createEndpoint(receiver.url);
    receiver.secrets = [endpoint.secret];
    receiver.jwks = keyring.jwks().keys;
    const events = await makeEvents(5);
    expect(await deliverer().drain()).toBe(5);
    expect(receiver.refused).toEqual([]);
    expect(receiver.deliveries.map((delivery) => delivery.id).sort()).toEqual([...events].sort());
    for (const delivery of receiver.deliveries) {
      expect(delivery.hmacMatches).toEqual([0]);
      expect(delivery.ed25519Verified).toBe(true);
      expect(delivery.event).toMatchObject({ id: delivery.id, type: 'api_key.created', data: { object: { object: 'api_key' } } });
      expect(delivery.event).toEqual((await inject('GET', `/v1/events/${delivery.id}`)).json());
    }
    const attempts = (await inject('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`)).json().data;
    expect(attempts).toHaveLength(5);
    expect(attempts.every((attempt: { succeeded: boolean; response_status: number; delivery_status: string }) => attempt.succeeded && attempt.response_status === 200 && attempt.delivery_status === 'succeeded')).toBe(true);
    // Nothing is sent twice.
    expect(await deliverer().drain()).toBe(0);
    await deleteAllEndpoints();
  });

  it('retries a receiver that is down with backoff over the schedule, and it receives everything once back', async () => {
    receiver = await startWebhookReceiver(7711);
    const endpoint = await createEndpoint(receiver.url, ['api_key.created']);
    receiver.secrets = [endpoint.secret];
    const url = receiver.url;
    await receiver.close();
    receiver = undefined;
    const events = await makeEvents(4);
    const sender = deliverer();
    let clock = Date.now();
    // Down: the first attempt and two retries fail (connection refused), each retry due after its wait.
    expect(await sender.drain(() => new Date(clock))).toBe(4);
    expect(await sender.drain(() => new Date(clock + 1_000))).toBe(0);
    clock += webhookRetryDelaysMs[0]! * 1.3;
    expect(await sender.drain(() => new Date(clock))).toBe(4);
    clock += webhookRetryDelaysMs[1]! * 1.3;
    // A receiver that answers 503 fails the attempt too.
    receiver = await startWebhookReceiver(7711);
    receiver.secrets = [endpoint.secret];
    receiver.answer = 503;
    expect(await sender.drain(() => new Date(clock))).toBe(4);
    expect(receiver.deliveries).toEqual([]);
    // Back.
    receiver.answer = 200;
    clock += webhookRetryDelaysMs[2]! * 1.3;
    expect(await sender.drain(() => new Date(clock))).toBe(4);
    expect(receiver.deliveries.map((delivery) => delivery.id).sort()).toEqual([...events].sort());
    expect(url).toBe(receiver.url);
    const attempts = (await inject('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`)).json().data;
    expect(attempts).toHaveLength(16);
    expect(attempts.filter((attempt: { succeeded: boolean }) => attempt.succeeded)).toHaveLength(4);
    expect(attempts.filter((attempt: { response_status: number | null }) => attempt.response_status === 503)).toHaveLength(4);
    await deleteAllEndpoints();
  });

  it('gives up after the schedule, disables an endpoint failing for days with an event, and redelivers one event by hand', async () => {
    receiver = await startWebhookReceiver(7713);
    const endpoint = await createEndpoint(receiver.url, ['api_key.created']);
    const watcher = await createEndpoint('http://127.0.0.1:7714/none', ['webhook_endpoint.disabled']);
    receiver.secrets = [endpoint.secret];
    receiver.answer = 500;
    const events = await makeEvents(3);
    const sender = deliverer();
    let clock = Date.now();
    for (let pass = 0; pass <= webhookRetryDelaysMs.length; pass += 1) {
      await sender.drain(() => new Date(clock));
      clock += Math.max(webhookRetryDelaysMs[pass] ?? 0, 0) * 1.3 + 1_000;
    }
    const read = (await inject('GET', `/v1/webhook-endpoints/${endpoint.id}`)).json();
    expect(read).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const disabled = (await inject('GET', '/v1/events?type=webhook_endpoint.disabled')).json().data;
    expect(disabled).toHaveLength(1);
    expect(disabled[0].data.object).toMatchObject({ object: 'webhook_endpoint', id: endpoint.id, enabled: false });
    // The disabled endpoint's event went to the endpoint listening for it (a delivery queued there).
    const queued = await db.system(async (tx) => (await tx.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [watcher.id])).rows[0]!.n);
    expect(queued).toBe(1);
    const attempts = (await inject('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`)).json().data;
    expect(attempts.length).toBeGreaterThanOrEqual(20);
    expect(attempts.every((attempt: { succeeded: boolean }) => !attempt.succeeded)).toBe(true);

    // Enabled again and fixed: one event redelivered by hand arrives.
    receiver.answer = 200;
    expect((await inject('POST', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: true })).json()).toMatchObject({ enabled: true, disabled_reason: null });
    const redelivery = await inject('POST', `/v1/webhook-endpoints/${endpoint.id}/events/${events[0]}/redeliver`, undefined, await sandbox.key('operator'));
    expect(redelivery.statusCode, redelivery.body).toBe(202);
    expect(redelivery.json()).toMatchObject({ object: 'webhook_delivery', endpoint_id: endpoint.id, event_id: events[0], status: 'pending' });
    await sender.drain(() => new Date(clock));
    expect(receiver.deliveries.map((delivery) => delivery.id)).toContain(events[0]);
    expect((await inject('POST', `/v1/webhook-endpoints/${endpoint.id}/events/evt_${'0'.repeat(32)}/redeliver`)).json().error.code).toBe('event.not_found');
    await deleteAllEndpoints();
  });

  it('signs with both secrets during a rotation overlap, and with the new one alone after it', async () => {
    receiver = await startWebhookReceiver(7715);
    const endpoint = await createEndpoint(receiver.url, ['api_key.created']);
    const rotated = (await inject('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { previous_secret_expires_in_seconds: 3600 })).json();
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.previous_secret_expires_at).toEqual(expect.any(String));
    receiver.secrets = [rotated.secret, endpoint.secret];
    await makeEvents(1);
    await deliverer().drain();
    expect(receiver.deliveries.at(-1)!.hmacMatches).toEqual([0, 1]);
    const ended = (await inject('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { previous_secret_expires_in_seconds: 0 })).json();
    receiver.secrets = [ended.secret, rotated.secret, endpoint.secret];
    await makeEvents(1);
    await deliverer().drain();
    expect(receiver.deliveries.at(-1)!.hmacMatches).toEqual([0]);
    await deleteAllEndpoints();
  });

  it('never sends one attempt from two replicas at once', async () => {
    receiver = await startWebhookReceiver(7716);
    const endpoint = await createEndpoint(receiver.url, ['api_key.created']);
    receiver.secrets = [endpoint.secret];
    const events = await makeEvents(40);
    const replicas = [deliverer({ replicaId: 'replica_a' }), deliverer({ replicaId: 'replica_b' }), deliverer({ replicaId: 'replica_c' })];
    const made = await Promise.all(replicas.map((replica) => replica.drain()));
    expect(made.reduce((sum, count) => sum + count, 0)).toBe(40);
    expect(receiver.deliveries.map((delivery) => delivery.id).sort()).toEqual([...events].sort());
    await deleteAllEndpoints();
  });
});
