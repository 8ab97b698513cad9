// The gateway surface: the public front door (/v1, /protocol, /.well-known, /verify). Routes are added by
// the issues that build each capability; this plugin is where they are mounted.
import type { FastifyInstance } from 'fastify';
import { agentReceiptRoutes } from './routes/agent-receipts.ts';
import { agentRunRoutes } from './routes/agent-runs.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { auditExportRoutes } from './routes/audit-exports.ts';
import { clientReportRoutes } from './routes/client-reports.ts';
import { deviceLoginRoutes } from './routes/device-login.ts';
import { eventRoutes } from './routes/events.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';
import { jwksRoutes } from './routes/jwks.ts';
import { keyRegistryRoutes } from './routes/key-registry.ts';
import { mandateRoutes } from './routes/mandates.ts';
import { policyDocumentRoutes } from './routes/policy-documents.ts';
import { policyRollbackRoutes } from './routes/policy-rollback.ts';
import { providerIntegrationRoutes } from './routes/provider-integrations.ts';
import { receiptRoutes } from './routes/receipts.ts';
import { reviewRoutes } from './routes/review.ts';
import { recognitionRoutes } from './routes/recognition.ts';
import { principalRoutes } from './routes/principal.ts';
import { settlementConfigRoutes } from './routes/settlement-config.ts';
import { signInRoutes } from './routes/sign-in.ts';
import { spendControlRoutes } from './routes/spend-controls.ts';
import { spendDecisionRoutes } from './routes/spend-decisions.ts';
import { ssoRoutes } from './routes/sso.ts';
import { taskContractRoutes } from './routes/task-contracts.ts';
import { verifyRoutes } from './routes/verify.ts';
import { wellKnownRoutes } from './routes/well-known.ts';

export async function gateway(app: FastifyInstance): Promise<void> {
  await app.register(jwksRoutes);
  await app.register(principalRoutes);
  await app.register(apiKeyRoutes);
  await app.register(keyRegistryRoutes);
  await app.register(policyRollbackRoutes);
  await app.register(policyDocumentRoutes);
  await app.register(recognitionRoutes);
  await app.register(mandateRoutes);
  await app.register(receiptRoutes);
  await app.register(agentReceiptRoutes);
  await app.register(taskContractRoutes);
  await app.register(wellKnownRoutes);
  await app.register(settlementConfigRoutes);
  await app.register(providerIntegrationRoutes);
  await app.register(signInRoutes);
  await app.register(ssoRoutes);
  await app.register(deviceLoginRoutes);
  await app.register(clientReportRoutes);
  await app.register(verifyRoutes);
  await app.register(spendDecisionRoutes);
  await app.register(spendControlRoutes);
  await app.register(agentRunRoutes);
  await app.register(auditExportRoutes);
  await app.register(eventRoutes);
  await app.register(webhookEndpointRoutes);
  await app.register(reviewRoutes);
}
