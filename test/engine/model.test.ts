// The intent lifecycle against its model (test/model/lifecycle-model.ts): random command sequences over HTTP on a
// real server and database, checked after every step; a few hundred steps here, tens of thousands in `npm run soak`.
// A failure prints fast-check's seed, path and the commands' replayPath; replay it with
// `npm run soak -- --seed <seed> --path <path> --runs 12 --steps 60 --replay-path <replayPath>`.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { injectSystem, type InjectSystem } from '../model/inject-system.ts';
import { lifecycleProperty } from '../model/lifecycle-model.ts';

let database: TestDatabase;
let system: InjectSystem;

beforeAll(async () => {
  database = await createTestDatabase();
  system = await injectSystem(database.connection);
});

afterAll(async () => {
  await system?.close();
  await database?.drop();
});

it('agrees with the model of the lifecycle, step by step, for a few hundred random steps', async () => {
  let steps = 0;
  const counts = new Map<string, number>();
  await fc.assert(
    lifecycleProperty(system, 60, (context) => {
      steps += context.real.steps;
      for (const [name, count] of context.real.counts) counts.set(name, (counts.get(name) ?? 0) + count);
    }),
    { numRuns: 12, unbiased: true, endOnFailure: true },
  );
  console.info(`model: ${steps} steps (${[...counts].map(([name, count]) => `${name} ${count}`).join(', ')})`);
  expect(steps).toBeGreaterThan(100);
  // Nearly every kind of command ran (commands are counted by name, capitalised; what happened beside them, such as
  // holds placed and resolved, in lower case).
  expect([...counts.keys()].filter((name) => /^[A-Z]/.test(name)).length).toBeGreaterThanOrEqual(10);
  expect(counts.get('Resolve')).toBeGreaterThan(0);
}, 120_000);
