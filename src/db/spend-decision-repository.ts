// Spend decisions: the cents POST /verify reserved against an intent, until the guarded tool reports back
// (consumed) or gives them up (released). The caller locks the intent row while it sums and inserts.
import type { Queryable } from '../infra/database.ts';
import { safeIntegerOf } from './safe-integer.ts';

export type SpendDecisionStatus = 'reserved' | 'consumed' | 'released';
export type SpendOutcome = Exclude<SpendDecisionStatus, 'reserved'>;

export interface SpendDecision {
  readonly decisionId: string;
  readonly intentId: string;
  readonly auditId: string;
  readonly operation: string;
  readonly requestedCents: number;
  readonly status: SpendDecisionStatus;
  readonly createdAt: Date;
  readonly completedAt: Date | null;
  /** The tool call the client named to /verify, for the action receipt its completion issues. */
  readonly toolCallId: string | undefined;
  readonly toolName: string | undefined;
  /** What else the client reported about the agent and the vendor, under the receipt's field names. */
  readonly receiptContext: Readonly<Record<string, string>> | undefined;
}

/** What POST /verify records of the call it reserves for. */
export interface NewSpendDecision {
  readonly decisionId: string;
  readonly intentId: string;
  readonly auditId: string;
  readonly operation: string;
  readonly requestedCents: number;
  readonly toolCallId?: string | undefined;
  readonly toolName?: string | undefined;
  readonly receiptContext?: Readonly<Record<string, string>> | undefined;
}

/** What an intent's decisions hold: reserved and not yet completed, and consumed for good. Released ones hold nothing. */
export interface SpendTotals {
  readonly reservedCents: bigint;
  readonly consumedCents: bigint;
}

interface DecisionRow {
  decision_id: string;
  intent_id: string;
  audit_id: string;
  operation: string;
  requested_cents: string;
  status: SpendDecisionStatus;
  created_at: Date;
  completed_at: Date | null;
  tool_call_id: string | null;
  tool_name: string | null;
  receipt_context: Record<string, string> | null;
}

const columns = 'decision_id, intent_id, audit_id, operation, requested_cents, status, created_at, completed_at, tool_call_id, tool_name, receipt_context';

const toDecision = (row: DecisionRow): SpendDecision => ({
  decisionId: row.decision_id,
  intentId: row.intent_id,
  auditId: row.audit_id,
  operation: row.operation,
  // BIGINT arrives as text; one request is bounded to a safe integer at the door (requestedSpendCentsMax).
  requestedCents: safeIntegerOf(row.requested_cents, 'spend_decisions.requested_cents'),
  status: row.status,
  createdAt: row.created_at,
  completedAt: row.completed_at,
  toolCallId: row.tool_call_id ?? undefined,
  toolName: row.tool_name ?? undefined,
  receiptContext: row.receipt_context ?? undefined,
});

/** Sums in Postgres (numeric, exact) and hands the sums over as text to bigint. /verify keeps them within the
 * intent's amount, but the comparison against that budget must stay exact even for rows that broke the rule. */
export async function sumSpend(tx: Queryable, tenantId: string, intentId: string): Promise<SpendTotals> {
  const { rows } = await tx.query<{ reserved: string; consumed: string }>(
    `SELECT COALESCE(SUM(requested_cents) FILTER (WHERE status = 'reserved'), 0)::text AS reserved,
            COALESCE(SUM(requested_cents) FILTER (WHERE status = 'consumed'), 0)::text AS consumed
     FROM spend_decisions WHERE tenant_id = $1 AND intent_id = $2 AND status <> 'released'`,
    [tenantId, intentId],
  );
  return { reservedCents: BigInt(rows[0]!.reserved), consumedCents: BigInt(rows[0]!.consumed) };
}

export async function insertSpendDecision(tx: Queryable, tenantId: string, decision: NewSpendDecision): Promise<SpendDecision> {
  const { rows } = await tx.query<DecisionRow>(
    `INSERT INTO spend_decisions (tenant_id, decision_id, intent_id, audit_id, operation, requested_cents, status, tool_call_id, tool_name, receipt_context)
     VALUES ($1, $2, $3, $4, $5, $6, 'reserved', $7, $8, $9) RETURNING ${columns}`,
    [
      tenantId, decision.decisionId, decision.intentId, decision.auditId, decision.operation, decision.requestedCents,
      decision.toolCallId ?? null, decision.toolName ?? null, decision.receiptContext === undefined ? null : JSON.stringify(decision.receiptContext),
    ],
  );
  return toDecision(rows[0]!);
}

