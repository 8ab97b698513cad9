// Periodic maintenance, safe with any number of replicas (one runs it at a time, under a transaction's advisory lock):
// refunds funded intents past their deadline (the lifecycle's `expire` command, src/engine/expire.ts), and forgets idempotency records, recognition nonces and rate-limit
// counters that have outlived their use; and runs the live rails' sweep (runRailSweep): payouts and refunds
// instructed to a rail, and funding claims whose process died between the phases.
import { deleteExpiredNonces } from '../db/recognition-nonce-repository.ts';
import { deleteEventsBefore } from '../db/event-repository.ts';
import { claimDueInstructions, recordInstructionOutcome, type RailInstruction } from '../db/rail-instruction-repository.ts';
import { crashPoint } from '../engine/crash-points.ts';
import { findStaleClaims } from '../db/funding-attempt-repository.ts';
import { findSettlementConfig, openRailSecrets } from '../db/settlement-config-repository.ts';
import type { EngineEffects } from '../engine/effects.ts';
import { resolveStaleClaim, type ClaimResolution } from '../engine/fund.ts';
import { recordInstructionOutcomeEvent } from '../engine/intent-events.ts';
import {
  eventPrunePerPassMax,
  eventRetentionMs,
  fundingClaimLeaseMs,
  idempotencyRecordRetentionMs,
  railCallTimeoutMsDefault,
  railInstructionAttemptsMax,
  railInstructionClaimLeaseMs,
  railSweepBatchMax,
} from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { expireIntents } from '../engine/expire.ts';
import { liveAdapterFor, railCarriesOut, RailUnavailableError, resolveRailName, type InstructionOutcome, type RailRuntime } from '../rails/index.ts';
import { settingsOf } from '../rails/settings.ts';

/** Any fixed number: replicas agree on it, and it differs from the migration lock. Whoever holds it (a pass in
 * another replica, or a test keeping the sweeper out of its way) makes the other passes do nothing. */
export const maintenanceLockKey = '7213402118';

/** Rows that have outlived their use, each table with the statement that forgets them (as the system role). */
const pruneTasks = {
  // A key reused after the retention starts a new request.
  idempotency_records: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'idempotency_records', 'created_at', new Date(now.getTime() - idempotencyRecordRetentionMs)),
  recognition_nonces: (tx: Queryable, now: Date) => deleteExpiredNonces(tx, now),
  // A replica's late request for an old window would only recreate a row that the next pass deletes.
  rate_limit_counters: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'rate_limit_counters', 'window_end_ms', now.getTime()),
  // A sign-in code or an SSO state past its expiry can never be used again; a day's grace keeps them for support.
  login_challenges: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'login_challenges', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
  sso_states: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'sso_states', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
  // A device login past its expiry can no longer be approved or redeemed; the same day's grace.
  device_authorizations: (tx: Queryable, now: Date) => deleteRowsBefore(tx, 'device_authorizations', 'expires_at', new Date(now.getTime() - expiredRowGraceMs)),
  // Events past the retention (docs/events.md#retention), their deliveries and attempts with them; a bounded batch.
  events: (tx: Queryable, now: Date) => deleteEventsBefore(tx, new Date(now.getTime() - eventRetentionMs), eventPrunePerPassMax),
} as const;

export type PrunedTable = keyof typeof pruneTasks;

export interface MaintenanceReport {
  /** False when another replica held the lock and this pass did nothing. */
  readonly ran: boolean;
  readonly refunded: number;
  /** Rows deleted per table. */
  readonly deleted: Readonly<Record<PrunedTable, number>>;
  /** The live rails' sweep (absent when the pass did not run). */
  readonly rails?: RailSweepReport;
}

const expiredRowGraceMs = 24 * 60 * 60_000;

/** Deletes the rows of `table` whose `column` is before the cutoff; table and column are this file's constants. */
async function deleteRowsBefore(tx: Queryable, table: string, column: 'created_at' | 'expires_at' | 'window_end_ms', before: Date | number): Promise<number> {
  const { rowCount } = await tx.query(`DELETE FROM ${table} WHERE ${column} < $1`, [before]);
  return rowCount ?? 0;
}

