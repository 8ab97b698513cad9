// The local mail outbox (migrations/0008_users.sql): sign-in codes written here when no SMTP transport is
// configured, read once by the operator with `svc auth outbox`. System role only.
import type { Queryable } from '../infra/database.ts';

export interface OutboxCode {
  readonly email: string;
  readonly challengeId: string;
  readonly code: string;
}

export async function insertOutboxCode(systemTx: Queryable, message: OutboxCode): Promise<void> {
  await systemTx.query('INSERT INTO mail_outbox (challenge_id, email, code) VALUES ($1, $2, $3)', [
    message.challengeId,
    message.email,
    message.code,
  ]);
}

/** Takes the newest undelivered code for an email whose challenge can still be answered, and marks it delivered.
 * Undefined when there is none. */
export async function takeLatestOutboxCode(systemTx: Queryable, email: string): Promise<OutboxCode | undefined> {
  const { rows } = await systemTx.query<{ email: string; challenge_id: string; code: string }>(
    `UPDATE mail_outbox SET delivered_at = now()
     WHERE challenge_id = (
       SELECT o.challenge_id FROM mail_outbox o JOIN login_challenges c ON c.challenge_id = o.challenge_id
       WHERE o.email = $1 AND o.delivered_at IS NULL
         AND c.consumed_at IS NULL AND NOT c.locked AND c.expires_at > now()
       ORDER BY o.created_at DESC, o.challenge_id DESC
       LIMIT 1
       FOR UPDATE OF o SKIP LOCKED)
     RETURNING email, challenge_id, code`,
    [email],
  );
  const row = rows[0];
  return row && { email: row.email, challengeId: row.challenge_id, code: row.code };
}
