// Intents: insert, read (locked for a state change), list, and the state transitions of docs/engine.md#states.
import type { Queryable, Statement } from '../infra/database.ts';
import type { IntentState, ReleaseMode } from '../contracts/intents.ts';
import { safeIntegerOf } from './safe-integer.ts';

// The states are part of the API contract; the lifecycle table (src/engine/lifecycle.ts) declares each, and the
// table's CHECK (migrations) lists the same ones (test/engine/lifecycle-table.test.ts).
export { intentStates, type IntentState } from '../contracts/intents.ts';

export interface Intent {
  readonly tenantId: string;
  readonly intentId: string;
  readonly state: IntentState;
  readonly signingVersion: 0 | 6 | 7;
  readonly principalDid: string;
  readonly principalPubkey: Buffer | null;
  readonly principalSignature: Buffer | null;
  readonly principalKeyRegistered: boolean;
  readonly payeeDid: string;
  readonly payeePubkey: Buffer | null;
  readonly budget: unknown;
  readonly currency: string;
  readonly amountCents: number;
  readonly evidenceSchema: Record<string, unknown>;
  readonly deadlineText: string;
  readonly deadline: Date;
  readonly predicateDsl: Record<string, unknown>;
  readonly predicateRef: string;
  readonly policyTemplateId: string | null;
  readonly policyVersionSeq: number | null;
  readonly policyContentDigest: Buffer | null;
  readonly settlementRail: string;
  readonly allowedTools: readonly string[];
  readonly completionPresetId: string | null;
  readonly predicatePassed: boolean | null;
  readonly fundingReference: string | null;
  readonly createdAt: Date;
  readonly fundedAt: Date | null;
  readonly evidenceRecordedAt: Date | null;
  readonly settledAt: Date | null;
  /** How a passing rule settles (`full`, or `metered`: the cost at meteredCostPath); from the signed policy version. */
  readonly releaseMode: ReleaseMode;
  /** Under `metered`, where the payee's evidence carries the cost; null under `full`. */
  readonly meteredCostPath: readonly string[] | null;
  /** Under `metered`, the cost the payee's passing evidence signed (bounded by the amount); null before, or otherwise. */
  readonly meteredCostCents: number | null;
  /** Once settled: the part paid to the payee and the part returned (their sum is amountCents); null before. */
  readonly releasedCents: number | null;
  readonly refundedCents: number | null;
}

export type NewIntent = Omit<
  Intent,
  'state' | 'principalKeyRegistered' | 'predicatePassed' | 'fundingReference' | 'createdAt' | 'fundedAt' | 'evidenceRecordedAt' | 'settledAt'
  | 'meteredCostCents' | 'releasedCents' | 'refundedCents'
>;

/**
 * An intent its transaction holds the row lock of (read FOR UPDATE, or inserted), with the transaction's timestamp:
 * `now()`, the same for every statement of the transaction, and what its transitions record. Knowing it, a
 * transition can be queued to travel with COMMIT and still answer the row exactly as it will be.
 */
export interface LockedIntent extends Intent {
  readonly transactionTime: Date;
}

const columns = `tenant_id, intent_id, state, signing_version, principal_did, principal_pubkey, principal_signature,
  principal_key_registered, payee_did, payee_pubkey, budget, currency, amount_cents, evidence_schema, deadline_text,
  deadline, predicate_dsl, predicate_ref, policy_template_id, policy_version_seq, policy_content_digest,
  settlement_rail, allowed_tools, completion_preset_id, predicate_passed, funding_reference, created_at, funded_at,
  evidence_recorded_at, settled_at, release_mode, metered_cost_path, metered_cost_cents, released_cents, refunded_cents`;

type IntentRow = Record<string, unknown>;

function toIntent(row: IntentRow): Intent {
  return {
    tenantId: row.tenant_id as string,
    intentId: row.intent_id as string,
    state: row.state as IntentState,
    signingVersion: row.signing_version as 0 | 6 | 7,
    principalDid: row.principal_did as string,
    principalPubkey: row.principal_pubkey as Buffer | null,
    principalSignature: row.principal_signature as Buffer | null,
    principalKeyRegistered: row.principal_key_registered as boolean,
    payeeDid: row.payee_did as string,
    payeePubkey: row.payee_pubkey as Buffer | null,
    budget: row.budget,
    currency: row.currency as string,
    // BIGINT arrives as text; amounts are bounded to safe integers at the door, and checked again here as ledger
    // amounts are (a value past 2^53 − 1 would otherwise be rounded silently).
    amountCents: safeIntegerOf(row.amount_cents as string, 'intents.amount_cents'),
    evidenceSchema: row.evidence_schema as Record<string, unknown>,
    deadlineText: row.deadline_text as string,
    deadline: row.deadline as Date,
    predicateDsl: row.predicate_dsl as Record<string, unknown>,
    predicateRef: row.predicate_ref as string,
    policyTemplateId: row.policy_template_id as string | null,
    policyVersionSeq: row.policy_version_seq as number | null,
    policyContentDigest: row.policy_content_digest as Buffer | null,
    settlementRail: row.settlement_rail as string,
    allowedTools: row.allowed_tools as string[],
    completionPresetId: row.completion_preset_id as string | null,
    predicatePassed: row.predicate_passed as boolean | null,
    fundingReference: row.funding_reference as string | null,
    createdAt: row.created_at as Date,
    fundedAt: row.funded_at as Date | null,
    evidenceRecordedAt: row.evidence_recorded_at as Date | null,
    settledAt: row.settled_at as Date | null,
    releaseMode: row.release_mode as ReleaseMode,
    meteredCostPath: row.metered_cost_path as string[] | null,
    meteredCostCents: nullableSafeInteger(row.metered_cost_cents, 'intents.metered_cost_cents'),
    releasedCents: nullableSafeInteger(row.released_cents, 'intents.released_cents'),
    refundedCents: nullableSafeInteger(row.refunded_cents, 'intents.refunded_cents'),
  };
}

