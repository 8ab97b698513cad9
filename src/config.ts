// The service's configuration, read once from the environment and checked, so a typo fails at start
// with a message that names the variable instead of surfacing later as odd behaviour.
import path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  /** Postgres connection string; absent means the embedded database under `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** `DATABASE_SESSION_URL`: a connection string that keeps one server session per connection, for what needs a
   * session of its own (the migrations' advisory lock, the revocation listener's LISTEN), when `databaseUrl` leads
   * through a pooler in transaction mode (docs/deploy.md). Set, the pool keeps no session state on `databaseUrl`'s
   * connections (no statement prepared by name); absent, `databaseUrl` serves everything. */
  readonly databaseSessionUrl: string | undefined;
  /** Where embedded mode keeps its database and runtime files. */
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  /** The gateway signing key set as JSON (see docs/operations.md, "Gateway signing keys"); wins over the key file. */
  readonly signingKeysJson: string | undefined;
  /** A file holding the gateway signing key set; default `<dataDir>/signing-keys.json`, created on first start. */
  readonly signingKeyFile: string | undefined;
  /** `smtp://` or `smtps://` URL of the relay that sends sign-in codes; absent means the log and the local outbox. */
  readonly smtpUrl: string | undefined;
  /** The From address of sign-in mail. */
  readonly smtpFrom: string;
  /** Requests per minute one API key may make to authenticated routes, across all replicas. */
  readonly rateLimitPerMinute: number;
  /** Requests per minute one client address may make to public routes (health checks excluded), across all replicas. */
  readonly rateLimitPublicPerMinute: number;
  /** `redis://` or `rediss://` URL of the Redis that holds the rate-limit counters; absent means Postgres. */
  readonly redisUrl: string | undefined;
  /** `SVC_PUBLIC_URL`: the URL people and clients reach this service at (`https://svc.example.com`, no trailing slash),
   * used wherever an answer names one of our own pages (the device-login `verification_uri`, the agent card). Absent:
   * each answer uses the address its request came to (see publicBaseUrlOf). */
  readonly publicBaseUrl: string | undefined;
  /** `SVC_SECRETS_KEY`: 32 bytes in standard base64, the key that seals the live rails' secrets at rest
   * (docs/rails.md#live-rails). Absent: no secret can be stored. */
  readonly secretsKey: string | undefined;
  /** `SVC_METRICS_TOKEN`: the bearer token that GET /metrics requires (docs/operations.md "Metrics"). Absent: metrics
   * are off and /metrics answers 404. */
  readonly metricsToken: string | undefined;
  /** `SVC_METRICS_PORT`: a listener of its own for GET /metrics (the token required there too when set). Absent: none. */
  readonly metricsPort: number | undefined;
  /** `SVC_METRICS_HOST`: the address the metrics port listens on; absent: `127.0.0.1` (src/plugins/metrics.ts). */
  readonly metricsHost: string | undefined;
  /** `SVC_VALIDATE_RESPONSES=1`: check every JSON answer against its route contract and answer 500 on drift
   * (docs/api.md "Response validation"). For test and staging servers; off by default. */
  readonly validateResponses: boolean;
  /** `SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=1`: live tenants' webhook endpoints may name private, loopback and
   * link-local addresses, and plain http (docs/events.md#destinations). Off by default. */
  readonly webhookAllowPrivateDestinations: boolean;
  /** `SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS`: the deadline of one webhook delivery attempt (1000 to 60000); absent: 10 s. */
  readonly webhookAttemptTimeoutMs: number | undefined;
  /** `SVC_GROUP_COMMIT` (`on` or `off`), `SVC_GROUP_COMMIT_WINDOW_MS` and `SVC_GROUP_COMMIT_SIZE`: whether the engine's
   * commands of one tenant that arrive together commit in one transaction, how long at most one waits for others,
   * and how many at most share a group (docs/engine.md "Group commit"). */
  readonly groupCommit: GroupCommitConfig;
}

export interface GroupCommitConfig {
  readonly enabled: boolean;
  readonly windowMs: number;
  readonly groupSizeMax: number;
}

