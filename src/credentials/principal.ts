// Who is calling: the authenticated identity every route is scoped by. Its tenant is the only source of scope.
import type { ApiKeyKind, Environment } from './api-key.ts';
import type { Role } from './roles.ts';

export interface Principal {
  readonly tenantId: string;
  readonly tenantUuid: string;
  readonly environment: Environment;
  readonly role: Role;
  /** Stable identifier of the caller within the tenant: the key id for API keys, the user id for sessions. */
  readonly subject: string;
  readonly credential: CredentialRef;
}

/** What the caller presented: a service-account API key, or a person's session JWT. */
export type CredentialRef = ApiKeyCredentialRef | SessionCredentialRef;

export interface ApiKeyCredentialRef {
  readonly type: 'api_key';
  readonly keyId: string;
  readonly keyKind: ApiKeyKind;
  /** Scopes of a restricted key; empty for a standard key, which is limited by its role alone. */
  readonly scopes: readonly string[];
}

/** A session is bound by its role alone, like a standard key. */
export interface SessionCredentialRef {
  readonly type: 'session';
  readonly userId: string;
  /** The token's `jti`. */
  readonly tokenId: string;
  readonly expiresAt: Date;
}
