// CPU seconds spent by processes, from Linux /proc: the lifecycle bench uses it to show where the two cores go
// during a loaded window (service process, Postgres backends, the load generator). Elsewhere it answers NaN.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux we run on. */
const ticksPerSecond = 100;

function statFields(pid: number | string): { comm: string; cpuTicks: number; reapedChildrenTicks: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // Gone, or no /proc.
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15, cutime and cstime (children that exited and
  // were waited for) 16 and 17.
  return { comm, cpuTicks: Number(rest[11]) + Number(rest[12]), reapedChildrenTicks: Number(rest[13]) + Number(rest[14]) };
}

/** User + system CPU seconds of one process so far (NaN when /proc cannot tell). */
export function processCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? fields.cpuTicks / ticksPerSecond : Number.NaN;
}

/** User + system CPU seconds so far of every live process named `postgres` (postmaster, backends, WAL writer, …),
 * by pid, each with its exited children's: the postmaster's children are the backends, so a backend that exits
 * (a pgbench connection at the end of its run) moves its CPU into the postmaster's figure instead of losing it. */
export function postgresCpuByPid(): Map<string, number> {
  const seconds = new Map<string, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return seconds;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields?.comm === 'postgres') seconds.set(entry, (fields.cpuTicks + fields.reapedChildrenTicks) / ticksPerSecond);
  }
  return seconds;
}

/** CPU seconds Postgres processes spent between two readings. A process that started meanwhile counts from zero;
 * one that exited meanwhile is in the postmaster's reaped-children figure with all it ever used, so its first
 * reading is subtracted: the totals' difference. */
export function postgresCpuBetween(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const seconds of after.values()) total += seconds;
  for (const seconds of before.values()) total -= seconds;
  return total;
}

/** CPU seconds of this process's children that exited and were waited for (pgbench's client, run by execFile). */
export function exitedChildrenCpuSeconds(): number {
  const fields = statFields(process.pid);
  return fields ? fields.reapedChildrenTicks / ticksPerSecond : Number.NaN;
}

/** Busy CPU seconds of the whole machine (every core, every process) from /proc/stat. */
export function machineBusyCpuSeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // cpu user nice system idle iowait irq softirq steal …: busy is everything but idle and iowait.
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

export interface CpuBreakdown {
  /** Cores used on average over the window by each party. `postgres` is every Postgres process on the machine,
   * other databases' backends included. */
  readonly service: number;
  readonly postgres: number;
  readonly loadGenerator: number;
  /** The bench's child processes that ended inside the window: pgbench's client in a pgbench round. */
  readonly exitedChildren: number;
  /** Every process on the machine, these three included: what is left of the cores is idle. */
  readonly machine: number;
}

/** Starts a window; `end()` answers the average cores each party used during it. */
export function cpuWindow(servicePid: number): { end(): CpuBreakdown } {
  const startedAt = performance.now();
  const service = processCpuSeconds(servicePid);
  const postgres = postgresCpuByPid();
  const self = process.cpuUsage();
  const children = exitedChildrenCpuSeconds();
  const machine = machineBusyCpuSeconds();
  return {
    end() {
      const seconds = (performance.now() - startedAt) / 1000;
      const selfUsed = process.cpuUsage(self);
      return {
        service: (processCpuSeconds(servicePid) - service) / seconds,
        postgres: postgresCpuBetween(postgres, postgresCpuByPid()) / seconds,
        loadGenerator: (selfUsed.user + selfUsed.system) / 1e6 / seconds,
        exitedChildren: (exitedChildrenCpuSeconds() - children) / seconds,
        machine: (machineBusyCpuSeconds() - machine) / seconds,
      };
    },
  };
}

export const formatCpu = (cpu: CpuBreakdown) =>
  `cores used: service ${cpu.service.toFixed(2)}, postgres ${cpu.postgres.toFixed(2)}, load generator ${cpu.loadGenerator.toFixed(2)}` +
  `${cpu.exitedChildren > 0 ? `, pgbench client ${cpu.exitedChildren.toFixed(2)}` : ''}, whole machine ${cpu.machine.toFixed(2)}`;
