// The failover drill (`npm run drill:failover`): brings up deploy/ha on this machine, runs the lifecycle load through
// the proxy across the replicas with the SDK, SIGKILLs the Postgres primary under that load (and, in the full drill,
// a service replica), then checks that nothing acknowledged was lost or done twice, that no request was answered 500,
// and that every ledger and transparency log is intact; prints the table and exits 1 on any broken promise.
//
//   npm run drill:failover                    the short drill (CI): one primary failover
//   npm run drill:failover -- --full          three primary failovers (Postgres killed, then the whole node, then
//                                             Postgres again) and one replica killed
//   options: --replicas N --clients N --tenants N --failovers N --replica-kills N --kill postgres|node|alternate
//            --settle S (load before each kill) --tail S (after the last) --mutation-deadline S --port-base P --keep
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HaCluster, runCli, type PrimaryKill } from './drill/cluster.ts';
import { checkEffects, checkTransparencyLog, describeUnacknowledged, verifyLedgers, waitExpiredRefunded, type TreeHead } from './drill/checks.ts';
import { LifecycleLoad, recordingFetch, type AnswerRecord, type DrillTenant } from './drill/load.ts';
import { failuresOf, formatReport, type AnswerCounts, type DrillResult } from './drill/report.ts';
import { classify, unplannedChanges, windowsOf, type EventMark } from './drill/windows.ts';

const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    replicas: { type: 'string' },
    clients: { type: 'string' },
    tenants: { type: 'string' },
    failovers: { type: 'string' },
    'replica-kills': { type: 'string' },
    kill: { type: 'string' },
    settle: { type: 'string' },
    tail: { type: 'string' },
    'mutation-deadline': { type: 'string' },
    'port-base': { type: 'string', default: '7500' },
    keep: { type: 'boolean', default: false },
  },
});

/** The short drill by default; `--full` the one docs/scaling.md reports. Any option overrides either. */
const preset = values.full
  ? { replicas: 3, clients: 8, tenants: 3, failovers: 3, replicaKills: 1, kill: 'alternate', settle: 10, tail: 10 }
  : { replicas: 2, clients: 4, tenants: 2, failovers: 1, replicaKills: 0, kill: 'postgres', settle: 5, tail: 5 };
const integer = (text: string | undefined, fallback: number, name: string, minimum = 0) => {
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isSafeInteger(value) || value < minimum) throw new Error(`--${name} must be an integer of at least ${minimum}`);
  return value;
};
const options = {
  replicas: integer(values.replicas, preset.replicas, 'replicas', 1),
  clients: integer(values.clients, preset.clients, 'clients', 1),
  tenants: integer(values.tenants, preset.tenants, 'tenants', 1),
  failovers: integer(values.failovers, preset.failovers, 'failovers'),
  replicaKills: integer(values['replica-kills'], preset.replicaKills, 'replica-kills'),
  kill: values.kill ?? preset.kill,
  settleMs: integer(values.settle, preset.settle, 'settle') * 1000,
  tailMs: integer(values.tail, preset.tail, 'tail') * 1000,
  mutationDeadlineMs: integer(values['mutation-deadline'], 120, 'mutation-deadline', 1) * 1000,
  portBase: integer(values['port-base'], 7500, 'port-base', 1024),
  keep: values.keep,
};
if (!['postgres', 'node', 'alternate'].includes(options.kill)) throw new Error('--kill must be postgres, node or alternate');
if (options.replicaKills > 0 && options.replicas < 2) throw new Error('killing a replica needs at least two (--replicas 2)');

/** How long the cluster may take to be whole again (three members, a synchronous standby, every replica ready). */
const recoveryTimeoutMs = 180_000;
/** How far ahead the deadline of the intents left for the maintenance sweeper lies when they are funded, just
 * before the first kill; and how long the sweeper (every 30 s in each replica) may take to refund them after. */
const expiringDeadlineSeconds = 15;
const sweeperWaitMs = 90_000;
/** A supervisor's pause before it starts a killed replica again. */
const replicaRestartDelayMs = 2_000;

type PlannedEvent = { kind: 'primary'; mode: PrimaryKill; number: number } | { kind: 'replica'; replica: number; number: number };

