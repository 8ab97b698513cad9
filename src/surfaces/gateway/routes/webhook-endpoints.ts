// Webhook endpoints (docs/events.md#webhook-endpoints): admins create (the signing secret is answered once), update,
// delete and rotate the secret of the tenant's endpoints; admins, operators and auditors read them and their
// attempts log; admins and operators redeliver one event.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  WebhookDeliveryListQuery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointCreateBody,
  WebhookEndpointDeleted,
  WebhookEndpointListQuery,
  WebhookEndpointPage,
  WebhookEndpointParams,
  WebhookEndpointUpdateBody,
  WebhookEndpointWithSecret,
  WebhookRedeliverParams,
  WebhookRedelivery,
  WebhookSecretRotateBody,
} from '../../../contracts/events.ts';
import type { Role } from '../../../credentials/roles.ts';
import { deleteEndpoint, findEndpoint, listAttempts, listEndpoints } from '../../../db/webhook-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import type { DestinationPolicy } from '../../../services/webhook-destination.ts';
import { changeEndpoint, createEndpoint, presentEndpoint, redeliver, rotateSecret } from '../../../services/webhook-endpoint-service.ts';

const readers: readonly Role[] = ['admin', 'operator', 'auditor'];
const redeliverers: readonly Role[] = ['admin', 'operator'];

export async function webhookEndpointRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const policyOf = (request: FastifyRequest): DestinationPolicy => ({
    environment: principalOf(request).environment,
    allowPrivateDestinations: app.webhookDestinations.allowPrivateDestinations,
  });

  routes.post(
    '/v1/webhook-endpoints',
    {
      config: { access: { roles: adminOnly } },
      schema: { summary: 'Create a webhook endpoint (its signing secret is answered once)', body: WebhookEndpointCreateBody, response: { 201: WebhookEndpointWithSecret, ...authenticatedBodyErrors(409) } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const created = await app.database.tenant(tenantId, (tx) => createEndpoint(tx, tenantId, policyOf(request), app.railRuntime.secretBox, request.body));
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...presentEndpoint(created.endpoint), secret: created.secret });
    },
  );

  routes.get(
    '/v1/webhook-endpoints',
    { config: { access: { roles: readers } }, schema: { summary: "List the tenant's webhook endpoints", querystring: WebhookEndpointListQuery, response: { 200: WebhookEndpointPage, ...authenticatedErrors() } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit = pageSizeDefault, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listEndpoints(tx, tenantId, { limit, startingAfter: cursor }));
      return {
        object: 'list',
        data: page.endpoints.map(presentEndpoint),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.endpoints.at(-1)?.endpointId ?? null) : null,
      } as const;
    },
  );

  routes.get(
    '/v1/webhook-endpoints/:endpoint_id',
    { config: { access: { roles: readers } }, schema: { summary: 'Read a webhook endpoint', params: WebhookEndpointParams, response: { 200: WebhookEndpoint, ...authenticatedErrors(404) } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const endpoint = await app.database.tenant(tenantId, (tx) => findEndpoint(tx, tenantId, request.params.endpoint_id));
      if (!endpoint) throw new ServiceError('webhook_endpoint.not_found');
      return presentEndpoint(endpoint);
    },
  );

  routes.post(
    '/v1/webhook-endpoints/:endpoint_id',
    {
      config: { access: { roles: adminOnly } },
      schema: { summary: 'Update a webhook endpoint (url, events, description, enabled)', params: WebhookEndpointParams, body: WebhookEndpointUpdateBody, response: { 200: WebhookEndpoint, ...authenticatedBodyErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return presentEndpoint(await app.database.tenant(tenantId, (tx) => changeEndpoint(tx, tenantId, request.params.endpoint_id, policyOf(request), request.body)));
    },
  );

  routes.delete(
    '/v1/webhook-endpoints/:endpoint_id',
    { config: { access: { roles: adminOnly } }, schema: { summary: 'Delete a webhook endpoint (its pending deliveries with it)', params: WebhookEndpointParams, response: { 200: WebhookEndpointDeleted, ...authenticatedErrors(404) } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const deleted = await app.database.tenant(tenantId, (tx) => deleteEndpoint(tx, tenantId, request.params.endpoint_id));
      if (!deleted) throw new ServiceError('webhook_endpoint.not_found');
      return { object: 'webhook_endpoint', id: request.params.endpoint_id, deleted: true } as const;
    },
  );

  routes.post(
    '/v1/webhook-endpoints/:endpoint_id/rotate-secret',
    {
      config: { access: { roles: adminOnly }, bodyOptional: true },
      schema: {
        summary: 'Rotate the signing secret (answered once); deliveries carry a signature by the old one too during the overlap',
        params: WebhookEndpointParams,
        body: WebhookSecretRotateBody,
        response: { 200: WebhookEndpointWithSecret, ...authenticatedBodyErrors(404) },
      },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const rotated = await app.database.tenant(tenantId, (tx) =>
        rotateSecret(tx, tenantId, request.params.endpoint_id, app.railRuntime.secretBox, request.body.previous_secret_expires_in_seconds),
      );
      reply.header('cache-control', 'no-store');
      return { ...presentEndpoint(rotated.endpoint), secret: rotated.secret };
    },
  );

  routes.get(
    '/v1/webhook-endpoints/:endpoint_id/deliveries',
    {
      config: { access: { roles: readers } },
      schema: { summary: "An endpoint's delivery attempts, newest first", params: WebhookEndpointParams, querystring: WebhookDeliveryListQuery, response: { 200: WebhookDeliveryPage, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit = pageSizeDefault } = request.query;
      const page = await app.database.tenant(tenantId, async (tx) => {
        if (!(await findEndpoint(tx, tenantId, request.params.endpoint_id))) throw new ServiceError('webhook_endpoint.not_found');
        return listAttempts(tx, tenantId, request.params.endpoint_id, limit);
      });
      return {
        object: 'list',
        data: page.attempts.map((attempt) => ({
          object: 'webhook_delivery_attempt' as const,
          delivery_id: attempt.deliveryId,
          event_id: attempt.eventId,
          event_type: attempt.eventType,
          attempt: attempt.attempt,
          attempted_at: attempt.attemptedAt.toISOString(),
          duration_ms: attempt.durationMs,
          succeeded: attempt.succeeded,
          response_status: attempt.responseStatus,
          error: attempt.error,
          delivery_status: attempt.deliveryStatus,
          next_attempt_at: attempt.nextAttemptAt?.toISOString() ?? null,
        })),
        has_more: page.hasMore,
        next_cursor: null,
      } as const;
    },
  );

  routes.post(
    '/v1/webhook-endpoints/:endpoint_id/events/:event_id/redeliver',
    {
      config: { access: { roles: redeliverers }, bodyOptional: true },
      schema: { summary: 'Send one event to the endpoint again', params: WebhookRedeliverParams, response: { 202: WebhookRedelivery, ...authenticatedBodyErrors(404) } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { endpoint_id: endpointId, event_id: eventId } = request.params;
      const deliveryId = await app.database.tenant(tenantId, (tx) => redeliver(tx, tenantId, endpointId, eventId));
      return reply.code(202).send({ object: 'webhook_delivery', id: deliveryId, endpoint_id: endpointId, event_id: eventId, status: 'pending' });
    },
  );
}
