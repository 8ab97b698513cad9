// The engine's command routes, registered from the lifecycle table (src/engine/lifecycle.ts): each command's method,
// URL, roles and scope are its table entry's, its idempotency operation and recognition purpose reach the handler
// through engineMutation, and its route module supplies only the contract and the work. A command the table gives a
// route does not compile until it has a route module here, nor one without a route in the table.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { lifecycle, type CommandName, type CommandRoute, type RoutedCommandName } from '../../engine/lifecycle.ts';
import { sandboxBootstrapRoute, sandboxEvidenceRoute } from '../gateway/routes/sandbox-guardrails.ts';
import type { EngineRoute, EngineRouteDefinition } from './engine-mutation.ts';
import { evidenceRoute } from './routes/evidence.ts';
import { fundRoute } from './routes/fund.ts';
import { createIntentRoute } from './routes/intents.ts';
import { resolveRoute } from './routes/resolve.ts';
import { confirmRoute } from './routes/settlement.ts';

/** The route module of each command the table gives a route. */
const definitions = {
  create: createIntentRoute,
  fund: fundRoute,
  evidence: evidenceRoute,
  confirm: confirmRoute,
  resolve: resolveRoute,
  sandboxBootstrap: sandboxBootstrapRoute,
  sandboxEvidence: sandboxEvidenceRoute,
} as const satisfies { readonly [Name in RoutedCommandName]: EngineRouteDefinition };

const isRouted = (name: CommandName): name is RoutedCommandName => lifecycle[name].route !== null;

/** Registered without a prefix: the table's URLs are whole (`/harbor/...`, `/v1/sandbox/...`). */
export async function engineRoutes(app: FastifyInstance): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const name of (Object.keys(lifecycle) as CommandName[]).filter(isRouted)) {
    const { method, url, roles, scope, tenantHeader }: CommandRoute = lifecycle[name].route;
    let registered = 0;
    const route: EngineRoute = ({ bodyOptional, ...options }) => {
      registered += 1;
      typed.route({
        ...options,
        method,
        url,
        config: {
          access: { roles, scope, ...(tenantHeader === undefined ? {} : { tenantHeader }) },
          lifecycleCommand: name,
          ...(bodyOptional === undefined ? {} : { bodyOptional }),
        },
      });
    };
    definitions[name](app, route);
    // One command, one route: the table has one URL for it.
    if (registered !== 1) throw new Error(`the route module of ${name} registered ${registered} routes, not one`);
  }
}
