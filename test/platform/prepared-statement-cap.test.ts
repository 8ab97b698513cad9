// The process-wide cap on statement texts prepared by name (databasePreparedStatementsMax). In a file of its own:
// the numbering is per process, and exhausting it would leave later tests of the same file nothing to prepare.
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { databasePreparedStatementsMax } from '../../src/limits.ts';
import { Database } from '../../src/platform/database.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let testDatabase: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = new Database({ ...testDatabase.connection, max: 1 });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await database?.close();
  await testDatabase?.drop();
});

it('prepares at most databasePreparedStatementsMax texts by name; later texts run unnamed', async () => {
  const calls = vi.spyOn(pg.Client.prototype, 'query');
  const texts = Array.from({ length: databasePreparedStatementsMax + 20 }, (_, index) => `SELECT ${index}::int + $1::int AS n`);
  const answers = await database.system(async (tx) => {
    await tx.query('SELECT 1');
    const sums: number[] = [];
    for (const text of texts) sums.push((await tx.query<{ n: number }>(text, [1])).rows[0]!.n);
    // Past the cap, a text in a message is inlined instead of prepared.
    const [batched] = await tx.batch([
      { text: texts.at(-1)!, values: [2], read: (result) => result.rows[0].n as number },
      { text: texts.at(-2)!, values: [3], read: (result) => result.rows[0].n as number },
    ]);
    sums.push(batched);
    return sums;
  });
  expect(answers).toEqual([...texts.map((_, index) => index + 1), texts.length + 1]);
  const sent = calls.mock.calls.map((call) => call[0] as string | { name?: string; text: string });
  const names = sent.slice(1, 1 + texts.length).map((config) => (config as { name?: string }).name);
  expect(new Set(names.filter((name) => name !== undefined)).size).toBeLessThanOrEqual(databasePreparedStatementsMax);
  expect(names.at(-1)).toBeUndefined();
  const message = sent[1 + texts.length] as string;
  expect(message).toContain(`SELECT ${texts.length - 1}::int + '2'::int AS n`);
  expect(message).not.toMatch(/PREPARE|EXECUTE/);
});
