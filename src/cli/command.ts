// What every `svc` command is made of: its name, its usage text and options (so `svc <command> --help` and a
// wrong option both print that command's own usage), and the helpers commands share.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { Database } from '../infra/database.ts';
import { fileErrorReason } from '../infra/directories.ts';
import { migrate } from '../infra/migrate.ts';
import { openCliConnection } from './database-connection.ts';
import { closestMatches, didYouMean } from './suggestions.ts';

/** A wrong command line: exit 2 with the usage of the command (or of `svc`, or of a group of commands). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
    /** Known words close to a mistyped one (commands or options), for "did you mean". */
    readonly suggestions: readonly string[] = [],
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export type OptionSpec = { type: 'string' } | { type: 'boolean' };
export type Options = Record<string, string | boolean | undefined>;

export interface Invocation {
  readonly options: Options;
  readonly json: boolean;
  readonly config: Config;
}

export interface CliCommand {
  /** The words that select it: `ledger verify`. */
  readonly name: string;
  /** One line for the command list of `svc --help`. */
  readonly summary: string;
  /** The synopsis after `svc <name>`: `--tenant-id ID [--json]`. */
  readonly synopsis: string;
  /** One line per option, and any notes, shown by `svc <name> --help`. */
  readonly details: readonly string[];
  /** Its options besides `--json` and `--help`, which every command takes. */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** The name of the one word the command takes besides its options (`svc receipt verify FILE`): it arrives as
   * `options[positional]`. Commands without it refuse stray words. */
  readonly positional?: string;
  run(invocation: Invocation): Promise<void>;
}

export function usageOf(command: CliCommand): string {
  return [`usage: svc ${command.name} ${command.synopsis}`, '', command.summary, ...(command.details.length ? ['', ...command.details] : [])].join('\n');
}

/** Parses the arguments after the command's name strictly, saying in our words what is wrong: an unknown option
 * (with the closest known ones), an option without its value, a value given to a switch, a stray word. */
export function parseCommandLine(command: CliCommand, argv: string[]): { options: Options; json: boolean; help: boolean } {
  const specs: Record<string, OptionSpec> = { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean' } };
  const refuse = (message: string, suggestions: readonly string[] = []) => new UsageError(message, usageOf(command), suggestions);
  // Parsed loosely for its tokens, then judged here: Node's strict mode words its refusals for programmers.
  const { tokens } = parseArgs({ args: argv, options: specs, strict: false, allowPositionals: true, tokens: true });
  const options: Options = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const name = token.rawName === '-h' ? 'help' : token.name;
    const spec = token.rawName.startsWith('--') || name === 'help' ? specs[name] : undefined;
    if (spec === undefined) {
      const known = Object.keys(specs).map((option) => `--${option}`);
      const matches = closestMatches(token.rawName, known);
      throw refuse(`unknown option ${token.rawName}${didYouMean(matches, (word) => word)}`, matches);
    }
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw refuse(`--${name} takes no value`);
      options[name] = true;
      continue;
    }
    // A word that starts with a dash is taken for the next option, not for this one's value (`--tenant-id --json`);
    // such a value can still be given as `--name=-value`.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      throw refuse(`--${name} needs a value (one that starts with a dash is written --${name}=-…)`);
    }
    options[name] = token.value;
  }
  if (command.positional === undefined && positionals.length > 0) throw refuse(`unexpected argument "${positionals[0]}"`);
  if (positionals.length > 1) throw refuse(`only one ${command.positional} is taken, got ${positionals.length}`);
  if (command.positional !== undefined && positionals.length === 1) options[command.positional] = positionals[0];
  const json = options['json'] === true;
  const help = options['help'] === true;
  delete options['json'];
  delete options['help'];
  return { options, json, help };
}

/** The text of a file named on the command line; one that cannot be read is a wrong command line, said in one
 * line (`cannot read --bundle /x: no such file or directory (ENOENT)`), not the file system's raw error. */
export function readInputFile(command: CliCommand, label: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${label} ${file}: ${fileErrorReason(error)}`, usageOf(command));
  }
}

export function requiredOption(command: CliCommand, options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`, usageOf(command));
  return value;
}

export function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** Opens the database, brings it up to date, runs `work`, and closes everything. */
export async function withDatabase<T>(config: Config, work: (database: Database) => Promise<T>): Promise<T> {
  const cli = await openCliConnection(config);
  try {
    await migrate(cli.connection);
    const database = new Database({ ...cli.connection, max: 2 });
    try {
      return await work(database);
    } finally {
      await database.close();
    }
  } finally {
    await cli.close();
  }
}
