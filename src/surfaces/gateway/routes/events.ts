// The event log (docs/events.md): a tenant's events, newest first, and one event. Admins, operators and auditors read
// it; another tenant's event is 404 like one that never was.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { Event, EventListQuery, EventPage, EventParams } from '../../../contracts/events.ts';
import type { Role } from '../../../credentials/roles.ts';
import { findEvent, listEvents } from '../../../db/event-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { presentEvent } from '../../../services/event-service.ts';

export const eventReaders: readonly Role[] = ['admin', 'operator', 'auditor'];

export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  // A restricted key reads them with the compliance read scope (the MCP tool svc_list_events).
  const config = { access: { roles: eventReaders, scope: 'mcp.compliance:read' } };

  routes.get(
    '/v1/events',
    { config, schema: { summary: "List the tenant's events, newest first", querystring: EventListQuery, response: { 200: EventPage, ...authenticatedErrors() } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit = pageSizeDefault, cursor, type } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listEvents(tx, tenantId, { limit, startingAfter: cursor, type }));
      return {
        object: 'list',
        data: page.events.map(presentEvent),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.events.at(-1)?.eventId ?? null) : null,
      } as const;
    },
  );

  routes.get(
    '/v1/events/:event_id',
    { config, schema: { summary: 'Read an event', params: EventParams, response: { 200: Event, ...authenticatedErrors(404) } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const event = await app.database.tenant(tenantId, (tx) => findEvent(tx, tenantId, request.params.event_id));
      if (!event) throw new ServiceError('event.not_found');
      return presentEvent(event);
    },
  );
}
