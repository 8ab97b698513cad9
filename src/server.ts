// The only file that starts a server: reads configuration, opens the database (embedded when DATABASE_URL is
// unset), applies migrations, serves, and shuts down gracefully on SIGINT/SIGTERM.
import closeWithGrace from 'close-with-grace';
import { app } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { shutdownGraceMs } from './limits.ts';
import { databaseConnectionsOf, type DatabaseConnections } from './infra/database-connections.ts';
import { assertDatabaseReachable } from './infra/database-reachability.ts';
import { EmbeddedDatabaseError, startEmbeddedPostgres, type EmbeddedPostgres } from './infra/embedded-postgres.ts';
import { GatewayKeyError, loadGatewayKeys } from './infra/gateway-keys.ts';
import { createLogger } from './infra/logging.ts';
import { migrate } from './infra/migrate.ts';
import { RedisRateLimitStore } from './plugins/rate-limit-redis.ts';
import { railRedactedPaths } from './rails/index.ts';
import { createFastify } from './server-options.ts';

// Until the server listens, a failure ends the start. A wrong setting is the operator's to fix: one line on
// stderr naming it, exit 1, no stack trace. Anything else is a bug and keeps its stack. Once listening, this
// handler is removed and close-with-grace handles what is left.
const refuseStart = (error: unknown) => {
  const refusal = refusalOf(error);
  process.stderr.write(refusal === undefined ? `${(error as Error | undefined)?.stack ?? String(error)}\n` : `svc: cannot start: ${refusal}\n`);
  process.exit(1);
};
process.on('uncaughtException', refuseStart);

function refusalOf(error: unknown): string | undefined {
  if (error instanceof ConfigError || error instanceof GatewayKeyError || error instanceof EmbeddedDatabaseError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return `HOST ${config.host} PORT ${config.port}: the address is already in use`;
  if (code === 'EADDRNOTAVAIL') return `HOST ${config.host}: not an address of this machine`;
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen') return `PORT ${config.port}: not allowed to listen there`;
  return undefined;
}

const config = loadConfig();
const logger = createLogger(config.logLevel, undefined, railRedactedPaths());

// The keys are checked before the database is touched, so a bad key set never leaves a migrated database behind.
const keys = loadGatewayKeys(config);

let embedded: EmbeddedPostgres | undefined;
let connections: DatabaseConnections;
if (config.databaseUrl) {
  await assertDatabaseReachable(config.databaseUrl);
  if (config.databaseSessionUrl) await assertDatabaseReachable(config.databaseSessionUrl, 'DATABASE_SESSION_URL');
  connections = databaseConnectionsOf(config.databaseUrl, config.databaseSessionUrl);
} else {
  embedded = await startEmbeddedPostgres(config.dataDir);
  connections = { pool: embedded.connection, session: embedded.connection };
  logger.info({ data_dir: config.dataDir }, 'DATABASE_URL is not set: using the embedded database');
}

// The migrations hold a session advisory lock (one replica migrates, the others wait and find nothing to do).
const applied = await migrate(connections.session);
if (applied.length > 0) logger.info({ versions: applied }, 'migrations applied');

if (keys.created) {
  logger.warn(
    { key_file: keys.origin, kid: keys.keyring.active.kid },
    'created a gateway signing key; every replica must use the same keys (SVC_SIGNING_KEYS or SVC_SIGNING_KEY_FILE)',
  );
} else {
  logger.info({ key_source: keys.origin, active_kid: keys.keyring.active.kid }, 'gateway signing keys loaded');
}

// Rate-limit counters in Redis when REDIS_URL is set, else in Postgres (docs/operations.md "Rate limits").
const redisStore = config.redisUrl
  ? new RedisRateLimitStore({ url: config.redisUrl, onError: (err) => logger.error({ err }, 'Redis rate-limit store: connection failed; limited routes answer 503 until it is back') })
  : undefined;
if (redisStore) logger.info('REDIS_URL is set: rate-limit counters live in Redis');

const server = createFastify(logger);
if (redisStore) server.addHook('onClose', () => redisStore.close());
await server.register(app, {
  connection: connections.pool,
  sessionConnection: connections.session,
  gatewayKeys: keys.keyring,
  mail: { smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom },
  publicBaseUrl: config.publicBaseUrl,
  validateResponses: config.validateResponses,
  groupCommit: config.groupCommit.enabled ? { windowMs: config.groupCommit.windowMs, groupSizeMax: config.groupCommit.groupSizeMax } : false,
  metrics: { token: config.metricsToken, port: config.metricsPort, host: config.metricsHost },
  secretsKey: config.secretsKey,
  webhooks: { allowPrivateDestinations: config.webhookAllowPrivateDestinations, ...(config.webhookAttemptTimeoutMs ? { attemptTimeoutMs: config.webhookAttemptTimeoutMs } : {}) },
  rateLimit: { perCredential: config.rateLimitPerMinute, perAddress: config.rateLimitPublicPerMinute, ...(redisStore ? { store: redisStore } : {}) },
});

closeWithGrace({ delay: shutdownGraceMs }, async ({ signal, err }) => {
  if (err) logger.error({ err }, 'shutting down after an unexpected error');
  else logger.info({ signal }, 'shutting down: finishing in-flight requests');
  await server.close();
  await embedded?.close();
});

try {
  await server.listen({ host: config.host, port: config.port });
} catch (error) {
  // Close the embedded database cleanly before the refusal exits the process.
  await server.close();
  await embedded?.close();
  throw error;
}
process.off('uncaughtException', refuseStart);
