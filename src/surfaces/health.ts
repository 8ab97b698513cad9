// Liveness and readiness for load balancers and orchestrators: /healthz says the process is up, /readyz that
// the database answers and has every migration this build knows.
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../errors/service-error.ts';
import { appliedMigrationVersion, latestMigrationVersion } from '../infra/migrate.ts';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const expectedVersion = latestMigrationVersion();

  app.get('/healthz', { config: { access: { public: true } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { access: { public: true } } }, async () => {
    let version: number;
    try {
      version = await appliedMigrationVersion((text) => app.database.pool.query(text));
    } catch (error) {
      throw new ServiceError('internal.unavailable', { message: 'The database is not reachable.', cause: error });
    }
    if (version < expectedVersion) {
      throw new ServiceError('internal.unavailable', {
        message: 'The database schema is behind this build; migrations are pending.',
        details: { schema_version: version, expected_schema_version: expectedVersion },
      });
    }
    return { status: 'ready', schema_version: version };
  });
}
