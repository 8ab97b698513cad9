// Funding attempts: each 402 challenge issued for an intent, and what became of the credential that answered it.
import { createHash, randomUUID } from 'node:crypto';
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
  /** The credential's parsed data, kept from the claim on (to ask the rail again about an unknown outcome). */
  readonly credential: unknown;
  /** What the rail reported about the payment (x402: transaction, payer, network), if anything. */
  readonly railDetails: Record<string, unknown> | null;
  /** The rail call went to a live rail (its settlement is then instructed to that rail). */
  readonly live: boolean;
  /** The idempotency key of the fund request that last claimed this attempt, if it carried one. */
  readonly idempotencyKey: string | null;
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
  credential: unknown;
  rail_details: Record<string, unknown> | null;
  live: boolean;
  idempotency_key: string | null;
}

const columns = 'attempt_id, intent_id, rail, challenge_id, challenge, status, credential_digest, reference, polls, claimed_at, credential, rail_details, live, idempotency_key';

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
  credential: row.credential,
  railDetails: row.rail_details,
  live: row.live,
  idempotencyKey: row.idempotency_key,
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
           ON CONFLICT (tenant_id, rail, challenge_id) DO UPDATE SET status = 'challenged', credential_digest = NULL, reference = NULL, claimed_at = NULL,
             authorization_key = NULL, updated_at = now()
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

/**
 * The attempt of the tenant that holds a payment authorization (migrations/0022_x402_authorization_once.sql): its id,
 * or undefined. Two statements, the first taking a transaction lock on the authorization, so that two requests
 * presenting one authorization for two intents take turns: the second looks only once the first has committed its
 * claim (each statement of a batch reads what was committed when it starts), and is refused, never stopped by the
 * unique index at its commit.
 */
export function findAuthorizationHolderStatements(tenantId: string, rail: string, authorizationKey: string): [Statement<undefined>, Statement<string | undefined>] {
  const lockId = createHash('sha256').update(`funding-authorization\u0000${tenantId}\u0000${rail}\u0000${authorizationKey}`).digest().readBigInt64BE(0).toString();
  return [
    { text: 'SELECT pg_advisory_xact_lock($1)', values: [lockId], read: () => undefined },
    {
      text: `SELECT attempt_id FROM funding_attempts WHERE tenant_id = $1 AND rail = $2 AND authorization_key = $3`,
      values: [tenantId, rail, authorizationKey],
      read: ({ rows }) => (rows[0] as { attempt_id: string } | undefined)?.attempt_id,
    },
  ];
}

