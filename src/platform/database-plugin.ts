// Shares one Database (pool) and one Authenticator with every surface, and closes them with the app.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type pg from 'pg';
import { Authenticator } from '../credentials/authenticator.ts';
import { Database } from './database.ts';

declare module 'fastify' {
  interface FastifyInstance {
    database: Database;
    authenticator: Authenticator;
  }
}

export interface DatabasePluginOptions {
  readonly connection: pg.PoolConfig;
}

export const databasePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: DatabasePluginOptions) => {
    const database = new Database(options.connection);
    const authenticator = new Authenticator(database, app.log);
    await authenticator.start(options.connection);
    app.decorate('database', database);
    app.decorate('authenticator', authenticator);
    app.addHook('onClose', async () => {
      await authenticator.stop();
      await database.close();
    });
  },
  { name: 'database' },
);
