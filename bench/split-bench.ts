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
import { alternatingRounds, comparisonRows, startSide, stopSides, warmUp, type Side } from './ab-sides.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard, postgresStartedAt } from './guard.ts';
import { IntentFactory, IntentPool, type BenchPolicy } from './lifecycle-load.ts';

const cpuRatioMax = 1.2;
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
    sides.push(await startSide('splitting (metered)', withDb.url, await benchTenantPool(withDb.url, { release_mode: 'metered' })));
    sides.push(await startSide('releasing (full)', withoutDb.url, await benchTenantPool(withoutDb.url, {})));
    const [splitting, releasing] = sides as [Side, Side];
    const expected = await warmUp('split', sides);
    const busy = await alternatingRounds('split', [splitting, releasing], expected, log);
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the split bench: its figures are void');

    const words = { comparing: ', a settlement that splits vs a plain release', comparingShort: 'splitting vs releasing', measured: 'splitting', baseline: 'releasing' };
    return comparisonRows([splitting, releasing], words, cpuRatioMax, busy);
  } finally {
    await stopSides(sides);
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
