// Protocol receipts (docs/protocol.md#protocol-receipts): GET /protocol/v2/receipts/{id} answers the tenant's
// authorization or settlement receipt with its place in the transparency log; POST /protocol/v2/receipts/verify
// checks one against this deployment's gateway keys and answers `valid`, with the reason when false.
import type { FastifyInstance } from 'fastify';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { readProtocolReceipt } from '../../../services/receipt-service.ts';
import { deploymentKeyTrust, verdictAnswer, verifyForRoute } from '../../../services/receipt-signing.ts';
import type { ArtifactKindName } from '../../../signing/artifact-kinds.ts';

export const receiptReaders = { roles: anyRole, scope: 'mcp.receipts:read' } as const;
const receiptIdPattern = '^[a-z0-9][a-z0-9._:/-]{0,127}$';
const protocolReceiptKinds: readonly ArtifactKindName[] = ['svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1'];

/** A verify body: `{receipt: {...}}`, or the receipt itself. */
export const receiptVerifyBody = { type: 'object' } as const;
export const receivedReceipt = (body: Record<string, unknown>): unknown =>
  body.schema_version === undefined && typeof body.receipt === 'object' && body.receipt !== null ? body.receipt : body;

export async function receiptRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { receipt_id: string } }>(
    '/protocol/v2/receipts/:receipt_id',
    {
      config: { access: receiptReaders },
      schema: { params: { type: 'object', required: ['receipt_id'], properties: { receipt_id: { type: 'string', pattern: receiptIdPattern } } } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readProtocolReceipt(tx, tenantId, request.params.receipt_id));
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    '/protocol/v2/receipts/verify',
    { config: { access: receiptReaders }, schema: { body: receiptVerifyBody } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = receivedReceipt(request.body);
      const verdict = verifyForRoute(wire, { routeKinds: protocolReceiptKinds, tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
