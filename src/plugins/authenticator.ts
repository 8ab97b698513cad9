// Turns a bearer credential into a Principal: an API key, or else a session JWT. Verified keys are cached for a
// few seconds per process; a revocation anywhere is pushed to every replica through Postgres NOTIFY, and the
// cache's TTL bounds staleness even if a notification is lost (the listener's connection dropped: it is reopened at
// once, and the whole key cache is forgotten then, since what was announced meanwhile is gone). A session's
// membership (tenant and role) is re-read from the database on a short cache, so a removed member or a changed role
// stops working within seconds.
import type pg from 'pg';
import {
  apiKeyCacheEntriesMax,
  auditExportDownloadTokenLengthMax,
  apiKeyCacheTtlMs,
  apiKeyLastUsedWriteIntervalMs,
  sessionMembershipCacheEntriesMax,
  sessionMembershipCacheTtlMs,
  sessionTokenLengthMax,
} from '../limits.ts';
import { findApiKeyCredential, touchApiKeyLastUsed, type ApiKeyCredential } from '../db/api-key-repository.ts';
import { findSessionMembership, type SessionMembership } from '../db/user-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { NotificationListener } from '../infra/notification-listener.ts';
import { credentialRevocationChannel, looksLikeApiKey, parseApiKey, secretMatches } from '../credentials/api-key.ts';
import { readAuthorizationHeader } from '../credentials/authorization-header.ts';
import { BoundedCache } from '../credentials/bounded-cache.ts';
import { jwtAudiences, JwtRejectedError, verifyGatewayJwt } from '../credentials/gateway-jwt.ts';
import type { Principal } from '../credentials/principal.ts';
import { readSessionClaims, type SessionClaims } from '../credentials/session-token.ts';

/** What a download JWT grants: one audit export job of one tenant (docs/audit-exports.md#download-tokens). Never a
 * Principal. */
export interface AuditExportDownloadGrant {
  readonly tenantId: string;
  readonly jobId: string;
  /** The token's `jti`. */
  readonly tokenId: string;
}

export interface AuthenticatorLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** What Postgres shows as `application_name` for the revocation listener's connection. */
export const revocationListenerApplicationName = 'svc revocation listener';