const nullableSafeInteger = (value: unknown, column: string): number | null => (value === null || value === undefined ? null : safeIntegerOf(value as string, column));

/** Inserts an open intent; a unique violation on `intents_pkey` means the intent id is taken. The statement itself
 * decides `principal_key_registered`: whether the principal's key is registered (and not revoked) for its DID. The
 * new row stays locked by its insert, and its `created_at` is the transaction's `now()`. */
export async function insertIntent(tx: Queryable, intent: NewIntent): Promise<LockedIntent> {
  const { rows } = await tx.query<IntentRow>(
    `INSERT INTO intents (tenant_id, intent_id, state, signing_version, principal_did, principal_pubkey, principal_signature,
       principal_key_registered, payee_did, payee_pubkey, budget, currency, amount_cents, evidence_schema, deadline_text,
       deadline, predicate_dsl, predicate_ref, policy_template_id, policy_version_seq, policy_content_digest,
       settlement_rail, allowed_tools, completion_preset_id, release_mode, metered_cost_path)
     VALUES ($1, $2, 'open', $3, $4, $5, $6,
       EXISTS (SELECT 1 FROM registered_keys WHERE tenant_id = $1 AND kind = 'principal' AND subject = $4 AND public_key = $5 AND revoked_at IS NULL),
       $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)
     RETURNING ${columns}`,
    [
      intent.tenantId, intent.intentId, intent.signingVersion, intent.principalDid, intent.principalPubkey,
      intent.principalSignature, intent.payeeDid, intent.payeePubkey,
      JSON.stringify(intent.budget), intent.currency, intent.amountCents, JSON.stringify(intent.evidenceSchema),
      intent.deadlineText, intent.deadline, JSON.stringify(intent.predicateDsl), intent.predicateRef,
      intent.policyTemplateId, intent.policyVersionSeq, intent.policyContentDigest, intent.settlementRail,
      intent.allowedTools, intent.completionPresetId, intent.releaseMode, intent.meteredCostPath,
    ],
  );
  const inserted = toIntent(rows[0]!);
  return { ...inserted, transactionTime: inserted.createdAt };
}

export function findIntentStatement(tenantId: string, intentId: string): Statement<Intent | undefined> {
  return {
    text: `SELECT ${columns} FROM intents WHERE tenant_id = $1 AND intent_id = $2`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && toIntent(rows[0]),
  };
}

export function findIntent(tx: Queryable, tenantId: string, intentId: string): Promise<Intent | undefined> {
  return tx.run(findIntentStatement(tenantId, intentId));
}

/** Reads an intent and locks it until the transaction ends, so concurrent transitions queue. */
export function lockIntentStatement(tenantId: string, intentId: string): Statement<LockedIntent | undefined> {
  return {
    text: `SELECT ${columns}, transaction_timestamp() AS transaction_time FROM intents WHERE tenant_id = $1 AND intent_id = $2 FOR UPDATE`,
    values: [tenantId, intentId],
    read: ({ rows }) => rows[0] && { ...toIntent(rows[0]), transactionTime: rows[0].transaction_time as Date },
  };
}

export function lockIntent(tx: Queryable, tenantId: string, intentId: string): Promise<LockedIntent | undefined> {
  return tx.run(lockIntentStatement(tenantId, intentId));
}

/** A page of a tenant's intents, newest first, optionally of one state and/or one payee. A cursor (`startingAfter`)
 * that names no intent of the tenant gives an empty page; the caller tells that apart from the end of the list. */
export async function listIntents(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; state?: IntentState | undefined; payeeDid?: string | undefined; startingAfter?: string | undefined },
): Promise<{ intents: Intent[]; hasMore: boolean }> {
  const { rows } = await tx.query<IntentRow>(
    `SELECT ${columns} FROM intents
     WHERE tenant_id = $1 AND ($2::text IS NULL OR state = $2) AND ($5::text IS NULL OR payee_did = $5)
       AND ($3::uuid IS NULL OR (created_at, intent_id) < (SELECT created_at, intent_id FROM intents WHERE tenant_id = $1 AND intent_id = $3))
     ORDER BY created_at DESC, intent_id DESC LIMIT $4`,
    [tenantId, page.state ?? null, page.startingAfter ?? null, page.limit + 1, page.payeeDid ?? null],
  );
  return { intents: rows.slice(0, page.limit).map(toIntent), hasMore: rows.length > page.limit };
}

