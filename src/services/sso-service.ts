// Single sign-on with OpenID Connect (docs/sso.md). A tenant's admin configures its identity provider;
// sso/start builds an authorization request (PKCE S256, state, nonce, all stored); sso/callback trades the code with
// openid-client, which checks state, issuer, PKCE, and the ID token's signature, audience and nonce. Then the email
// must be verified and in an allowed domain, and the person is provisioned just in time with the default role.
import * as oidc from 'openid-client';
import type { FastifyBaseLogger } from 'fastify';
import { BoundedCache } from '../credentials/bounded-cache.ts';
import { issueSessionToken } from '../credentials/session-token.ts';
import type { Role } from '../credentials/roles.ts';
import { consumeSsoState, findSsoConfig, insertSsoState, upsertSsoConfig, type SsoConfig, type SsoConfigInput } from '../db/sso-repository.ts';
import { ensureUser, findMembership, insertMembership, type Membership } from '../db/user-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import {
  ssoDiscoveryCacheEntriesMax,
  ssoDiscoveryCacheTtlMs,
  ssoProviderTimeoutSeconds,
  ssoStateLifetimeMs,
  ssoUrlLengthMax,
} from '../limits.ts';
import { isUniqueViolation, type Database } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import type { SessionGrant } from './sign-in-service.ts';
import { isValidEmail, mintUserId, normalizeEmail } from './user-service.ts';

export interface SsoContext {
  readonly database: Database;
  readonly gatewayKeys: GatewayKeyring;
}

// The roles SSO may give a new member and the allowed email domains' grammar are part of the configuration route's
// contract (src/contracts/sso.ts).
export { emailDomainPatternSource, ssoDefaultRoles } from '../contracts/sso.ts';
export const ssoDefaultRoleDefault: Role = 'auditor';

// ---- configuration ----

/** True for hosts that only this machine can reach: http is accepted there (tests, a local identity provider). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** An absolute https URL (http on a loopback host) without credentials, query or fragment; else 400 naming the field. */
function checkUrl(field: 'issuer' | 'redirect_uri', text: string): string {
  const invalid = () => new ServiceError('sso.config_invalid', { details: { field } });
  if (text.length > ssoUrlLengthMax || !URL.canParse(text)) throw invalid();
  const url = new URL(text);
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  // A query would be lost: openid-client rebuilds the redirect_uri of the token request without one.
  if (!secure || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || text.includes('#')) throw invalid();
  return text;
}

export interface SsoConfigRequest {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  readonly allowedEmailDomains: readonly string[];
  readonly defaultRole?: Role | undefined;
}

/** Validates and stores the tenant's configuration, replacing any previous one whole. The shapes (lengths, domain
 * pattern, role enum) are the route schema's; the URL rules are checked here. */
export async function putSsoConfig(database: Database, tenantId: string, request: SsoConfigRequest): Promise<SsoConfig> {
  const config: SsoConfigInput = {
    issuer: checkUrl('issuer', request.issuer),
    clientId: request.clientId,
    clientSecret: request.clientSecret,
    redirectUri: checkUrl('redirect_uri', request.redirectUri),
    allowedEmailDomains: [...new Set(request.allowedEmailDomains)].sort(),
    defaultRole: request.defaultRole ?? ssoDefaultRoleDefault,
  };
  const stored = await database.tenant(tenantId, (tx) => upsertSsoConfig(tx, tenantId, config));
  discoveryCache.delete(stored.issuer);
  return stored;
}

export async function getSsoConfig(database: Database, tenantId: string): Promise<SsoConfig> {
  const config = await database.tenant(tenantId, (tx) => findSsoConfig(tx, tenantId));
  if (!config) throw new ServiceError('sso.not_configured');
  return config;
}

// ---- the identity provider ----

/** Discovered provider metadata by issuer. Only an optimization: a miss discovers again, and a stale entry lives at
 * most ssoDiscoveryCacheTtlMs (a PUT of the configuration drops its issuer's entry at once in this process). */
