// The release gate and the review of held releases as the public client calls them (docs/release-gate.md):
// GET|PUT /signal/v1/fraud/release-gate, GET /signal/v1/review-queue, POST /signal/v1/operators/{did}/review-events,
// GET /signal/v1/operators/{did}/review-status, GET /signal/v1/fraud/metrics. A held intent is resolved on the engine's
// route (POST /harbor/intents/{id}/review/resolve, src/surfaces/harbor/routes/resolve.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  FraudMetrics,
  FraudMetricsQuery,
  OperatorReviewParams,
  OperatorReviewStatus,
  ReleaseGateAnswer,
  ReleaseGateUpdate,
  ReviewEventAnswer,
  ReviewEventBody,
  ReviewQueue,
  ReviewQueueQuery,
  ScoreVersionOnly,
} from '../../../contracts/review.ts';
import type { Role } from '../../../credentials/roles.ts';
import { principalOf } from '../../../plugins/access.ts';
import {
  fraudMetrics,
  operatorReviewStatus,
  readReleaseGate,
  recordReviewEvent,
  reviewQueue,
  updateReleaseGate,
} from '../../../services/review-service.ts';

/** Who reads the gate, the queue and the metrics: the people who review and resolve holds, and auditors. */
const reviewReaders = { roles: ['admin', 'operator', 'auditor'] as readonly Role[], scope: 'mcp.signal:read' };
/** Who records a finding: the roles that resolve holds. */
const reviewers = { roles: ['admin', 'operator'] as readonly Role[] };
/** Who sets the gate: an admin, as for the tenant's settlement configuration. */
const gateSetters = { roles: ['admin'] as readonly Role[] };

export async function reviewRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/signal/v1/fraud/release-gate',
    {
      config: { access: reviewReaders },
      schema: { summary: 'The tenant\'s release gate: its mode and signal settings', querystring: ScoreVersionOnly, response: { 200: ReleaseGateAnswer, ...authenticatedErrors() } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'no-store');
      return app.database.tenant(tenantId, (tx) => readReleaseGate(tx, tenantId, request.query.score_version));
    },
  );

  routes.put(
    '/signal/v1/fraud/release-gate',
    {
      config: { access: gateSetters },
      schema: { summary: 'Set the release gate: review_only records signals, critical_hold holds releases that meet one', body: ReleaseGateUpdate, response: { 200: ReleaseGateAnswer, ...authenticatedBodyErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => updateReleaseGate(tx, tenantId, request.body));
    },
  );

  routes.get(
    '/signal/v1/review-queue',
    {
      config: { access: reviewReaders },
      schema: { summary: 'Held releases, newest first: by default those awaiting a resolution', querystring: ReviewQueueQuery, response: { 200: ReviewQueue, ...authenticatedErrors() } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'no-store');
      return app.database.tenant(tenantId, (tx) => reviewQueue(tx, tenantId, request.query));
    },
  );

  routes.post(
    '/signal/v1/operators/:operator_did/review-events',
    {
      config: { access: reviewers },
      schema: {
        summary: 'Record a reviewer\'s finding about an operator (a payee), optionally about one of its intents',
        params: OperatorReviewParams,
        querystring: ScoreVersionOnly,
        body: ReviewEventBody,
        response: { 200: ReviewEventAnswer, ...authenticatedBodyErrors(404, 422) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return app.database.tenant(principal.tenantId, (tx) => recordReviewEvent(tx, principal, request.params.operator_did, request.body, request.query.score_version));
    },
  );

  routes.get(
    '/signal/v1/operators/:operator_did/review-status',
    {
      config: { access: reviewReaders },
      schema: {
        summary: 'An operator\'s review: the signals found at its releases, its holds and the reviewers\' events',
        params: OperatorReviewParams,
        querystring: ScoreVersionOnly,
        response: { 200: OperatorReviewStatus, ...authenticatedErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'no-store');
      return app.database.tenant(tenantId, (tx) => operatorReviewStatus(tx, tenantId, request.params.operator_did, request.query.score_version));
    },
  );

  routes.get(
    '/signal/v1/fraud/metrics',
    {
      config: { access: reviewReaders },
      schema: { summary: 'Signals found, holds placed and resolved, and review events over a window (24h, 7d, 30d)', querystring: FraudMetricsQuery, response: { 200: FraudMetrics, ...authenticatedErrors() } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      reply.header('cache-control', 'no-store');
      return app.database.tenant(tenantId, (tx) => fraudMetrics(tx, tenantId, request.query.window, request.query.score_version));
    },
  );
}
