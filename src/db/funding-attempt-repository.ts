// Funding attempts: each 402 challenge issued for an intent, and what became of the credential that answered it.
import { randomUUID } from 'node:crypto';
import type { Queryable, Statement } from '../infra/database.ts';

export type FundingAttemptStatus = 'challenged' | 'pending' | 'succeeded' | 'declined';

export interface FundingAttempt {
  readonly attemptId: string;
  readonly intentId: string;
  readonly rail: string;
  readonly challengeId: string;
  readonly challenge: Record<string, unknown>;
  readonly status: FundingAttemptStatus;
  readonly credentialDigest: Buffer | null;
  readonly reference: string | null;
  readonly polls: number;
  /** When a rail call for this attempt began, while it runs with no lock held; null when none is under way. */
  readonly claimedAt: Date | null;
}

interface AttemptRow {
  attempt_id: string;
  intent_id: string;
  rail: string;
  challenge_id: string;
  challenge: Record<string, unknown>;
  status: FundingAttemptStatus;
  credential_digest: Buffer | null;
  reference: string | null;
  polls: number;
  claimed_at: Date | null;
}

const columns = 'attempt_id, intent_id, rail, challenge_id, challenge, status, credential_digest, reference, polls, claimed_at';

const toAttempt = (row: AttemptRow): FundingAttempt => ({
  attemptId: row.attempt_id,
  intentId: row.intent_id,
  rail: row.rail,
  challengeId: row.challenge_id,
  challenge: row.challenge,
  status: row.status,
  credentialDigest: row.credential_digest,
  reference: row.reference,
  polls: row.polls,
  claimedAt: row.claimed_at,
});

/** Queues the record of a challenge, to travel with COMMIT. Reissuing an identical challenge (x402 derives its id
 * from the requirements) keeps the first record. */
export function queueChallengeRecord(
  tx: Queryable,
  tenantId: string,
  challenge: { intentId: string; rail: string; challengeId: string; stored: Record<string, unknown> },
): void {
  tx.beforeCommit({
    text: `INSERT INTO funding_attempts (tenant_id, intent_id, attempt_id, rail, challenge_id, challenge, status)
           VALUES ($1, $2, $3, $4, $5, $6, 'challenged')
           ON CONFLICT (tenant_id, rail, challenge_id) DO UPDATE SET status = 'challenged', credential_digest = NULL, reference = NULL, claimed_at = NULL, updated_at = now()
           WHERE funding_attempts.status = 'declined'`,
    values: [tenantId, challenge.intentId, randomUUID(), challenge.rail, challenge.challengeId, JSON.stringify(challenge.stored)],
  });
}

/** The challenge a credential names, for this intent only: another intent's challenge is no challenge here. */
export function findAttemptByChallengeStatement(tenantId: string, intentId: string, rail: string, challengeId: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts WHERE tenant_id = $1 AND rail = $2 AND challenge_id = $3 AND intent_id = $4 FOR UPDATE`,
    values: [tenantId, rail, challengeId, intentId],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** The attempt of `intentId` whose rail call is under way (or whose process died during it), if any. */
export function findClaimedAttemptStatement(tenantId: string, intentId: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts WHERE tenant_id = $1 AND intent_id = $2 AND claimed_at IS NOT NULL`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** Queues the claim of an attempt for a rail call by the credential with `credentialDigest`, to travel with COMMIT:
 * the first phase of funding (docs/engine.md "Funding in two phases"). The partial unique index
 * `funding_attempts_one_claim` admits one claim per intent. */
export function queueAttemptClaim(tx: Queryable, tenantId: string, attemptId: string, credentialDigest: Buffer): void {
  tx.beforeCommit({
    text: `UPDATE funding_attempts SET claimed_at = now(), credential_digest = $3, updated_at = now() WHERE tenant_id = $1 AND attempt_id = $2`,
    values: [tenantId, attemptId, credentialDigest],
  });
}

/** Queues the release of a claim with nothing else changed (the rail refused the credential), to travel with
 * COMMIT; guarded like the update below. */
export function queueClaimRelease(tx: Queryable, tenantId: string, attemptId: string, credentialDigest: Buffer): void {
  tx.beforeCommit({
    text: `WITH released AS (UPDATE funding_attempts SET claimed_at = NULL, updated_at = now()
             WHERE tenant_id = $1 AND attempt_id = $2 AND claimed_at IS NOT NULL AND credential_digest = $3 RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM released), 'funding attempt claim')`,
    values: [tenantId, attemptId, credentialDigest],
  });
}

/** Queues the outcome of a claimed attempt's rail call, to travel with COMMIT (and before a challenge queued after
 * it); the claim ends with it. Guarded: the claim must still be this credential's, else (another request with the
 * same credential recorded the outcome first) expect_one_row fails the message. */
export function queueAttemptUpdate(
  tx: Queryable,
  tenantId: string,
  attemptId: string,
  change: { status: FundingAttemptStatus; credentialDigest: Buffer; reference: string | null; poll: boolean },
): void {
  tx.beforeCommit({
    text: `WITH moved AS (UPDATE funding_attempts SET status = $3, reference = $5, polls = polls + $6, claimed_at = NULL, updated_at = now()
             WHERE tenant_id = $1 AND attempt_id = $2 AND claimed_at IS NOT NULL AND credential_digest = $4 RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM moved), 'funding attempt outcome')`,
    values: [tenantId, attemptId, change.status, change.credentialDigest, change.reference, change.poll ? 1 : 0],
  });
}