/** The attempt of `intentId` whose rail call is under way (or whose process died during it), if any. */
export function findClaimedAttemptStatement(tenantId: string, intentId: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts WHERE tenant_id = $1 AND intent_id = $2 AND claimed_at IS NOT NULL`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** The attempt of `intentId` that a fund request under idempotency key `key` claimed and that is still claimed or
 * pending, if any: what a retry of that request continues. */
export function findKeyedAttemptStatement(tenantId: string, intentId: string, key: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts
           WHERE tenant_id = $1 AND intent_id = $2 AND idempotency_key = $3 AND (claimed_at IS NOT NULL OR status = 'pending')
           ORDER BY updated_at DESC LIMIT 1`,
    values: [tenantId, intentId, key],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** Queues the claim of an attempt for a rail call by the credential with `credentialDigest`, to travel with COMMIT:
 * the first phase of funding (docs/engine.md "Funding in two phases"). The partial unique index
 * `funding_attempts_one_claim` admits one claim per intent. A claim without a key (a keyless poll) keeps the key
 * an earlier claim recorded, so that request's retries still find the attempt. */
export function queueAttemptClaim(
  tx: Queryable,
  tenantId: string,
  attemptId: string,
  claim: { credentialDigest: Buffer; credential: unknown; live: boolean; authorizationKey: string | null; idempotencyKey: string | undefined },
): void {
  tx.beforeCommit({
    text: `UPDATE funding_attempts SET claimed_at = now(), credential_digest = $3, credential = $4, live = $5,
             authorization_key = COALESCE($6, authorization_key), idempotency_key = COALESCE($7, idempotency_key), updated_at = now()
           WHERE tenant_id = $1 AND attempt_id = $2`,
    values: [
      tenantId, attemptId, claim.credentialDigest, JSON.stringify(claim.credential ?? null), claim.live, claim.authorizationKey,
      claim.idempotencyKey ?? null,
    ],
  });
}

/** Queues the release of a claim with nothing else changed (the rail refused the credential), to travel with
 * COMMIT; guarded like the update below. The stored credential goes with the claim: nothing will ask about it; and so
 * does the authorization it named, which nothing spent. */
export function queueClaimRelease(tx: Queryable, tenantId: string, attemptId: string, credentialDigest: Buffer): void {
  tx.beforeCommit({
    text: `WITH released AS (UPDATE funding_attempts SET claimed_at = NULL, credential = NULL, authorization_key = NULL, updated_at = now()
             WHERE tenant_id = $1 AND attempt_id = $2 AND claimed_at IS NOT NULL AND credential_digest = $3 RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM released), 'funding attempt claim')`,
    values: [tenantId, attemptId, credentialDigest],
  });
}

/** Queues the outcome of a claimed attempt's rail call, to travel with COMMIT (and before a challenge queued after
 * it); the claim ends with it. The stored credential (a payment token, a signed authorization) is kept only while
 * the outcome is pending and the rail may be asked again; a final outcome erases it. The authorization it spends
 * stays held once the payment is pending or done, and is let go by a decline (nothing moved). Guarded: the claim
 * must still be this credential's, else (another request with the same credential recorded the outcome first)
 * expect_one_row fails the message. */
export function queueAttemptUpdate(
  tx: Queryable,
  tenantId: string,
  attemptId: string,
  change: { status: FundingAttemptStatus; credentialDigest: Buffer; reference: string | null; poll: boolean; details?: Record<string, unknown> | undefined },
): void {
  tx.beforeCommit({
    text: `WITH moved AS (UPDATE funding_attempts SET status = $3, reference = $5, polls = polls + $6, claimed_at = NULL,
               rail_details = COALESCE($7::jsonb, rail_details), updated_at = now(),
               credential = CASE WHEN $3 = 'pending' THEN credential END,
               authorization_key = CASE WHEN $3 = 'declined' THEN NULL ELSE authorization_key END
             WHERE tenant_id = $1 AND attempt_id = $2 AND claimed_at IS NOT NULL AND credential_digest = $4 RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM moved), 'funding attempt outcome')`,
    values: [tenantId, attemptId, change.status, change.credentialDigest, change.reference, change.poll ? 1 : 0, change.details ? JSON.stringify(change.details) : null],
  });
}

/** Claims whose lease ran out (their process died between the phases, or their rail's outcome was unknown), oldest
 * first, across tenants (the sweeper, as the system role). */
export async function findStaleClaims(tx: Queryable, claimedBefore: Date, limit: number): Promise<Array<{ tenantId: string; intentId: string; attemptId: string }>> {
  const { rows } = await tx.query<{ tenant_id: string; intent_id: string; attempt_id: string }>(
    `SELECT tenant_id, intent_id, attempt_id FROM funding_attempts WHERE claimed_at IS NOT NULL AND claimed_at < $1 ORDER BY claimed_at LIMIT $2`,
    [claimedBefore, limit],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, intentId: row.intent_id, attemptId: row.attempt_id }));
}

/** One attempt by id, locked (the sweeper's resolution, after the intent's lock). */
export function findAttemptStatement(tenantId: string, attemptId: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts WHERE tenant_id = $1 AND attempt_id = $2 FOR UPDATE`,
    values: [tenantId, attemptId],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** The successful attempt of an intent, if any (what its funding's rail reported, for the intent's read). */
export function findSucceededAttemptStatement(tenantId: string, intentId: string): Statement<FundingAttempt | undefined> {
  return {
    text: `SELECT ${columns} FROM funding_attempts WHERE tenant_id = $1 AND intent_id = $2 AND status = 'succeeded'`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && toAttempt(rows[0] as AttemptRow),
  };
}

/** An attempt as a tenant-wide list shows it: what became of it and when. */
export interface FundingAttemptSummary {
  readonly attemptId: string;
  readonly intentId: string;
  readonly rail: string;
  readonly status: FundingAttemptStatus;
  readonly polls: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The tenant's attempts, most recently changed first, optionally of one status; `startingAfter` is the last
 * attempt id of the previous page (one that names no attempt of the tenant gives an empty page). */
export async function listFundingAttempts(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; status?: FundingAttemptStatus | undefined; startingAfter?: string | undefined },
): Promise<{ attempts: FundingAttemptSummary[]; hasMore: boolean }> {
  const { rows } = await tx.query<{ attempt_id: string; intent_id: string; rail: string; status: FundingAttemptStatus; polls: number; created_at: Date; updated_at: Date }>(
    `SELECT attempt_id, intent_id, rail, status, polls, created_at, updated_at FROM funding_attempts
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ($3::uuid IS NULL OR (updated_at, attempt_id) < (SELECT updated_at, attempt_id FROM funding_attempts WHERE tenant_id = $1 AND attempt_id = $3))
     ORDER BY updated_at DESC, attempt_id DESC LIMIT $4`,
    [tenantId, page.status ?? null, page.startingAfter ?? null, page.limit + 1],
  );
  const attempts = rows.slice(0, page.limit).map((row) => ({
    attemptId: row.attempt_id,
    intentId: row.intent_id,
    rail: row.rail,
    status: row.status,
    polls: row.polls,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
  return { attempts, hasMore: rows.length > page.limit };
}
