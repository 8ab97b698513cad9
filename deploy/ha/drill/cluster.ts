// The drill's hold on the one-machine cluster of deploy/ha/cluster.sh: brings it up and down through the script,
// reads Patroni's view of it, kills by pid (the Postgres primary alone, or its whole node; a service replica), and
// watches for what nobody killed: a replica that died on its own, a leader that changed unasked.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(repository, 'deploy/ha/cluster.sh');

export interface Member {
  readonly name: string;
  readonly role: string;
  readonly state: string;
  readonly timeline?: number;
  readonly lag?: number | string;
}

/** How a primary dies: its Postgres alone (Patroni lives on and hands over at once), or the whole node (Patroni and
 * Postgres together, as a machine dies: the leader's lease has to expire first). */
export type PrimaryKill = 'postgres' | 'node';

/** Runs cluster.sh with `args`, its output going to this process's stderr; rejects on a non-zero exit. */
function runScript(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(script, args, { cwd: repository, stdio: ['ignore', process.stderr, process.stderr] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`deploy/ha/cluster.sh ${args[0]} exited with ${code}`))));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pid in `file`, or undefined. */
function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` runs and is not a zombie. */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid` (a postmaster's backends and auxiliary processes). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export interface ClusterEvents {
  /** A replica died and the drill had not killed it: which, when, and the last lines it logged. */
  onUnexpectedDeath(replica: number, atMs: number, lastLog: string): void;
  onLeaderChange(from: string | undefined, to: string | undefined, atMs: number): void;
}

export class HaCluster {
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
  /** Replicas the drill killed and has not yet seen back: their death is expected. */
  readonly #killedReplicas = new Set<number>();
  #watcher: NodeJS.Timeout | undefined;
  #leader: string | undefined;

