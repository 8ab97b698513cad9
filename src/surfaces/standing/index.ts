// The standing service surface: signed operator receipts (/reputation) and signed portfolio exports (/signal/v1),
// scoped to one tenant: a tenant sees only its own settled history of an operator (docs/standing.md).
import type { FastifyInstance } from 'fastify';
import { didLengthMax } from '../../limits.ts';
import { principalOf } from '../../plugins/access.ts';
import { operatorReceipt, portfolioSnapshot, scoreVersionDefault } from '../../services/standing-service.ts';

/** Admins and auditors read standing; agents, whose payees it grades, do not (docs/roles.md). */
const readers = { access: { roles: ['admin', 'auditor'] as const, scope: 'mcp.signal:read' } };

export async function standing(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operator_did: string }; Querystring: { score_version?: string } }>(
    '/reputation/:operator_did',
    {
      config: readers,
      schema: {
        params: {
          type: 'object',
          properties: { operator_did: { type: 'string', minLength: 1, maxLength: didLengthMax } },
          required: ['operator_did'],
        },
        // Any text: an unknown version is answered with its own code (standing.score_version_unsupported), not as
        // a schema mismatch; the request target's length limit bounds it.
        querystring: { type: 'object', properties: { score_version: { type: 'string' } } },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const scoreVersion = request.query.score_version ?? scoreVersionDefault;
      reply.header('cache-control', 'private, no-store');
      return operatorReceipt(app.database, app.gatewayKeys.active, tenantId, request.params.operator_did, scoreVersion);
    },
  );

  app.get('/signal/v1/portfolio/signed-export', { config: readers }, async (request, reply) => {
    const { tenantId } = principalOf(request);
    reply.header('cache-control', 'private, no-store');
    return portfolioSnapshot(app.database, app.gatewayKeys.active, tenantId);
  });
}
