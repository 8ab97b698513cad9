// The standing service surface: signed operator receipts (/reputation) and signed portfolio exports (/signal/v1),
// scoped to one tenant: a tenant sees only its own settled history of an operator (docs/standing.md).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../contracts/common.ts';
import {
  OperatorDidParams,
  OperatorExplanation,
  PortfolioSummary,
  ScoreVersionQuery,
  SignedOperatorReceipt,
  SignedPortfolioSnapshot,
} from '../../contracts/standing.ts';
import { principalOf } from '../../plugins/access.ts';
import { operatorReceipt, portfolioSnapshot, scoreVersionDefault } from '../../services/standing-service.ts';
import { operatorExplanation, portfolioSummary } from '../../services/standing-views-service.ts';

/** Admins and auditors read standing; agents, whose payees it grades, do not (docs/roles.md). */
const readers = { access: { roles: ['admin', 'auditor'] as const, scope: 'mcp.signal:read' } };

export async function standing(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/reputation/:operator_did',
    {
      config: readers,
      schema: {
        summary: 'The signed receipt of an operator\'s settled history with this tenant',
        params: OperatorDidParams,
        querystring: ScoreVersionQuery,
        response: { 200: SignedOperatorReceipt, ...authenticatedErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const scoreVersion = request.query.score_version ?? scoreVersionDefault;
      reply.header('cache-control', 'private, no-store');
      return operatorReceipt(app.database, app.gatewayKeys.active, tenantId, request.params.operator_did, scoreVersion);
    },
  );

  app.get(
    '/signal/v1/portfolio/signed-export',
    { config: readers, schema: { summary: 'The signed portfolio snapshot of this tenant', response: { 200: SignedPortfolioSnapshot, ...authenticatedErrors(422) } } },
    async (request, reply) => {
    const { tenantId } = principalOf(request);
    reply.header('cache-control', 'private, no-store');
    return portfolioSnapshot(app.database, app.gatewayKeys.active, tenantId);
  });

  app.get(
    '/signal/v1/portfolio/summary',
    {
      config: readers,
      schema: {
        summary: 'The tenant\'s operators aggregated: count, average score, settled intents and volume',
        querystring: ScoreVersionQuery,
        response: { 200: PortfolioSummary, ...authenticatedErrors(422) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'private, no-store');
      return portfolioSummary(app.database, tenantId, request.query.score_version ?? scoreVersionDefault);
    },
  );

  app.get(
    '/signal/v1/operators/:operator_did/explanation',
    {
      config: readers,
      schema: {
        summary: 'Why an operator has its score: the formula, its inputs and the metrics',
        params: OperatorDidParams,
        querystring: ScoreVersionQuery,
        response: { 200: OperatorExplanation, ...authenticatedErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'private, no-store');
      return operatorExplanation(app.database, tenantId, request.params.operator_did, request.query.score_version ?? scoreVersionDefault);
    },
  );
}
