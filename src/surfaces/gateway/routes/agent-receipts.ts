// Agent receipts (docs/protocol.md#agent-receipts): one by id, one by intent and tool call, the paged list, and
// verification against this deployment's gateway keys (`valid`, with the reason when false).
import type { FastifyInstance } from 'fastify';
import { pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { toolCallIdLengthMax } from '../../../limits.ts';
import { listAgentReceiptPage, readAgentReceipt } from '../../../services/agent-receipt-service.ts';
import { deploymentKeyTrust, verdictAnswer, verifyForRoute } from '../../../services/receipt-signing.ts';
import { receiptReaders, receiptVerifyBody, receivedReceipt } from './receipts.ts';

const receiptIdPattern = '^([0-9a-fA-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$';
const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

interface ListQuery {
  limit: number;
  intent_id?: string;
  tool_call_id?: string;
  cursor?: string;
}

export async function agentReceiptRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: ListQuery }>(
    '/protocol/v2/agent-receipts',
    {
      config: { access: receiptReaders },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
            intent_id: { type: 'string', pattern: uuidPattern },
            tool_call_id: { type: 'string', minLength: 1, maxLength: toolCallIdLengthMax },
            cursor: { type: 'string', pattern: receiptIdPattern },
          },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, intent_id: intentId, tool_call_id: toolCallId, cursor } = request.query;
      return app.database.tenant(tenantId, (tx) => listAgentReceiptPage(tx, tenantId, { limit, intentId, toolCallId, cursor }));
    },
  );

  app.get<{ Params: { receipt_id: string } }>(
    '/protocol/v2/agent-receipts/:receipt_id',
    {
      config: { access: receiptReaders },
      schema: { params: { type: 'object', required: ['receipt_id'], properties: { receipt_id: { type: 'string', pattern: receiptIdPattern } } } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readAgentReceipt(tx, tenantId, request.params.receipt_id));
    },
  );

  app.post<{ Body: Record<string, unknown>; Querystring: { trust_mode?: 'gateway' } }>(
    '/protocol/v2/agent-receipts/verify',
    {
      config: { access: receiptReaders },
      // `trust_mode=gateway` is the only mode: receipts are signed by this deployment's gateway keys.
      schema: { body: receiptVerifyBody, querystring: { type: 'object', additionalProperties: false, properties: { trust_mode: { type: 'string', enum: ['gateway'] } } } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = receivedReceipt(request.body);
      const verdict = verifyForRoute(wire, { routeKinds: ['svc.agent_receipt_v1'], tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