// A transition is queued to travel with COMMIT rather than sent on its own: the caller holds the row lock and has
// checked the state, so the outcome is known without asking, and the round trip is saved (docs/performance.md).
// The guard stays in the statement, and expect_one_row (migrations/0012_queued_transitions.sql) fails the
// commit should it ever miss.

/** Queues the transition of a locked `open` intent to `funded`; answers the intent as it will be. */
export function queueFundedTransition(tx: Queryable, intent: LockedIntent, fundingReference: string): LockedIntent {
  queueTransition(tx, intent, 'open', `state = 'funded', funded_at = now(), funding_reference = $3`, [fundingReference]);
  return { ...intent, state: 'funded', fundedAt: intent.transactionTime, fundingReference };
}

/** Queues the transition of a locked `funded` intent to `evidence_recorded`, with the verdict and, under metered
 * release, the cost the payee signed; answers the intent as it will be. */
export function queueEvidenceRecordedTransition(tx: Queryable, intent: LockedIntent, predicatePassed: boolean, meteredCostCents: number | null = null): LockedIntent {
  queueTransition(tx, intent, 'funded', `state = 'evidence_recorded', evidence_recorded_at = now(), predicate_passed = $3, metered_cost_cents = $4`, [predicatePassed, meteredCostCents]);
  return { ...intent, state: 'evidence_recorded', evidenceRecordedAt: intent.transactionTime, predicatePassed, meteredCostCents };
}

/** The two parts of a settlement: paid to the payee, returned to the principal (their sum is the amount). */
export interface SettledParts {
  readonly releasedCents: number;
  readonly refundedCents: number;
}

/** Queues the hold of a locked intent whose release the release gate stopped (docs/release-gate.md): from
 * `evidence_recorded` to `held`, not settled; answers the intent as it will be. */
export function queueHeldTransition(tx: Queryable, intent: LockedIntent): LockedIntent {
  queueTransition(tx, intent, 'evidence_recorded', `state = 'held'`, []);
  return { ...intent, state: 'held' };
}

/** Queues the settlement of a locked intent: its transition to `to`, a terminal state of the lifecycle table, with
 * the time it settled and its parts (the table's CHECK holds them to the state and the amount); answers the intent
 * as it will be. */
export function queueSettledTransition(tx: Queryable, intent: LockedIntent, to: IntentState, parts: SettledParts): LockedIntent {
  queueTransition(tx, intent, intent.state, `state = $3, settled_at = now(), released_cents = $4, refunded_cents = $5`, [to, parts.releasedCents, parts.refundedCents]);
  return { ...intent, state: to, settledAt: intent.transactionTime, ...parts };
}

/** Queues a check that the intent is still in `state`, to travel with COMMIT: a command's second phase, which holds
 * no lock between its phases, fails (expect_one_row) rather than commit around a state that moved. The check locks
 * the intent's row, so the phase takes the intent before any other row of it (its funding attempts), in the same
 * order as a first phase: two commands on one intent then wait for each other, never deadlock. */
export function queueStateGuard(tx: Queryable, intent: Intent, state: IntentState): void {
  tx.beforeCommit({
    text: `SELECT expect_one_row((SELECT count(*) FROM (SELECT 1 FROM intents WHERE tenant_id = $1 AND intent_id = $2 AND state = $3 FOR UPDATE) AS locked), 'intent still ' || $3)`,
    values: [intent.tenantId, intent.intentId, state],
  });
}

function queueTransition(tx: Queryable, intent: LockedIntent, from: IntentState, set: string, values: unknown[]): void {
  // A caller passing an intent in another state is a programmer error, not a 409: the caller checks first.
  if (intent.state !== from) throw new Error(`intent ${intent.intentId} is ${intent.state}, not ${from}, for its transition`);
  tx.beforeCommit({
    text: `WITH moved AS (UPDATE intents SET ${set} WHERE tenant_id = $1 AND intent_id = $2 AND state = '${from}' RETURNING 1)
           SELECT expect_one_row((SELECT count(*) FROM moved), 'intent transition from ${from}')`,
    values: [intent.tenantId, intent.intentId, ...values],
  });
}

/** The intents an audit export carries: created in [createdFrom, createdBefore) and/or one intent, oldest first.
 * Reads at most `limit` (the caller asks for one more than it accepts, to tell "too many"). */
export async function listIntentsForExport(
  tx: Queryable,
  tenantId: string,
  filter: { createdFrom?: Date | undefined; createdBefore?: Date | undefined; intentId?: string | undefined },
  limit: number,
): Promise<Intent[]> {
  const { rows } = await tx.query<IntentRow>(
    `SELECT ${columns} FROM intents
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
       AND ($4::uuid IS NULL OR intent_id = $4)
     ORDER BY created_at, intent_id LIMIT $5`,
    [tenantId, filter.createdFrom ?? null, filter.createdBefore ?? null, filter.intentId ?? null, limit],
  );
  return rows.map(toIntent);
}
