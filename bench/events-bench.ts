// Bench entry (docs/performance.md): what the event log (docs/events.md) costs, and how fast webhooks go out.
//
// Writing events. Two service processes, each on a fresh migrated database of its own: the service as it runs (every
// lifecycle mutation queues its event with its COMMIT: intent.created, intent.funded, intent.evidence_recorded,
// intent.released) and the same src/server.ts with bench/no-events.ts preloaded, which composes it without writing
// events (the two event-writing modules resolve to no-op stand-ins). No webhook endpoint on either side: this is the
// outbox alone. Closed-loop lifecycle rounds at 16 clients, with the lifecycle entry's load generator, alternate
// between them; the row is service + Postgres CPU per engine mutation with events over without, target <= 1.10 (the
// issue's bound); a second row counts only each side's own Postgres backends. The events each side's database holds
// afterwards are checked (some on one side, none on the other), so that a stand-in that failed to load cannot pass
// for a free event log.
//
// Delivering. One service process with SVC_SECRETS_KEY, a sandbox tenant with one endpoint at a receiver on loopback
// (in the bench process, checking every delivery's `v1,` signature), and a backlog of events with one delivery each,
// written while the endpoint is disabled; enabling it lets the service's deliverer send the backlog. The row is
// deliveries per second from the first arrival to the last, and service + Postgres CPU per delivery, printed without
// a target. Each round checks that every event arrived, validly signed, and that every delivery is recorded succeeded.
//
//   node --import tsx bench/events-bench.ts [--quick]
// `--quick` runs one short round of each: a smoke test of the instrument, not a measurement.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { recordEvent } from '../src/db/event-repository.ts';
import { insertRedelivery, updateEndpoint } from '../src/db/webhook-repository.ts';
import { Database } from '../src/infra/database.ts';
import { SecretBox } from '../src/infra/secret-box.ts';
import { webhookClaimBatchMax } from '../src/limits.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import { createEndpoint } from '../src/services/webhook-endpoint-service.ts';
import { verifyWebhook } from '../src/signing/webhook-signature.ts';
import { alternatingRounds, benchServiceEnv, comparisonRows, sandboxTenantPool, startSide, stopSides, warmUp, type Side } from './ab-sides.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, hold, installGuard, postgresStartedAt } from './guard.ts';
import { formatRate, median, spreadPercent } from './harness.ts';
import { quick } from './options.ts';
import { cpuWindow, formatCpu } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const cpuRatioMax = 1.1;
/** Events in each delivery round's backlog, and delivery rounds. */
const backlog = quick ? 200 : 3_000;
const deliveryRounds = quick ? 1 : 3;
/** How long a delivery round may take before the bench gives up on it. */
const deliveryRoundTimeoutMs = 300_000;

const log = (line: string) => process.stderr.write(`  events: ${line}\n`);

