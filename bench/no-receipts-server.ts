// The baseline server of the receipts bench (receipts-bench.ts): the service as src/server.ts starts it against
// DATABASE_URL (same configuration, keys, migrations, rate limits, maintenance and tree-head passes), composed with
// the engine's terminal effects minus the receipt effect, so that the receipts' cost is the difference between the
// two. Bench-only: the product always runs the full list. No embedded database, no Redis: the bench uses neither.
import { app, terminalEffectsDefault } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { loadGatewayKeys } from '../src/infra/gateway-keys.ts';
import { createLogger } from '../src/infra/logging.ts';
import { migrate } from '../src/infra/migrate.ts';
import { createFastify } from '../src/server-options.ts';
import { receiptsOnTerminal } from '../src/receipts/receipt-service.ts';

const config = loadConfig();
if (!config.databaseUrl) throw new Error('no-receipts-server: DATABASE_URL is required');
const keys = loadGatewayKeys(config);
const connection = { connectionString: config.databaseUrl };
await migrate(connection);

const server = createFastify(createLogger(config.logLevel));
await server.register(app, {
  connection,
  gatewayKeys: keys.keyring,
  mail: { smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom },
  publicBaseUrl: config.publicBaseUrl,
  rateLimit: { perCredential: config.rateLimitPerMinute, perAddress: config.rateLimitPublicPerMinute },
  terminalEffects: terminalEffectsDefault.filter((effect) => effect !== receiptsOnTerminal),
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
await server.listen({ host: config.host, port: config.port });
