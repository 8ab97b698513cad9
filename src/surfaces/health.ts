// Liveness and readiness for load balancers and orchestrators: /healthz says the process is up, /readyz that
// the database answers and has every migration this build knows.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { publicErrors } from '../contracts/common.ts';
import { ServiceError } from '../errors/service-error.ts';
import { appliedMigrationVersion, latestMigrationVersion } from '../infra/migrate.ts';

const Healthy = Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up.' });
const Ready = Type.Object({ status: Type.Literal('ready'), schema_version: Type.Integer() }, { description: 'The database answers and has every migration of this build.' });

export async function healthRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const expectedVersion = latestMigrationVersion();

  app.get(
    '/healthz',
    { config: { access: { public: true } }, schema: { summary: 'Liveness', response: { 200: Healthy, ...publicErrors() } } },
    async () => ({ status: 'ok' }) as const,
  );

  // 503 (internal.unavailable) is in every route's standard set: the database unreachable or behind this build.
  app.get('/readyz', { config: { access: { public: true } }, schema: { summary: 'Readiness', response: { 200: Ready, ...publicErrors() } } }, async () => {
    let version: number;
    try {
      version = await appliedMigrationVersion((text) => app.database.pool.query(text));
    } catch (error) {
      // Not reached is not behind: only a database that answered can tell its schema version.
      throw new ServiceError('internal.unavailable', { message: 'The database is not reachable.', details: { reason: 'database_unreachable' }, cause: error });
    }
    if (version < expectedVersion) {
      throw new ServiceError('internal.unavailable', {
        message: 'The database schema is behind this build; migrations are pending.',
        details: { reason: 'migrations_pending', schema_version: version, expected_schema_version: expectedVersion },
      });
    }
    return { status: 'ready', schema_version: version } as const;
  });
}
