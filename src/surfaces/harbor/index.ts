// The transaction engine surface, mounted under /harbor: intents, funding, evidence, settlement, policies, ledger.
import type { FastifyInstance } from 'fastify';

export async function harbor(_app: FastifyInstance): Promise<void> {
  // Routes arrive with the engine and policy issues.
}
