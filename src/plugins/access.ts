// Route access control. Every route must declare `config.access`: either public, or the roles (and, for
// restricted keys, the scope) it needs. A route without a declaration makes the app refuse to start.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { AuditExportDownloadGrant, Authenticator } from './authenticator.ts';
import type { Principal } from '../credentials/principal.ts';
import { parseScope, scopeGranted } from '../credentials/mcp-scopes.ts';
import type { Role } from '../credentials/roles.ts';
import { ServiceError } from '../errors/service-error.ts';

export type RouteAccess =
  | { readonly public: true }
  /** A download route: only a download JWT for the job named by the route's `:job_id` param, never an API key or a
   * session token (spec, Authentication item 3). The request gets `download`, not a principal. */
  | { readonly download: 'audit-export' }
  | {
      readonly roles: readonly Role[];
      /** The scope a restricted key must carry, e.g. `mcp.spend:write`, or `any` for routes every credential may
       * call (the principal route). Restricted keys fail closed on routes that name no scope. Standard keys are
       * bound by role only. */
      readonly scope?: string;
      /** Refuse any x-tenant-id (400 `request.tenant_header_refused`), even the credential's own tenant: routes
       * whose clients are told to take the tenant from the credential alone (the sandbox guardrails). */
      readonly tenantHeader?: 'refused';
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    principal: Principal | null;
    download: AuditExportDownloadGrant | null;
  }
}

/** The grant of a download route's request; calling it on any other route is a programmer error. */
export function downloadGrantOf(request: FastifyRequest): AuditExportDownloadGrant {
  if (!request.download) throw new Error(`downloadGrantOf called on ${request.routeOptions.url}, which is not a download route`);
  return request.download;
}

/** Roles by what they may do (docs/roles.md); routes pick one of these lists. */
export const anyRole: readonly Role[] = ['admin', 'operator', 'agent', 'auditor'];
export const adminOnly: readonly Role[] = ['admin'];

/** The principal of an authenticated route; calling it on a public route is a programmer error. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`principalOf called on ${request.routeOptions.url}, which is not authenticated`);
  return request.principal;
}

export const access = fastifyPlugin(
  async (app: FastifyInstance, options: { authenticator: Authenticator }) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('download', null);

    app.addHook('onRoute', (route) => {
      if (!route.config?.access) {
        throw new Error(`route ${route.method} ${route.url} does not declare config.access`);
      }
      const scope = 'roles' in route.config.access ? route.config.access.scope : undefined;
      if (scope !== undefined && scope !== 'any' && parseScope(scope) === undefined) {
        throw new Error(`route ${route.method} ${route.url} names ${scope}, which is not in the scope catalogue`);
      }
    });

    app.addHook('onRequest', async (request) => {
      const routeAccess = request.routeOptions.config.access;
      // Unknown routes reach the not-found handler with no access declared.
      if (!routeAccess || 'public' in routeAccess) return;
      if ('download' in routeAccess) {
        const grant = await options.authenticator.authenticateAuditExportDownload(request.headers.authorization);
        // The token is bound to one job: a token for another job is no credential for this one.
        if (grant.jobId !== (request.params as { job_id?: unknown }).job_id) throw new ServiceError('auth.credential_invalid');
        const hint = request.headers['x-tenant-id'];
        if (hint !== undefined && hint !== grant.tenantId) throw new ServiceError('request.tenant_hint_mismatch');
        request.download = grant;
        return;
      }
      const principal = await options.authenticator.authenticate(request.headers.authorization);
      // x-tenant-id is never authorization, but when sent it must name the credential's tenant (spec).
      const tenantHint = request.headers['x-tenant-id'];
      if (tenantHint !== undefined && routeAccess.tenantHeader === 'refused') throw new ServiceError('request.tenant_header_refused');
      if (tenantHint !== undefined && tenantHint !== principal.tenantId) {
        throw new ServiceError('request.tenant_hint_mismatch');
      }
      if (!routeAccess.roles.includes(principal.role)) {
        throw new ServiceError('auth.role_insufficient', { details: { required_roles: routeAccess.roles } });
      }
      // Scopes bind restricted API keys only; standard keys and sessions are bound by role alone.
      const { credential } = principal;
      if (credential.type === 'api_key' && credential.keyKind === 'restricted' && routeAccess.scope !== 'any') {
        // `write` covers `read` of the same scope (src/credentials/mcp-scopes.ts).
        if (routeAccess.scope === undefined || !scopeGranted(credential.scopes, routeAccess.scope)) {
          throw new ServiceError('auth.scope_insufficient', { details: { required_scope: routeAccess.scope ?? null } });
        }
      }
      request.principal = principal;
    });
  },
  { name: 'access' },
);
