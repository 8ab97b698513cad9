// Protocol receipts (docs/protocol.md#protocol-receipts): GET /protocol/v2/receipts/{id} answers the tenant's
// authorization or settlement receipt exactly as signed (what the public client's verifier takes), GET
// …/{id}/inclusion-proof its place in the transparency log, and POST /protocol/v2/receipts/verify checks a receipt, sent
// or named by id, against this deployment's gateway keys and answers `valid`, with the reason when false.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import { ProtocolReceiptParams, ReceiptInclusionProof, ReceiptVerdict, ReceiptVerifyBody, SignedArtifact } from '../../../contracts/protocol.ts';
import type { ReceiptFamily } from '../../../receipts/protocol-receipt-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import type { Database } from '../../../infra/database.ts';
import { treeHeadIntervalMs } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { readProtocolReceipt, readProtocolReceiptInclusionProof } from '../../../receipts/receipt-service.ts';
import { deploymentKeyTrust, storedReceiptWire, verdictAnswer, verifyForRoute } from '../../../receipts/receipt-signing.ts';
import type { ArtifactKindName } from '../../../signing/artifact-kinds.ts';

export const receiptReaders = { roles: anyRole, scope: 'mcp.receipts:read' } as const;
const protocolReceiptKinds: readonly ArtifactKindName[] = ['svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1', 'svc.review_resolution_receipt_v1'];

/** A verify body naming a stored receipt: `{receipt_id}` and nothing else (the public client's CLI sends this). */
const namedReceiptId = (body: Record<string, unknown>): string | undefined =>
  Object.keys(body).length === 1 && typeof body.receipt_id === 'string' ? body.receipt_id : undefined;

/**
 * The receipt a verify body means: `{receipt: {...}}`, the receipt itself, or `{receipt_id}` naming one of the
 * tenant's stored receipts of `family` (404 `receipt.not_found` when it names none, another tenant's included).
 */
export async function receivedReceipt(database: Database, tenantId: string, family: ReceiptFamily, body: Record<string, unknown>): Promise<unknown> {
  const receiptId = namedReceiptId(body);
  if (receiptId !== undefined) return database.tenant(tenantId, (tx) => storedReceiptWire(tx, tenantId, family, receiptId));
  return body.schema_version === undefined && typeof body.receipt === 'object' && body.receipt !== null ? body.receipt : body;
}

/** Runs an inclusion-proof read; a leaf no head covers yet is 404 with the pass interval as Retry-After. */
export async function withRetryWhilePending<T>(reply: FastifyReply, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'merkle.inclusion_pending') reply.header('retry-after', String(Math.ceil(treeHeadIntervalMs / 1000)));
    throw error;
  }
}

export async function receiptRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/protocol/v2/receipts/:receipt_id',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'Read a protocol receipt, exactly as signed',
        params: ProtocolReceiptParams,
        response: { 200: SignedArtifact, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      // The stored wire is answered as it was signed: the served field order is the canonical order.
      return app.database.tenant(tenantId, (tx) => readProtocolReceipt(tx, tenantId, request.params.receipt_id));
    },
  );

  routes.get(
    '/protocol/v2/receipts/:receipt_id/inclusion-proof',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'A protocol receipt\'s inclusion proof under the latest signed tree head',
        params: ProtocolReceiptParams,
        response: { 200: ReceiptInclusionProof, ...authenticatedErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      return withRetryWhilePending(reply, () => app.database.tenant(tenantId, (tx) => readProtocolReceiptInclusionProof(tx, tenantId, request.params.receipt_id)));
    },
  );

  routes.post(
    '/protocol/v2/receipts/verify',
    {
      config: { access: receiptReaders },
      schema: {
        summary: 'Verify a protocol receipt against this deployment\'s keys',
        body: ReceiptVerifyBody,
        response: { 200: ReceiptVerdict, ...authenticatedBodyErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const wire = await receivedReceipt(app.database, tenantId, 'protocol', request.body);
      const verdict = verifyForRoute(wire, { routeKinds: protocolReceiptKinds, tenantId, tenantOf: (body) => body.tenant_id, trust: deploymentKeyTrust(app.gatewayKeys) });
      return verdictAnswer(verdict, wire);
    },
  );
}
