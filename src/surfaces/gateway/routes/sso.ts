// Single sign-on with OpenID Connect (docs/sso.md): admins configure their tenant's identity provider;
// sso/start and sso/callback are public and end in the same session JWT as a one-time-code sign-in.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors, publicBodyErrors } from '../../../contracts/common.ts';
import { SessionGrant } from '../../../contracts/sign-in.ts';
import { SsoCallbackBody, SsoConfig as SsoConfigAnswer, SsoConfigBody, SsoStartBody, SsoStarted } from '../../../contracts/sso.ts';
import type { SsoConfig } from '../../../db/sso-repository.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { completeSso, getSsoConfig, putSsoConfig, startSso } from '../../../services/sso-service.ts';

const configPath = '/v1/admin/sso/config';

/** The configuration as the admin routes show it: never the client secret, only that one is set. */
function present(config: SsoConfig): SsoConfigAnswer {
  return {
    object: 'sso_config',
    issuer: config.issuer,
    client_id: config.clientId,
    client_secret_set: true,
    redirect_uri: config.redirectUri,
    allowed_email_domains: [...config.allowedEmailDomains],
    default_role: config.defaultRole,
    updated_at: config.updatedAt.toISOString(),
  };
}

export async function ssoRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const context = { database: app.database, gatewayKeys: app.gatewayKeys };
  const publicAccess = { access: { public: true } } as const;
  const adminAccess = { access: { roles: adminOnly } };

  // Replaces the whole configuration, secret included: what was sent is what is stored.
  routes.put(
    configPath,
    {
      config: adminAccess,
      schema: { summary: 'Set the tenant\'s single sign-on configuration', body: SsoConfigBody, response: { 200: SsoConfigAnswer, ...authenticatedBodyErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const body = request.body;
      const stored = await putSsoConfig(app.database, tenantId, {
        issuer: body.issuer,
        clientId: body.client_id,
        clientSecret: body.client_secret,
        redirectUri: body.redirect_uri,
        allowedEmailDomains: body.allowed_email_domains,
        defaultRole: body.default_role,
      });
      return present(stored);
    },
  );

  routes.get(
    configPath,
    {
      config: adminAccess,
      schema: { summary: 'Read the tenant\'s single sign-on configuration', response: { 200: SsoConfigAnswer, ...authenticatedErrors(404) } },
    },
    async (request) => present(await getSsoConfig(app.database, principalOf(request).tenantId)),
  );

  routes.post(
    '/v1/auth/sso/start',
    {
      config: publicAccess,
      schema: { summary: 'Start a single sign-on', body: SsoStartBody, response: { 200: SsoStarted, ...publicBodyErrors(404, 502) } },
    },
    async (request, reply) => {
      const started = await startSso(context, request.body.tenant_id, request.log);
      reply.header('cache-control', 'no-store');
      return { authorization_url: started.authorizationUrl, state: started.state, expires_at: started.expiresAt.toISOString() };
    },
  );

  routes.post(
    '/v1/auth/sso/callback',
    {
      config: publicAccess,
      schema: {
        summary: 'Complete a single sign-on: trade the provider\'s code for a session token',
        body: SsoCallbackBody,
        response: { 200: SessionGrant, ...publicBodyErrors(401, 403, 404, 502) },
      },
    },
    async (request, reply) => {
      const grant = await completeSso(context, request.body, request.log);
      // A token answer is never cached (RFC 6749 §5.1).
      reply.header('cache-control', 'no-store');
      return {
        access_token: grant.accessToken,
        token_type: 'Bearer' as const,
        expires_in: grant.expiresInSeconds,
        tenant_id: grant.tenantId,
        user_id: grant.userId,
        roles: [...grant.roles],
      };
    },
  );
}
