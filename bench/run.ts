// `npm run bench`: runs every entry and prints one table of figure, same-run baseline, ratio and target.
// Exits non-zero when an entry fails to run, after dropping the databases and stopping the processes it made
// (guard.ts); a missed target is reported, not fatal (machines are noisy). `--quick`: short smoke rounds (options.ts).
import type { BenchEntry, BenchRow } from './bench-row.ts';
import { run as events } from './events-bench.ts';
import { abortBench, installGuard } from './guard.ts';
import { run as lifecycle } from './lifecycle-bench.ts';
import { selectedEntries as only } from './options.ts';
import { run as predicate } from './predicate-bench.ts';
import { run as principal } from './principal-bench.ts';
import { run as receipts } from './receipts-bench.ts';
import { run as split } from './split-bench.ts';
import { run as signing } from './signing-bench.ts';
import { run as standing } from './standing-bench.ts';

const entries: Array<[string, BenchEntry]> = [
  ['principal', principal],
  ['predicate', predicate],
  ['signing', signing],
  ['lifecycle', lifecycle],
  ['receipts', receipts],
  ['split', split],
  ['events', events],
  ['standing', standing],
];

installGuard();
const rows: BenchRow[] = [];
for (const [name, entry] of entries) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`bench: running ${name}…\n`);
  rows.push(...(await entry().catch((error: unknown) => abortBench(error, name))));
}

const table = [
  ['entry', 'figure', 'baseline (same run)', 'ratio', 'target', 'met'],
  ...rows.map((row) => [row.entry, row.figure, row.baseline, row.ratio === null ? '—' : row.ratio.toFixed(2), row.target, row.met === null ? '—' : row.met ? 'yes' : 'NO']),
];
const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
for (const [index, line] of table.entries()) {
  process.stdout.write(`| ${line.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |\n`);
  if (index === 0) process.stdout.write(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |\n`);
}
