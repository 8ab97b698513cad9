// Group commit of the engine's command transactions (docs/engine.md "Group commit", docs/performance.md): commands of
// one tenant that arrive close together run in one database transaction, each command's work under a savepoint of
// its own, in a fixed order, with one COMMIT for all of them. What a group saves is per transaction: BEGIN, the role
// and tenant settings, COMMIT and its flush to disk, and the ledger head's lock, which the group's postings share
// (they travel with the one COMMIT, so the head is held for one flush however many postings the group carries).
//
// When: a command runs at once when its tenant has no group in flight (light load: groups of one, no added
// latency). Otherwise it waits for the next group, which starts when groupSizeMax commands wait or windowMs after
// the first of them arrived, whichever is first, and never with more than groupsInFlightMax groups of the tenant
// running.
//
// What stays as it was: each command's work is the same function of its transaction as when it runs alone, so its
// decisions, idempotency, recognition guard and row-level security (the group's transaction is the tenant's) keep
// their meaning. Two things would not: in one transaction a lock is re-entrant (a second request under the same
// idempotency key would take the key's advisory lock the first one holds), and a command's writes queued for COMMIT
// are not yet visible to the next command. So two commands on the same intent, or under the same idempotency key,
// never share a group: the later one waits for the next. A command that throws has all it did undone by its
// savepoint and is answered its error, the others go on. A group the database refuses as a whole (a statement
// queued for COMMIT failed, a deadlock, a lost connection) rolls back whole, and each of its commands runs again
// alone, as it would have without the group: nothing of the group committed, and each command's work may run again
// as the engine's retries already do.
import { isDatabaseUnavailable, type Database, type Queryable } from '../infra/database.ts';
import { crashPoint } from './crash-points.ts';

export interface GroupCommitSettings {
  /** How long at most a command waits for others to join its group while another group of its tenant runs. */
  readonly windowMs: number;
  /** A group starts as soon as this many commands wait. */
  readonly groupSizeMax: number;
  /** Groups of one tenant running at once (each a transaction on a connection of its own). */
  readonly groupsInFlightMax: number;
}

export const groupCommitDefaults: GroupCommitSettings = { windowMs: 2, groupSizeMax: 16, groupsInFlightMax: 2 };

/** What the batcher counts, for the bench and the tests: groups run, commands in them, groups refused and rerun. */
export interface GroupCommitStats {
  groups: number;
  commands: number;
  largestGroup: number;
  groupsRerun: number;
}