const discoveryCache = new BoundedCache<string, oidc.ServerMetadata>(ssoDiscoveryCacheEntriesMax, ssoDiscoveryCacheTtlMs);

/** The openid-client configuration for a tenant's provider. Plain http is allowed only for a loopback issuer (the
 * stored configuration was checked by checkUrl; it is re-checked here because openid-client refuses http otherwise
 * and this is the one place that lifts that refusal). */
async function providerConfiguration(config: SsoConfig, log: FastifyBaseLogger): Promise<oidc.Configuration> {
  const issuerUrl = new URL(config.issuer);
  const insecure = issuerUrl.protocol === 'http:';
  if (insecure && !isLoopbackHost(issuerUrl.hostname)) throw new Error('an http issuer that is not loopback reached the SSO service');
  const clientAuthentication = oidc.ClientSecretBasic(config.clientSecret);
  let metadata = discoveryCache.get(config.issuer);
  if (!metadata) {
    try {
      const discovered = await oidc.discovery(issuerUrl, config.clientId, undefined, clientAuthentication, {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
        timeout: ssoProviderTimeoutSeconds,
      });
      metadata = { ...discovered.serverMetadata() };
    } catch (error) {
      log.warn({ issuer: config.issuer, reason: failureReason(error) }, 'sso: discovery failed');
      throw new ServiceError('sso.provider_unavailable');
    }
    discoveryCache.set(config.issuer, metadata);
  }
  const configuration = new oidc.Configuration(metadata, config.clientId, undefined, clientAuthentication);
  configuration.timeout = ssoProviderTimeoutSeconds;
  if (insecure) oidc.allowInsecureRequests(configuration);
  // Without this openid-client trusts the ID token from the token endpoint on the strength of TLS alone (OIDC Core
  // §3.1.3.7 allows it) and does not check its signature. We check it: a loopback issuer has no TLS, and the
  // signature is what ties the token to the issuer's published keys. The JWKS is fetched per callback (not cached).
  oidc.enableNonRepudiationChecks(configuration);
  return configuration;
}

/** What may be logged of an openid-client error: its name, code and message, never the request or the tokens. */
function failureReason(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const { name, message } = error;
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return { name, message, ...(typeof code === 'string' ? { code } : {}), ...(cause ? { cause } : {}) };
}

// ---- start ----

export interface StartedSso {
  readonly authorizationUrl: string;
  readonly state: string;
  readonly expiresAt: Date;
}

/** Builds the authorization request for the tenant the person chose. An unknown tenant and a tenant without SSO give
 * the same 404, so the route does not tell which tenants exist. */
export async function startSso(context: SsoContext, tenantId: string, log: FastifyBaseLogger): Promise<StartedSso> {
  const config = await context.database.tenant(tenantId, (tx) => findSsoConfig(tx, tenantId));
  if (!config) throw new ServiceError('sso.not_configured');
  const configuration = await providerConfiguration(config, log);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const codeChallenge = await oidc.calculatePKCECodeChallenge(pkceCodeVerifier);
  const { expiresAt } = await context.database.system((tx) =>
    insertSsoState(tx, { state, tenantId, issuer: config.issuer, nonce, pkceCodeVerifier, redirectUri: config.redirectUri }, ssoStateLifetimeMs),
  );
  const authorizationUrl = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: config.redirectUri,
    scope: 'openid email',
    response_type: 'code',
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { authorizationUrl: authorizationUrl.href, state, expiresAt };
}

// ---- callback ----

export interface SsoCallbackRequest {
  readonly state: string;
  readonly code: string;
  /** The `iss` of the authorization response (RFC 9207), when the front end forwards it. */
  readonly iss?: string | undefined;
}

/** Trades the code for a session JWT. The state is consumed first, in its own transaction, so it is single use
 * whatever happens next: a failed exchange needs a new sso/start, exactly as the provider's code is single use. */