export class Authenticator {
  readonly #credentials = new BoundedCache<string, ApiKeyCredential>(apiKeyCacheEntriesMax, apiKeyCacheTtlMs);
  readonly #lastUsedWrittenAtMs = new BoundedCache<string, number>(apiKeyCacheEntriesMax, apiKeyLastUsedWriteIntervalMs);
  readonly #memberships = new BoundedCache<string, SessionMembership>(sessionMembershipCacheEntriesMax, sessionMembershipCacheTtlMs);
  #listener: NotificationListener | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: AuthenticatorLogger,
    /** The gateway's published keys, against which session JWTs are verified. */
    private readonly gatewayKeys: GatewayKeyring,
  ) {}

  /** Subscribes to revocations from other processes, and stays subscribed. While the subscription is down, a
   * revocation reaches this process only through the cache TTL; once it is back, every cached key is read again. */
  async start(connection: pg.ClientConfig): Promise<void> {
    this.#listener = new NotificationListener({
      connection,
      channel: credentialRevocationChannel,
      applicationName: revocationListenerApplicationName,
      purpose: 'credential revocation listener',
      logger: this.logger,
      onNotification: (keyId) => this.forget(keyId),
      onResubscribed: () => this.#credentials.clear(),
    });
    await this.#listener.start();
  }

  async stop(): Promise<void> {
    await this.#listener?.stop();
    this.#listener = undefined;
  }

  /** Drops a key from this process's cache (after a revocation). */
  forget(keyId: string): void {
    this.#credentials.delete(keyId);
  }

  /** Anything shaped like an API key is tried only as one; every other bearer only as a session JWT. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = bearerToken(authorization, { paymentAllowed: true });
    return looksLikeApiKey(token) ? this.#apiKey(token) : this.#session(token);
  }

  /** A download JWT (aud svc-audit-export-download), for download routes only: `authenticate` never accepts one
   * (its session path verifies aud svc-session), and this never accepts an API key or a session token. */
  async authenticateAuditExportDownload(authorization: string | undefined): Promise<AuditExportDownloadGrant> {
    const token = bearerToken(authorization, { paymentAllowed: false });
    if (looksLikeApiKey(token) || token.length > auditExportDownloadTokenLengthMax) throw new ServiceError('auth.credential_invalid');
    let payload: Awaited<ReturnType<typeof verifyGatewayJwt>>;
    try {
      payload = await verifyGatewayJwt(this.gatewayKeys, token, jwtAudiences.auditExportDownload);
    } catch (error) {
      if (error instanceof JwtRejectedError && error.reason === 'expired') throw new ServiceError('audit_export.download_token_expired');
      throw new ServiceError('auth.credential_invalid');
    }
    const jobId = payload.job_id;
    if (typeof jobId !== 'string' || payload.sub !== jobId || typeof payload.jti !== 'string') throw new ServiceError('auth.credential_invalid');
    return { tenantId: payload.tid, jobId, tokenId: payload.jti };
  }

  async #apiKey(token: string): Promise<Principal> {
    const parsed = parseApiKey(token);
    if (!parsed) throw new ServiceError('auth.credential_invalid');

    let credential = this.#credentials.get(parsed.keyId);
    if (!credential) {
      credential = await this.database.system((tx) => findApiKeyCredential(tx, parsed.keyId));
      if (!credential) throw new ServiceError('auth.credential_invalid');
      this.#credentials.set(parsed.keyId, credential);
    }
    // Every field of the presented key must match the record, the secret in constant time: the current one, or the
    // one a rotation replaced while its overlap lasts. Both comparisons always run, so timing tells neither apart.
    const current = secretMatches(parsed.secretSha256, credential.secretSha256);
    const previous = credential.previousSecretSha256 !== null && secretMatches(parsed.secretSha256, credential.previousSecretSha256);
    if ((!current && !previous) || credential.kind !== parsed.kind || credential.environment !== parsed.environment) {
      throw new ServiceError('auth.credential_invalid');
    }
    if (credential.revoked) throw new ServiceError('auth.credential_revoked');
    // The overlap's end is read from the record at every request, so a cached credential refuses it on time too.
    if (!current && credential.previousSecretExpiresAt!.getTime() <= Date.now()) throw new ServiceError('auth.credential_rotated');
    this.#recordUse(credential.keyId);
    return {
      tenantId: credential.tenantId,
      tenantUuid: credential.tenantUuid,
      environment: credential.environment,
      role: credential.role,
      subject: credential.keyId,
      credential: { type: 'api_key', keyId: credential.keyId, keyKind: credential.kind, scopes: credential.scopes },
    };
  }

  /** A session JWT: signature, audience and times first (gateway-jwt.ts), then our claims, then the membership it
   * names must still exist with the role the token carries. Only "expired" is told apart from "invalid"; a genuine
   * token whose membership is gone or whose role changed is "revoked" (sign in again). */
  async #session(token: string): Promise<Principal> {
    if (token.length > sessionTokenLengthMax) throw new ServiceError('auth.credential_invalid');
    let claims: SessionClaims | undefined;
    try {
      claims = readSessionClaims(await verifyGatewayJwt(this.gatewayKeys, token, jwtAudiences.session));
    } catch (error) {
      if (error instanceof JwtRejectedError && error.reason === 'expired') throw new ServiceError('auth.credential_expired');
      throw new ServiceError('auth.credential_invalid');
    }
    if (!claims) throw new ServiceError('auth.credential_invalid');
    const membership = await this.#membership(claims.tenantId, claims.userId);
    if (!membership || membership.role !== claims.role) throw new ServiceError('auth.credential_revoked');
    return {
      tenantId: membership.tenantId,
      tenantUuid: membership.tenantUuid,
      environment: membership.environment,
      role: membership.role,
      subject: claims.userId,
      credential: { type: 'session', userId: claims.userId, tokenId: claims.tokenId, expiresAt: claims.expiresAt },
    };
  }

  /** Read inside the token's tenant, so row-level security applies; only found memberships are cached. */
  async #membership(tenantId: string, userId: string): Promise<SessionMembership | undefined> {
    const cacheKey = `${tenantId} ${userId}`;
    const cached = this.#memberships.get(cacheKey);
    if (cached) return cached;
    const membership = await this.database.tenant(tenantId, (tx) => findSessionMembership(tx, tenantId, userId));
    if (membership) this.#memberships.set(cacheKey, membership);
    return membership;
  }

  /** `last_used_at` is coarse on purpose: at most one write per key per interval per process, off the request path. */
  #recordUse(keyId: string): void {
    if (this.#lastUsedWrittenAtMs.get(keyId) !== undefined) return;
    const now = Date.now();
    this.#lastUsedWrittenAtMs.set(keyId, now);
    this.database
      .system((tx) => touchApiKeyLastUsed(tx, keyId, new Date(now)))
      .catch((error: unknown) => this.logger.warn({ err: error, key_id: keyId }, 'could not record last_used_at'));
  }
}

/** The bearer token of an Authorization header. A payment credential beside it (`Bearer …, Payment …`) is the fund
 * route's business (the MPP rail reads it) and is allowed where `paymentAllowed`; it never authenticates anyone. */
function bearerToken(authorization: string | undefined, options: { paymentAllowed: boolean }): string {
  if (authorization === undefined || authorization.trim() === '') throw new ServiceError('auth.credential_missing');
  const credentials = readAuthorizationHeader(authorization);
  if (credentials?.bearer === undefined || (credentials.payment !== undefined && !options.paymentAllowed)) {
    throw new ServiceError('auth.credential_invalid');
  }
  return credentials.bearer;
}
