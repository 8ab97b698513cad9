// Diagnostic: the service's own CPU per engine mutation, and Postgres's, from /proc, for one or more copies of the
// service side by side (A/B), in alternating closed-loop rounds of the lifecycle load (lifecycle-load.ts). One copy
// runs at a time, so the Postgres CPU of a round (every postgres process, background workers included) is that
// copy's. CPU time, not throughput, is what it compares, so that other work on the machine moves the figures less
// than it moves the rates.
//   node --import tsx bench/service-cpu.ts [root ...]
// Each root is a directory holding a copy of the repository's `src/` and `migrations/` (and a `node_modules` link);
// none given: this checkout. A root may name node flags for its service after `=`, space-separated:
// `/tmp/a=--max-semi-space-size=64` (the same root twice, with and without, measures a flag). BENCH_SERVICE_CPU_ROUNDS (4), BENCH_SERVICE_CPU_SECONDS (6), BENCH_SERVICE_CPU_WARMUP_SECONDS (15) and
// BENCH_SERVICE_CPU_CLIENTS (8) size it;
// BENCH_SERVICE_CPU_NODE_FLAGS adds node flags (`--perf-basic-prof`, for `perf record -p <pid>`), and
// BENCH_SERVICE_CPU_THREADS=1 splits each round's CPU by thread.
import { join, resolve } from 'node:path';
import { Database } from '../src/infra/database.ts';
import { createTenant } from '../src/services/tenant-service.ts';
import { createBenchDatabase } from './bench-database.ts';
import { abortBench, installGuard } from './guard.ts';
import { median } from './harness.ts';
import { closedLoop, EngineClient, IntentFactory, IntentPool, mutations } from './lifecycle-load.ts';
import { projectRoot } from './paths.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { machineBusyCpuSeconds, postgresCpuBetween, postgresCpuByPid, processCpuSeconds } from './proc-cpu.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const rounds = envNumber('BENCH_SERVICE_CPU_ROUNDS', 4);
const seconds = envNumber('BENCH_SERVICE_CPU_SECONDS', 6);
const clients = envNumber('BENCH_SERVICE_CPU_CLIENTS', 8);
/** Long enough for the JIT to finish: code still being compiled would count as the service's cost. */
const warmupSeconds = envNumber('BENCH_SERVICE_CPU_WARMUP_SECONDS', 15);

interface Variant {
  readonly root: string;
  readonly service: ServiceProcess;
  readonly client: EngineClient;
  readonly pool: IntentPool;
  readonly drop: () => Promise<void>;
  readonly perMutationMs: number[];
  readonly postgresPerMutationMs: number[];
  readonly rates: number[];
}

async function startVariant(argument: string): Promise<Variant> {
  const separator = argument.indexOf('=');
  const root = resolve(separator === -1 ? argument : argument.slice(0, separator));
  const flags = `${process.env['BENCH_SERVICE_CPU_NODE_FLAGS'] ?? ''} ${separator === -1 ? '' : argument.slice(separator + 1)}`;
  const database = await createBenchDatabase();
  const service = await startServiceProcess(
    { DATABASE_URL: database.url, SVC_RATE_LIMIT_PER_MINUTE: '1000000000' },
    flags.split(' ').filter((flag) => flag !== ''),
    join(root, 'src/server.ts'),
  );
  const db = new Database({ connectionString: database.url, max: 1 });
  const { tenant, adminKey } = await createTenant(db, 'bench', 'sandbox');
  await db.close();
  const pool = new IntentPool(new IntentFactory([{ tenantId: tenant.tenantId, apiKey: adminKey.apiKey }]));
  const drop = async () => {
    await service.stop();
    await database.drop();
  };
  return { root: argument, service, client: new EngineClient(service.baseUrl, clients), pool, drop, perMutationMs: [], postgresPerMutationMs: [], rates: [] };
}

/** CPU seconds of each thread of `pid`, by thread id and name (the main thread's id is the pid). */
function threadCpuSeconds(pid: number): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    seconds.set(`${task === String(pid) ? 'main' : task} ${name}`, (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return seconds;
}

/** The most memory `pid` has held resident so far (VmHWM), in MB. */
function peakResidentMegabytes(pid: number): string {
  const peak = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return peak ? (Number(peak[1]) / 1024).toFixed(0) : '?';
}

/** User and system CPU seconds of `pid`, every thread. */
function userSystemSeconds(pid: number): [number, number] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]) / 100, Number(fields[12]) / 100];
}

