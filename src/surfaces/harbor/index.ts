// The transaction engine surface, mounted under /harbor: intents, funding, evidence, settlement, policies, ledger.
import type { FastifyInstance } from 'fastify';
import { intentRoutes } from './routes/intents.ts';
import { policyRoutes } from './routes/policies.ts';

export async function harbor(app: FastifyInstance): Promise<void> {
  await app.register(policyRoutes);
  await app.register(intentRoutes);
}
