// The maintenance pass forgets what has outlived its use, and only that: expired sign-in challenges and SSO states
// a day past expiry go, fresh ones stay. (Expired intents and idempotency records are covered in lifecycle and
// rate-limit tests.) One replica at a time, behind a pooler too: a second concurrent pass does nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Database } from '../../src/infra/database.ts';
import { engineEffects } from '../../src/engine/effects.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { runMaintenance } from '../../src/services/maintenance.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let db: Database;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 4 });
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const token = () => randomBytes(32).toString('base64url');
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);

async function seed(createdAt: Date, expiresAt: Date): Promise<{ challenge: string; state: string }> {
  const challenge = `lch_${randomBytes(16).toString('hex')}`;
  const state = token();
  await db.system(async (tx) => {
    await tx.query(
      `INSERT INTO login_challenges (challenge_id, email, code_sha256, expires_at, created_at) VALUES ($1, 'a@example.com', $2, $3, $4)`,
      [challenge, randomBytes(32), expiresAt, createdAt],
    );
    await tx.query(
      `INSERT INTO sso_states (state, tenant_id, issuer, nonce, pkce_code_verifier, redirect_uri, expires_at, created_at)
       VALUES ($1, $2, 'https://idp.example', $3, $4, 'https://app.example/cb', $5, $6)`,
      [state, tenant.tenantId, token(), token(), expiresAt, createdAt],
    );
  });
  return { challenge, state };
}

it('deletes sign-in challenges and SSO states a day past expiry, keeps the rest, and runs once at a time', async () => {
  const old = await seed(daysAgo(3), daysAgo(2));
  const recent = await seed(new Date(Date.now() - 60_000), new Date(Date.now() + 540_000));

  // Another replica holding the maintenance lock, as its pass does, in an open transaction: this pass does nothing.
  const other = await db.pool.connect();
  await other.query('BEGIN');
  await other.query('SELECT pg_advisory_xact_lock(7213402118)');
  const skipped = await runMaintenance(db, engineEffects(ephemeralKeyring()));
  await other.query('ROLLBACK');
  other.release();
  expect(skipped).toMatchObject({ ran: false, deleted: { login_challenges: 0, sso_states: 0 } });

  const report = await runMaintenance(db, engineEffects(ephemeralKeyring()));
  expect(report.ran).toBe(true);
  expect(report.deleted).toMatchObject({ login_challenges: 1, sso_states: 1 });

  const remaining = await db.system(async (tx) => ({
    challenges: (await tx.query('SELECT challenge_id FROM login_challenges')).rows.map((row) => row.challenge_id),
    states: (await tx.query('SELECT state FROM sso_states')).rows.map((row) => row.state),
  }));
  expect(remaining.challenges).toEqual([recent.challenge]);
  expect(remaining.states).toEqual([recent.state]);
  expect(remaining.challenges).not.toContain(old.challenge);
});

it('takes its lock behind a pooler too, where sessions are shared but many replicas use the database', async () => {
  const pooled = new Database({ ...database.connection, sharedSession: true, max: 2 });
  const other = await db.pool.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock(7213402118)');
    expect(await runMaintenance(pooled, engineEffects(ephemeralKeyring()))).toMatchObject({ ran: false });
  } finally {
    await other.query('ROLLBACK');
    other.release();
    await pooled.close();
  }
});
