// Rail instructions (docs/rails.md#live-rails): the payout (release) or refund a live rail is to carry out once an
// intent settles. Recorded in the settling transaction, beside its ledger posting; executed by the maintenance
// sweeper outside any lock (src/services/maintenance.ts) in two phases: a claim committed before the rail is called,
// and the outcome recorded under that claim after (docs/rails.md#rail-instructions-and-the-sweeper).
import { randomUUID } from 'node:crypto';
import type { Queryable, Statement } from '../infra/database.ts';
import type { InstructionKind } from '../rails/types.ts';

export type RailInstructionStatus = 'pending' | 'succeeded' | 'failed';

export interface RailInstruction {
  readonly tenantId: string;
  readonly instructionId: string;
  readonly intentId: string;
  readonly kind: InstructionKind;
  readonly rail: string;
  readonly status: RailInstructionStatus;
  readonly amountCents: number;
  readonly currency: string;
  readonly fundingReference: string;
  readonly fundingDetails: Record<string, unknown>;
  readonly reference: string | null;
  readonly detail: string | null;
  readonly attempts: number;
  readonly lastError: string | null;
  /** What the rail reported of the operation (x402 auth-capture: `operation`, `transaction`). */
  readonly railDetails: Record<string, unknown> | null;
  /** Set while a sweeper holds the instruction (between its claim and its record). */
  readonly claimedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface InstructionRow {
  tenant_id: string;
  instruction_id: string;
  intent_id: string;
  kind: InstructionKind;
  rail: string;
  status: RailInstructionStatus;
  amount_cents: string | number;
  currency: string;
  funding_reference: string;
  funding_details: Record<string, unknown>;
  reference: string | null;
  detail: string | null;
  attempts: number;
  last_error: string | null;
  rail_details: Record<string, unknown> | null;
  claimed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const columns =
  'tenant_id, instruction_id, intent_id, kind, rail, status, amount_cents, currency, funding_reference, funding_details, reference, detail, attempts, last_error, rail_details, claimed_at, created_at, updated_at';

const toInstruction = (row: InstructionRow): RailInstruction => ({
  tenantId: row.tenant_id,
  instructionId: row.instruction_id,
  intentId: row.intent_id,
  kind: row.kind,
  rail: row.rail,
  status: row.status,
  amountCents: Number(row.amount_cents),
  currency: row.currency,
  fundingReference: row.funding_reference,
  fundingDetails: row.funding_details,
  reference: row.reference,
  detail: row.detail,
  attempts: row.attempts,
  lastError: row.last_error,
  railDetails: row.rail_details,
  claimedAt: row.claimed_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Queues, to travel with COMMIT, one instruction of a settling intent: when its funding ran on a live rail, a
 * `kind` instruction for `amountCents` (the payee's part, or the part returned: a split records one of each, and
 * its refund waits for its payout, see claimDueInstructions), with what the funding's rail reported. Nothing for a
 * sandbox intent. */
export function queueSettlementInstruction(tx: Queryable, tenantId: string, intentId: string, kind: InstructionKind, amountCents: number, currency: string): void {
  tx.beforeCommit({
    text: `INSERT INTO rail_instructions (tenant_id, instruction_id, intent_id, kind, rail, amount_cents, currency, funding_reference, funding_details)
           SELECT tenant_id, $3, intent_id, $4, rail, $5, $6, reference, COALESCE(rail_details, '{}'::jsonb)
           FROM funding_attempts
           WHERE tenant_id = $1 AND intent_id = $2 AND status = 'succeeded' AND live AND reference IS NOT NULL`,
    values: [tenantId, intentId, randomUUID(), kind, amountCents, currency],
  });
}

/** The instructions of one intent, oldest first. */
export function findIntentInstructionsStatement(tenantId: string, intentId: string): Statement<RailInstruction[]> {
  return {
    text: `SELECT ${columns} FROM rail_instructions WHERE tenant_id = $1 AND intent_id = $2 ORDER BY created_at, kind`,
    values: [tenantId, intentId],
    read: ({ rows }) => (rows as InstructionRow[]).map(toInstruction),
  };
}

/**
 * The first phase of carrying out instructions, across tenants (the sweeper, as the system role): claims pending
 * instructions due for a try, oldest first, that no live claim holds (a claim older than `leaseBefore` is taken
 * over: its process died between the phases). A refund waits for its intent's payout to succeed: a split pays the
 * payee's part before the rest goes back (x402 auth-capture: a void returns whatever the hold still holds). Rows
 * another sweeper is claiming at the same moment are skipped. Committed before any rail is called.
 */
export async function claimDueInstructions(tx: Queryable, now: Date, leaseBefore: Date, limit: number): Promise<RailInstruction[]> {
  const { rows } = await tx.query<InstructionRow>(
    `UPDATE rail_instructions SET claimed_at = $1
     WHERE (tenant_id, instruction_id) IN (
       SELECT tenant_id, instruction_id FROM rail_instructions due
       WHERE status = 'pending' AND next_attempt_at <= $1 AND (claimed_at IS NULL OR claimed_at < $2)
         AND NOT (kind = 'refund' AND EXISTS (
           SELECT 1 FROM rail_instructions payout
           WHERE payout.tenant_id = due.tenant_id AND payout.intent_id = due.intent_id AND payout.kind = 'payout' AND payout.status <> 'succeeded'))
       ORDER BY next_attempt_at LIMIT $3
       FOR UPDATE SKIP LOCKED)
     RETURNING ${columns}`,
    [now, leaseBefore, limit],
  );
  return rows.map(toInstruction).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** The second phase: records a try's outcome and ends the claim, only under the claim this sweeper took (a sweeper
 * whose claim was taken over changes nothing, and answers undefined: the pass that took it over records its own
 * outcome). Answers the instruction as it now stands. */
export async function recordInstructionOutcome(
  tx: Queryable,
  tenantId: string,
  instructionId: string,
  claimedAt: Date,
  outcome: {
    status: RailInstructionStatus;
    reference: string | null;
    detail: string | null;
    lastError: string | null;
    railDetails: Record<string, unknown> | null;
    nextAttemptAt: Date;
  },
): Promise<RailInstruction | undefined> {
  const { rows } = await tx.query<InstructionRow>(
    `UPDATE rail_instructions SET status = $4, reference = COALESCE($5, reference), detail = $6, last_error = $7,
       rail_details = COALESCE($8::jsonb, rail_details), attempts = attempts + 1, next_attempt_at = $9, claimed_at = NULL, updated_at = now()
     WHERE tenant_id = $1 AND instruction_id = $2 AND claimed_at = $3 AND status = 'pending'
     RETURNING ${columns}`,
    [tenantId, instructionId, claimedAt, outcome.status, outcome.reference, outcome.detail, outcome.lastError,
      outcome.railDetails === null ? null : JSON.stringify(outcome.railDetails), outcome.nextAttemptAt],
  );
  return rows[0] && toInstruction(rows[0]);
}

/** An instruction the operator carried out itself (x402: the transfer from the tenant's own wallet, which the service
 * cannot make), recorded as succeeded with the operator's reference. A failed instruction may be recorded too (the
 * operator finished by hand what the rail refused). Undefined when the intent has no such instruction; the
 * instruction as it stands, unchanged, when it had already succeeded. */
export async function recordInstructionDoneByOperator(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  instructionId: string,
  reference: string,
): Promise<{ readonly changed: boolean; readonly instruction: RailInstruction } | undefined> {
  const { rows } = await tx.query<InstructionRow & { changed: boolean }>(
    `WITH done AS (
       UPDATE rail_instructions SET status = 'succeeded', reference = $4, detail = NULL, last_error = NULL, claimed_at = NULL, updated_at = now()
       WHERE tenant_id = $1 AND intent_id = $2 AND instruction_id = $3 AND status <> 'succeeded'
       RETURNING ${columns}
     )
     SELECT ${columns}, true AS changed FROM done
     UNION ALL
     SELECT ${columns}, false AS changed FROM rail_instructions
     WHERE tenant_id = $1 AND intent_id = $2 AND instruction_id = $3 AND NOT EXISTS (SELECT 1 FROM done)`,
    [tenantId, intentId, instructionId, reference],
  );
  const row = rows[0];
  return row ? { changed: row.changed, instruction: toInstruction(row) } : undefined;
}
