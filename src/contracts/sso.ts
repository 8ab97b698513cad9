// Contracts of single sign-on with OpenID Connect (docs/sso.md): the admin configuration routes, and the public
// start and callback routes that end in the same session as a one-time-code sign-in.
import Type, { type Static } from 'typebox';
import {
  ssoAllowedEmailDomainsMax,
  ssoAuthorizationCodeLengthMax,
  ssoClientIdLengthMax,
  ssoClientSecretLengthMax,
  ssoEmailDomainLengthMax,
  ssoUrlLengthMax,
} from '../limits.ts';
import { Timestamp } from './common.ts';
import { Role } from './principal.ts';
import { TenantId } from './sign-in.ts';

/** The roles SSO may give a new member. Never admin: whoever controls the identity provider (or any mailbox in an
 * allowed domain) would otherwise become an administrator of the tenant by signing in. */
export const ssoDefaultRoles = ['operator', 'agent', 'auditor'] as const;
const SsoDefaultRole = Type.Enum(ssoDefaultRoles);

/** A lowercase DNS name of at least two labels (`example.com`, `eu.corp.example`). */
export const emailDomainPatternSource = '^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$';

const Url = Type.String({ minLength: 1, maxLength: ssoUrlLengthMax });

export const SsoConfigBody = Type.Object(
  {
    issuer: Url,
    client_id: Type.String({ minLength: 1, maxLength: ssoClientIdLengthMax }),
    client_secret: Type.String({ minLength: 1, maxLength: ssoClientSecretLengthMax }),
    redirect_uri: Url,
    allowed_email_domains: Type.Array(Type.String({ maxLength: ssoEmailDomainLengthMax, pattern: emailDomainPatternSource }), {
      minItems: 1,
      maxItems: ssoAllowedEmailDomainsMax,
    }),
    default_role: Type.Optional(SsoDefaultRole),
  },
  { additionalProperties: false },
);
export type SsoConfigBody = Static<typeof SsoConfigBody>;

/** The configuration as the admin routes show it: never the client secret, only that one is set. */
export const SsoConfig = Type.Object(
  {
    object: Type.Literal('sso_config'),
    issuer: Type.String(),
    client_id: Type.String(),
    client_secret_set: Type.Literal(true),
    redirect_uri: Type.String(),
    allowed_email_domains: Type.Array(Type.String()),
    default_role: Role,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export type SsoConfig = Static<typeof SsoConfig>;

export const SsoStartBody = Type.Object({ tenant_id: TenantId }, { additionalProperties: false });
export type SsoStartBody = Static<typeof SsoStartBody>;

export const SsoStarted = Type.Object(
  { authorization_url: Type.String(), state: Type.String(), expires_at: Timestamp },
  { additionalProperties: false },
);
export type SsoStarted = Static<typeof SsoStarted>;

export const SsoCallbackBody = Type.Object(
  {
    /** openid-client's randomState(): 32 random bytes, base64url. */
    state: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' }),
    code: Type.String({ minLength: 1, maxLength: ssoAuthorizationCodeLengthMax }),
    iss: Type.Optional(Url),
  },
  { additionalProperties: false },
);
export type SsoCallbackBody = Static<typeof SsoCallbackBody>;
