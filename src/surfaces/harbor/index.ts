// The transaction engine surface, mounted under /harbor: intents, funding, evidence, settlement, policies, ledger.
import type { FastifyInstance } from 'fastify';
import { policyRoutes } from './routes/policies.ts';

export async function harbor(app: FastifyInstance): Promise<void> {
  await app.register(policyRoutes);
}