/** Group commit's defaults (docs/operations.md). */
export const groupCommitEnabledDefault = true;
export const groupCommitWindowMsDefault = 2;
export const groupCommitSizeDefault = 16;
const groupCommitWindowMsMax = 50;
const groupCommitSizeMax = 256;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Defaults of the two rate-limit policies (docs/operations.md "Rate limits"). */
export const rateLimitPerMinuteDefault = 600;
export const rateLimitPublicPerMinuteDefault = 120;
/** Largest configurable quota: far above anything one key can send, so "effectively unlimited" is expressible. */
const rateLimitPerMinuteMax = 1_000_000_000;

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = parseDatabaseUrl('DATABASE_URL', environment.DATABASE_URL);
  const databaseSessionUrl = parseDatabaseUrl('DATABASE_SESSION_URL', environment.DATABASE_SESSION_URL);
  if (databaseSessionUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError('DATABASE_SESSION_URL needs DATABASE_URL: it is the session route beside a pooled DATABASE_URL, not a database of its own');
  }
  return {
    databaseUrl,
    databaseSessionUrl,
    dataDir: path.resolve(nonEmpty(environment.SVC_DATA_DIR) ?? 'data'),
    host: nonEmpty(environment.HOST) ?? '127.0.0.1',
    port: parsePort(environment.PORT),
    logLevel: parseLogLevel(environment.LOG_LEVEL),
    signingKeysJson: nonEmpty(environment.SVC_SIGNING_KEYS),
    signingKeyFile: nonEmpty(environment.SVC_SIGNING_KEY_FILE),
    smtpUrl: parseSmtpUrl(environment.SMTP_URL),
    smtpFrom: parseSmtpFrom(environment.SMTP_FROM),
    rateLimitPerMinute: parseRateLimit('SVC_RATE_LIMIT_PER_MINUTE', environment.SVC_RATE_LIMIT_PER_MINUTE, rateLimitPerMinuteDefault),
    rateLimitPublicPerMinute: parseRateLimit('SVC_RATE_LIMIT_PUBLIC_PER_MINUTE', environment.SVC_RATE_LIMIT_PUBLIC_PER_MINUTE, rateLimitPublicPerMinuteDefault),
    redisUrl: parseRedisUrl(environment.REDIS_URL),
    publicBaseUrl: parsePublicBaseUrl(environment.SVC_PUBLIC_URL),
    secretsKey: parseSecretsKey(environment.SVC_SECRETS_KEY),
    metricsToken: parseMetricsToken(environment.SVC_METRICS_TOKEN),
    metricsPort: parseMetricsPort(environment.SVC_METRICS_PORT),
    metricsHost: nonEmpty(environment.SVC_METRICS_HOST),
    validateResponses: environment.SVC_VALIDATE_RESPONSES === '1',
    webhookAllowPrivateDestinations: parseFlag('SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS', environment.SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS),
    webhookAttemptTimeoutMs: parseWebhookAttemptTimeout(environment.SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS),
    groupCommit: {
      enabled: parseOnOff('SVC_GROUP_COMMIT', environment.SVC_GROUP_COMMIT, groupCommitEnabledDefault),
      windowMs: parseWholeNumber('SVC_GROUP_COMMIT_WINDOW_MS', environment.SVC_GROUP_COMMIT_WINDOW_MS, 0, groupCommitWindowMsMax, groupCommitWindowMsDefault),
      groupSizeMax: parseWholeNumber('SVC_GROUP_COMMIT_SIZE', environment.SVC_GROUP_COMMIT_SIZE, 1, groupCommitSizeMax, groupCommitSizeDefault),
    },
  };
}

/** `1` or `true` on, `0`, `false` or unset off; anything else is refused. */
function parseFlag(name: string, value: string | undefined): boolean {
  const text = nonEmpty(value)?.toLowerCase();
  if (text === undefined || text === '0' || text === 'false') return false;
  if (text === '1' || text === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${text}"`);
}

function parseWebhookAttemptTimeout(value: string | undefined): number | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(ms) || ms < 1_000 || ms > 60_000) throw new ConfigError(`SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS must be an integer from 1000 to 60000, got "${text}"`);
  return ms;
}

/** 32 bytes in standard base64; the message never repeats the value. */
export function parseSecretsKey(value: string | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || Buffer.from(text, 'base64').length !== 32) {
    throw new ConfigError('SVC_SECRETS_KEY must be 32 bytes in standard base64 (e.g. the output of `openssl rand -base64 32`)');
  }
  return text;
}

/** Shortest metrics token: 32 characters of the token alphabet carry at least 192 bits from a random generator. */
export const metricsTokenLengthMin = 32;
/** Longest metrics token: far more than any generator's output, and well within one header line. */
const metricsTokenLengthMax = 512;

/** A bearer token (RFC 6750 token68 characters) of metricsTokenLengthMin to metricsTokenLengthMax characters; the
 * message never repeats the value. */
