// Shares the Database (pool), the Authenticator and the gateway signing keys with every surface, and closes the
// pool with the app.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type pg from 'pg';
import { Authenticator } from './authenticator.ts';
import { Database, type DatabaseConfig } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';

declare module 'fastify' {
  interface FastifyInstance {
    database: Database;
    authenticator: Authenticator;
    gatewayKeys: GatewayKeyring;
  }
}

export interface DatabasePluginOptions {
  readonly connection: DatabaseConfig;
  /** Where the revocation listener LISTENs: a connection that keeps its server session (DATABASE_SESSION_URL).
   * Absent: `connection`. */
  readonly sessionConnection?: pg.ClientConfig;
  readonly gatewayKeys: GatewayKeyring;
}

export const databasePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: DatabasePluginOptions) => {
    const database = new Database(options.connection);
    const authenticator = new Authenticator(database, app.log, options.gatewayKeys);
    await authenticator.start(options.sessionConnection ?? options.connection);
    app.decorate('database', database);
    app.decorate('authenticator', authenticator);
    app.decorate('gatewayKeys', options.gatewayKeys);
    app.addHook('onClose', async () => {
      await authenticator.stop();
      await database.close();
    });
  },
  { name: 'database' },
);
