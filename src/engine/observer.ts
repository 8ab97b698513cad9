// What the engine reports as it works, to whoever watches it (the metrics plugin, src/plugins/metrics.ts): the
// commands it answered and the ledger rows it committed. The engine knows this interface, not the watcher, so it
// imports nothing from above. The observer belongs to a Database (each app has its own), and a transaction the
// engine runs is tied to its database's observer for its lifetime, so that what it posts is counted only once it
// commits. An engine nobody watches reports nothing, at the cost of a map look-up per transaction.
import { errorCatalogue } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database, Queryable } from '../infra/database.ts';
import { PredicateError } from '../predicate/errors.ts';
import { SigningError } from '../signing/errors.ts';
import type { LedgerEventKind } from '../contracts/ledger.ts';

export interface EngineObserver {
  /** A command answered `status`, a stored answer replayed when `replayed`; a refusal counts with its status. */
  commandAnswered(operation: string, status: number, replayed: boolean): void;
  /** A ledger transaction of `rows` rows committed. */
  ledgerRowsAppended(eventKind: LedgerEventKind, rows: number): void;
}

const databaseObservers = new WeakMap<Database, EngineObserver>();
const transactionObservers = new WeakMap<Queryable, EngineObserver>();

/** From now on, what the engine does through `database` is reported to `observer`. */
export function observeEngine(database: Database, observer: EngineObserver): void {
  databaseObservers.set(database, observer);
}

export function engineObserverOf(database: Database): EngineObserver | undefined {
  return databaseObservers.get(database);
}

/** Ties `tx`, a transaction of `database`, to its observer, if any, for what the engine queues in it. */
export function watchTransaction(tx: Queryable, database: Database): void {
  const observer = databaseObservers.get(database);
  if (observer !== undefined) transactionObservers.set(tx, observer);
}

export function transactionObserverOf(tx: Queryable): EngineObserver | undefined {
  return transactionObservers.get(tx);
}

/** The status a refusal answers with, or undefined when `error` is not one (a bug, a lost database). The pure
 * modules' errors carry a catalogue code and no status; the surfaces answer them as ServiceErrors of that code
 * (src/errors/pure-error-mapping.ts), so their status is the catalogue's for the code. */
export function refusalStatusOf(error: unknown): number | undefined {
  if (error instanceof ServiceError) return error.statusCode;
  if (error instanceof SigningError || error instanceof PredicateError) return errorCatalogue[error.code].status;
  return undefined;
}

/** The status a command's failure answers with: a refusal's, else 500. */
export function failureStatusOf(error: unknown): number {
  return refusalStatusOf(error) ?? 500;
}