export async function completeSso(context: SsoContext, request: SsoCallbackRequest, log: FastifyBaseLogger): Promise<SessionGrant> {
  const pending = await context.database.system((tx) => consumeSsoState(tx, request.state));
  if (!pending) throw new ServiceError('sso.state_invalid');
  const config = await context.database.tenant(pending.tenantId, (tx) => findSsoConfig(tx, pending.tenantId));
  if (!config) throw new ServiceError('sso.not_configured');
  if (config.issuer !== pending.issuer) {
    log.warn({ tenant_id: pending.tenantId }, 'sso: the configured issuer changed between start and callback');
    throw new ServiceError('sso.exchange_failed');
  }
  const configuration = await providerConfiguration(config, log);
  const email = await verifiedEmail(configuration, pending, request, log);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!config.allowedEmailDomains.includes(domain)) {
    log.info({ tenant_id: pending.tenantId, email_domain: domain }, 'sso: email domain not allowed');
    throw new ServiceError('sso.email_domain_not_allowed');
  }
  const membership = await provision(context.database, pending.tenantId, email, config.defaultRole);
  const token = await issueSessionToken(context.gatewayKeys, membership);
  return {
    accessToken: token.accessToken,
    expiresInSeconds: token.expiresInSeconds,
    tenantId: membership.tenantId,
    userId: membership.userId,
    roles: [membership.role],
  };
}

/** The code exchange and the email it vouches for. openid-client checks the authorization response's state and iss,
 * sends the PKCE verifier, and checks the ID token's signature (the issuer's JWKS), iss, aud (our client_id), exp,
 * iat and nonce. The email comes from the ID token, or, when the provider keeps it out of the ID token, from the
 * userinfo endpoint (whose `sub` must be the ID token's). Both claims are read from the same source. */
async function verifiedEmail(
  configuration: oidc.Configuration,
  pending: { tenantId: string; state: string; nonce: string; pkceCodeVerifier: string; redirectUri: string },
  request: SsoCallbackRequest,
  log: FastifyBaseLogger,
): Promise<string> {
  const callbackUrl = new URL(pending.redirectUri);
  callbackUrl.searchParams.set('code', request.code);
  callbackUrl.searchParams.set('state', request.state);
  // Without a forwarded iss, the expected one stands in: the state already binds this exchange to the tenant's issuer.
  callbackUrl.searchParams.set('iss', request.iss ?? configuration.serverMetadata().issuer);
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      pkceCodeVerifier: pending.pkceCodeVerifier,
      idTokenExpected: true,
    });
    const idToken = tokens.claims();
    if (!idToken) throw new Error('no ID token in the token response');
    claims = idToken.email === undefined ? await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub) : idToken;
  } catch (error) {
    log.warn({ tenant_id: pending.tenantId, reason: failureReason(error) }, 'sso: code exchange failed');
    throw new ServiceError('sso.exchange_failed', { cause: error });
  }
  // Only a boolean true counts: a string "true" or a missing claim is not a verification.
  if (typeof claims.email !== 'string' || claims.email_verified !== true) throw new ServiceError('sso.email_unverified');
  const email = normalizeEmail(claims.email);
  if (!isValidEmail(email)) throw new ServiceError('sso.email_unverified');
  return email;
}

/** The person's membership in the tenant, created just in time with the default role. An existing membership keeps
 * its role: an admin who promoted someone is not overruled by the next sign-in. */
async function provision(database: Database, tenantId: string, email: string, defaultRole: Role): Promise<Membership> {
  const attempt = () =>
    database.system(async (tx) => {
      const user = await ensureUser(tx, mintUserId(), email);
      return (await findMembership(tx, tenantId, user.userId)) ?? (await insertMembership(tx, tenantId, user.userId, defaultRole));
    });
  try {
    return await attempt();
  } catch (error) {
    // Two first sign-ins of one person at once: the loser's insert conflicts; the winner's row is there now.
    if (isUniqueViolation(error, 'tenant_memberships_pkey')) return attempt();
    throw error;
  }
}