  private constructor(dir: string) {
    this.dir = dir;
    this.env = Object.fromEntries(
      readFileSync(join(dir, 'cluster.env'), 'utf8').split('\n').filter((line) => line.includes('=')).map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1).replace(/^"|"$/g, '')];
      }),
    );
  }

  static async up(options: { dir: string; replicas: number; portBase: number }): Promise<HaCluster> {
    await runScript(['up', '--dir', options.dir, '--replicas', String(options.replicas), '--port-base', String(options.portBase)]);
    return new HaCluster(options.dir);
  }

  async down(keep: boolean): Promise<void> {
    this.stopWatching();
    await runScript(['down', '--dir', this.dir, ...(keep ? ['--keep'] : [])]);
  }

  get replicas(): number {
    return Number(this.env['HA_REPLICAS']);
  }

  /** Where clients reach the service: HAProxy in front of the replicas. */
  get serviceUrl(): string {
    return `http://127.0.0.1:${this.env['HA_HTTP_PORT']}`;
  }

  /** The service role's session route (HAProxy to the primary), as DATABASE_SESSION_URL. */
  get sessionDatabaseUrl(): string {
    return `postgresql://svc:${this.env['HA_SERVICE_PASSWORD']}@127.0.0.1:${this.env['HA_PRIMARY_PORT']}/svc`;
  }

  /** The pooled route (PgBouncer), as DATABASE_URL. */
  get poolDatabaseUrl(): string {
    return `postgresql://svc:${this.env['HA_SERVICE_PASSWORD']}@127.0.0.1:${this.env['HA_PGBOUNCER_PORT']}/svc`;
  }

  /** The superuser on the primary: the drill's checks read every tenant's rows at once. */
  get superuserDatabaseUrl(): string {
    return `postgresql://postgres:${this.env['HA_SUPERUSER_PASSWORD']}@127.0.0.1:${this.env['HA_PRIMARY_PORT']}/svc`;
  }

  #restPorts(): number[] {
    return this.env['HA_REST_PORTS']!.split(' ').map(Number);
  }

  /** The members as the first Patroni node that answers sees them; empty when none answers. */
  async members(): Promise<Member[]> {
    for (const port of this.#restPorts()) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/cluster`, { signal: AbortSignal.timeout(1_500) });
        if (response.ok) return ((await response.json()) as { members: Member[] }).members;
      } catch {
        // That node is down; ask the next.
      }
    }
    return [];
  }

  async leader(): Promise<Member | undefined> {
    return (await this.members()).find((member) => member.role === 'leader' && member.state === 'running');
  }

  /** Waits until Patroni has a running leader, a synchronous standby, all three members running without lag, and
   * every replica answers /readyz itself. Throws, describing what it saw, after `timeoutMs`. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    for (;;) {
      const members = await this.members();
      seen = members.map((member) => `${member.name} ${member.role} ${member.state} lag ${member.lag ?? 0}`).join(', ');
      const healthy = members.filter((member) => member.role === 'leader' && member.state === 'running').length === 1 &&
        members.some((member) => member.role === 'sync_standby') &&
        members.filter((member) => (member.state === 'running' || member.state === 'streaming') && (member.lag ?? 0) === 0).length === 3;
      const leader = members.find((member) => member.role === 'leader')?.name;
      if (healthy && (await this.#primaryRouted()) === leader && (await this.#replicasReady())) return;
      if (Date.now() > deadline) throw new Error(`the cluster was not healthy within ${timeoutMs / 1000} s (${seen || 'no Patroni node answered'})`);
      await sleep(500);
    }
  }

  /** The one node HAProxy sends the primary port to (by its Patroni check), or undefined when it is not exactly one. */
  async #primaryRouted(): Promise<string | undefined> {
    try {
      const csv = await (await fetch(`http://127.0.0.1:${this.env['HA_STATS_PORT']}/;csv`, { signal: AbortSignal.timeout(2_000) })).text();
      const up = csv.split('\n').map((line) => line.split(',')).filter((fields) => fields[0] === 'postgres_primary' && !['FRONTEND', 'BACKEND'].includes(fields[1]!) && fields[17] === 'UP').map((fields) => fields[1]);
      return up.length === 1 ? up[0] : undefined;
    } catch {
      return undefined;
    }
  }

  async #replicasReady(): Promise<boolean> {
    for (let replica = 1; replica <= this.replicas; replica += 1) {
      const port = Number(this.env['HA_REPLICA_PORT_BASE']) + replica;
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false);
      if (!ready) return false;
    }
    return true;
  }

  #nodeDir(name: string): string {
    return join(this.dir, name);
  }

  /**
   * SIGKILLs the primary: its postmaster and every process of it (`postgres`), or Patroni too (`node`). Answers the
   * node killed and the synchronous standby at that moment, read just before.
   */
  async killPrimary(mode: PrimaryKill): Promise<{ killed: string; syncStandby: string | undefined; killedAtMs: number }> {
    const members = await this.members();
    const leader = members.find((member) => member.role === 'leader');
    if (!leader) throw new Error('no leader to kill');
    const syncStandby = members.find((member) => member.role === 'sync_standby')?.name;
    const postmaster = pidIn(join(this.#nodeDir(leader.name), 'data', 'postmaster.pid'));
    if (postmaster === undefined || !isAlive(postmaster)) throw new Error(`${leader.name}: no running postmaster`);
    const victims = [postmaster, ...childrenOf(postmaster)];
    if (mode === 'node') {
      const patroni = pidIn(join(this.#nodeDir(leader.name), 'patroni.pid'));
      if (patroni !== undefined) victims.unshift(patroni);
    }
    // Patroni first, so it cannot restart its Postgres between the kills.
    for (const pid of victims) killQuietly(pid);
    return { killed: leader.name, syncStandby, killedAtMs: Date.now() };
  }

  /** Waits for a running leader other than `previous`; answers it and when it was first seen, or undefined. */
  async waitNewLeader(previous: string, timeoutMs: number): Promise<{ name: string; atMs: number } | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const leader = await this.leader();
      if (leader && leader.name !== previous) return { name: leader.name, atMs: Date.now() };
      await sleep(200);
    }
    return undefined;
  }

  /** Starts a killed node's Patroni again; it rejoins as a standby (rewound or cloned). */
  async restartNode(name: string): Promise<void> {
    await runScript(['start-node', '--dir', this.dir, name.replace(/^node/, '')]);
  }

  replicaPid(replica: number): number | undefined {
    return pidIn(join(this.dir, 'service', `svc${replica}.pid`));
  }

  /** SIGKILLs service replica `replica`; the watcher will not count its death. */
  killReplica(replica: number): number {
    const pid = this.replicaPid(replica);
    if (pid === undefined || !isAlive(pid)) throw new Error(`svc${replica} is not running`);
    this.#killedReplicas.add(replica);
    killQuietly(pid);
    return Date.now();
  }

  /** Starts replica `replica` again, as a supervisor would, and waits until it answers /readyz. */
  async restartReplica(replica: number, timeoutMs = 120_000): Promise<void> {
    await runScript(['start-replica', '--dir', this.dir, String(replica)]);
    const port = Number(this.env['HA_REPLICA_PORT_BASE']) + replica;
    const deadline = Date.now() + timeoutMs;
    while (!(await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false))) {
      if (Date.now() > deadline) throw new Error(`svc${replica} did not answer /readyz within ${timeoutMs / 1000} s after its restart`);
      await sleep(500);
    }
    this.#killedReplicas.delete(replica);
  }

  /** Checks twice a second for replicas dead without being killed (restarting them, as a supervisor would, so the
   * load goes on) and for leader changes. */
  watch(events: ClusterEvents): void {
    let busy = false;
    const restarting = new Set<number>();
    this.#watcher = setInterval(() => {
      if (busy) return;
      busy = true;
      void (async () => {
        for (let replica = 1; replica <= this.replicas; replica += 1) {
          if (this.#killedReplicas.has(replica) || restarting.has(replica) || isAlive(this.replicaPid(replica))) continue;
          events.onUnexpectedDeath(replica, Date.now(), this.#lastLogLines(replica));
          restarting.add(replica);
          this.restartReplica(replica).catch(() => {}).finally(() => restarting.delete(replica));
        }
        const leader = (await this.leader())?.name;
        if (leader !== this.#leader) {
          events.onLeaderChange(this.#leader, leader, Date.now());
          this.#leader = leader;
        }
      })().finally(() => {
        busy = false;
      });
    }, 500);
  }

  stopWatching(): void {
    if (this.#watcher) clearInterval(this.#watcher);
    this.#watcher = undefined;
  }

  /** The last lines a replica logged, each cut short: enough to see why it died. */
  #lastLogLines(replica: number): string {
    const file = join(this.dir, 'service', `svc${replica}.log`);
    if (!existsSync(file)) return '(no log)';
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-3);
    return lines.map((line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        return `${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`;
      } catch {
        return line.slice(0, 200);
      }
    }).join(' | ');
  }
}

/** Runs the operator CLI (`bin/svc.js`) against the cluster; answers its stdout, or rejects with its stderr. */
export function runCli(cluster: HaCluster, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(repository, 'bin/svc.js'), ...args],
      { cwd: repository, env: { ...process.env, DATABASE_URL: cluster.poolDatabaseUrl, DATABASE_SESSION_URL: cluster.sessionDatabaseUrl }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error && stdout.trim() === '' ? reject(new Error(`svc ${args.join(' ')}: ${stderr.trim() || error.message}`)) : resolve(stdout)),
    );
  });
}
