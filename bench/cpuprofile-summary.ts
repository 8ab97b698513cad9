// Summarises a V8 `.cpuprofile` (node --cpu-prof): self time by function and file, inclusive time of the project's own
// functions, and the time of each subsystem (our plugins, routes, engine, signing; the pg client, pino, ajv,
// fast-json-stringify, Fastify core, node's HTTP), as shares of the busy (non-idle) samples. A window (µs of the
// monotonic clock the profile's timestamps use) keeps start-up and warm-up out of the figures.
//   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top] [fromUs toUs]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Which samples count: those taken between two readings of the monotonic clock, in µs (`process.hrtime`). */
export interface SampleWindow {
  readonly fromUs: number;
  readonly toUs: number;
}

export interface ProfileEntry {
  readonly name: string;
  readonly ms: number;
  /** Share of the busy samples, in percent. */
  readonly percent: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly idleMs: number;
  readonly busyMs: number;
  readonly self: ProfileEntry[];
  /** Self time grouped by where the code lives (project, fastify, pg, node internals, GC, …). */
  readonly byArea: ProfileEntry[];
  /** Inclusive time of functions in the project's src/ (each sample counted once per function on its stack). */
  readonly inclusiveProject: ProfileEntry[];
  /** For the top native/internal self-time entries: who asked for them (the nearest caller in a package or src/). */
  readonly callers: Array<{ name: string; callers: ProfileEntry[] }>;
  /** Every busy sample charged to one subsystem: the innermost frame that belongs to one (natives and node's
   * internals are charged to whoever called them). Sums to the busy time. */
  readonly bySubsystem: ProfileEntry[];
  /** Inclusive time per subsystem: each sample counted once for every subsystem on its stack. */
  readonly subsystemInclusive: ProfileEntry[];
}

const projectRoot = fileURLToPath(new URL('../', import.meta.url));

function shortUrl(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (path.startsWith(projectRoot)) return path.slice(projectRoot.length);
  return path;
}

function nameOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const fn = functionName || '(anonymous)';
  if (!url) return fn;
  return `${fn} ${shortUrl(url)}:${lineNumber + 1}`;
}

function areaOf(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (!url) {
    if (functionName === '(garbage collector)' || functionName === '(program)' || functionName === '(idle)') return functionName;
    return '(native: V8 builtins, C++ bindings)';
  }
  const path = shortUrl(url);
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (inModules) return inModules[1]!;
  if (path.startsWith('node:')) return `node:${path.slice(5).split('/')[0]}`;
  if (path.startsWith('src/')) return `project ${path.split('/').slice(0, 2).join('/')}`;
  return path;
}

/** Packages by the subsystem they serve. */
const packageSubsystems: Record<string, string> = {
  pg: 'pg client', 'pg-protocol': 'pg client', 'pg-types': 'pg client', 'pg-pool': 'pg client', 'pg-int8': 'pg client',
  'postgres-array': 'pg client', 'postgres-bytea': 'pg client', 'postgres-date': 'pg client', 'postgres-interval': 'pg client',
  pino: 'pino', '@pinojs/redact': 'pino', 'sonic-boom': 'pino', 'pino-std-serializers': 'pino', 'quick-format-unescaped': 'pino',
  'safe-stable-stringify': 'pino', 'thread-stream': 'pino',
  ajv: 'ajv', 'ajv-formats': 'ajv', 'fast-uri': 'ajv', '@fastify/ajv-compiler': 'ajv', 'fast-deep-equal': 'ajv',
  'fast-json-stringify': 'fast-json-stringify', '@fastify/fast-json-stringify-compiler': 'fast-json-stringify',
  'json-schema-ref-resolver': 'fast-json-stringify', rfdc: 'fast-json-stringify',
  fastify: 'fastify core', 'find-my-way': 'fastify core', avvio: 'fastify core', 'light-my-request': 'fastify core',
  '@fastify/error': 'fastify core', '@fastify/proxy-addr': 'fastify core', '@fastify/forwarded': 'fastify core',
  'fast-querystring': 'fastify core', 'fast-decode-uri-component': 'fastify core', 'toad-cache': 'fastify core',
  'secure-json-parse': 'secure-json-parse', jose: 'jose (JWTs)', zod: 'zod (x402 schemas)', '@x402/core': 'zod (x402 schemas)',
  tsx: 'module loading', esbuild: 'module loading', 'get-tsconfig': 'module loading',
};

/** The subsystem a frame belongs to, or undefined for natives and node's internals (charged to their caller). */
function subsystemOf(node: ProfileNode): string | undefined {
  const { functionName, url } = node.callFrame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(program)') return '(program: V8 and native work outside JS)';
    // Code compiled at run time (ajv validators, fast-json-stringify serializers) has no URL; their names tell.
    if (/^validate\d*$/.test(functionName)) return 'ajv';
    return undefined;
  }
  const path = shortUrl(url);
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (inModules) return packageSubsystems[inModules[1]!] ?? `package ${inModules[1]}`;
  if (path.startsWith('node:')) {
    const module = path.slice(5);
    if (/^(_http|http|net|stream|internal\/(http|streams|stream_base|net|js_stream))/.test(module)) return 'node http/net/streams';
    if (/^internal\/modules/.test(module)) return 'module loading';
    return undefined;
  }
  if (path.startsWith('src/')) {
    const parts = path.split('/');
    if (parts[1] === 'plugins' || parts[1] === 'infra') return `src/${parts[1]}/${parts[2]}`;
    if (parts[1] === 'surfaces') return `src/surfaces/${parts[2]}`;
    return `src/${parts[1]}`;
  }
  return path;
}

