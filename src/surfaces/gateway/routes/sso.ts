// Single sign-on with OpenID Connect (docs/sso.md): admins configure their tenant's identity provider;
// sso/start and sso/callback are public and end in the same session JWT as a one-time-code sign-in.
import type { FastifyInstance } from 'fastify';
import type { Role } from '../../../credentials/roles.ts';
import type { SsoConfig } from '../../../db/sso-repository.ts';
import {
  ssoAllowedEmailDomainsMax,
  ssoAuthorizationCodeLengthMax,
  ssoClientIdLengthMax,
  ssoClientSecretLengthMax,
  ssoEmailDomainLengthMax,
  ssoUrlLengthMax,
  tenantIdLengthMax,
  tenantIdPattern,
} from '../../../limits.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import {
  completeSso,
  emailDomainPatternSource,
  getSsoConfig,
  putSsoConfig,
  ssoDefaultRoles,
  startSso,
} from '../../../services/sso-service.ts';

const configPath = '/v1/admin/sso/config';

interface ConfigBody {
  issuer: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  allowed_email_domains: string[];
  default_role?: Role;
}

const configBody = {
  type: 'object',
  additionalProperties: false,
  required: ['issuer', 'client_id', 'client_secret', 'redirect_uri', 'allowed_email_domains'],
  properties: {
    issuer: { type: 'string', minLength: 1, maxLength: ssoUrlLengthMax },
    client_id: { type: 'string', minLength: 1, maxLength: ssoClientIdLengthMax },
    client_secret: { type: 'string', minLength: 1, maxLength: ssoClientSecretLengthMax },
    redirect_uri: { type: 'string', minLength: 1, maxLength: ssoUrlLengthMax },
    allowed_email_domains: {
      type: 'array',
      minItems: 1,
      maxItems: ssoAllowedEmailDomainsMax,
      items: { type: 'string', maxLength: ssoEmailDomainLengthMax, pattern: emailDomainPatternSource },
    },
    default_role: { type: 'string', enum: ssoDefaultRoles },
  },
} as const;

const startBody = {
  type: 'object',
  additionalProperties: false,
  required: ['tenant_id'],
  properties: {
    tenant_id: { type: 'string', minLength: 1, maxLength: tenantIdLengthMax, pattern: tenantIdPattern.source },
  },
} as const;

const callbackBody = {
  type: 'object',
  additionalProperties: false,
  required: ['state', 'code'],
  properties: {
    // openid-client's randomState(): 32 random bytes, base64url.
    state: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
    code: { type: 'string', minLength: 1, maxLength: ssoAuthorizationCodeLengthMax },
    iss: { type: 'string', minLength: 1, maxLength: ssoUrlLengthMax },
  },
} as const;

/** The configuration as the admin routes show it: never the client secret, only that one is set. */
function present(config: SsoConfig) {
  return {
    object: 'sso_config',
    issuer: config.issuer,
    client_id: config.clientId,
    client_secret_set: true,
    redirect_uri: config.redirectUri,
    allowed_email_domains: config.allowedEmailDomains,
    default_role: config.defaultRole,
    updated_at: config.updatedAt.toISOString(),
  };
}

export async function ssoRoutes(app: FastifyInstance): Promise<void> {
  const context = { database: app.database, gatewayKeys: app.gatewayKeys };
  const publicAccess = { access: { public: true } } as const;

  // Replaces the whole configuration, secret included: what was sent is what is stored.
  app.put<{ Body: ConfigBody }>(configPath, { config: { access: { roles: adminOnly } }, schema: { body: configBody } }, async (request) => {
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
  });

  app.get(configPath, { config: { access: { roles: adminOnly } } }, async (request) => {
    return present(await getSsoConfig(app.database, principalOf(request).tenantId));
  });

  app.post<{ Body: { tenant_id: string } }>('/v1/auth/sso/start', { config: publicAccess, schema: { body: startBody } }, async (request, reply) => {
    const started = await startSso(context, request.body.tenant_id, request.log);
    reply.header('cache-control', 'no-store');
    return { authorization_url: started.authorizationUrl, state: started.state, expires_at: started.expiresAt.toISOString() };
  });

  app.post<{ Body: { state: string; code: string; iss?: string } }>(
    '/v1/auth/sso/callback',
    { config: publicAccess, schema: { body: callbackBody } },
    async (request, reply) => {
      const grant = await completeSso(context, request.body, request.log);
      // A token answer is never cached (RFC 6749 §5.1).
      reply.header('cache-control', 'no-store');
      return {
        access_token: grant.accessToken,
        token_type: 'Bearer',
        expires_in: grant.expiresInSeconds,
        tenant_id: grant.tenantId,
        user_id: grant.userId,
        roles: grant.roles,
      };
    },
  );
}
