// Mandates (docs/protocol.md#mandates): POST /protocol/v2/mandates/verify checks a signed `svc.agent_mandate_v1`
// for the caller's tenant and answers `valid` with the reason when false; POST /protocol/v2/mandates imports one for
// an intent and answers its authorization receipt.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { MandateImportBody, MandateImported, MandateVerdict, MandateVerifyBody } from '../../../contracts/protocol.ts';
import type { Role } from '../../../credentials/roles.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { importMandate, verifyMandate } from '../../../services/mandate-service.ts';

const importers: readonly Role[] = ['admin', 'operator', 'agent'];

/** A verify body: `{signed_mandate: {...}}`, or the signed mandate itself, which carries `schema_version` (as the
 * receipt verify routes take theirs). */
export const receivedMandate = (body: Record<string, unknown>): unknown =>
  body.schema_version === undefined && typeof body.signed_mandate === 'object' && body.signed_mandate !== null ? body.signed_mandate : body;

export async function mandateRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post(
    '/protocol/v2/mandates/verify',
    {
      config: { access: { roles: anyRole, scope: 'mcp.a2a:read' } },
      schema: { summary: 'Verify a signed mandate for the caller\'s tenant', body: MandateVerifyBody, response: { 200: MandateVerdict, ...authenticatedBodyErrors() } },
    },
    async (request): Promise<MandateVerdict> => {
      const { tenantId, environment } = principalOf(request);
      const verdict = await app.database.tenant(tenantId, (tx) => verifyMandate(tx, receivedMandate(request.body), { tenantId, environment }, Date.now()));
      if (!verdict.valid) return { valid: false, code: verdict.code, message: verdict.message, ...(verdict.details ? { details: verdict.details } : {}) };
      return { valid: true, kind: 'svc.agent_mandate_v1', tenant_id: tenantId, mandate_digest_sha256_hex: verdict.digestHex, mandate: verdict.mandate };
    },
  );

  // An artifact refusal of the mandate is 400, a proof refusal 401, a mandate that does not cover the intent 422,
  // an unknown intent 404, a mandate imported before 409.
  routes.post(
    '/protocol/v2/mandates',
    {
      config: { access: { roles: importers, scope: 'mcp.a2a:write' } },
      schema: {
        summary: 'Import a signed mandate for an intent',
        body: MandateImportBody,
        response: { 200: MandateImported, ...authenticatedBodyErrors(404, 409, 422) },
      },
    },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => importMandate(tx, app.gatewayKeys, { tenantId, environment }, request.body));
    },
  );
}
