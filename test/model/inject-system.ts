// The System a model run drives: the real app on a real database, reached with app.inject (the full HTTP pipeline,
// in process), the service's maintenance pass and ledger verifier, and tenants made as the tests make them.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { Database } from '../../src/infra/database.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { runMaintenance } from '../../src/services/maintenance.ts';
import { buildTestApp, createTestTenant } from '../helpers/app.ts';
import type { System } from './lifecycle-model.ts';

export interface InjectSystem extends System {
  close(): Promise<void>;
}

export async function injectSystem(connection: pg.PoolConfig): Promise<InjectSystem> {
  const app: FastifyInstance = await buildTestApp(connection);
  const database = new Database({ ...connection, max: 4 });
  return {
    async send(request) {
      const answer = await app.inject({ method: request.method, url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    },
    async sweep() {
      const report = await runMaintenance(database, app.engineEffects);
      if (!report.ran) throw new Error('the maintenance pass did not run (another held its lock)');
      return report.refunded;
    },
    async verifyLedger(tenantId) {
      const report = await verifyTenantLedger(database, tenantId);
      return report.ok ? [] : report.problems.length > 0 ? report.problems : ['not ok'];
    },
    async newTenant() {
      const tenant = await createTestTenant(connection, 'sandbox');
      return { tenantId: tenant.tenantId, adminKey: tenant.adminKey };
    },
    async close() {
      await app.close();
      await database.close();
    },
  };
}
