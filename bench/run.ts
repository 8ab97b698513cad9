// `npm run bench`: runs every entry and prints one table of figure, same-run baseline, ratio and target.
// Exits non-zero when an entry fails to run; a missed target is reported, not fatal (machines are noisy).
import type { BenchEntry, BenchRow } from './bench-row.ts';
import { run as lifecycle } from './lifecycle-bench.ts';
import { run as predicate } from './predicate-bench.ts';
import { run as principal } from './principal-bench.ts';
import { run as signing } from './signing-bench.ts';

const entries: Array<[string, BenchEntry]> = [
  ['principal', principal],
  ['predicate', predicate],
  ['signing', signing],
  ['lifecycle', lifecycle],
];

const only = process.argv.slice(2);
const rows: BenchRow[] = [];
for (const [name, entry] of entries) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`bench: running ${name}…\n`);
  rows.push(...(await entry()));
}

const table = [
  ['entry', 'figure', 'baseline (same run)', 'ratio', 'target', 'met'],
  ...rows.map((row) => [row.entry, row.figure, row.baseline, row.ratio === null ? '—' : row.ratio.toFixed(2), row.target, row.met ? 'yes' : 'NO']),
];
const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
for (const [index, line] of table.entries()) {
  process.stdout.write(`| ${line.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |\n`);
  if (index === 0) process.stdout.write(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |\n`);
}