/** Primary kills with replica kills between them, from the first: P1, R1, P2, R2, … */
function plan(): PlannedEvent[] {
  const planned: PlannedEvent[] = [];
  for (let index = 0; index < Math.max(options.failovers, options.replicaKills); index += 1) {
    if (index < options.failovers) {
      const mode: PrimaryKill = options.kill === 'alternate' ? (index % 2 === 0 ? 'postgres' : 'node') : (options.kill as PrimaryKill);
      planned.push({ kind: 'primary', mode, number: index + 1 });
    }
    if (index < options.replicaKills) planned.push({ kind: 'replica', replica: (index % options.replicas) + 1, number: index + 1 });
  }
  return planned;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (text: string) => process.stderr.write(`== drill: ${text}\n`);

async function createTenants(cluster: HaCluster): Promise<DrillTenant[]> {
  const tenants: DrillTenant[] = [];
  for (let index = 1; index <= options.tenants; index += 1) {
    const created = JSON.parse(await runCli(cluster, ['tenant', 'create', '--tenant-id', `drill-${index}`, '--environment', 'sandbox', '--json'])) as { api_key: string };
    tenants.push({ tenantId: `drill-${index}`, apiKey: created.api_key });
  }
  return tenants;
}

/** Polls each tenant's latest signed tree head once a second, as an auditor would, keeping every head seen. */
function watchTreeHeads(cluster: HaCluster, tenants: readonly DrillTenant[], answers: AnswerRecord[]): { heads: Map<string, TreeHead[]>; stop(): void } {
  const heads = new Map(tenants.map((tenant) => [tenant.tenantId, [] as TreeHead[]]));
  const fetchRecorded = recordingFetch(answers);
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void Promise.all(tenants.map(async (tenant) => {
      try {
        const response = await fetchRecorded(`${cluster.serviceUrl}/harbor/ledger/v1/merkle/latest`, { method: 'GET', headers: { authorization: `Bearer ${tenant.apiKey}` } });
        if (response.ok) heads.get(tenant.tenantId)!.push((await response.json()) as TreeHead);
      } catch {
        // Recorded as no answer; the next poll tries again.
      }
    })).finally(() => {
      busy = false;
    });
  }, 1_000);
  return { heads, stop: () => clearInterval(timer) };
}

async function runEvent(cluster: HaCluster, event: PlannedEvent): Promise<EventMark> {
  if (event.kind === 'replica') {
    const atMs = cluster.killReplica(event.replica);
    say(`replica kill ${event.number}: svc${event.replica} SIGKILLed; restarting it in ${replicaRestartDelayMs / 1000} s`);
    await sleep(replicaRestartDelayMs);
    await cluster.restartReplica(event.replica);
    return { label: `replica kill ${event.number} (svc${event.replica})`, kind: 'replica', atMs };
  }
  const { killed, syncStandby, killedAtMs } = await cluster.killPrimary(event.mode);
  say(`primary kill ${event.number}: ${killed} (${event.mode === 'node' ? 'Patroni and Postgres' : 'Postgres'}) SIGKILLed; synchronous standby was ${syncStandby}`);
  const mark: EventMark = { label: `primary kill ${event.number} (${event.mode === 'node' ? 'node' : 'Postgres'} of ${killed})`, kind: 'primary', atMs: killedAtMs };
  const next = await cluster.waitNewLeader(killed, 90_000);
  if (next) {
    mark.promotedAfterMs = next.atMs - killedAtMs;
    mark.promoted = next.name;
    mark.promotedWasSyncStandby = next.name === syncStandby;
    say(`${next.name} leads after ${(mark.promotedAfterMs / 1000).toFixed(1)} s`);
  }
  // A dead node comes back when its machine does; Patroni alone restarts a Postgres it still runs beside.
  if (event.mode === 'node') await cluster.restartNode(killed);
  return mark;
}

async function drill(cluster: HaCluster): Promise<DrillResult> {
  const drillErrors: string[] = [];
  const unexpectedDeaths: string[] = [];
  const leaderChanges: { to: string; atMs: number }[] = [];
  let lastLeader: string | undefined;
  cluster.watch({
    onUnexpectedDeath: (replica, atMs, lastLog) => {
      unexpectedDeaths.push(`svc${replica} died at ${new Date(atMs).toISOString()}: ${lastLog}`);
      say(`svc${replica} died on its own (${lastLog}); restarting it, as a supervisor would`);
    },
    onLeaderChange: (_from, to, atMs) => {
      if (to === undefined || to === lastLeader) return;
      if (lastLeader !== undefined) leaderChanges.push({ to, atMs });
      lastLeader = to;
    },
  });

  say(`creating ${options.tenants} sandbox tenant(s)`);
  const tenants = await createTenants(cluster);
  say(`load: ${options.clients} clients through ${cluster.serviceUrl} (${cluster.replicas} replicas)`);
  const load = await LifecycleLoad.start({ baseUrl: cluster.serviceUrl, tenants, clients: options.clients, mutationDeadlineMs: options.mutationDeadlineMs });
  const heads = watchTreeHeads(cluster, tenants, load.answers);
  const loadStartedMs = Date.now();
  const marks: EventMark[] = [];
  let expiring: { tenantId: string; intentId: string; deadlineMs: number }[] = [];
  try {
    await sleep(options.settleMs);
    for (const event of plan()) {
      await cluster.waitHealthy(recoveryTimeoutMs);
      await sleep(options.settleMs);
      if (marks.length === 0) {
        expiring = await load.fundExpiring(expiringDeadlineSeconds);
        say(`funded ${expiring.length} intent(s) whose deadline passes ${expiringDeadlineSeconds} s from now, for the sweeper to refund after the kill`);
      }
      marks.push(await runEvent(cluster, event));
      if (marks.length === 1 && expiring.some((intent) => intent.deadlineMs <= marks[0]!.atMs)) {
        drillErrors.push('the expiring intents\' deadline passed before the first kill: the sweeper check would prove nothing about the switch');
      }
    }
    await cluster.waitHealthy(recoveryTimeoutMs);
    await sleep(options.tailMs);
  } catch (error) {
    drillErrors.push((error as Error).message);
  }
  say('stopping the load: each client finishes the intent it is on');
  await load.stop();
  const loadSeconds = (Date.now() - loadStartedMs) / 1000;
  heads.stop();
  cluster.stopWatching();
  await cluster.waitHealthy(recoveryTimeoutMs).catch((error: Error) => drillErrors.push(error.message));

  return checkAfterwards(cluster, { tenants, load, marks, expiring, loadSeconds, drillErrors, unexpectedDeaths, leaderChanges, treeHeads: heads.heads });
}

