// Measures what bounds one tenant (docs/scaling.md): the per-tenant ledger head lock. Every posting of a tenant
// locks its ledger_heads row inside ledger_post and holds it until its transaction has committed, so one tenant's
// postings run one at a time: its ceiling is 1 / (time the lock is held).
//
//   node --import tsx bench/scaling-head-lock.ts [--seconds 6] [--clients 16]
//
// On a fresh database of the machine's Postgres (as the bench's other entries), dropped afterwards:
//   1. the locked section, timed statement by statement from one client: ledger_post (from the lock to its end) and
//      the COMMIT after it (the WAL flush, during which the lock is still held);
//   2. the locked section as the engine runs it (ledger_post and COMMIT in one message), from one client;
//   3. postings/s through the service's own posting code (queueLedgerTransaction), `--clients` clients on ONE
//      tenant (they queue on its head) and the same clients on as many tenants (they do not);
//   4. while (3) runs on one tenant: how often a sampled backend was waiting for the head's row lock (pg_locks).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Database } from '../src/infra/database.ts';
import { queueLedgerTransaction, type LedgerPosting } from '../src/services/ledger-service.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import { createBenchDatabase } from './bench-database.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '6' }, clients: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const clients = Number(values.clients);

const percentile = (sorted: number[], fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? NaN;
const summary = (label: string, samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  return `${label}: n ${samples.length}, mean ${mean.toFixed(2)} ms, p50 ${percentile(sorted, 0.5).toFixed(2)}, p90 ${percentile(sorted, 0.9).toFixed(2)}, p99 ${percentile(sorted, 0.99).toFixed(2)}`;
};

function posting(intentId: string): LedgerPosting {
  return {
    transactionId: randomUUID(),
    intentId,
    eventKind: 'fund',
    currency: 'usd',
    entries: [
      { account: `intent:${intentId}:escrow`, side: 'debit', amountCents: 500 },
      { account: 'rail:x402_usdc_base:funding', side: 'credit', amountCents: 500 },
    ],
  };
}

const database = await createBenchDatabase();
const connection = { connectionString: database.url };
const db = new Database({ ...connection, max: clients + 4 });
const load = async () => os.loadavg();
try {
  const tenants: string[] = [];
  for (let index = 0; index < clients; index += 1) {
    const tenantId = `lock-${index}-${randomUUID().slice(0, 8)}`;
    await createTenant(db, tenantId, 'sandbox');
    tenants.push(tenantId);
  }
  const [first] = tenants as [string];
  console.log(`ledger head lock: ${clients} clients, ${seconds} s windows; load average before: ${(await load()).map((value) => value.toFixed(1)).join(' ')}`);

  // 1. Statement by statement, one client: ledger_post, then COMMIT. A `SELECT 1` round trip is the floor.
  const client = new pg.Client(connection);
  await client.connect();
  const [roundTrip, post, commit] = [[] as number[], [] as number[], [] as number[]];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    await client.query("BEGIN; SET LOCAL ROLE svc_app; SELECT set_config('app.tenant_id', $$" + first + '$$, true)');
    let start = performance.now();
    await client.query('SELECT 1');
    roundTrip.push(performance.now() - start);
    start = performance.now();
    await client.query(
      `SELECT ledger_post($1, $2, $3, 'usd', 'fund', date_trunc('milliseconds', now()), ARRAY['a','b'], ARRAY[0,1]::smallint[], ARRAY[500,500]::bigint[], $4::bytea[], $4::bytea[])`,
      [first, randomUUID(), randomUUID(), [Buffer.alloc(120, 1), Buffer.alloc(40, 2)]],
    );
    post.push(performance.now() - start);
    start = performance.now();
    await client.query('COMMIT');
    commit.push(performance.now() - start);
  }
  await client.end();
  console.log(`1. ${summary('round trip (SELECT 1)', roundTrip)}`);
  console.log(`   ${summary('ledger_post (locks the head at its start)', post)}`);
  console.log(`   ${summary('COMMIT after it (lock still held)', commit)}`);

  // 2. As the engine sends it: ledger_post travels with COMMIT in one message, one client, through the service code.
  const engineShaped: number[] = [];
  const until2 = performance.now() + seconds * 1000;
  while (performance.now() < until2) {
    const start = performance.now();
    await db.tenant(first, async (tx) => queueLedgerTransaction(tx, first, posting(randomUUID())));
    engineShaped.push(performance.now() - start);
  }
  console.log(`2. ${summary('whole posting transaction, one client (BEGIN … ledger_post+COMMIT)', engineShaped)}`);

  // 3. Many clients: one tenant (queued on one head) and one tenant each.
  async function throughput(tenantOf: (index: number) => string, sample?: () => Promise<void>): Promise<number> {
    let done = 0;
    const end = performance.now() + seconds * 1000;
    const worker = async (index: number) => {
      while (performance.now() < end) {
        const tenant = tenantOf(index);
        await db.tenant(tenant, async (tx) => queueLedgerTransaction(tx, tenant, posting(randomUUID())));
        done += 1;
      }
    };
    await Promise.all([...Array.from({ length: clients }, (_, index) => worker(index)), sample?.()]);
    return done / seconds;
  }
  // 4. Sampled while the one-tenant run goes: how many backends wait for a transaction (the head's row lock).
  const waits: number[] = [];
  const sampler = async () => {
    const probe = new pg.Client(connection);
    await probe.connect();
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const { rows } = await probe.query(
        `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')) AS waiting,
                count(*) FILTER (WHERE state = 'active') AS active
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      waits.push(Number(rows[0].waiting));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await probe.end();
  };
  const oneTenant = await throughput(() => first, sampler);
  const manyTenants = await throughput((index) => tenants[index]!);
  const meanWaiting = waits.reduce((sum, value) => sum + value, 0) / waits.length;
  console.log(`3. postings/s with ${clients} clients: one tenant ${oneTenant.toFixed(0)}, ${clients} tenants ${manyTenants.toFixed(0)}`);
  console.log(`4. backends waiting on a row lock while one tenant is loaded: mean ${meanWaiting.toFixed(1)} of ${clients} (${waits.length} samples)`);
  console.log(`   implied hold time of the head lock at one tenant: ${(1000 / oneTenant).toFixed(2)} ms per posting`);
  console.log(`load average after: ${(await load()).map((value) => value.toFixed(1)).join(' ')}`);
} finally {
  await db.close();
  await database.drop();
}