interface Member {
  readonly conflicts: readonly string[];
  /** Members of a group run ordered by it (the intent id): row locks in one order across groups. */
  readonly order: string;
  readonly work: (tx: Queryable) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface TenantQueue {
  waiting: Member[];
  inFlight: number;
  timer: NodeJS.Timeout | undefined;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export class CommandBatcher {
  readonly #database: Database;
  readonly #settings: GroupCommitSettings;
  readonly #tenants = new Map<string, TenantQueue>();
  readonly stats: GroupCommitStats = { groups: 0, commands: 0, largestGroup: 0, groupsRerun: 0 };

  constructor(database: Database, settings: GroupCommitSettings) {
    for (const [name, value] of Object.entries(settings)) {
      if (!Number.isSafeInteger(value) || value < (name === 'windowMs' ? 0 : 1)) throw new Error(`group commit: ${name} must be a whole number, got ${value}`);
    }
    this.#database = database;
    this.#settings = settings;
  }

  /** Runs `work` in a transaction of `tenantId`, alone or in a group; `conflicts` name what no other command of its
   * group may share (its intent, its idempotency key), `order` its place in the group. */
  run<T>(tenantId: string, conflicts: readonly string[], order: string, work: (tx: Queryable) => Promise<T>): Promise<T> {
    let queue = this.#tenants.get(tenantId);
    if (queue === undefined) {
      queue = { waiting: [], inFlight: 0, timer: undefined };
      this.#tenants.set(tenantId, queue);
    }
    const done = new Promise<T>((resolve, reject) => {
      queue.waiting.push({ conflicts, order, work, resolve: resolve as (value: unknown) => void, reject });
    });
    this.#schedule(tenantId, queue);
    return done;
  }

  #schedule(tenantId: string, queue: TenantQueue): void {
    const { groupSizeMax, groupsInFlightMax, windowMs } = this.#settings;
    while (queue.waiting.length > 0 && queue.inFlight < groupsInFlightMax) {
      const due = queue.inFlight === 0 || queue.waiting.length >= groupSizeMax;
      if (!due) {
        queue.timer ??= setTimeout(() => {
          queue.timer = undefined;
          if (queue.waiting.length > 0 && queue.inFlight < groupsInFlightMax) this.#start(tenantId, queue);
          this.#schedule(tenantId, queue);
        }, windowMs);
        return;
      }
      this.#start(tenantId, queue);
    }
    if (queue.waiting.length === 0 && queue.inFlight === 0) {
      if (queue.timer !== undefined) clearTimeout(queue.timer);
      this.#tenants.delete(tenantId);
    }
  }

  /** Takes the next group off the queue (up to groupSizeMax members without a shared conflict, in arrival order)
   * and runs it. */
  #start(tenantId: string, queue: TenantQueue): void {
    if (queue.timer !== undefined) {
      clearTimeout(queue.timer);
      queue.timer = undefined;
    }
    const taken = new Set<string>();
    const group: Member[] = [];
    const left: Member[] = [];
    for (const member of queue.waiting) {
      if (group.length < this.#settings.groupSizeMax && !member.conflicts.some((conflict) => taken.has(conflict))) {
        group.push(member);
        for (const conflict of member.conflicts) taken.add(conflict);
      } else {
        left.push(member);
      }
    }
    queue.waiting = left;
    queue.inFlight += 1;
    group.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    void this.#runGroup(tenantId, group).finally(() => {
      queue.inFlight -= 1;
      this.#schedule(tenantId, queue);
    });
  }

  async #runGroup(tenantId: string, group: readonly Member[]): Promise<void> {
    this.stats.groups += 1;
    this.stats.commands += group.length;
    this.stats.largestGroup = Math.max(this.stats.largestGroup, group.length);
    if (group.length === 1) {
      await this.#runAlone(tenantId, group[0]!);
      return;
    }
    let outcomes: Outcome[];
    try {
      outcomes = await this.#database.tenant(tenantId, async (tx) => {
        const results: Outcome[] = [];
        for (const member of group) {
          try {
            results.push({ ok: true, value: await tx.undoableOnError(() => member.work(tx)) });
          } catch (error) {
            // Without its connection the group cannot go on; anything else was this command's alone, and undone.
            if (isDatabaseUnavailable(error)) throw error;
            results.push({ ok: false, error });
          }
        }
        crashPoint('group.before_commit');
        return results;
      });
    } catch {
      // Refused as a whole: nothing of it committed. Each command runs again alone, as without the group.
      this.stats.groupsRerun += 1;
      await Promise.all(group.map((member) => this.#runAlone(tenantId, member)));
      return;
    }
    outcomes.forEach((outcome, index) => {
      const member = group[index]!;
      if (outcome.ok) member.resolve(outcome.value);
      else member.reject(outcome.error);
    });
  }

  async #runAlone(tenantId: string, member: Member): Promise<void> {
    await this.#database.tenant(tenantId, member.work).then(member.resolve, member.reject);
  }
}

const batchers = new WeakMap<Database, CommandBatcher>();

/** From now on, the engine's groupable commands through `database` commit in groups. */
export function groupCommands(database: Database, settings: GroupCommitSettings = groupCommitDefaults): CommandBatcher {
  const batcher = new CommandBatcher(database, settings);
  batchers.set(database, batcher);
  return batcher;
}

export function commandBatcherOf(database: Database): CommandBatcher | undefined {
  return batchers.get(database);
}
