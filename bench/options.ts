// Command-line and environment knobs shared by the bench entries.

/** `--quick` or BENCH_QUICK=1: one short round of each kind, to check that the instrument works (while developing,
 * on a shared machine). Its figures are smoke, not measurements: the rounds are too short and too few. */
export const quick = process.argv.includes('--quick') || process.env['BENCH_QUICK'] === '1';

/** The entries named on the command line (`npm run bench -- lifecycle`); flags are not entry names. */
export const selectedEntries = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
