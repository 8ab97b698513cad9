// `npm run soak`: the model-based lifecycle test (test/model/lifecycle-model.ts) for tens of thousands of steps, on
// a fresh database of the machine's Postgres (TEST_DATABASE_ADMIN_URL, as the tests use), dropped afterwards.
//
//   npm run soak                                  1500 runs of up to 60 steps (about 25 000 steps, 30 minutes here)
//   npm run soak -- --runs 2000 --steps 80        longer
//   npm run soak -- --seed 123 --path "7:2:1" --replay-path "AB:C"
//                                                 replays one failure exactly as it was reported (the runner prints
//                                                 this line; --replay-path is fast-check's record of which commands ran)
//
// On a failure it prints the shrunk sequence of commands, what disagreed with the model, and the command line that
// replays it; the exit code is 1.
import fc from 'fast-check';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '../helpers/database.ts';
import { injectSystem } from './inject-system.ts';
import { lifecycleProperty } from './lifecycle-model.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1500' },
    steps: { type: 'string', default: '60' },
    seed: { type: 'string' },
    path: { type: 'string' },
    'replay-path': { type: 'string' },
  },
});
const runs = Number(values.runs);
const maxSteps = Number(values.steps);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(maxSteps) || maxSteps < 1 || !Number.isSafeInteger(seed)) {
  console.error('usage: npm run soak -- [--runs N] [--steps N] [--seed N --path P]');
  process.exit(2);
}

const database = await createTestDatabase();
const system = await injectSystem(database.connection);
const started = Date.now();
let steps = 0;
let finished = 0;
const counts = new Map<string, number>();
console.log(`soak: seed ${seed}${values.path ? `, path ${values.path}` : ''}, ${runs} runs of up to ${maxSteps} steps`);
try {
  const result = await fc.check(
    lifecycleProperty(system, maxSteps, (context) => {
      steps += context.real.steps;
      finished += 1;
      for (const [name, count] of context.real.counts) counts.set(name, (counts.get(name) ?? 0) + count);
      if (finished % 25 === 0) console.log(`  ${finished} runs, ${steps} steps, ${Math.round((Date.now() - started) / 1000)} s`);
    }, values['replay-path']),
    { numRuns: runs, seed, ...(values.path ? { path: values.path } : {}), endOnFailure: false, unbiased: true },
  );
  console.log(`soak: ${finished} runs, ${steps} steps in ${Math.round((Date.now() - started) / 1000)} s`);
  console.log(`  ${[...counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => `${name} ${count}`).join(', ')}`);
  if (result.failed) {
    console.error(fc.defaultReportMessage(result) ?? 'failed');
    console.error(`\nwhat disagreed: ${result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance)}`);
    const replayPath = /replayPath="([^"]*)"/.exec(fc.stringify(result.counterexample))?.[1];
    console.error(`\nreplay: npm run soak -- --seed ${result.seed} --path "${result.counterexamplePath}" --runs ${runs} --steps ${maxSteps}${replayPath ? ` --replay-path "${replayPath}"` : ''}`);
    process.exitCode = 1;
  } else {
    console.log('soak: every step agreed with the model; every run\'s ledger verified');
  }
} finally {
  await system.close();
  await database.drop();
}
