// The shape of one line of `npm run bench`: a figure, the baseline measured in the same run, and the target.
// A new row is one more object in an entry's answer; a new entry is one file exporting `run: BenchEntry` and one
// line in run.ts's `entries` (bench/README.md).

export interface BenchRow {
  /** What is measured, e.g. "principal GET (authenticated) vs bare Fastify". */
  readonly entry: string;
  /** The measured figure with its unit, e.g. "8 412 req/s (spread 3%)". */
  readonly figure: string;
  /** The baseline measured in the same run, with its unit. */
  readonly baseline: string;
  /** figure / baseline, or null where the target is not a ratio. */
  readonly ratio: number | null;
  /** The target in words, e.g. ">= 0.5". */
  readonly target: string;
  /** Whether the target is met; null for a row that is printed for the record and has no target. */
  readonly met: boolean | null;
}

export type BenchEntry = () => Promise<BenchRow[]>;
