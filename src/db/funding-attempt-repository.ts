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
}

const columns = 'attempt_id, intent_id, rail, challenge_id, challenge, status, credential_digest, reference, polls';

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
           ON CONFLICT (tenant_id, rail, challenge_id) DO UPDATE SET status = 'challenged', credential_digest = NULL, reference = NULL, updated_at = now()
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

/** Queues the attempt's new status, to travel with COMMIT (and before a challenge queued after it). */
export function queueAttemptUpdate(
  tx: Queryable,
  tenantId: string,
  attemptId: string,
  change: { status: FundingAttemptStatus; credentialDigest: Buffer; reference: string | null; poll: boolean },
): void {
  tx.beforeCommit({
    text: `UPDATE funding_attempts SET status = $3, credential_digest = $4, reference = $5, polls = polls + $6, updated_at = now()
           WHERE tenant_id = $1 AND attempt_id = $2`,
    values: [tenantId, attemptId, change.status, change.credentialDigest, change.reference, change.poll ? 1 : 0],
  });
}