function ranked(totals: Map<string, number>, busyMs: number, top: number): ProfileEntry[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, ms, percent: (ms / busyMs) * 100 }));
}

export function summarizeCpuProfile(path: string, top = 25, window?: SampleWindow): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callerTotals = new Map<string, Map<string, number>>();
  const subsystems = new Map<string, number>();
  const subsystemsInclusive = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  let atUs = profile.startTime;
  // timeDeltas[i] is the time before sample i; attributing it to sample i is what Chrome DevTools does.
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    atUs += profile.timeDeltas[index] ?? 0;
    if (window && (atUs < window.fromUs || atUs > window.toUs)) return;
    const node = byId.get(id)!;
    totalMs += ms;
    if (node.callFrame.functionName === '(idle)') {
      idleMs += ms;
      return;
    }
    const name = nameOf(node);
    self.set(name, (self.get(name) ?? 0) + ms);
    const area = areaOf(node);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    // The nearest frame outside node's internals: which package (or project function) the time was spent for.
    let caller = '(none)';
    for (let current = parentOf.get(id); current !== undefined; current = parentOf.get(current)) {
      const frame = byId.get(current)!;
      if (!frame.callFrame.url || frame.callFrame.url.startsWith('node:')) continue;
      const area = areaOf(frame);
      caller = area.startsWith('project ') ? nameOf(frame) : area;
      break;
    }
    let owner: string | undefined;
    const onStack = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
      const subsystem = subsystemOf(byId.get(current)!);
      if (subsystem === undefined) continue;
      owner ??= subsystem;
      onStack.add(subsystem);
    }
    owner ??= '(native with no JS caller)';
    subsystems.set(owner, (subsystems.get(owner) ?? 0) + ms);
    for (const subsystem of onStack) subsystemsInclusive.set(subsystem, (subsystemsInclusive.get(subsystem) ?? 0) + ms);
    const byCaller = callerTotals.get(name) ?? new Map<string, number>();
    byCaller.set(caller, (byCaller.get(caller) ?? 0) + ms);
    callerTotals.set(name, byCaller);
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
      const frame = byId.get(current)!;
      if (!frame.callFrame.url || !shortUrl(frame.callFrame.url).startsWith('src/')) continue;
      const frameName = nameOf(frame);
      if (seen.has(frameName)) continue;
      seen.add(frameName);
      inclusive.set(frameName, (inclusive.get(frameName) ?? 0) + ms);
    }
  });
  const busyMs = totalMs - idleMs;
  const selfRanked = ranked(self, busyMs, top);
  return {
    totalMs,
    idleMs,
    busyMs,
    self: selfRanked,
    byArea: ranked(areas, busyMs, top),
    inclusiveProject: ranked(inclusive, busyMs, top),
    callers: selfRanked.slice(0, 5).map((entry) => ({ name: entry.name, callers: ranked(callerTotals.get(entry.name)!, busyMs, 4) })),
    bySubsystem: ranked(subsystems, busyMs, 100),
    subsystemInclusive: ranked(subsystemsInclusive, busyMs, 100),
  };
}

export function formatSummary(summary: ProfileSummary): string {
  const lines = [
    `profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(summary.busyMs / 1000).toFixed(1)} s busy (${((summary.busyMs / summary.totalMs) * 100).toFixed(0)}%); shares below are of busy time`,
  ];
  const section = (title: string, entries: readonly ProfileEntry[]) => {
    lines.push('', title);
    for (const entry of entries) lines.push(`  ${entry.percent.toFixed(1).padStart(5)}%  ${entry.ms.toFixed(0).padStart(7)} ms  ${entry.name}`);
  };
  section('time by subsystem (innermost subsystem on the stack; natives charged to their caller)', summary.bySubsystem);
  section('inclusive time by subsystem (a sample counts for every subsystem on its stack)', summary.subsystemInclusive);
  section('self time by area', summary.byArea);
  section('self time by function', summary.self);
  section('inclusive time, project functions (src/)', summary.inclusiveProject);
  lines.push('', 'callers of the top self-time entries (nearest frame in a package or src/)');
  for (const { name, callers } of summary.callers) {
    lines.push(`  ${name}: ${callers.map((entry) => `${entry.name} ${entry.percent.toFixed(1)}%`).join(', ')}`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [path, top, fromUs, toUs] = process.argv.slice(2);
  if (!path) {
    console.error('usage: node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top] [fromUs toUs]');
    process.exit(2);
  }
  const window = fromUs && toUs ? { fromUs: Number(fromUs), toUs: Number(toUs) } : undefined;
  console.log(formatSummary(summarizeCpuProfile(path, top ? Number(top) : 25, window)));
}
