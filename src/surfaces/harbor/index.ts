// The transaction engine surface, mounted under /harbor: intents, funding, evidence, settlement, policies, ledger.
import type { FastifyInstance } from 'fastify';
import { budgetRoutes } from './routes/budget.ts';
import { evidenceRoutes } from './routes/evidence.ts';
import { fundRoutes } from './routes/fund.ts';
import { fundingAttemptRoutes } from './routes/funding-attempts.ts';
import { intentEvidenceRoutes } from './routes/intent-evidence.ts';
import { intentRoutes } from './routes/intents.ts';
import { ledgerRoutes } from './routes/ledger.ts';
import { merkleRoutes } from './routes/merkle.ts';
import { operatorIntentRoutes } from './routes/operator-intents.ts';
import { policyRoutes } from './routes/policies.ts';
import { railInstructionRoutes } from './routes/rail-instructions.ts';
import { settlementRoutes } from './routes/settlement.ts';

export async function harbor(app: FastifyInstance): Promise<void> {
  await app.register(policyRoutes);
  await app.register(ledgerRoutes);
  await app.register(merkleRoutes);
  await app.register(intentRoutes);
  await app.register(operatorIntentRoutes);
  await app.register(budgetRoutes);
  await app.register(fundRoutes);
  await app.register(fundingAttemptRoutes);
  await app.register(evidenceRoutes);
  await app.register(intentEvidenceRoutes);
  await app.register(settlementRoutes);
  await app.register(railInstructionRoutes);
}
