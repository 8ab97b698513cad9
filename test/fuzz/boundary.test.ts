// The boundary property over every route: requests derived from each route's own schema (the console's forms by
// the fields its pages read), then mutated with hostile input, sent with valid credentials and sessions; no answer
// is a 5xx and every error is our envelope with a catalogue code (or, on the console, an error page). Then the same
// check over enumerated requests: every string field at its limit with each troublesome Unicode class, and every
// console form in every shape. Seeded (FUZZ_SEED overrides the fixed seed); `npm run fuzz` runs the same property
// longer (test/fuzz/run.ts).
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot } from '../helpers/server-process.ts';
import { consoleFieldNames, consoleQueryNames } from './console.ts';
import { describeExchange, isConsoleRoute, problemWith, startHarness, type Harness } from './harness.ts';

const seed = Number(process.env.FUZZ_SEED ?? 20261125);
const runs = 2_000;

let database: TestDatabase;
let harness: Harness;

beforeAll(async () => {
  database = await createTestDatabase();
  harness = await startHarness(database.connection);
});

afterAll(async () => {
  await harness?.close();
  await database?.drop();
});

describe('hostile input over every route', () => {
  it(`answers ${runs} generated requests without a 5xx, every error in the envelope`, async () => {
    expect(harness.routes.length).toBeGreaterThan(30);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(harness.requests, async (request) => {
        const exchange = await harness.send(request);
        statuses.set(exchange.status, (statuses.get(exchange.status) ?? 0) + 1);
        const problem = problemWith(exchange);
        if (problem) throw new Error(`${problem}\n${describeExchange(exchange)}\n${harness.takeErrorLogs().slice(0, 2000)}`);
      }),
      { seed, numRuns: runs, endOnFailure: true },
    );
    // Most requests must get past the boundary to a route's own checks, or the property says little.
    const refusedEarly = (statuses.get(401) ?? 0) + (statuses.get(404) ?? 0);
    expect(refusedEarly).toBeLessThan(runs * 0.6);
  }, 120_000);

  it('answers every string field at its limit, in every troublesome Unicode class, and every console form shape', async () => {
    expect(harness.probes.length).toBeGreaterThan(1_000);
    const failures: string[] = [];
    for (const probe of harness.probes) {
      const exchange = await harness.send(probe);
      const problem = problemWith(exchange);
      if (problem) failures.push(`${problem}\n${describeExchange(exchange)}\n${harness.takeErrorLogs().slice(0, 2000)}`);
    }
    expect(failures.slice(0, 5), `${failures.length} failures`).toEqual([]);
  }, 300_000);

  it('sends console forms and queries by every name the console pages read', () => {
    expect(harness.routes.filter(isConsoleRoute).length).toBeGreaterThan(20);
    const pagesDirectory = path.join(projectRoot, 'src/surfaces/console/pages');
    const sources = fs.readdirSync(pagesDirectory).map((file) => fs.readFileSync(path.join(pagesDirectory, file), 'utf8')).join('\n');
    const fieldsRead = [...sources.matchAll(/formValues?\((?:outcome\.)?body, '([^']+)'\)/g)].map((match) => match[1]!);
    const queriesRead = [...sources.matchAll(/query\['([^']+)'\]|query as \{ ([^}]+) \}/g)].flatMap((match) => match[1] ?? [...match[2]!.matchAll(/(\w+)\?:/g)].map((inner) => inner[1]!));
    expect(fieldsRead.length).toBeGreaterThan(20);
    expect(fieldsRead.filter((name) => !(consoleFieldNames as readonly string[]).includes(name))).toEqual([]);
    expect(queriesRead.filter((name) => !(consoleQueryNames as readonly string[]).includes(name))).toEqual([]);
  });
});