export async function findSpendDecision(tx: Queryable, tenantId: string, decisionId: string): Promise<SpendDecision | undefined> {
  const { rows } = await tx.query<DecisionRow>(`SELECT ${columns} FROM spend_decisions WHERE tenant_id = $1 AND decision_id = $2`, [tenantId, decisionId]);
  return rows[0] && toDecision(rows[0]);
}

/** Completes a reserved decision; undefined when it is not (or no longer) reserved. The row lock of the UPDATE
 * makes two concurrent completions queue, and the second sees the first's outcome. */
export async function completeReservedDecision(tx: Queryable, tenantId: string, decisionId: string, outcome: SpendOutcome): Promise<SpendDecision | undefined> {
  const { rows } = await tx.query<DecisionRow>(
    `UPDATE spend_decisions SET status = $3, completed_at = now()
     WHERE tenant_id = $1 AND decision_id = $2 AND status = 'reserved' RETURNING ${columns}`,
    [tenantId, decisionId, outcome],
  );
  return rows[0] && toDecision(rows[0]);
}

/** A decision as the spend-control reads list it: with its intent's currency. */
export interface ListedSpendDecision extends SpendDecision {
  readonly currency: string;
}

export interface SpendDecisionFilter {
  readonly intentId?: string | undefined;
  /** Only decisions of these statuses; undefined for every status. */
  readonly statuses?: readonly SpendDecisionStatus[] | undefined;
}

/** Newest first. `startingAfter` is the decision id of the last item of the previous page; one unknown to this
 * tenant starts nowhere (an empty page), never at another tenant's row. */
export async function listSpendDecisions(
  tx: Queryable,
  tenantId: string,
  filter: SpendDecisionFilter,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<{ decisions: ListedSpendDecision[]; hasMore: boolean }> {
  const { rows } = await tx.query<DecisionRow & { currency: string }>(
    `SELECT ${columns.split(', ').map((column) => `d.${column}`).join(', ')}, i.currency
     FROM spend_decisions d JOIN intents i ON i.tenant_id = d.tenant_id AND i.intent_id = d.intent_id
     WHERE d.tenant_id = $1
       AND ($2::uuid IS NULL OR d.intent_id = $2)
       AND ($3::text[] IS NULL OR d.status = ANY ($3))
       AND ($4::uuid IS NULL OR (d.created_at, d.decision_id) < (
             SELECT created_at, decision_id FROM spend_decisions WHERE tenant_id = $1 AND decision_id = $4))
     ORDER BY d.created_at DESC, d.decision_id DESC
     LIMIT $5`,
    [tenantId, filter.intentId ?? null, filter.statuses ?? null, page.startingAfter ?? null, page.limit + 1],
  );
  return {
    decisions: rows.slice(0, page.limit).map((row) => ({ ...toDecision(row), currency: row.currency })),
    hasMore: rows.length > page.limit,
  };
}

/** Queues, to travel with COMMIT after the settling transition, the close of an intent's open reservations: a
 * settlement ends what its capability may spend, so every decision still `reserved` becomes `consumed` while it
 * fits, oldest first, within the part released to the payee (less what is consumed already), and `released` back
 * otherwise. A refund (0 released) releases them all. */
export function queueSpendReservationsClose(tx: Queryable, tenantId: string, intentId: string, releasedCents: number): void {
  tx.beforeCommit({
    text: `WITH open_decisions AS (
             SELECT decision_id, sum(requested_cents) OVER (ORDER BY created_at, decision_id) AS running
             FROM spend_decisions WHERE tenant_id = $1 AND intent_id = $2 AND status = 'reserved'),
           consumed AS (
             SELECT coalesce(sum(requested_cents), 0) AS cents FROM spend_decisions WHERE tenant_id = $1 AND intent_id = $2 AND status = 'consumed')
           UPDATE spend_decisions d
           SET status = CASE WHEN consumed.cents + open_decisions.running <= $3 THEN 'consumed' ELSE 'released' END, completed_at = now()
           FROM open_decisions, consumed
           WHERE d.tenant_id = $1 AND d.decision_id = open_decisions.decision_id`,
    values: [tenantId, intentId, releasedCents],
  });
}
