// Agent receipts (docs/protocol.md#agent-receipts): one by id, exactly as signed; one by intent (its intent-terminal
// receipt) or by intent and tool call (that call's action receipt), as the public client asks; the paged list; a
// receipt's inclusion proof; and verification against this deployment's gateway keys (`valid`, with the reason).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  AgentReceiptListAnswer,
  AgentReceiptListQuery,
  AgentReceiptParams,
  AgentReceiptVerifyQuery,
  ReceiptInclusionProof,
  ReceiptVerdict,
  ReceiptVerifyBody,
  SignedArtifact,
} from '../../../contracts/protocol.ts';
import { principalOf } from '../../../plugins/access.ts';
import { listAgentReceiptPage, readAgentReceipt, readAgentReceiptInclusionProof } from '../../../receipts/agent-receipt-service.ts';
import { deploymentKeyTrust, verdictAnswer, verifyForRoute } from '../../../receipts/receipt-signing.ts';
import { receiptReaders, receivedReceipt, withRetryWhilePending } from './receipts.ts';

export async function agentReceiptRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/protocol/v2/agent-receipts',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'List agent receipts, newest first (or, by intent and tool call, the one signed receipt they name)',
        querystring: AgentReceiptListQuery,
        response: { 200: AgentReceiptListAnswer, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, intent_id: intentId, tool_call_id: toolCallId, cursor } = request.query;
      return app.database.tenant(tenantId, (tx) => listAgentReceiptPage(tx, tenantId, { limit, intentId, toolCallId, cursor }));
    },
  );

  routes.get(
    '/protocol/v2/agent-receipts/:receipt_id',
    {
      config: { access: receiptReaders },
      schema: { summary: 'Read an agent receipt, exactly as signed', params: AgentReceiptParams, response: { 200: SignedArtifact, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readAgentReceipt(tx, tenantId, request.params.receipt_id));
    },
  );

  routes.get(
    '/protocol/v2/agent-receipts/:receipt_id/inclusion-proof',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'An agent receipt\'s inclusion proof under the latest signed tree head',
        params: AgentReceiptParams,
        response: { 200: ReceiptInclusionProof, ...authenticatedErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      return withRetryWhilePending(reply, () => app.database.tenant(tenantId, (tx) => readAgentReceiptInclusionProof(tx, tenantId, request.params.receipt_id)));
    },
  );

  routes.post(
    '/protocol/v2/agent-receipts/verify',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'Verify an agent receipt against this deployment\'s keys',
        // `trust_mode=gateway` is the only mode: receipts are signed by this deployment's gateway keys.
        querystring: AgentReceiptVerifyQuery,
        body: ReceiptVerifyBody,
        response: { 200: ReceiptVerdict, ...authenticatedBodyErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = await receivedReceipt(app.database, tenantId, 'agent', request.body);
      const verdict = verifyForRoute(wire, { routeKinds: ['svc.agent_receipt_v1'], tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