const nothingDeleted = Object.fromEntries(Object.keys(pruneTasks).map((table) => [table, 0])) as Record<PrunedTable, number>;

export async function runMaintenance(
  database: Database,
  effects: EngineEffects,
  now = new Date(),
  railRuntime: RailRuntime = { secretBox: undefined, callTimeoutMs: railCallTimeoutMsDefault },
): Promise<MaintenanceReport> {
  const pass = async (): Promise<MaintenanceReport> => {
    const refunded = await expireIntents(database, effects, now);
    const deleted = await database.system(async (tx) => {
      const counts = { ...nothingDeleted };
      for (const [table, prune] of Object.entries(pruneTasks) as Array<[PrunedTable, (tx: Queryable, now: Date) => Promise<number>]>) {
        counts[table] = await prune(tx, now);
      }
      return counts;
    });
    const rails = await runRailSweep(database, railRuntime, effects.keyring, now);
    return { ran: true, refunded, deleted, rails };
  };
  // The embedded database is held by one process, so no other pass can run beside this one; and there, a transaction
  // kept open on one connection would hold up the pass's own work on the others (one session behind the socket
  // multiplexer) for ever, and every request with it. Behind a pooler (sessions shared too, but many replicas) the
  // lock is needed, and taken below.
  if (database.heldByOneProcess) return pass();
  // The lock belongs to a transaction kept open for the whole pass, on a connection of its own, not to the session:
  // behind a pooler in transaction mode (docs/deploy.md) a session lock would stay on whichever server session took
  // it, where the next client of that session, another replica's pass included, would find it already its own. The
  // pass's own work runs in other transactions. Ending this one releases the lock; should the pass fail, or that
  // connection be lost, Database.session closes the connection, which ends the transaction and the lock with it (a
  // lost connection makes the rollback fail, and the pass counts as failed: its work is committed or not, step by step).
  return database.session(async (client) => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [maintenanceLockKey]);
      if (!rows[0]!.locked) return { ran: false, refunded: 0, deleted: nothingDeleted };
      return await pass();
    } finally {
      // The transaction wrote nothing: a rollback ends it.
      await client.query('ROLLBACK');
    }
  });
}

export interface RailSweepReport {
  /** Instructions tried this pass, by the status they were left in. */
  readonly instructions: Readonly<Record<'succeeded' | 'pending' | 'failed', number>>;
  /** Stale funding claims looked at, by what became of them. */
  readonly claims: Readonly<Record<ClaimResolution, number>>;
}

/** How long a pending instruction waits before its next try: doubling from 30 seconds, at most an hour. */
function nextTryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.min(attempts, 7), 3_600_000);
}

/**
 * The live rails' sweep, part of every maintenance pass (tests call it by hand): each due pending instruction is
 * carried out through its rail's adapter, with no transaction open, and its outcome recorded; each funding claim
 * past its lease is resolved (src/engine/fund.ts resolveStaleClaim; `keyring` signs the capability token of a funding
 * it answers under the claiming request's key). An unreachable rail is retried on later passes;
 * an instruction that failed `railInstructionAttemptsMax` times is marked failed, for the operator.
 */
export async function runRailSweep(database: Database, runtime: RailRuntime, keyring: GatewayKeyring, now = new Date()): Promise<RailSweepReport> {
  const instructions = { succeeded: 0, pending: 0, failed: 0 };
  // Phase one, committed before any rail call: the claims (docs/rails.md#rail-instructions-and-the-sweeper).
  const due = await database.system((tx) => claimDueInstructions(tx, now, new Date(now.getTime() - railInstructionClaimLeaseMs), railSweepBatchMax));
  for (const instruction of due) {
    const status = await runInstruction(database, runtime, instruction, now);
    instructions[status] += 1;
  }
  const claims: Record<ClaimResolution, number> = { funded: 0, pending: 0, declined: 0, released: 0, skipped: 0 };
  const stale = await database.system((tx) => findStaleClaims(tx, new Date(now.getTime() - fundingClaimLeaseMs), railSweepBatchMax));
  for (const claim of stale) claims[await resolveStaleClaim(database, runtime, keyring, claim)] += 1;
  return { instructions, claims };
}

