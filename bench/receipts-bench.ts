// Bench entry (docs/performance.md): what issuing receipts costs the engine lifecycle. Two service processes, each on
// a fresh migrated database of its own: the service as it runs (receipts signed and logged at every terminal
// transition) and no-receipts-server.ts, the same service composed without the receipt effect (the standing effect
// stays in both). Closed-loop lifecycle rounds at 16 clients, with the lifecycle entry's load generator, alternate
// between them; the row is service + Postgres CPU per engine mutation with receipts over without, target <= 1.15
// (whole-machine CPU per mutation is printed beside it: on a busy machine it carries the neighbours too). A second row
// counts, of Postgres, only the backends connected to the side's own database, so that other work on the machine's
// Postgres (a test suite, another entry) cannot land in it. For the record, a third row: tree heads signed during the
// receipts rounds against receipts issued in them, read from the database, to show that signing is batched (one head
// per tenant per pass).
//
//   node --import tsx bench/receipts-bench.ts [--quick]
// `--quick` runs one short round of each: a smoke test of the instrument, not a measurement.
import pg from 'pg';
import { abSchedule, alternatingRounds, comparisonRows, sandboxTenantPool, startSide, stopSides, warmUp, type Side } from './ab-sides.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard, postgresStartedAt } from './guard.ts';

const cpuRatioMax = 1.15;
const log = (line: string) => process.stderr.write(`  receipts: ${line}\n`);

/** Tree heads signed and receipts issued so far, in the receipts side's database. */
async function logCounts(databaseUrl: string): Promise<{ heads: number; receipts: number; leaves: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ heads: string; receipts: string; leaves: string }>(
      `SELECT (SELECT count(*) FROM transparency_tree_heads) AS heads, (SELECT count(*) FROM protocol_receipts) AS receipts,
              (SELECT count(*) FROM transparency_log_leaves) AS leaves`,
    );
    const row = rows[0]!;
    return { heads: Number(row.heads), receipts: Number(row.receipts), leaves: Number(row.leaves) };
  } finally {
    await client.end();
  }
}

export async function run(): Promise<BenchRow[]> {
  const startedAt = await postgresStartedAt();
  const withDb = await createBenchDatabase();
  const withoutDb = await createBenchDatabase();
  const sides: Side[] = [];
  try {
    sides.push(await startSide('with receipts', withDb.url, await sandboxTenantPool(withDb.url)));
    sides.push(await startSide('without receipts', withoutDb.url, await sandboxTenantPool(withoutDb.url), { script: 'bench/no-receipts-server.ts' }));
    const [withReceipts, withoutReceipts] = sides as [Side, Side];
    const expected = await warmUp('receipts', sides);
    const before = await logCounts(withReceipts.databaseUrl);
    const busy = await alternatingRounds('receipts', [withReceipts, withoutReceipts], expected, log);
    // The last pass of the tree-head timer (at most its interval behind) is part of the rounds' signing.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await logCounts(withReceipts.databaseUrl);
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the receipts bench: its figures are void');

    const heads = after.heads - before.heads;
    const receipts = after.receipts - before.receipts;
    const leaves = after.leaves - before.leaves;
    const words = { comparing: ' with receipts issued vs without', comparingShort: 'with receipts vs without', measured: 'with receipts', baseline: 'without the receipt effect' };
    return [
      ...comparisonRows([withReceipts, withoutReceipts], words, cpuRatioMax, busy),
      {
        entry: 'tree heads signed vs receipts issued during the receipts rounds (from the transparency log tables)',
        figure: `${heads} tree heads signed${heads > 0 ? `: one per ${Math.round(receipts / heads)} receipts` : ''}`,
        baseline: `${receipts} receipts issued (${leaves} log leaves) in ${abSchedule.rounds} rounds of ${abSchedule.secondsPerRound} s`,
        ratio: null,
        target: 'printed: batched, one head per tenant per pass',
        met: null,
      },
    ];
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
