// The spend controls as people and agents read them (docs/capabilities.md#spend-preflight, #spend-controls):
// POST /v1/spend/preflight, the dry run of /verify, and the admin reads of its rules, decisions and reservations.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  SpendControlDecisionList,
  SpendControlDecisionQuery,
  SpendControlPolicy,
  SpendControlReservationList,
  SpendControlReservationQuery,
  SpendPreflight,
  SpendPreflightBody,
} from '../../../contracts/spend-controls.ts';
import type { Role } from '../../../credentials/roles.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { listDecisions, listReservations, preflightSpend, spendControlPolicy } from '../../../services/spend-controls-service.ts';

/** Who reads the spend controls of the whole tenant: the roles that read its settlement configuration. */
const spendControlReaders: readonly Role[] = ['admin', 'operator', 'auditor'];

export async function spendControlRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post(
    '/v1/spend/preflight',
    {
      // A read: every role, and a restricted key with the discovery scope (the client's catalogue says so).
      config: { access: { roles: anyRole, scope: 'mcp.discovery:read' } },
      schema: {
        summary: 'What /verify would answer for a spend now, with every check it fails; reserves nothing',
        body: SpendPreflightBody,
        response: { 200: SpendPreflight, ...authenticatedBodyErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { intent_id: intentId, operation, requested_spend_cents: requestedSpendCents, currency } = request.body;
      reply.header('cache-control', 'no-store');
      return app.database.tenant(tenantId, (tx) => preflightSpend(tx, tenantId, { intentId, operation, requestedSpendCents, currency }));
    },
  );

  routes.get(
    '/v1/admin/spend-controls/policy',
    {
      config: { access: { roles: spendControlReaders } },
      schema: { summary: 'The rules every /verify is decided by', response: { 200: SpendControlPolicy, ...authenticatedErrors() } },
    },
    async (request) => spendControlPolicy(principalOf(request).tenantId),
  );

  routes.get(
    '/v1/admin/spend-controls/decisions',
    {
      config: { access: { roles: spendControlReaders } },
      schema: { summary: 'The tenant\'s /verify decisions, newest first', querystring: SpendControlDecisionQuery, response: { 200: SpendControlDecisionList, ...authenticatedErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, cursor, intent_id: intentId, status } = request.query;
      return app.database.tenant(tenantId, (tx) => listDecisions(tx, tenantId, { limit: limit ?? pageSizeDefault, cursor, intentId, status }));
    },
  );

  routes.get(
    '/v1/admin/spend-controls/reservations',
    {
      config: { access: { roles: spendControlReaders } },
      schema: { summary: 'The cents /verify decisions hold, newest first', querystring: SpendControlReservationQuery, response: { 200: SpendControlReservationList, ...authenticatedErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, cursor, intent_id: intentId, status } = request.query;
      return app.database.tenant(tenantId, (tx) => listReservations(tx, tenantId, { limit: limit ?? pageSizeDefault, cursor, intentId, status: status ?? 'active' }));
    },
  );
}
