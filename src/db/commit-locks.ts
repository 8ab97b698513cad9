// The rows many transactions of one tenant lock at COMMIT, in the one order every transaction takes them (CommitLock,
// src/infra/database.ts). A group commit holds several commands' statements in one transaction; were one group to
// lock the ledger head before an operator's standing row and another the other way round, each would wait for the
// other until Postgres's deadlock check (a second later) aborted one. A statement queued with one of these locks
// travels after the statements without one: lower ranks first, then by key.
import type { CommitLock } from '../infra/database.ts';

export const commitLocks = {
  /** The tenant's transparency log head (recordReceiptsStatement). First: a receipt appended at once
   * (recordReceiptNow) locks it before anything queued. */
  transparencyLogHead: { rank: 1 },
  /** The tenant's ledger head (ledger_post, ledger_post_group). */
  ledgerHead: { rank: 2 },
} as const satisfies Record<string, CommitLock>;

/** An operator's standing rows in one currency (standing_record_settlement: all-time, then the day's). */
export const standingRowsLock = (operatorDid: string, currency: string): CommitLock => ({ rank: 3, key: `${operatorDid}\u0000${currency}` });
