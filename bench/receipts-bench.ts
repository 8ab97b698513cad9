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
import { alternatingRounds, formatOwn, formatSide, sandboxTenantPool, warmUp, type Side } from './ab-sides.ts';
import type { BenchRow } from './bench-row.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard, postgresStartedAt } from './guard.ts';
import { median } from './harness.ts';
import { EngineClient } from './lifecycle-load.ts';
import { quick } from './options.ts';
import { startServiceProcess } from './service-process.ts';

const rounds = quick ? 1 : 5;
const secondsPerRound = quick ? 3 : 8;
const warmupSeconds = quick ? 1 : 3;
const clients = 16;
const cpuRatioMax = 1.15;
/** Cores other processes may take from a round before its figures say more about them than about the service. */
const outsideCoresMax = 0.15;

const serviceEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' });
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
    const starts: Array<[string, string, string]> = [
      ['with receipts', withDb.url, 'src/server.ts'],
      ['without receipts', withoutDb.url, 'bench/no-receipts-server.ts'],
    ];
    for (const [name, databaseUrl, script] of starts) {
      const pool = await sandboxTenantPool(databaseUrl);
      const service = await startServiceProcess(serviceEnv(databaseUrl), [], script);
      const client = new EngineClient(service.baseUrl, clients);
      sides.push({ name, databaseUrl, service, client, pool, costs: [], machineCosts: [], ownCosts: [], rates: [] });
    }
    const [withReceipts, withoutReceipts] = sides as [Side, Side];
    const expected = await warmUp('receipts', sides, clients, warmupSeconds);
    const before = await logCounts(withReceipts.databaseUrl);
    const busy = await alternatingRounds('receipts', [withReceipts, withoutReceipts], { clients, rounds, secondsPerRound, expected, outsideCoresMax, log });
    // The last pass of the tree-head timer (at most its interval behind) is part of the rounds' signing.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await logCounts(withReceipts.databaseUrl);
    if ((await postgresStartedAt()) !== startedAt) throw new Error('Postgres restarted during the receipts bench: its figures are void');

    const ratio = median(withReceipts.costs) / median(withoutReceipts.costs);
    const ownRatio = median(withReceipts.ownCosts) / median(withoutReceipts.ownCosts);
    const heads = after.heads - before.heads;
    const receipts = after.receipts - before.receipts;
    const leaves = after.leaves - before.leaves;
    return [
      {
        entry: `service + Postgres CPU per lifecycle mutation with receipts issued vs without (closed loop, ${clients} clients)${busy ? ' [machine busy]' : ''}`,
        figure: `with receipts: ${formatSide(withReceipts)}`,
        baseline: `without the receipt effect: ${formatSide(withoutReceipts)}`,
        ratio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ratio <= cpuRatioMax,
      },
      {
        entry: `service + its own Postgres backends' CPU per lifecycle mutation, with receipts vs without (the same rounds; other work on the machine's Postgres left out)`,
        figure: `with receipts: ${formatOwn(withReceipts)}`,
        baseline: `without the receipt effect: ${formatOwn(withoutReceipts)}`,
        ratio: ownRatio,
        target: `<= ${cpuRatioMax.toFixed(2)}`,
        met: ownRatio <= cpuRatioMax,
      },
      {
        entry: 'tree heads signed vs receipts issued during the receipts rounds (from the transparency log tables)',
        figure: `${heads} tree heads signed${heads > 0 ? `: one per ${Math.round(receipts / heads)} receipts` : ''}`,
        baseline: `${receipts} receipts issued (${leaves} log leaves) in ${rounds} rounds of ${secondsPerRound} s`,
        ratio: null,
        target: 'printed: batched, one head per tenant per pass',
        met: null,
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