export function parseMetricsToken(value: string | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  if (!/^[A-Za-z0-9._~+/-]+=*$/.test(text) || text.length < metricsTokenLengthMin || text.length > metricsTokenLengthMax) {
    throw new ConfigError(
      `SVC_METRICS_TOKEN must be ${metricsTokenLengthMin} to ${metricsTokenLengthMax} characters of A-Z a-z 0-9 . _ ~ + / - (e.g. the output of \`openssl rand -hex 32\`)`,
    );
  }
  return text;
}

function parseMetricsPort(value: string | undefined): number | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new ConfigError(`SVC_METRICS_PORT must be an integer from 1 to 65535, got "${text}"`);
  return port;
}

/** `http(s)://host[:port][/path]` without user info, query or fragment; returned without a trailing slash. */
export function parsePublicBaseUrl(value: string | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const plain = url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '' &&
    url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  if (!plain) throw new ConfigError(`SVC_PUBLIC_URL must be an http:// or https:// URL without user info, query or fragment, got "${text}"`);
  return url!.href.replace(/\/+$/, '');
}

/** The public base URL of an answer: the configured one, else the scheme and Host of the request it answers (right
 * for local use; behind a proxy that rewrites Host, set SVC_PUBLIC_URL). */
export function publicBaseUrlOf(configured: string | undefined, request: { readonly protocol: string; readonly host: string }): string {
  return configured ?? `${request.protocol}://${request.host}`;
}

/** A Postgres connection string; the message never repeats the value, which may carry a password. */
function parseDatabaseUrl(name: string, value: string | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text !== undefined && !/^postgres(ql)?:\/\//.test(text)) throw new ConfigError(`${name} must be a postgres:// or postgresql:// connection string`);
  return text;
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

function parseOnOff(name: string, value: string | undefined, fallback: boolean): boolean {
  const text = nonEmpty(value);
  if (text === undefined) return fallback;
  if (text !== 'on' && text !== 'off') throw new ConfigError(`${name} must be "on" or "off", got "${text}"`);
  return text === 'on';
}

function parseWholeNumber(name: string, value: string | undefined, min: number, max: number, fallback: number): number {
  const text = nonEmpty(value);
  if (text === undefined) return fallback;
  const number = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  return number;
}

function parseRateLimit(name: string, value: string | undefined, fallback: number): number {
  const text = nonEmpty(value);
  if (text === undefined) return fallback;
  const quota = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(quota) || quota < 1 || quota > rateLimitPerMinuteMax) {
    throw new ConfigError(`${name} must be an integer from 1 to ${rateLimitPerMinuteMax}, got "${text}"`);
  }
  return quota;
}

/** The default From of sign-in mail; most relays want an address of a domain they may send for (set SMTP_FROM). */
export const smtpFromDefault = 'svc <no-reply@localhost>';

/** A service URL that may carry a password: checked for its scheme and host, and never repeated in the error. */
function parseServiceUrl(value: string | undefined, rule: { protocols: readonly string[]; message: string }): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || !rule.protocols.includes(url.protocol) || url.hostname === '') throw new ConfigError(rule.message);
  return text;
}

const parseSmtpUrl = (value: string | undefined) =>
  parseServiceUrl(value, { protocols: ['smtp:', 'smtps:'], message: 'SMTP_URL must be an smtp:// or smtps:// URL with a host (smtp://user:pass@host:587)' });

const parseRedisUrl = (value: string | undefined) =>
  parseServiceUrl(value, { protocols: ['redis:', 'rediss:'], message: 'REDIS_URL must be a redis:// or rediss:// URL with a host (redis://user:pass@host:6379/0)' });

function parseSmtpFrom(value: string | undefined): string {
  const text = nonEmpty(value);
  if (text === undefined) return smtpFromDefault;
  // An address, or a display name and an address in angle brackets; no line breaks (header injection).
  if (!/^(?:[^<>\r\n]*<[^@\s<>]+@[^@\s<>]+>|[^@\s<>]+@[^@\s<>]+)$/.test(text)) {
    throw new ConfigError(`SMTP_FROM must be an address or "Name <address>", got "${text}"`);
  }
  return text;
}

function parseLogLevel(value: string | undefined): LogLevel {
  const text = nonEmpty(value)?.toLowerCase() ?? 'info';
  if (!(logLevels as readonly string[]).includes(text)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${text}"`);
  }
  return text as LogLevel;
}