/** The intents' events in a side's database (the bench's own set-up, in this process, records an api_key.created). */
async function countIntentEvents(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE type LIKE 'intent.%'")).rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** The rows of the event log's cost per lifecycle mutation. */
async function writingRows(): Promise<BenchRow[]> {
  const startedAt = await postgresStartedAt();
  const withDb = await createBenchDatabase();
  const withoutDb = await createBenchDatabase();
  const sides: Side[] = [];
  try {
    sides.push(await startSide('writing events', withDb.url, await sandboxTenantPool(withDb.url)));
    sides.push(await startSide('without events', withoutDb.url, await sandboxTenantPool(withoutDb.url), { nodeFlags: ['--import', './bench/no-events.ts'] }));
    const [withEvents, withoutEvents] = sides as [Side, Side];
    const expected = await warmUp('events', sides);
    const busy = await alternatingRounds('events', [withEvents, withoutEvents], expected, log);
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the events bench: its figures are void');
    const written = await countIntentEvents(withEvents.databaseUrl);
    const unwritten = await countIntentEvents(withoutEvents.databaseUrl);
    if (written === 0 || unwritten !== 0) {
      throw new Error(`events bench: the service wrote ${written} intent events and its baseline ${unwritten}; expected some and none (is bench/no-events.ts loaded?)`);
    }

    const words = {
      comparing: ' writing events vs without',
      comparingShort: 'writing events vs without',
      setting: ', no endpoint',
      measured: 'writing events',
      baseline: 'without writing events',
      measuredNote: `; ${written.toLocaleString('en-US')} intent events written`,
    };
    return comparisonRows([withEvents, withoutEvents], words, cpuRatioMax, busy);
  } finally {
    await stopSides(sides);
    await withDb.drop();
    await withoutDb.drop();
  }
}

interface Receiver {
  readonly url: string;
  /** The endpoint's secret, once it is created. */
  secret: string;
  /** Arrivals (webhook-id) of the current round, with the first and last arrival's time. */
  readonly received: Set<string>;
  firstAt: number;
  lastAt: number;
  /** Deliveries whose signature or timestamp did not verify. */
  readonly refused: string[];
  reset(): void;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that verifies each delivery (`v1,` by the endpoint's secret) and answers 200. */
async function startReceiver(): Promise<Receiver> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        verifyWebhook({ secret: receiver.secret, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      } catch (error) {
        receiver.refused.push((error as Error).message);
        response.writeHead(400).end();
        return;
      }
      const now = performance.now();
      if (receiver.received.size === 0) receiver.firstAt = now;
      receiver.lastAt = now;
      receiver.received.add(String(request.headers['webhook-id']));
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const release = hold('the webhook receiver', async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    secret: '',
    received: new Set(),
    firstAt: 0,
    lastAt: 0,
    refused: [],
    reset() {
      receiver.received.clear();
      receiver.firstAt = 0;
      receiver.lastAt = 0;
    },
    close: release,
  };
  return receiver;
}

/** An event's object the size of an intent's as the API shows it. */
function intentLike(tenantId: string): Record<string, unknown> {
  const at = new Date().toISOString();
  return {
    object: 'intent',
    intent_id: randomUUID(),
    tenant_id: tenantId,
    state: 'released',
    amount_cents: 500,
    currency: 'usd',
    principal_did: 'did:principal:bench',
    payee_did: 'did:payee:bench',
    deadline: '2030-01-02T15:04:05Z',
    settlement_rail: 'x402_usdc_base',
    evidence_digest_hex: randomBytes(32).toString('hex'),
    predicate_digest_hex: randomBytes(32).toString('hex'),
    funding: { rail: 'x402_usdc_base', authorization_id: `auth_${randomBytes(12).toString('hex')}`, funded_at: at },
    created_at: at,
    updated_at: at,
  };
}

/** `count` events of the tenant (the product's recordEvent, in transactions of 250), then one delivery of each to
 * the endpoint (the product's redelivery insert: the endpoint is disabled, so recordEvent queued none). */
async function writeBacklog(db: Database, tenantId: string, endpointId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    const chunk = Math.min(250, count - ids.length);
    await db.tenant(tenantId, async (tx) => {
      for (let i = 0; i < chunk; i += 1) ids.push(recordEvent(tx, tenantId, { type: 'intent.released', object: intentLike(tenantId) }));
    });
  }
  for (let start = 0; start < ids.length; start += 250) {
    await db.tenant(tenantId, async (tx) => {
      for (const id of ids.slice(start, start + 250)) await insertRedelivery(tx, tenantId, endpointId, id);
    });
  }
  return ids;
}

async function succeededDeliveries(db: Database, tenantId: string): Promise<number> {
  return db.tenant(tenantId, async (tx) => Number((await tx.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'succeeded'", [tenantId])).rows[0]!.n));
}

/** The row of deliveries per second to a local receiver. */
async function deliveryRow(): Promise<BenchRow> {
  const database = await createBenchDatabase();
  const secretsKey = randomBytes(32).toString('base64');
  const db = new Database({ connectionString: database.url, max: 2 });
  const closeDb = hold('the delivery round\'s pool', () => db.close());
  let receiver: Receiver | undefined;
  let service: ServiceProcess | undefined;
  try {
    receiver = await startReceiver();
    const { tenant } = await createTenant(db, 'bench', 'sandbox');
    const tenantId = tenant.tenantId;
    const { endpoint, secret } = await db.tenant(tenantId, (tx) =>
      createEndpoint(tx, tenantId, { environment: 'sandbox', allowPrivateDestinations: false }, SecretBox.fromBase64(secretsKey), { url: receiver!.url, enabled_events: ['intent.released'] }));
    receiver.secret = secret;
    const setEnabled = (enabled: boolean) => db.tenant(tenantId, (tx) => updateEndpoint(tx, tenantId, endpoint.endpointId, { enabled }));
    service = await startServiceProcess({ ...benchServiceEnv(database.url), SVC_SECRETS_KEY: secretsKey });
    const rates: number[] = [];
    const costs: number[] = [];
    let delivered = 0;
    for (let round = 0; round < deliveryRounds; round += 1) {
      await setEnabled(false);
      const ids = await writeBacklog(db, tenantId, endpoint.endpointId, backlog);
      receiver.reset();
      const startedAt = performance.now();
      const cpu = cpuWindow(service.pid);
      await setEnabled(true);
      // Until every delivery is recorded succeeded (the record follows the receiver's answer).
      while ((await succeededDeliveries(db, tenantId)) < delivered + backlog) {
        if (receiver.refused.length > 0) throw new Error(`events bench: the receiver refused ${receiver.refused.length} deliveries; first: ${receiver.refused[0]}`);
        if (performance.now() - startedAt > deliveryRoundTimeoutMs) throw new Error(`events bench: ${receiver.received.size} of ${backlog} deliveries arrived in ${deliveryRoundTimeoutMs / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const used = cpu.end();
      const seconds = (performance.now() - startedAt) / 1000;
      delivered += backlog;
      const missing = ids.filter((id) => !receiver!.received.has(id));
      if (missing.length > 0 || receiver.refused.length > 0) {
        throw new Error(`events bench: ${missing.length} events recorded delivered never arrived, ${receiver.refused.length} deliveries refused`);
      }
      const rate = (backlog - 1) / ((receiver.lastAt - receiver.firstAt) / 1000);
      const cost = (((used.service + used.postgres) * seconds) / backlog) * 1000;
      rates.push(rate);
      costs.push(cost);
      log(`delivery round ${round + 1}: ${backlog} deliveries, ${Math.round(rate)}/s from the first arrival to the last; ${cost.toFixed(2)} ms service + Postgres CPU per delivery; ${formatCpu(used)}`);
    }
    return {
      entry: `webhook deliveries per second to a receiver on loopback (a backlog of ${backlog.toLocaleString('en-US')} events, one endpoint, batches of ${webhookClaimBatchMax})`,
      figure: `${formatRate(median(rates), 'deliveries/s', rates)}; ${median(costs).toFixed(2)} ms service + Postgres CPU per delivery (spread ${spreadPercent(costs).toFixed(0)}%)`,
      baseline: '—',
      ratio: null,
      target: 'printed: each delivery signed, sent, answered and recorded',
      met: null,
    };
  } finally {
    await service?.stop();
    await receiver?.close();
    await closeDb();
    await database.drop();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await writingRows()), await deliveryRow()];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installGuard();
  try {
    for (const row of await run()) console.log(JSON.stringify(row));
  } catch (error) {
    await abortBench(error);
  }
}
