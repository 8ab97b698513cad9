// The engine's command pipeline (docs/engine.md "The command pipeline"): the recognition guard, idempotency (the
// key's lock, or the stored answer replayed), the intent loaded and locked and its state checked against the
// lifecycle table, the command's decision, the writes, and the stored answer, in one tenant transaction; a command
// that must call a rail splits around the call into two (docs/engine.md "Funding in two phases").
//
// Idempotency, in Postgres and correct across processes: a transaction-scoped advisory lock on (tenant, operation,
// key) admits one request at a time, and a duplicate that arrives while the first runs gets 409
// `idempotency.request_in_progress`. Once an answer is stored it is served to every replay without regard to the
// lock, so concurrent replays of a finished request never turn each other away. The stored answer is written in the
// same transaction as the work, so a crash leaves neither the work nor the record, and the retry runs afresh. Only
// final answers are stored: a 402 challenge or a 202 pending answer is not, so the same request re-sent with a rail
// credential (or as a poll) runs again, as the rails' handshake needs. But the key is bound to its first request's
// fingerprint from that request's first execution, whatever it answered (an error included): another body under
// the key is refused from then on.
import { createHash } from 'node:crypto';
import { lockIntent, type Intent, type IntentState, type LockedIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import {
  findIdempotencyRecordStatement,
  queueFinalAnswer,
  queueIdempotencyBinding,
  type IdempotencyScope,
} from '../db/idempotency-record-repository.ts';
import { isDatabaseUnavailable, isUniqueViolation, type Database, type Queryable, type Statement } from '../infra/database.ts';
import { CommittedFailure, type CallOutside, type EngineAnswer, type ResponseHeaders } from './answer.ts';
import { fromStates, type CommandName, type LifecycleOperation } from './lifecycle.ts';
import { commandBatcherOf } from './group-commit.ts';
import { engineObserverOf, failureStatusOf, watchTransaction } from './observer.ts';

export interface IdempotentResult extends EngineAnswer {
  readonly replayed: boolean;
}

/** The operations the service makes idempotent: the lifecycle's commands and capability verification. Each key is
 * scoped to one of them. */
export type IdempotentOperation = LifecycleOperation | 'capability.verify';

/** A request's idempotency key and what makes two requests "the same" (method, path and body bytes, hashed). */
export interface IdempotencyRecord {
  readonly key: string;
  readonly fingerprint: Buffer;
}

export interface CommandScope {
  readonly tenantId: string;
  readonly operation: IdempotentOperation;
  /** Absent when the request carries no idempotency key. */
  readonly record?: IdempotencyRecord | undefined;
  /** Runs first on every request, replays included: a check that authenticates the request (a recognition proof)
   * must not be skipped by replaying. */
  readonly guard?: ((tx: Queryable) => Promise<void>) | undefined;
  /** Present when the command may commit in a group with others of its tenant (src/engine/group-commit.ts), with
   * the intent it acts on (none for a create, whose intent is new): no two commands on one intent share a group. */
  readonly group?: { readonly intentId: string | undefined } | undefined;
}

/** Final answers: successes except 202 (pending, to be polled). 402 and errors are never stored (only the key's
 * binding to the request's fingerprint is). */
const isFinal = (status: number): boolean => status >= 200 && status < 300 && status !== 202;

/** A signed 64-bit lock id from the key's scope; a collision only makes one request wait its turn (409). */
export function idempotencyLockId(tenantId: string, operation: string, key: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${operation}\u0000${key}`).digest().readBigInt64BE(0).toString();
}

/** The intent a command acts on, locked until the transaction ends: 404 when the tenant has none by that id, 409
 * unless it is in one of the states the lifecycle table lets `command` start from. */
export async function lockForCommand(tx: Queryable, tenantId: string, intentId: string, command: CommandName): Promise<LockedIntent> {
  return checkIntentState(await lockIntent(tx, tenantId, intentId.toLowerCase()), fromStates(command));
}

/** `intent` when it exists and is in one of `states`: 404 when it does not exist, 409 when it is elsewhere. */
export function checkIntentState<T extends Intent>(intent: T | undefined, states: readonly IntentState[]): T {
  if (!intent) throw new ServiceError('intent.not_found');
  if (!states.includes(intent.state)) {
    throw new ServiceError('intent.invalid_state', { details: { state: intent.state, allowed_states: states } });
  }
  return intent;
}

/**
 * Runs a command: phase 1 (the guard and `begin`) in a tenant transaction holding the idempotency lock, which
 * answers, or hands on a call to make outside any transaction (a rail). Then the call runs with no transaction and
 * no lock, and phase 2 writes its outcome and stores the final answer in one guarded message, or starts the
 * command over. Without a key, the same, minus the lock and the stored answer.
 */
export async function runCommand(
  database: Database,
  scope: CommandScope,
  begin: (tx: Queryable) => Promise<EngineAnswer | CallOutside>,
): Promise<IdempotentResult> {
  // Its answer, or its refusal, reported to the engine's observer (src/engine/observer.ts), if it has one.
  const observer = engineObserverOf(database);
  if (observer === undefined) return runPhases(database, scope, begin);
  return runPhases(database, scope, begin).then(
    (result) => {
      observer.commandAnswered(scope.operation, result.status, result.replayed);
      return result;
    },
    (error: unknown) => {
      observer.commandAnswered(scope.operation, failureStatusOf(error), false);
      throw error;
    },
  );
}

async function runPhases(
  database: Database,
  scope: CommandScope,
  begin: (tx: Queryable) => Promise<EngineAnswer | CallOutside>,
): Promise<IdempotentResult> {
  for (let round = 1; ; round += 1) {
    const first = await retryingConflicts(() => idempotentTransaction(database, scope, 'try', begin));
    if (!('outside' in first)) return first;
    const finish = await first.outside();
    // Phase 2 is one message: its writes are guarded (compare and set) and travel with COMMIT, the stored answer
    // with them. A guard that misses or a stored answer already there fails the message and nothing commits: the
    // state moved between the phases, and the command starts over from phase 1, which answers from the new state.
    // A phase 2 that fails after its writes (a rail that could not be reached) throws once they are committed.
    const second = await retryingConflicts(() => idempotentTransaction(database, scope, 'wait', finish)).catch((error: unknown) => {
      if (movedMeanwhile(error)) return undefined;
      throw error;
    });
    if (second !== undefined) return second;
    if (round === phasedRoundsMax) throw new Error(`${scope.operation}: the state moved between the phases ${round} times`);
  }
}

/** Rounds a phased command may start over before giving up: each restart means another request moved the same
 * intent between this one's phases, which a third time is no coincidence but a bug. */
const phasedRoundsMax = 3;

/** Times a transaction of a command is run again after Postgres rolled it back for a deadlock or a serialization
 * failure. Locks are taken in one order (the idempotency key, the intent, its funding attempts), so this is a
 * safety net, not a path: nothing of a rolled-back transaction committed, and running it again is the answer. */
const conflictRetriesMax = 3;

async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: unknown } | undefined)?.code;
      if ((code !== '40P01' && code !== '40001') || attempt > conflictRetriesMax) throw error;
    }
  }
}

/** A guard of phase 2 missed (expect_one_row: cardinality_violation) or a unique index refused a second outcome. */
function movedMeanwhile(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '21000' || isUniqueViolation(error);
}

/** One tenant transaction of an idempotent command. Lock 'try' (phase 1, or the whole command): replays a stored
 * answer, or refuses another body than the key is bound to, or answers 409 when another request holds the key, or
 * runs the guard and `work` and stores what the key needs with it: its final answer, or else its binding to this
 * request's fingerprint, even when `work` fails. Lock 'wait' (phase 2) waits for the key's lock and does not look: a
 * final answer already stored fails its message. Phase 2 holds the key while it commits its outcome and stored
 * answer, so a duplicate's phase 1 sees either both (a replay) or neither (the intent as it was, and the claim: 409
 * `idempotency.request_in_progress`), never the outcome without its answer. */
async function idempotentTransaction<R extends object | undefined>(
  database: Database,
  scope: CommandScope,
  lock: 'try' | 'wait',
  work: (tx: Queryable) => Promise<EngineAnswer | R>,
): Promise<IdempotentResult | Exclude<R, EngineAnswer | CommittedFailure>> {
  const { record } = scope;
  const done = await tenantTransaction(database, scope, async (tx) => {
    watchTransaction(tx, database);
    if (record === undefined) {
      if (lock === 'try') await scope.guard?.(tx);
      return passOn(await work(tx));
    }
    return keyedTransaction(tx, scope, record, lock, work);
  });
  // A failure whose writes had to commit first (a claim released, a key's binding): committed, now thrown.
  if (done instanceof CommittedFailure) throw done.error;
  return done as IdempotentResult | Exclude<R, EngineAnswer | CommittedFailure>;
}

/** A transaction of the command's tenant: alone, or in a group when the command is groupable and the database's
 * commands are grouped. Its group holds no other command on the same intent or under the same key. */
function tenantTransaction<T>(database: Database, scope: CommandScope, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const batcher = scope.group === undefined ? undefined : commandBatcherOf(database);
  if (batcher === undefined) return database.tenant(scope.tenantId, work);
  const intentId = scope.group!.intentId?.toLowerCase();
  const conflicts: string[] = [];
  if (intentId !== undefined) conflicts.push(`intent\u0000${intentId}`);
  if (scope.record !== undefined) conflicts.push(`key\u0000${scope.operation}\u0000${scope.record.key}`);
  return batcher.run(scope.tenantId, conflicts, intentId ?? '', work);
}

/** The keyed part of idempotentTransaction, in its transaction. */
async function keyedTransaction<R extends object | undefined>(
  tx: Queryable,
  scope: CommandScope,
  record: IdempotencyRecord,
  lock: 'try' | 'wait',
  work: (tx: Queryable) => Promise<EngineAnswer | R>,
): Promise<IdempotentResult | Exclude<R, EngineAnswer> | CommittedFailure> {
  const key = { tenantId: scope.tenantId, operation: scope.operation, key: record.key };
  if (lock === 'wait') {
    // First in the message, before any row lock of the work: the key, then the intent, the order phase 1 takes.
    tx.beforeCommit({ text: 'SELECT pg_advisory_xact_lock($1)', values: [idempotencyLockId(scope.tenantId, scope.operation, record.key)] });
    return storeAnswer(tx, key, record.fingerprint, await work(tx), { bind: false });
  }
  const { guard } = scope;
  // The lock and the look-up share a round trip but not a snapshot: each statement of a batch reads what was
  // committed when it starts, so a first request that commits and unlocks in between is seen by the look-up.
  const [locked, stored] = await tx.batch([
    tryAdvisoryLockStatement(idempotencyLockId(scope.tenantId, scope.operation, record.key)),
    findIdempotencyRecordStatement(key),
  ]);
  const sameRequest = stored === undefined || stored.fingerprint.equals(record.fingerprint);
  if (stored?.answer || !sameRequest) {
    // A stored answer is final and never changes, so it is served whoever holds the lock: concurrent replays each
    // hold it for their own short transaction, and none of them is a first request still running. A bound key
    // refuses another body whether or not its first request still runs.
    await guard?.(tx);
    if (!sameRequest) throw new ServiceError('idempotency.key_reused');
    const { status, headers, body } = stored!.answer!;
    return { status, headers, body: JSON.parse(body) as unknown, replayed: true };
  }
  // No answer yet and the lock held elsewhere: the first request is still running (its answer is not committed).
  if (!locked) throw new ServiceError('idempotency.request_in_progress');
  if (stored === undefined) return firstExecution(tx, key, record.fingerprint, guard, work);
  // Bound by an earlier execution that answered no final answer (an error, 402, 202): the same request runs again.
  await guard?.(tx);
  return storeAnswer(tx, key, record.fingerprint, await work(tx), { bind: false });
}

/** The key's first execution, under its lock: `work`'s outcome stored with the key's binding. When `work` fails
 * (after the guard passed), what it did is undone and the binding alone commits, then the failure is thrown: the
 * key stays bound to this request's body. A guard that fails (the request is not the agent's), or a database that
 * cannot be reached, binds nothing; nor does a statement that fails with COMMIT, which the row locks taken before
 * make a programmer's error. */
async function firstExecution<R extends object | undefined>(
  tx: Queryable,
  key: IdempotencyScope,
  fingerprint: Buffer,
  guard: ((tx: Queryable) => Promise<void>) | undefined,
  work: (tx: Queryable) => Promise<EngineAnswer | R>,
): Promise<IdempotentResult | Exclude<R, EngineAnswer> | CommittedFailure> {
  let guarded = false;
  let done: EngineAnswer | R;
  try {
    done = await tx.undoableOnError(async () => {
      await guard?.(tx);
      guarded = true;
      return work(tx);
    });
  } catch (error) {
    if (!guarded || isDatabaseUnavailable(error)) throw error;
    queueIdempotencyBinding(tx, key, fingerprint);
    return new CommittedFailure(error as Error);
  }
  return storeAnswer(tx, key, fingerprint, done, { bind: true });
}

/** Queues what the key needs of `done`, to travel with COMMIT: a final answer stored; anything else (a 402, a 202,
 * a call to make outside) the key's binding, when the key is not bound yet (`bind`). Passes on what is not an
 * answer. */
function storeAnswer<R>(
  tx: Queryable,
  key: IdempotencyScope,
  fingerprint: Buffer,
  done: EngineAnswer | R,
  { bind }: { bind: boolean },
): IdempotentResult | Exclude<R, EngineAnswer> {
  if (isAnswer(done) && isFinal(done.status)) {
    queueFinalAnswer(tx, key, fingerprint, { status: done.status, headers: done.headers ?? {}, body: JSON.stringify(done.body) });
  } else if (bind) {
    queueIdempotencyBinding(tx, key, fingerprint);
  }
  return passOn(done);
}

/** An answer, marked as not replayed; anything else passed on as it is. */
function passOn<R>(done: EngineAnswer | R): IdempotentResult | Exclude<R, EngineAnswer> {
  return isAnswer(done) ? { ...done, replayed: false } : (done as unknown as Exclude<R, EngineAnswer>);
}

const isAnswer = (value: unknown): value is EngineAnswer =>
  typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number';

function tryAdvisoryLockStatement(lockId: string): Statement<boolean> {
  return { text: 'SELECT pg_try_advisory_xact_lock($1) AS locked', values: [lockId], read: ({ rows }) => rows[0].locked === true };
}
