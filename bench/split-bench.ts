// Bench entry (docs/performance.md): what a settlement that splits costs against a plain release. Two service
// processes (the service as it runs), each on a fresh migrated database of its own, each with one sandbox tenant whose
// intents are bound (v7) to a completion_budget_v1 policy version: `release_mode: metered` on one side, so that the
// evidence's cost of 120 cents of 500 settles `resolved_split` (one three-entry ledger transaction, spend
// reservations closed), and the default (full) on the other, so that the same evidence settles `released`.
// Closed-loop lifecycle rounds at 16 clients, with the lifecycle entry's load generator, alternate between them; the
// row is service + Postgres CPU per engine mutation, split over plain, target <= 1.2 (the bound); a second
// row counts only each side's own Postgres backends.
//
//   node --import tsx bench/split-bench.ts [--quick]
// `--quick` runs one short round of each: a smoke test of the instrument, not a measurement.
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import { draftPolicy, rolloutPolicy } from '../src/services/policy-service.ts';
import { alternatingRounds, formatOwn, formatSide, warmUp, type Side } from './ab-sides.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard, postgresStartedAt } from './guard.ts';
import { median } from './harness.ts';
import { EngineClient, IntentFactory, IntentPool, type BenchPolicy } from './lifecycle-load.ts';
import { quick } from './options.ts';
import { startServiceProcess } from './service-process.ts';

const rounds = quick ? 1 : 5;
const secondsPerRound = quick ? 3 : 8;
const warmupSeconds = quick ? 1 : 3;
const clients = 16;
const cpuRatioMax = 1.2;
/** Cores other processes may take from a round before its figures say more about them than about the service. */
const outsideCoresMax = 0.15;

const serviceEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });
const log = (line: string) => process.stderr.write(`  split: ${line}\n`);

/** A sandbox tenant with a completion_budget_v1 head of `parameters`, and a pool of intents bound to it. */
async function benchTenantPool(databaseUrl: string, parameters: Record<string, unknown>): Promise<IntentPool> {
  const db = new Database({ connectionString: databaseUrl, max: 1 });
  try {
    const { tenant, adminKey } = await createTenant(db, 'bench', 'sandbox');
    const version = await draftPolicy(db, tenant.tenantId, 'completion_budget_v1', parameters);
    await rolloutPolicy(db, tenant.tenantId, { templateId: version.templateId, versionSeq: version.versionSeq, actor: 'bench' });
    const policy: BenchPolicy = {
      templateId: version.templateId,
      versionSeq: version.versionSeq,
      contentDigestHex: version.contentDigest.toString('hex'),
      materializedPredicate: version.materializedPredicate,
    };
    return new IntentPool(new IntentFactory([{ tenantId: tenant.tenantId, apiKey: adminKey.apiKey }], policy));
  } finally {
    await db.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const startedAt = await postgresStartedAt();
  const withDb = await createBenchDatabase();
  const withoutDb = await createBenchDatabase();
  const sides: Side[] = [];
  try {
    const starts: Array<[string, string, Record<string, unknown>]> = [
      ['splitting (metered)', withDb.url, { release_mode: 'metered' }],
      ['releasing (full)', withoutDb.url, {}],
    ];
    for (const [name, databaseUrl, parameters] of starts) {
      const pool = await benchTenantPool(databaseUrl, parameters);
      const service = await startServiceProcess(serviceEnv(databaseUrl), [], 'src/server.ts');
      const client = new EngineClient(service.baseUrl, clients);
      sides.push({ name, databaseUrl, service, client, pool, costs: [], machineCosts: [], ownCosts: [], rates: [] });
    }
    const [splitting, releasing] = sides as [Side, Side];
    const expected = await warmUp('split', sides, clients, warmupSeconds);
    const busy = await alternatingRounds('split', [splitting, releasing], { clients, rounds, secondsPerRound, expected, outsideCoresMax, log });
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the split bench: its figures are void');

    const ratio = median(splitting.costs) / median(releasing.costs);
    const ownRatio = median(splitting.ownCosts) / median(releasing.ownCosts);
    return [
      {
        entry: `service + Postgres CPU per lifecycle mutation, a settlement that splits vs a plain release (closed loop, ${clients} clients)${busy ? ' [machine busy]' : ''}`,
        figure: `splitting: ${formatSide(splitting)}`,
        baseline: `releasing: ${formatSide(releasing)}`,
        ratio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ratio <= cpuRatioMax,
      },
      {
        entry: `service + its own Postgres backends' CPU per lifecycle mutation, splitting vs releasing (the same rounds; other work on the machine's Postgres left out)`,
        figure: `splitting: ${formatOwn(splitting)}`,
        baseline: `releasing: ${formatOwn(releasing)}`,
        ratio: ownRatio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ownRatio <= cpuRatioMax,
      },
    ];
  } finally {
    for (const side of sides) {
      side.client.close();
      await side.service.stop();
    }
    await withDb.drop();
    await withoutDb.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installGuard();
  try {
    for (const row of await run()) console.log(JSON.stringify(row));
  } catch (error) {
    await abortBench(error);
  }
}
