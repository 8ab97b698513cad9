// Bench entry: GET /reputation/{operator_did} (a signed operator receipt) for a tenant with 100,000 settled intents
// against the authenticated GET /v1/auth/principal of the same service in the same run, alternating rounds. Target:
// at least half. For the record, also against the ledger tip (a signed read with one tenant transaction, as a receipt
// is), and the time of a rebuild. The intents are seeded with bulk SQL, spread over 10 operators (half to the one
// read) and 400 days; the aggregates come from `rebuildStanding`.
import { Database } from '../src/infra/database.ts';
import { rebuildStanding } from '../src/services/standing-service.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { formatRate, load, median, startServer } from './harness.ts';
import { quick } from './options.ts';

const settledIntents = 100_000;
const operators = 10;
const seedChunk = 10_000;
const rounds = quick ? 1 : 5;
const secondsPerRound = quick ? 1 : 3;
const connections = 32;
const readOperator = 'did:bench:operator-0';

/** 100,000 terminal intents in one statement: released, refunded (failed evidence) and expired (no evidence) mixed,
 * funded 1 s to 2 days before they settled, settled over the last 400 days. */
const seedStatement = `
  INSERT INTO intents (tenant_id, intent_id, state, signing_version, principal_did, principal_key_registered, payee_did,
    budget, currency, amount_cents, evidence_schema, deadline_text, deadline, predicate_dsl, settlement_rail, allowed_tools,
    predicate_passed, created_at, funded_at, settled_at)
  SELECT $1, gen_random_uuid(), CASE WHEN i % 5 < 3 THEN 'released' ELSE 'refunded' END, 0, 'did:bench:principal', false,
    CASE WHEN i % 2 = 0 THEN '${readOperator}' ELSE 'did:bench:operator-' || (1 + (i / 2) % ${operators - 1}) END,
    '{}'::jsonb, 'usd', 100 + i % 5000, '{"type":"object"}'::jsonb, '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z',
    '{"version":1,"root":{"op":"true"}}'::jsonb, 'x402_usdc_base', ARRAY['bench.op'],
    CASE WHEN i % 5 < 3 THEN true WHEN i % 5 = 3 THEN false ELSE NULL END,
    settled - interval '1 second' * (1 + i % 172800) - interval '1 minute', settled - interval '1 second' * (1 + i % 172800), settled
  FROM generate_series($2::integer, $3::integer) AS i,
    LATERAL (SELECT now() - interval '1 second' * ((i * 7919) % (400 * 86400)) AS settled) AS times`;

export async function run(): Promise<BenchRow[]> {
  const database = await createBenchDatabase();
  const service = await startServer('src/server.ts', { DATABASE_URL: database.url, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });
  try {
    const db = new Database({ connectionString: database.url, max: 1 });
    let rebuildMs: number;
    let apiKey: string;
    try {
      const { tenant, adminKey } = await createTenant(db, 'bench', 'sandbox');
      apiKey = adminKey.apiKey;
      // In chunks, each statement well inside the statement timeout.
      for (let first = 1; first <= settledIntents; first += seedChunk) {
        await db.system((tx) => tx.query(seedStatement, [tenant.tenantId, first, Math.min(first + seedChunk - 1, settledIntents)]));
      }
      const started = performance.now();
      await rebuildStanding(db, tenant.tenantId);
      rebuildMs = performance.now() - started;
    } finally {
      await db.close();
    }
    const headers = { authorization: `Bearer ${apiKey}` };
    const reputationUrl = `${service.baseUrl}/reputation/${encodeURIComponent(readOperator)}`;
    const principalUrl = `${service.baseUrl}/v1/auth/principal`;
    // For the record: the cheapest signed read that also opens a tenant transaction (one small query, one signature).
    const tipUrl = `${service.baseUrl}/harbor/ledger/v1/tip`;
    // Warm-up: JIT, connection pools, the credential cache.
    await load(reputationUrl, { connections, seconds: 1, headers });
    await load(principalUrl, { connections, seconds: 1, headers });

    const reputationRates: number[] = [];
    const principalRates: number[] = [];
    const tipRates: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const measured = await load(reputationUrl, { connections, seconds: secondsPerRound, headers });
      if (measured.errors > 0) throw new Error(`standing bench saw ${measured.errors} failed reputation reads`);
      reputationRates.push(measured.requestsPerSecond);
      principalRates.push((await load(principalUrl, { connections, seconds: secondsPerRound, headers })).requestsPerSecond);
      tipRates.push((await load(tipUrl, { connections, seconds: secondsPerRound, headers })).requestsPerSecond);
    }
    const ratio = median(reputationRates) / median(principalRates);
    const tipRatio = median(reputationRates) / median(tipRates);
    return [
      {
        entry: `GET /reputation/{operator_did}, signed, tenant with ${settledIntents.toLocaleString('en-US')} settled intents (${connections} connections)`,
        figure: formatRate(median(reputationRates), 'req/s', reputationRates),
        baseline: `GET /v1/auth/principal: ${formatRate(median(principalRates), 'req/s', principalRates)}`,
        ratio,
        target: '>= 0.50',
        met: ratio >= 0.5,
      },
      {
        entry: 'GET /reputation/{operator_did} against GET /harbor/ledger/v1/tip (a signed read with one tenant transaction)',
        figure: formatRate(median(reputationRates), 'req/s', reputationRates),
        baseline: `GET /harbor/ledger/v1/tip: ${formatRate(median(tipRates), 'req/s', tipRates)}`,
        ratio: tipRatio,
        target: 'for the record',
        met: null,
      },
      {
        entry: `svc standing rebuild of ${settledIntents.toLocaleString('en-US')} settled intents`,
        figure: `${Math.round(rebuildMs).toLocaleString('en-US')} ms`,
        baseline: '—',
        ratio: null,
        target: 'for the record',
        met: null,
      },
    ];
  } finally {
    await service.stop();
    await database.drop();
  }
}
