// Agent receipts (docs/protocol.md#agent-receipts): one by id, one by intent and tool call, the paged list, and
// verification against this deployment's gateway keys (`valid`, with the reason when false).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  AgentReceiptListAnswer,
  AgentReceiptListQuery,
  AgentReceiptParams,
  AgentReceiptVerifyQuery,
  ReceiptVerdict,
  ReceiptVerifyBody,
  StoredReceipt,
} from '../../../contracts/protocol.ts';
import { principalOf } from '../../../plugins/access.ts';
import { listAgentReceiptPage, readAgentReceipt } from '../../../services/agent-receipt-service.ts';
import { deploymentKeyTrust, verdictAnswer, verifyForRoute } from '../../../services/receipt-signing.ts';
import { receiptReaders, receivedReceipt } from './receipts.ts';

export async function agentReceiptRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/protocol/v2/agent-receipts',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'List agent receipts, newest first (or the one receipt of an intent\'s tool call)',
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
      schema: { summary: 'Read an agent receipt', params: AgentReceiptParams, response: { 200: StoredReceipt, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readAgentReceipt(tx, tenantId, request.params.receipt_id));
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
        response: { 200: ReceiptVerdict, ...authenticatedBodyErrors() },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = receivedReceipt(request.body);
      const verdict = verifyForRoute(wire, { routeKinds: ['svc.agent_receipt_v1'], tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
