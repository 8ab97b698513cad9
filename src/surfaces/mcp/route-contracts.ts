// The registered contract of every route (method, path, access, schema), collected as the routes are added, so that
// the MCP tools take their input schemas, roles and scopes from the routes they call instead of restating them.
import type { FastifyInstance, FastifySchema } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { RouteAccess } from '../../plugins/access.ts';

export interface RouteContract {
  readonly method: string;
  /** The path as registered, prefix included: `/harbor/intents/:intent_id`. */
  readonly url: string;
  readonly access: RouteAccess;
  readonly schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** `METHOD /path` → the route's contract; complete once the app is ready. */
    routeContracts: ReadonlyMap<string, RouteContract>;
  }
}

/** Registered before the surfaces: an onRoute hook sees only the routes added after it. */
export const routeContracts = fastifyPlugin(
  async (app: FastifyInstance) => {
    const contracts = new Map<string, RouteContract>();
    app.decorate('routeContracts', contracts);
    app.addHook('onRoute', (route) => {
      // The access plugin has already refused a route without a declaration.
      const access = route.config!.access!;
      for (const method of [route.method].flat()) {
        contracts.set(`${method} ${route.url}`, { method, url: route.url, access, schema: route.schema });
      }
    });
  },
  { name: 'route-contracts', dependencies: ['access'] },
);
