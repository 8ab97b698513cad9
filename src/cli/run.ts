// Runs one `svc` command line: finds the command, parses its options, and turns every outcome into an exit code and
// at most a few lines on stderr (with --json, one JSON line on stdout instead). Exit codes: 0 success, 1 the
// operation failed, 2 the command line is wrong.
import { ConfigError, loadConfig } from '../config.ts';
import { ServiceError } from '../errors/service-error.ts';
import { EngineHttpError, SvcConfigurationError } from '../sdk/errors.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';
import { parseCommandLine, UsageError, usageOf, type CliCommand } from './command.ts';
import { cliCommands } from './commands/index.ts';
import { closestMatches, didYouMean } from './suggestions.ts';

const commandColumnWidth = Math.max(...cliCommands.map((command) => command.name.length)) + 2;
const commandLine = (command: CliCommand) => `  ${command.name.padEnd(commandColumnWidth)}${command.summary}`;

export const overallUsage = [
  'usage: svc <command> [options]',
  '',
  'Commands:',
  ...cliCommands.map(commandLine),
  '',
  '`svc <command> --help` shows a command\'s options.',
  'The database is DATABASE_SESSION_URL, else DATABASE_URL, else the embedded one in SVC_DATA_DIR (default ./data),',
  'also while the server runs.',
  'With --json, stdout carries one JSON line: the result, or {"error":{"code","message","details"}} on a failure.',
  'Exit codes: 0 success, 1 the operation failed, 2 the command line is wrong.',
].join('\n');

/** The first words of the commands named by two (`tenant` of `tenant create`): each answers its own --help. */
const groups: readonly string[] = [...new Set(cliCommands.filter((command) => command.name.includes(' ')).map((command) => command.name.split(' ')[0]!))];

function groupUsage(group: string): string {
  return [
    `usage: svc ${group} <command> [options]`,
    '',
    'Commands:',
    ...cliCommands.filter((command) => command.name.startsWith(`${group} `)).map(commandLine),
    '',
    `\`svc ${group} <command> --help\` shows a command's options.`,
  ].join('\n');
}

/** The command named by the leading words of `argv` (`ledger verify …`), and the arguments after its name. */
function findCommand(argv: string[]): { command: CliCommand; rest: string[] } | undefined {
  for (const command of cliCommands) {
    const words = command.name.split(' ');
    if (words.every((word, index) => argv[index] === word)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

/** What `svc <words>` should have been: commands within a typo of the words, or, for one word that is the second
 * word of commands (`svc verify`), those commands. */
function commandSuggestions(words: string[]): string[] {
  const names = cliCommands.map((command) => command.name);
  const typed = words.slice(0, 2).join(' ');
  const close = closestMatches(typed, [...names, ...groups]);
  if (close.length > 0 || words.length !== 1) return close;
  return names.filter((name) => name.split(' ')[1] === words[0]);
}

function unknownCommand(words: string[]): UsageError {
  const group = groups.includes(words[0]!) ? words[0]! : undefined;
  const suggestions = commandSuggestions(words);
  return new UsageError(`unknown command "${words.slice(0, 2).join(' ')}"${didYouMean(suggestions)}`, group ? groupUsage(group) : overallUsage, suggestions);
}

const isHelp = (word: string | undefined) => word === '--help' || word === '-h';

/** The usage page `svc help …`, `svc --help` or `svc <group> --help` asks for. */
function helpPage(words: string[]): string {
  if (words.length === 0) return overallUsage;
  const found = findCommand(words);
  if (found) return usageOf(found.command);
  if (words.length === 1 && groups.includes(words[0]!)) return groupUsage(words[0]!);
  throw unknownCommand(words);
}

async function dispatch(argv: string[]): Promise<void> {
  const [first] = argv;
  if (first === undefined || isHelp(first) || first === 'help') {
    // `svc help ledger verify` is `svc ledger verify --help`.
    process.stdout.write(`${helpPage(first === 'help' ? argv.slice(1) : [])}\n`);
    return;
  }
  const found = findCommand(argv);
  if (!found) {
    const firstOption = argv.findIndex((word) => word.startsWith('-'));
    const words = firstOption === -1 ? argv : argv.slice(0, firstOption);
    if (words.length === 1 && groups.includes(first)) {
      if (argv.slice(1).some(isHelp)) {
        process.stdout.write(`${groupUsage(first)}\n`);
        return;
      }
      throw new UsageError(`"svc ${first}" needs a command`, groupUsage(first));
    }
    throw unknownCommand(words.length > 0 ? words : [first]);
  }
  const { options, json, help } = parseCommandLine(found.command, found.rest);
  if (help) {
    process.stdout.write(`${usageOf(found.command)}\n`);
    return;
  }
  await found.command.run({ options, json, config: loadConfig() });
}

interface Failure {
  readonly exitCode: 1 | 2;
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown> | undefined;
  /** What follows the message on stderr without --json: the usage of a wrong command line. */
  readonly text?: string;
}

/** Every way a command can fail, as a code (the catalogue's where the operation answered one), a message and
 * details: one shape for the text and the JSON output. */
function failureOf(thrown: unknown): Failure {
  // A pure module's error (a signing or predicate refusal) is told as the API tells it: code and message.
  const error = asServiceError(thrown);
  if (error instanceof UsageError) {
    return { exitCode: 2, code: 'cli.usage', message: error.message, details: error.suggestions.length > 0 ? { did_you_mean: error.suggestions } : undefined, text: error.usage };
  }
  if (error instanceof ServiceError) return { exitCode: 1, code: error.code, message: error.message, details: error.details as Record<string, unknown> | undefined };
  if (error instanceof EngineHttpError && error.code) return { exitCode: 1, code: error.code, message: error.message, details: error.details };
  if (error instanceof ConfigError || error instanceof SvcConfigurationError) return { exitCode: 1, code: 'cli.configuration', message: error.message };
  return { exitCode: 1, code: 'cli.failed', message: (error as Error).message };
}

/** Runs `argv` (the words after `svc`) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await dispatch(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (thrown) {
    const failure = failureOf(thrown);
    // --json anywhere on the line, even one that could not be parsed: a script reads the failure as JSON too.
    if (argv.includes('--json')) {
      const body = { code: failure.code, message: failure.message, ...(failure.details ? { details: failure.details } : {}) };
      process.stdout.write(`${JSON.stringify({ error: body })}\n`);
      return failure.exitCode;
    }
    const prefix = failure.code.startsWith('cli.') ? '' : `${failure.code}: `;
    const details = failure.exitCode === 1 && failure.details ? `\n  details: ${JSON.stringify(failure.details)}` : '';
    process.stderr.write(`svc: ${prefix}${failure.message}${details}${failure.text ? `\n\n${failure.text}` : ''}\n`);
    return failure.exitCode;
  }
}
