// `svc`: the operator CLI. Works on a fresh install before any API key exists, also while the server runs.
// Each command lives in src/cli/commands/ with its usage beside it; src/cli/run.ts finds and runs it.
import { main } from './run.ts';

process.exitCode = await main(process.argv.slice(2));
