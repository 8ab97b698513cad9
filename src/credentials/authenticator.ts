// Turns a bearer credential into a Principal. Verified keys are cached for a few seconds per process; a
// revocation anywhere is pushed to every replica through Postgres NOTIFY, and the cache's TTL bounds staleness
// even if a notification is lost.
import pg from 'pg';
import { apiKeyCacheEntriesMax, apiKeyCacheTtlMs, apiKeyLastUsedWriteIntervalMs } from '../limits.ts';
import { findApiKeyCredential, touchApiKeyLastUsed, type ApiKeyCredential } from '../db/api-key-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database } from '../platform/database.ts';
import { looksLikeApiKey, parseApiKey, secretMatches } from './api-key.ts';
import { BoundedCache } from './bounded-cache.ts';
import type { Principal } from './principal.ts';

/** The NOTIFY channel on which a revoked key id is announced. */
export const credentialRevocationChannel = 'svc_credential_revoked';

export interface AuthenticatorLogger {
  warn(object: object, message: string): void;
}

export class Authenticator {
  readonly #credentials = new BoundedCache<string, ApiKeyCredential>(apiKeyCacheEntriesMax, apiKeyCacheTtlMs);
  readonly #lastUsedWrittenAtMs = new BoundedCache<string, number>(apiKeyCacheEntriesMax, apiKeyLastUsedWriteIntervalMs);
  #listener: pg.Client | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: AuthenticatorLogger,
  ) {}

  /** Subscribes to revocations from other processes. Failure to subscribe only costs freshness (TTL still holds). */
  async start(connection: pg.ClientConfig): Promise<void> {
    const listener = new pg.Client(connection);
    listener.on('error', (error) => this.logger.warn({ err: error }, 'credential revocation listener failed'));
    listener.on('notification', (message) => {
      if (message.channel === credentialRevocationChannel && message.payload) this.forget(message.payload);
    });
    try {
      await listener.connect();
      await listener.query(`LISTEN ${credentialRevocationChannel}`);
      this.#listener = listener;
    } catch (error) {
      this.logger.warn({ err: error }, 'credential revocations will reach this process only through the cache TTL');
      await listener.end().catch(() => {});
    }
  }

  async stop(): Promise<void> {
    await this.#listener?.end().catch(() => {});
    this.#listener = undefined;
  }

  /** Drops a key from this process's cache (after a revocation). */
  forget(keyId: string): void {
    this.#credentials.delete(keyId);
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!looksLikeApiKey(token)) throw new ServiceError('auth.credential_invalid');
    const parsed = parseApiKey(token);
    if (!parsed) throw new ServiceError('auth.credential_invalid');

    let credential = this.#credentials.get(parsed.keyId);
    if (!credential) {
      credential = await this.database.system((tx) => findApiKeyCredential(tx, parsed.keyId));
      if (!credential) throw new ServiceError('auth.credential_invalid');
      this.#credentials.set(parsed.keyId, credential);
    }
    // Every field of the presented key must match the record, the secret in constant time.
    if (
      !secretMatches(parsed.secretSha256, credential.secretSha256) ||
      credential.kind !== parsed.kind ||
      credential.environment !== parsed.environment
    ) {
      throw new ServiceError('auth.credential_invalid');
    }
    if (credential.revoked) throw new ServiceError('auth.credential_revoked');
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

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') throw new ServiceError('auth.credential_missing');
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  if (!match) throw new ServiceError('auth.credential_invalid');
  return match[1]!;
}