/** One closed-loop round: service CPU over every mutation it finished (stragglers after the window included). */
async function round(variant: Variant, windowSeconds: number): Promise<{ perMutationMs: number; postgresPerMutationMs: number; rate: number; machineCores: number }> {
  variant.pool.ensure(Math.ceil(windowSeconds * 250) + clients * 2);
  const cpuBefore = processCpuSeconds(variant.service.pid);
  const threadsBefore = threadCpuSeconds(variant.service.pid);
  const userSystemBefore = userSystemSeconds(variant.service.pid);
  const machineBefore = machineBusyCpuSeconds();
  const postgresBefore = postgresCpuByPid();
  const startedAt = performance.now();
  const sample = await closedLoop(variant.client, variant.pool, { clients, seconds: windowSeconds });
  const elapsed = (performance.now() - startedAt) / 1000;
  const cpu = processCpuSeconds(variant.service.pid) - cpuBefore;
  const postgresCpu = postgresCpuBetween(postgresBefore, postgresCpuByPid());
  const machineCores = (machineBusyCpuSeconds() - machineBefore) / elapsed;
  if (process.env['BENCH_SERVICE_CPU_THREADS']) {
    const [user, system] = userSystemSeconds(variant.service.pid);
    process.stderr.write(`  user ${(((user - userSystemBefore[0]) * 1000) / sample.finished).toFixed(3)}, system ${(((system - userSystemBefore[1]) * 1000) / sample.finished).toFixed(3)} ms per mutation\n`);
    const threads = [...threadCpuSeconds(variant.service.pid)].map(([name, value]) => [name, value - (threadsBefore.get(name) ?? 0)] as const);
    process.stderr.write(`  threads (ms per mutation): ${threads.filter(([, value]) => value > 0).map(([name, value]) => `${name} ${((value * 1000) / sample.finished).toFixed(3)}`).join(', ')}\n`);
  }
  if (sample.errors.length > 0) {
    throw new Error(`${variant.root}: ${sample.errors.slice(0, 3).join(' | ')}\nthe service printed last:\n${variant.service.output().slice(-3000)}`);
  }
  if (sample.exhausted) throw new Error(`${variant.root}: ran out of signed intents`);
  return { perMutationMs: (cpu * 1000) / sample.finished, postgresPerMutationMs: (postgresCpu * 1000) / sample.finished, rate: sample.mutationsPerSecond, machineCores };
}

async function main(): Promise<void> {
  const roots = process.argv.slice(2);
  if (roots.length === 0) roots.push(projectRoot);
  const variants: Variant[] = [];
  try {
    for (const root of roots) variants.push(await startVariant(root));
    process.stderr.write(`  service pids: ${variants.map((variant) => `${variant.root} ${variant.service.pid}`).join(', ')}\n`);
    for (const variant of variants) await round(variant, warmupSeconds);
    for (let index = 0; index < rounds; index += 1) {
      // Alternating order, so that neither side always runs after the other.
      const order = index % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const measured = await round(variant, seconds);
        variant.perMutationMs.push(measured.perMutationMs);
        variant.postgresPerMutationMs.push(measured.postgresPerMutationMs);
        variant.rates.push(measured.rate);
        process.stderr.write(
          `  round ${index + 1} ${variant.root}: ${measured.perMutationMs.toFixed(3)} ms service CPU per mutation, ` +
            `${measured.postgresPerMutationMs.toFixed(3)} ms Postgres, ` +
            `${measured.rate.toFixed(0)} mutations/s, machine ${measured.machineCores.toFixed(2)} cores busy\n`,
        );
      }
    }
    for (const variant of variants) {
      const figures = variant.perMutationMs.map((value) => value.toFixed(3)).join(', ');
      const postgresFigures = variant.postgresPerMutationMs.map((value) => value.toFixed(3)).join(', ');
      console.log(`${variant.root}: median ${median(variant.perMutationMs).toFixed(3)} ms service CPU per mutation (${figures}); ` +
        `median ${median(variant.postgresPerMutationMs).toFixed(3)} ms Postgres CPU per mutation (${postgresFigures}); ` +
        `${median(variant.rates).toFixed(0)} mutations/s; ${clients} clients, ${mutations.length} mutations per intent; ` +
        `peak resident memory ${peakResidentMegabytes(variant.service.pid)} MB`);
    }
  } finally {
    for (const variant of variants) {
      variant.client.close();
      await variant.drop();
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installGuard();
  await main().catch((error: unknown) => abortBench(error));
}
