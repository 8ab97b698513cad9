// The maintenance pass holds its one-replica-at-a-time lock in a transaction kept open for the pass, never in the
// session: behind a pooler in transaction mode a session's lock stays on a server session other clients then use
// (docs/deploy.md). Run directly and through PgBouncer (deploy/ha/test-through-pgbouncer.sh).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { engineEffects } from '../../src/engine/effects.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { runMaintenance } from '../../src/services/maintenance.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 6 });
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

/** The maintenance lock's key, as src/services/maintenance.ts takes it. */
const maintenanceLockKey = '7213402118';

/** The state of every backend holding the maintenance lock in this database (a bigint advisory key is shown as its
 * high half in classid and its low half in objid). */
async function maintenanceLockHolders(): Promise<string[]> {
  const { rows } = await db.pool.query<{ state: string }>(
    `SELECT a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid::bigint = ($1::bigint >> 32) AND l.objid::bigint = ($1::bigint & 4294967295)`,
    [maintenanceLockKey],
  );
  return rows.map((row) => row.state);
}

it('holds the lock in an open transaction while the pass works, and nowhere once it is done', async () => {
  // A sign-in challenge past its expiry, whose row this test keeps locked: the pass's pruning waits on it, mid-pass.
  const challengeId = `lch_${randomBytes(16).toString('hex')}`;
  const dayMs = 86_400_000;
  await db.system((tx) =>
    tx.query(`INSERT INTO login_challenges (challenge_id, email, code_sha256, expires_at, created_at) VALUES ($1, 'a@example.com', $2, $3, $4)`, [
      challengeId, randomBytes(32), new Date(Date.now() - 2 * dayMs), new Date(Date.now() - 3 * dayMs),
    ]),
  );
  const blocker = await db.pool.connect();
  await blocker.query('BEGIN');
  await blocker.query('SELECT 1 FROM login_challenges WHERE challenge_id = $1 FOR UPDATE', [challengeId]);

  const pass = runMaintenance(db, engineEffects(ephemeralKeyring()));
  let holders: string[] = [];
  for (let waitedMs = 0; holders.length === 0 && waitedMs < 10_000; waitedMs += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    holders = await maintenanceLockHolders();
  }
  // One holder, inside a transaction (a session lock's holder would be `idle` between statements, free for others).
  expect(holders).toEqual(['idle in transaction']);

  await blocker.query('ROLLBACK');
  blocker.release();
  const report = await pass;
  expect(report).toMatchObject({ ran: true, deleted: { login_challenges: 1 } });
  expect(await maintenanceLockHolders()).toEqual([]);
});