interface DrillRecords {
  readonly tenants: readonly DrillTenant[];
  readonly load: LifecycleLoad;
  readonly marks: readonly EventMark[];
  readonly expiring: readonly { tenantId: string; intentId: string }[];
  readonly loadSeconds: number;
  readonly drillErrors: string[];
  readonly unexpectedDeaths: readonly string[];
  readonly leaderChanges: readonly { to: string; atMs: number }[];
  readonly treeHeads: ReadonlyMap<string, TreeHead[]>;
}

/** Once the load has stopped and the cluster is whole: the checks, and the result they and the records make. */
async function checkAfterwards(cluster: HaCluster, records: DrillRecords): Promise<DrillResult> {
  const { tenants, load, marks, expiring } = records;
  say('checking: effects of every acknowledged mutation, svc ledger verify, transparency logs');
  const tenantIds = tenants.map((tenant) => tenant.tenantId);
  const sweeper = await waitExpiredRefunded(cluster.superuserDatabaseUrl, expiring, sweeperWaitMs);
  const effects = await checkEffects(cluster.superuserDatabaseUrl, tenantIds, load.acknowledgements);
  const ledgers = await verifyLedgers(cluster, tenantIds);
  const logs = [];
  for (const tenant of tenants) logs.push(await checkTransparencyLog(cluster, tenant.tenantId, tenant.apiKey, records.treeHeads.get(tenant.tenantId)!));

  const { steady, events } = windowsOf(marks, load);
  const sample = (kind: keyof AnswerCounts) => load.answers.filter((answer) => classify(answer) === kind).map((answer) => `${new Date(answer.atMs).toISOString()} ${answer.summary}`);
  return {
    configuration: `${cluster.replicas} replicas, ${options.clients} clients, ${options.tenants} tenants, ${options.failovers} primary kill(s) (${options.kill}), ` +
      `${options.replicaKills} replica kill(s); ${os.cpus().length} cores, load average ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}`,
    seconds: records.loadSeconds,
    steady,
    events,
    acknowledged: load.acknowledgements.length,
    lifecyclesCompleted: load.lifecyclesCompleted,
    lost: effects.lost,
    duplicated: effects.duplicated,
    abandoned: await describeUnacknowledged(cluster.superuserDatabaseUrl, load.abandoned),
    refused: await describeUnacknowledged(cluster.superuserDatabaseUrl, load.refused),
    serverErrorSamples: sample('serverErrors'),
    unavailableWithoutRetryAfterSamples: sample('unavailableWithoutRetryAfter'),
    unexpectedDeaths: records.unexpectedDeaths,
    unplannedLeaderChanges: unplannedChanges(records.leaderChanges, marks),
    sweeper: { expected: expiring.length, ...sweeper },
    ledgers,
    logs,
    drillErrors: records.drillErrors,
  };
}

const dir = mkdtempSync(join(os.tmpdir(), 'svc-ha-drill.'));
say(`bringing up the cluster in ${dir} (ports from ${options.portBase})`);
const startedMs = Date.now();
const cluster = await HaCluster.up({ dir, replicas: options.replicas, portBase: options.portBase }).catch((error: Error) => {
  // cluster.sh has taken down whatever it had started, and said why; its files stay with --keep only.
  say(`the cluster did not come up: ${error.message}${options.keep ? ` (its files: ${dir})` : ''}`);
  if (!options.keep) rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
say(`up in ${((Date.now() - startedMs) / 1000).toFixed(0)} s`);
let stopping = false;
const takeDown = async () => {
  if (stopping) return;
  stopping = true;
  await cluster.down(options.keep).catch((error: Error) => say(`taking the cluster down failed: ${error.message} (deploy/ha/cluster.sh down --dir ${dir})`));
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: taking the cluster down`);
    void takeDown().finally(() => process.exit(130));
  });
}
let result: DrillResult | undefined;
try {
  result = await drill(cluster);
} finally {
  await takeDown();
}
process.stdout.write(`${formatReport(result)}\n`);
say(`done in ${((Date.now() - startedMs) / 1000).toFixed(0)} s`);
process.exitCode = failuresOf(result).length === 0 ? 0 : 1;
