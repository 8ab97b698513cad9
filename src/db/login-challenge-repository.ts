// One-time sign-in challenges (migrations/0008_users.sql): created by login/start, verified (and counted, locked,
// consumed) by challenges/verify. Not owned by a tenant: system role only.
import type { Queryable } from '../infra/database.ts';

export interface NewLoginChallenge {
  readonly challengeId: string;
  readonly email: string;
  /** NULL when the email has no membership: the challenge can then never verify. */
  readonly userId: string | null;
  readonly codeSha256: Buffer;
  readonly lifetimeMs: number;
}

/** A challenge as verification sees it, its state judged by the database clock (one clock for every replica). */
export interface LoginChallengeState {
  readonly challengeId: string;
  readonly userId: string | null;
  readonly codeSha256: Buffer;
  readonly attempts: number;
  readonly locked: boolean;
  readonly consumed: boolean;
  readonly expired: boolean;
}

export async function insertLoginChallenge(systemTx: Queryable, challenge: NewLoginChallenge): Promise<{ expiresAt: Date }> {
  const { rows } = await systemTx.query<{ expires_at: Date }>(
    `INSERT INTO login_challenges (challenge_id, email, user_id, code_sha256, expires_at)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
     RETURNING expires_at`,
    [challenge.challengeId, challenge.email, challenge.userId, challenge.codeSha256, challenge.lifetimeMs],
  );
  return { expiresAt: rows[0]!.expires_at };
}

/** Reads and locks the row for the rest of the transaction, so concurrent attempts are counted one after another
 * and a code is consumed once. */
export async function lockLoginChallenge(systemTx: Queryable, challengeId: string): Promise<LoginChallengeState | undefined> {
  const { rows } = await systemTx.query<{
    challenge_id: string;
    user_id: string | null;
    code_sha256: Buffer;
    attempts: number;
    locked: boolean;
    consumed: boolean;
    expired: boolean;
  }>(
    `SELECT challenge_id, user_id, code_sha256, attempts, locked,
            consumed_at IS NOT NULL AS consumed, expires_at <= now() AS expired
     FROM login_challenges WHERE challenge_id = $1 FOR UPDATE`,
    [challengeId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    challengeId: row.challenge_id,
    userId: row.user_id,
    codeSha256: row.code_sha256,
    attempts: row.attempts,
    locked: row.locked,
    consumed: row.consumed,
    expired: row.expired,
  };
}

/** Counts a wrong code; the attempt that reaches `attemptsMax` locks the challenge. */
export async function recordFailedAttempt(systemTx: Queryable, challengeId: string, attemptsMax: number): Promise<void> {
  await systemTx.query(
    `UPDATE login_challenges SET attempts = attempts + 1, locked = attempts + 1 >= $2
     WHERE challenge_id = $1 AND NOT locked`,
    [challengeId, attemptsMax],
  );
}

export async function consumeLoginChallenge(systemTx: Queryable, challengeId: string): Promise<void> {
  await systemTx.query('UPDATE login_challenges SET consumed_at = now() WHERE challenge_id = $1 AND consumed_at IS NULL', [challengeId]);
}
