// Runs one `svc` command line: finds the command, parses its options, and turns every outcome into an exit code and
// at most a few lines on stderr. Exit codes: 0 success, 1 the operation failed, 2 the command line is wrong.
import { ConfigError, loadConfig } from '../config.ts';
import { ServiceError } from '../errors/service-error.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';
import { parseCommandLine, UsageError, usageOf, type CliCommand } from './command.ts';
import { cliCommands } from './commands/index.ts';

const commandColumnWidth = Math.max(...cliCommands.map((command) => command.name.length)) + 2;

export const overallUsage = [
  'usage: svc <command> [options]',
  '',
  'Commands:',
  ...cliCommands.map((command) => `  ${command.name.padEnd(commandColumnWidth)}${command.summary}`),
  '',
  '`svc <command> --help` shows a command\'s options.',
  'The database is DATABASE_SESSION_URL, else DATABASE_URL, else the embedded one in SVC_DATA_DIR (default ./data),',
  'also while the server runs.',
  'Exit codes: 0 success, 1 the operation failed, 2 the command line is wrong.',
].join('\n');

/** The command named by the leading words of `argv` (`ledger verify …`), and the arguments after its name. */
function findCommand(argv: string[]): { command: CliCommand; rest: string[] } | undefined {
  for (const command of cliCommands) {
    const words = command.name.split(' ');
    if (words.every((word, index) => argv[index] === word)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

async function dispatch(argv: string[]): Promise<void> {
  const [first] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    // `svc help ledger verify` is `svc ledger verify --help`.
    const named = first === 'help' ? findCommand(argv.slice(1)) : undefined;
    process.stdout.write(`${named ? usageOf(named.command) : overallUsage}\n`);
    return;
  }
  const found = findCommand(argv);
  if (!found) {
    const words = argv.filter((word) => !word.startsWith('-')).slice(0, 2).join(' ');
    throw new UsageError(`unknown command "${words}"`, overallUsage);
  }
  const { options, json, help } = parseCommandLine(found.command, found.rest);
  if (help) {
    process.stdout.write(`${usageOf(found.command)}\n`);
    return;
  }
  await found.command.run({ options, json, config: loadConfig() });
}

/** Runs `argv` (the words after `svc`) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await dispatch(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (thrown) {
    // A pure module's error (a signing or predicate refusal) is told as the API tells it: code and message.
    const error = asServiceError(thrown);
    if (error instanceof UsageError) {
      process.stderr.write(`svc: ${error.message}\n\n${error.usage}\n`);
      return 2;
    }
    if (error instanceof ServiceError) process.stderr.write(`svc: ${error.code}: ${error.message}\n`);
    else if (error instanceof ConfigError) process.stderr.write(`svc: ${error.message}\n`);
    else process.stderr.write(`svc: ${(error as Error).message}\n`);
    return 1;
  }
}
