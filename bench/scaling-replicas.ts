// What two replicas of the service on one database measure on this machine (docs/scaling.md): the lifecycle load
// of the bench (create → fund 402 → fund paid → evidence → confirm, bench/lifecycle-load.ts) against one service
// process, then split evenly across two processes on the same database, at the same total client count, in
// alternating short rounds. Throughput is engine mutations/s summed over the processes.
//
//   node --import tsx bench/scaling-replicas.ts [--clients 16] [--seconds 6] [--rounds 2] [--tenants 1]
//
// `--tenants N` spreads the intents over N sandbox tenants (each has its own ledger head).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import { createBenchDatabase } from './bench-database.ts';
import { installGuard } from './guard.ts';
import { closedLoop, EngineClient, IntentFactory, IntentPool, percentile, allMutationLatencies, type BenchTenant, type LoadSample } from './lifecycle-load.ts';
import { startServiceProcess } from './service-process.ts';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '2' },
    tenants: { type: 'string', default: '1' },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const tenantCount = Number(values.tenants);

installGuard();
const database = await createBenchDatabase();
const env = { DATABASE_URL: database.url, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' };
const services = [await startServiceProcess(env), await startServiceProcess(env)];
try {
  const db = new Database({ connectionString: database.url, max: 1 });
  const tenants: BenchTenant[] = [];
  for (let index = 0; index < tenantCount; index += 1) {
    const { tenant, adminKey } = await createTenant(db, `replicas-${index + 1}`, 'sandbox');
    tenants.push({ tenantId: tenant.tenantId, apiKey: adminKey.apiKey });
  }
  await db.close();
  const pool = new IntentPool(new IntentFactory(tenants));
  const engineClients = services.map((service) => new EngineClient(service.baseUrl, clients));
  const describe = (label: string, samples: LoadSample[]) => {
    const total = samples.reduce((sum, sample) => sum + sample.mutationsPerSecond, 0);
    const latencies = samples.flatMap(allMutationLatencies).sort((a, b) => a - b);
    const errors = samples.flatMap((sample) => sample.errors);
    return `${label}: ${total.toFixed(0)} mutations/s (${samples.map((sample) => sample.mutationsPerSecond.toFixed(0)).join(' + ')}), p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms${errors.length ? `, errors: ${errors.slice(0, 3).join('; ')}` : ''}`;
  };
  const expected = Math.ceil((clients * seconds * 1000) / 8) + clients * 4;
  console.log(`two replicas: ${clients} clients in all, ${seconds} s rounds, ${tenantCount} tenant(s), ${os.cpus().length} cores; load average ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}`);
  pool.ensure(clients * 8);
  await closedLoop(engineClients[0]!, pool, { clients, seconds: 1 }); // warm-up
  await closedLoop(engineClients[1]!, pool, { clients, seconds: 1 });
  for (let round = 1; round <= rounds; round += 1) {
    pool.ensure(expected);
    console.log(`  round ${round} ${describe('one process ', [await closedLoop(engineClients[0]!, pool, { clients, seconds })])}`);
    pool.ensure(expected);
    const split = await Promise.all(engineClients.map((client) => closedLoop(client, pool, { clients: clients / 2, seconds })));
    console.log(`  round ${round} ${describe('two processes', split)}`);
  }
  for (const client of engineClients) client.close();
  console.log(`load average after: ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}`);
} finally {
  for (const service of services) await service.stop();
  await database.drop();
}
