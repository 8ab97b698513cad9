// The service's configuration, read once from the environment and checked, so a typo fails at start
// with a message that names the variable instead of surfacing later as odd behaviour.
import path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  /** Postgres connection string; absent means the embedded database under `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** Where embedded mode keeps its database and runtime files. */
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  /** The gateway signing key set as JSON (see docs/signing-keys.md); wins over the key file. */
  readonly signingKeysJson: string | undefined;
  /** A file holding the gateway signing key set; default `<dataDir>/signing-keys.json`, created on first start. */
  readonly signingKeyFile: string | undefined;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = nonEmpty(environment.DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// connection string');
  }
  return {
    databaseUrl,
    dataDir: path.resolve(nonEmpty(environment.SVC_DATA_DIR) ?? 'data'),
    host: nonEmpty(environment.HOST) ?? '127.0.0.1',
    port: parsePort(environment.PORT),
    logLevel: parseLogLevel(environment.LOG_LEVEL),
    signingKeysJson: nonEmpty(environment.SVC_SIGNING_KEYS),
    signingKeyFile: nonEmpty(environment.SVC_SIGNING_KEY_FILE),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function parsePort(value: string | undefined): number {
  const text = nonEmpty(value);
  if (text === undefined) return 8080;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${text}"`);
  }
  return port;
}

function parseLogLevel(value: string | undefined): LogLevel {
  const text = nonEmpty(value)?.toLowerCase() ?? 'info';
  if (!(logLevels as readonly string[]).includes(text)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${text}"`);
  }
  return text as LogLevel;
}
