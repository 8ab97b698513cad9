// The transaction engine surface, mounted under /harbor: intents, funding attempts, evidence, policies, ledger. The
// lifecycle's command routes (create, fund, evidence, confirm) are registered from its table (engine-routes.ts).
import type { FastifyInstance } from 'fastify';
import { budgetRoutes } from './routes/budget.ts';
import { fundingAttemptRoutes } from './routes/funding-attempts.ts';
import { intentEvidenceRoutes } from './routes/intent-evidence.ts';
import { intentRoutes } from './routes/intents.ts';
import { ledgerRoutes } from './routes/ledger.ts';
import { merkleRoutes } from './routes/merkle.ts';
import { operatorIntentRoutes } from './routes/operator-intents.ts';
import { policyRoutes } from './routes/policies.ts';
import { railInstructionRoutes } from './routes/rail-instructions.ts';

export async function harbor(app: FastifyInstance): Promise<void> {
  await app.register(policyRoutes);
  await app.register(ledgerRoutes);
  await app.register(merkleRoutes);
  await app.register(intentRoutes);
  await app.register(operatorIntentRoutes);
  await app.register(budgetRoutes);
  await app.register(fundingAttemptRoutes);
  await app.register(intentEvidenceRoutes);
  await app.register(railInstructionRoutes);
}
