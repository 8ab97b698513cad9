// Bench entry: authenticated GET /v1/auth/principal on the real service (real Postgres) against a bare Fastify
// route, same load tool, same connections, alternating rounds. Target: at least half of bare.
import { createTenant } from '../src/services/tenant-service.ts';
import { Database } from '../src/infra/database.ts';
import type { BenchRow } from './bench-row.ts';
import { formatRate, load, median, startServer } from './harness.ts';
import { createBenchDatabase } from './bench-database.ts';
import { quick } from './options.ts';

const rounds = quick ? 1 : 5;
const secondsPerRound = quick ? 1 : 3;
const connections = 32;

export async function run(): Promise<BenchRow[]> {
  const database = await createBenchDatabase();
  // The limiter stays on, so its cost is measured, with a quota this flood from one key cannot reach.
  const service = await startServer('src/server.ts', { DATABASE_URL: database.url, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });
  const bare = await startServer('bench/bare-server.ts', {});
  try {
    const db = new Database({ connectionString: database.url, max: 1 });
    const { adminKey } = await createTenant(db, 'bench', 'sandbox');
    await db.close();
    const headers = { authorization: `Bearer ${adminKey.apiKey}` };
    // Warm-up: JIT, connection pools, the credential cache.
    await load(`${service.baseUrl}/v1/auth/principal`, { connections, seconds: 1, headers });
    await load(`${bare.baseUrl}/v1/auth/principal`, { connections, seconds: 1 });

    const serviceRates: number[] = [];
    const bareRates: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const measured = await load(`${service.baseUrl}/v1/auth/principal`, { connections, seconds: secondsPerRound, headers });
      if (measured.errors > 0) throw new Error(`principal bench saw ${measured.errors} failed requests`);
      serviceRates.push(measured.requestsPerSecond);
      bareRates.push((await load(`${bare.baseUrl}/v1/auth/principal`, { connections, seconds: secondsPerRound })).requestsPerSecond);
    }
    const ratio = median(serviceRates) / median(bareRates);
    return [{
      entry: `GET /v1/auth/principal, authenticated (${connections} connections)`,
      figure: formatRate(median(serviceRates), 'req/s', serviceRates),
      baseline: `bare Fastify route: ${formatRate(median(bareRates), 'req/s', bareRates)}`,
      ratio,
      target: '>= 0.50',
      met: ratio >= 0.5,
    }];
  } finally {
    await service.stop();
    await bare.stop();
    await database.drop();
  }
}
