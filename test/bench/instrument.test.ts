// The lifecycle bench's instruments, each checked against something it must get right: the protocol-level statement
// counter against real Postgres, pgbench's per-transaction log parsing, Postgres CPU across backends that exit, and
// the abort messages that name a dead Postgres or a dead service.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain } from '../../bench/guard.ts';
import { parseTransactionLogs } from '../../bench/pgbench.ts';
import { postgresCpuBetween } from '../../bench/proc-cpu.ts';
import { countsSoFar } from '../../bench/statement-counter.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('statement-counter.ts', () => {
  let database: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    client = new pg.Client(database.connection);
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  /** What `work` added to the counts. */
  async function counted(work: () => Promise<unknown>) {
    const before = countsSoFar();
    await work();
    // pg settles a failed query's promise on the error, before the server's ReadyForQuery may have been read: wait
    // until the counts have stood still for a moment, so that late messages land in the test that caused them.
    let after = countsSoFar();
    for (let waited = 0; waited < 1_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const now = countsSoFar();
      if (now.roundTrips === after.roundTrips && now.statements === after.statements) break;
      after = now;
    }
    const byCommand = Object.fromEntries(Object.entries(after.byCommand).map(([command, count]) => [command, count - (before.byCommand[command] ?? 0)]).filter(([, count]) => count !== 0));
    return { roundTrips: after.roundTrips - before.roundTrips, statements: after.statements - before.statements, byCommand };
  }

  it('counts a simple-query message of several statements as one round trip and each statement by its tag', async () => {
    const seen = await counted(() => client.query('BEGIN; SET LOCAL statement_timeout = 1000; SELECT 1; SELECT 2; COMMIT'));
    expect(seen).toEqual({ roundTrips: 1, statements: 5, byCommand: { BEGIN: 1, SET: 1, SELECT: 2, COMMIT: 1 } });
  });

  it('counts an extended-protocol statement (parameters, prepared by name) as one round trip and one statement', async () => {
    const seen = await counted(async () => {
      await client.query({ name: 'bench_counter_probe', text: 'SELECT $1::int AS value', values: [1] });
      await client.query({ name: 'bench_counter_probe', text: 'SELECT $1::int AS value', values: [2] });
    });
    expect(seen).toEqual({ roundTrips: 2, statements: 2, byCommand: { SELECT: 2 } });
  });

  it('counts a failing statement as ERROR, and the statements after it in the message not at all', async () => {
    const seen = await counted(() => client.query('SELECT 1; SELECT 1 / 0; SELECT 3').catch(() => undefined));
    expect(seen).toEqual({ roundTrips: 1, statements: 2, byCommand: { SELECT: 1, ERROR: 1 } });
  });

  it('does not count a new connection\'s start-up as a round trip', async () => {
    const seen = await counted(async () => {
      const other = new pg.Client(database.connection);
      await other.connect();
      await other.end();
    });
    expect(seen.roundTrips).toBe(0);
  });
});

describe('pgbench.ts: parseTransactionLogs', () => {
  it('reads the latency column (µs) of every thread\'s log, leaving out skipped transactions', () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-log-test-'));
    try {
      // client_id transaction_no time_us script_no epoch epoch_us schedule_lag_us
      fs.writeFileSync(path.join(directory, 'log.123'), '0 1 2500 0 1700000000 1000 100\n1 1 40000 0 1700000000 2000 35000\n');
      fs.writeFileSync(path.join(directory, 'log.123.1'), '2 1 skipped 0 1700000000 3000 900000\n3 1 1000 0 1700000000 4000 10\n');
      expect(parseTransactionLogs(directory).sort((a, b) => a - b)).toEqual([1, 2.5, 40]);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('proc-cpu.ts: postgresCpuBetween', () => {
  it('counts a backend that exited inside the window by what it used after the first reading', () => {
    // Backend 20 used 1 s before the window and 3 s in all; when it exits the postmaster (10) reaps its 3 s.
    const before = new Map([['10', 5], ['20', 1], ['30', 2]]);
    const after = new Map([['10', 5 + 3], ['30', 2.5], ['40', 0.25]]);
    expect(postgresCpuBetween(before, after)).toBeCloseTo(2 + 0.5 + 0.25);
  });
});

describe('guard.ts: explain', () => {
  const refused = (port: number) => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED', address: '127.0.0.1', port });

  it('names Postgres when its port refuses, also behind a wrapping error', () => {
    expect(explain(new Error('fetch failed', { cause: refused(5432) }))).toMatch(/^Postgres refused the connection at 127\.0\.0\.1:5432/);
    expect(explain(new AggregateError([refused(5432)]))).toMatch(/^Postgres refused/);
  });

  it('names the process under test when another port refuses', () => {
    expect(explain(refused(40123))).toMatch(/the process under test has died/);
  });

  it('names a Postgres shutdown or restart by its SQLSTATE', () => {
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(explain(shutdown)).toMatch(/^Postgres shut down or restarted during the run \(SQLSTATE 57P01/);
  });
});
