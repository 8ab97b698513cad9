// The maintenance pass on the embedded database (PGlite behind its socket multiplexer, what `npm start` runs without
// DATABASE_URL): every connection there is the one PGlite session, and the multiplexer serves only the connection
// whose transaction is open until it ends. A lock transaction held open while the pass works on other connections
// would wait on itself for ever, and with it every request of the server.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { engineEffects } from '../../src/engine/effects.ts';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { runMaintenance, type MaintenanceReport } from '../../src/services/maintenance.ts';
import { createEmbeddedTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createEmbeddedTestDatabase();
  db = new Database({ ...database.connection });
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

/** The pass, or a failure that says it never ended (rather than the test runner's bare timeout). */
function withinSeconds(pass: Promise<MaintenanceReport>, seconds: number): Promise<MaintenanceReport> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the maintenance pass did not end within ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([pass, stuck]).finally(() => clearTimeout(timer));
}

it('runs a whole pass, and the database answers other connections afterwards', async () => {
  const challengeId = `lch_${randomBytes(16).toString('hex')}`;
  const dayMs = 86_400_000;
  await db.system((tx) =>
    tx.query(`INSERT INTO login_challenges (challenge_id, email, code_sha256, expires_at, created_at) VALUES ($1, 'a@example.com', $2, $3, $4)`, [
      challengeId, randomBytes(32), new Date(Date.now() - 2 * dayMs), new Date(Date.now() - 3 * dayMs),
    ]),
  );

  const report = await withinSeconds(runMaintenance(db, engineEffects(ephemeralKeyring())), 15);
  expect(report).toMatchObject({ ran: true, deleted: { login_challenges: 1 } });

  // A second pool of the same database, as the `svc` CLI opens beside a running server, is served too.
  const other = new Database({ ...database.connection, max: 1 });
  try {
    const { rows } = await other.system((tx) => tx.query<{ count: string }>('SELECT count(*) FROM login_challenges WHERE challenge_id = $1', [challengeId]));
    expect(rows[0]!.count).toBe('0');
  } finally {
    await other.close();
  }
}, 30_000);
