// Mandates (docs/protocol.md#mandates): POST /protocol/v2/mandates/verify checks a signed `svc.agent_mandate_v1`
// for the caller's tenant and answers `valid` with the reason when false; POST /protocol/v2/mandates imports one for
// an intent and answers its authorization receipt.
import type { FastifyInstance } from 'fastify';
import type { Role } from '../../../credentials/roles.ts';
import { transportBindingFieldLengthMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { importMandate, verifyMandate, type MandateImportRequest } from '../../../services/mandate-service.ts';

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const optionalText = { type: 'string', maxLength: transportBindingFieldLengthMax } as const;
const importers: readonly Role[] = ['admin', 'operator', 'agent'];

const transportBinding = {
  type: 'object',
  additionalProperties: false,
  properties: {
    source_protocol: { type: 'string', enum: ['ap2', 'acp', 'ucp'] },
    partner_platform: optionalText,
    external_authorization_id: optionalText,
    request_id: optionalText,
  },
} as const;

export async function mandateRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { signed_mandate: Record<string, unknown> } }>(
    '/protocol/v2/mandates/verify',
    {
      config: { access: { roles: anyRole, scope: 'mcp.a2a:read' } },
      schema: {
        body: { type: 'object', additionalProperties: false, required: ['signed_mandate'], properties: { signed_mandate: { type: 'object' } } },
      },
    },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const verdict = await app.database.tenant(tenantId, (tx) => verifyMandate(tx, request.body.signed_mandate, { tenantId, environment }, Date.now()));
      if (!verdict.valid) return { valid: false, code: verdict.code, message: verdict.message, ...(verdict.details ? { details: verdict.details } : {}) };
      return { valid: true, kind: 'svc.agent_mandate_v1', tenant_id: tenantId, mandate_digest_sha256_hex: verdict.digestHex, mandate: verdict.mandate };
    },
  );

  app.post<{ Body: MandateImportRequest }>(
    '/protocol/v2/mandates',
    {
      config: { access: { roles: importers, scope: 'mcp.a2a:write' } },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['signed_mandate', 'intent_id', 'recognition_proof'],
          properties: {
            signed_mandate: { type: 'object' },
            intent_id: { type: 'string', pattern: uuidPattern },
            transport_binding: transportBinding,
            recognition_proof: { type: 'object' },
          },
        },
      },
    },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => importMandate(tx, app.gatewayKeys, { tenantId, environment }, request.body));
    },
  );
}
