// Protocol receipts (docs/protocol.md#protocol-receipts): GET /protocol/v2/receipts/{id} answers the tenant's
// authorization or settlement receipt with its place in the transparency log; POST /protocol/v2/receipts/verify
// checks one against this deployment's gateway keys and answers `valid`, with the reason when false.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import { ProtocolReceiptParams, ReceiptVerdict, ReceiptVerifyBody, StoredReceipt } from '../../../contracts/protocol.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { readProtocolReceipt } from '../../../services/receipt-service.ts';
import { deploymentKeyTrust, verdictAnswer, verifyForRoute } from '../../../services/receipt-signing.ts';
import type { ArtifactKindName } from '../../../signing/artifact-kinds.ts';

export const receiptReaders = { roles: anyRole, scope: 'mcp.receipts:read' } as const;
const protocolReceiptKinds: readonly ArtifactKindName[] = ['svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1'];

/** A verify body: `{receipt: {...}}`, or the receipt itself. */
export const receivedReceipt = (body: Record<string, unknown>): unknown =>
  body.schema_version === undefined && typeof body.receipt === 'object' && body.receipt !== null ? body.receipt : body;

export async function receiptRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/protocol/v2/receipts/:receipt_id',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'Read a protocol receipt with its place in the transparency log',
        params: ProtocolReceiptParams,
        response: { 200: StoredReceipt, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      // The stored wire under `receipt` is answered as it was signed; the contract describes the rest.
      return app.database.tenant(tenantId, (tx) => readProtocolReceipt(tx, tenantId, request.params.receipt_id));
    },
  );

  routes.post(
    '/protocol/v2/receipts/verify',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'Verify a protocol receipt against this deployment\'s keys',
        body: ReceiptVerifyBody,
        response: { 200: ReceiptVerdict, ...authenticatedBodyErrors() },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = receivedReceipt(request.body);
      const verdict = verifyForRoute(wire, { routeKinds: protocolReceiptKinds, tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
