// GET /v1/auth/principal: who the credential is, and the tenant realm every later call is scoped to
// (rule 5 of docs/wire-compatibility.md#rules-every-surface-follows). SDKs call it first to resolve tenant scope.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { Principal } from '../../../contracts/principal.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';

export async function principalRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/auth/principal',
    {
      config: { access: { roles: anyRole, scope: 'any' } },
      schema: { summary: 'Who the credential is, and its tenant', response: { 200: Principal, ...authenticatedErrors() } },
    },
    async (request) => {
      const principal = principalOf(request);
      return {
        tenant_id: principal.tenantId,
        tenant_uuid: principal.tenantUuid,
        environment: principal.environment,
        service_account_role: principal.role,
        roles: [principal.role],
        // A person's session reports key_kind "session" and no MCP scopes; its subject is the user id.
        key_kind: principal.credential.type === 'api_key' ? principal.credential.keyKind : ('session' as const),
        mcp_scopes: principal.credential.type === 'api_key' ? [...principal.credential.scopes] : [],
        subject: principal.subject,
      };
    },
  );
}
