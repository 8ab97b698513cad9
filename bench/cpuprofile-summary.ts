// Summarises a V8 `.cpuprofile` (node --cpu-prof): self time by function and file, and inclusive time of the
// project's own functions, as shares of the busy (non-idle) samples.
//   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
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

function ranked(totals: Map<string, number>, busyMs: number, top: number): ProfileEntry[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, ms, percent: (ms / busyMs) * 100 }));
}

export function summarizeCpuProfile(path: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callerTotals = new Map<string, Map<string, number>>();
  let totalMs = 0;
  let idleMs = 0;
  // timeDeltas[i] is the time before sample i; attributing it to sample i is what Chrome DevTools does.
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
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
  const [path, top] = process.argv.slice(2);
  if (!path) {
    console.error('usage: node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(formatSummary(summarizeCpuProfile(path, top ? Number(top) : 25)));
}