async function runInstruction(database: Database, runtime: RailRuntime, instruction: RailInstruction, now: Date): Promise<'succeeded' | 'pending' | 'failed'> {
  const { tenantId, instructionId } = instruction;
  let outcome: InstructionOutcome;
  let lastError: string | null = null;
  try {
    // No transaction open and no lock held: the claim committed, the rail is asked under the instruction's
    // idempotency key, so that asking again after a crash gets the same outcome.
    outcome = await instructRail(database, runtime, instruction);
  } catch (error) {
    if (!(error instanceof RailUnavailableError)) throw error;
    outcome = { status: 'pending', reference: null };
    lastError = error.reason;
  }
  crashPoint('instruct.after_rail_call');
  // Only failures count towards giving up: an instruction the rail holds as pending is asked about again.
  const exhausted = lastError !== null && instruction.attempts + 1 >= railInstructionAttemptsMax;
  const status = exhausted ? 'failed' : outcome.status;
  await database.system(async (tx) => {
    const recorded = await recordInstructionOutcome(tx, tenantId, instructionId, instruction.claimedAt!, {
      status,
      reference: outcome.status === 'failed' ? null : outcome.reference,
      detail: outcome.status === 'pending' ? outcome.detail ?? null : null,
      lastError: outcome.status === 'failed' ? outcome.error : lastError,
      railDetails: outcome.status === 'succeeded' ? outcome.details ?? null : null,
      // A succeeded or failed instruction is never due again; a pending one is asked again after the delay.
      nextAttemptAt: new Date(now.getTime() + nextTryDelayMs(instruction.attempts)),
    });
    if (recorded) recordInstructionOutcomeEvent(tx, recorded);
  });
  crashPoint('instruct.after_record');
  return status;
}

/** Asks the instruction's rail to carry it out. A rail that cannot be reached (or no live connection for it) throws
 * RailUnavailableError, retried on later passes; an instruction its rail does not carry out is the operator's. */
async function instructRail(database: Database, runtime: RailRuntime, instruction: RailInstruction): Promise<InstructionOutcome> {
  const { tenantId } = instruction;
  const rail = resolveRailName(instruction.rail);
  if (rail && !railCarriesOut(rail, 'live', instruction.kind)) {
    return { status: 'failed', error: `The ${rail} rail does not carry out a ${instruction.kind}; carry it out by hand and record it done.` };
  }
  const config = await database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
  const adapter = rail && config
    ? await liveAdapterFor(rail, {
      settlementRail: instruction.rail,
      settings: settingsOf(config, rail),
      secrets: openSecretsForSweep(runtime, tenantId, config, rail)[rail] ?? {},
      callTimeoutMs: runtime.callTimeoutMs,
    })
    : undefined;
  if (!adapter) throw new RailUnavailableError(instruction.rail, `no live ${instruction.rail} connection is configured for this tenant`);
  return adapter.instruct({
    instructionId: instruction.instructionId,
    tenantId,
    intentId: instruction.intentId,
    kind: instruction.kind,
    amountCents: instruction.amountCents,
    currency: instruction.currency,
    fundingReference: instruction.fundingReference,
    fundingDetails: instruction.fundingDetails,
    attempts: instruction.attempts,
  });
}

/** A tenant's secrets for the sweep; a deployment that cannot open them is retried like an unreachable rail. */
function openSecretsForSweep(runtime: RailRuntime, tenantId: string, config: Parameters<typeof openRailSecrets>[2], rail: NonNullable<ReturnType<typeof resolveRailName>>) {
  try {
    return openRailSecrets(runtime.secretBox, tenantId, config);
  } catch {
    throw new RailUnavailableError(rail, 'the stored rail secrets cannot be opened (SVC_SECRETS_KEY missing or changed)');
  }
}
