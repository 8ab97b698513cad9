// `npm run fuzz`: the boundary property of test/fuzz/boundary.test.ts over its enumerated probes and then 20,000
// drawn requests on a fresh database, printing the count per status and per error code (the console's error pages
// counted by their code too), and every failure with a reproducer. Exits 1 on any failure. FUZZ_SEED (default:
// random, printed) and FUZZ_RUNS override; TEST_DATABASE_ADMIN_URL names the Postgres cluster.
import fc from 'fast-check';
import { createTestDatabase } from '../helpers/database.ts';
import { describeExchange, problemWith, startHarness, type Exchange } from './harness.ts';

const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const runs = Number(process.env.FUZZ_RUNS ?? 20_000);
/** Failures printed in full; the rest are counted. */
const failuresShownMax = 20;

const database = await createTestDatabase();
const harness = await startHarness(database.connection);
const statuses = new Map<number, number>();
const codes = new Map<string, number>();
const failures: string[] = [];
let sent = 0;
const startedAtMs = Date.now();
/** Counts the answer's status and error code (the envelope's, or a console error page's `data-code`). */
function tally(exchange: Exchange): void {
  statuses.set(exchange.status, (statuses.get(exchange.status) ?? 0) + 1);
  const match = /"code":"([a-z0-9_.]+)"|data-code="([a-z0-9_.]+)"/.exec(exchange.answer);
  const code = match?.[1] ?? match?.[2];
  if (exchange.status >= 400 && code) codes.set(code, (codes.get(code) ?? 0) + 1);
}

console.log(`fuzzing ${harness.routes.length} routes with ${harness.probes.length} probes and ${runs} requests, seed ${seed}`);
try {
  for (const probe of harness.probes) {
    const exchange = await harness.send(probe);
    tally(exchange);
    const problem = problemWith(exchange);
    if (problem) failures.push(`probe: ${problem}\n${describeExchange(exchange)}\n${harness.takeErrorLogs().slice(0, 1500)}`);
  }
  console.log(`  ${harness.probes.length} probes sent, ${failures.length} failures, ${((Date.now() - startedAtMs) / 1000).toFixed(0)} s`);
  await fc.assert(
    fc.asyncProperty(harness.requests, async (request) => {
      const exchange = await harness.send(request);
      sent += 1;
      tally(exchange);
      const problem = problemWith(exchange);
      if (problem) {
        failures.push(`#${sent} (replay with FUZZ_SEED=${seed} FUZZ_RUNS=${sent}): ${problem}\n${describeExchange(exchange)}\n${harness.takeErrorLogs().slice(0, 1500)}`);
      }
      if (sent % 2_000 === 0) console.log(`  ${sent} sent, ${failures.length} failures, ${((Date.now() - startedAtMs) / 1000).toFixed(0)} s`);
    }),
    { seed, numRuns: runs },
  );
} finally {
  await harness.close();
  await database.drop();
}

console.log(`\n${harness.probes.length} probes and ${sent} requests in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s, seed ${seed}\n\nstatus  count`);
for (const [status, count] of [...statuses].sort(([left], [right]) => left - right)) console.log(`${status}     ${count}`);
console.log('\nerror code                                   count');
for (const [code, count] of [...codes].sort(([, left], [, right]) => right - left)) console.log(`${code.padEnd(44)} ${count}`);
if (failures.length > 0) {
  console.log(`\n${failures.length} failures:\n`);
  for (const failure of failures.slice(0, failuresShownMax)) console.log(`${failure}\n`);
  process.exitCode = 1;
} else {
  console.log('\nno 5xx, and every error answer in the envelope with a catalogue code');
}
