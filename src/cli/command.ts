// What every `svc` command is made of: its name, its usage text and options (so `svc <command> --help` and a
// wrong option both print that command's own usage), and the helpers commands share.
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { Database } from '../infra/database.ts';
import { migrate } from '../infra/migrate.ts';
import { openCliConnection } from './database-connection.ts';

/** A wrong command line: exit 2 with the usage of the command (or of `svc`). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
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

/** Parses the arguments after the command's name strictly: an unknown option or a stray word is a UsageError. */
export function parseCommandLine(command: CliCommand, argv: string[]): { options: Options; json: boolean; help: boolean } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: command.positional !== undefined,
      strict: true,
      options: { ...command.options, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    });
    if (positionals.length > 1) throw new Error(`only one ${command.positional} is taken, got ${positionals.length}`);
    const options: Options = command.positional !== undefined && positionals.length === 1 ? { ...values, [command.positional]: positionals[0] } : values;
    return { options, json: values.json === true, help: values.help === true };
  } catch (error) {
    // parseArgs names the offending option; the usage that follows says what the command takes.
    throw new UsageError((error as Error).message, usageOf(command));
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
