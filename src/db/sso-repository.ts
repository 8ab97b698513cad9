// Single sign-on storage (migrations/0009_sso.sql): a tenant's OIDC configuration (tenant-owned, row-level
// security) and the pending authorization requests between sso/start and sso/callback (system role only).
import type { Role } from '../credentials/roles.ts';
import type { Queryable } from '../infra/database.ts';

export interface SsoConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  readonly allowedEmailDomains: readonly string[];
  readonly defaultRole: Role;
  readonly updatedAt: Date;
}

export type SsoConfigInput = Omit<SsoConfig, 'updatedAt'>;

interface SsoConfigRow {
  issuer: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  allowed_email_domains: string[];
  default_role: Role;
  updated_at: Date;
}

const configColumns = 'issuer, client_id, client_secret, redirect_uri, allowed_email_domains, default_role, updated_at';

const toSsoConfig = (row: SsoConfigRow): SsoConfig => ({
  issuer: row.issuer,
  clientId: row.client_id,
  clientSecret: row.client_secret,
  redirectUri: row.redirect_uri,
  allowedEmailDomains: row.allowed_email_domains,
  defaultRole: row.default_role,
  updatedAt: row.updated_at,
});

export async function findSsoConfig(tx: Queryable, tenantId: string): Promise<SsoConfig | undefined> {
  const { rows } = await tx.query<SsoConfigRow>(`SELECT ${configColumns} FROM sso_configs WHERE tenant_id = $1`, [tenantId]);
  return rows[0] && toSsoConfig(rows[0]);
}

/** Creates or replaces the tenant's configuration whole; `updated_at` is the time of this write. */
export async function upsertSsoConfig(tx: Queryable, tenantId: string, config: SsoConfigInput): Promise<SsoConfig> {
  const { rows } = await tx.query<SsoConfigRow>(
    `INSERT INTO sso_configs (tenant_id, issuer, client_id, client_secret, redirect_uri, allowed_email_domains, default_role)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7)
     ON CONFLICT (tenant_id) DO UPDATE SET
       issuer = EXCLUDED.issuer,
       client_id = EXCLUDED.client_id,
       client_secret = EXCLUDED.client_secret,
       redirect_uri = EXCLUDED.redirect_uri,
       allowed_email_domains = EXCLUDED.allowed_email_domains,
       default_role = EXCLUDED.default_role,
       updated_at = now()
     RETURNING ${configColumns}`,
    [tenantId, config.issuer, config.clientId, config.clientSecret, config.redirectUri, config.allowedEmailDomains, config.defaultRole],
  );
  return toSsoConfig(rows[0]!);
}

export interface SsoState {
  readonly state: string;
  readonly tenantId: string;
  readonly issuer: string;
  readonly nonce: string;
  readonly pkceCodeVerifier: string;
  readonly redirectUri: string;
}

/** Records an sso/start; the expiry is computed by the database clock. System role. */
export async function insertSsoState(systemTx: Queryable, state: SsoState, lifetimeMs: number): Promise<{ expiresAt: Date }> {
  const { rows } = await systemTx.query<{ expires_at: Date }>(
    `INSERT INTO sso_states (state, tenant_id, issuer, nonce, pkce_code_verifier, redirect_uri, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::double precision / 1000))
     RETURNING expires_at`,
    [state.state, state.tenantId, state.issuer, state.nonce, state.pkceCodeVerifier, state.redirectUri, lifetimeMs],
  );
  return { expiresAt: rows[0]!.expires_at };
}

/** Marks the state used and answers it, in one statement, only if it was unused and unexpired: of two callbacks
 * racing with one state, exactly one gets it. Undefined for an unknown, used or expired state. System role. */
export async function consumeSsoState(systemTx: Queryable, state: string): Promise<SsoState | undefined> {
  const { rows } = await systemTx.query<{
    state: string;
    tenant_id: string;
    issuer: string;
    nonce: string;
    pkce_code_verifier: string;
    redirect_uri: string;
  }>(
    `UPDATE sso_states SET consumed_at = now()
     WHERE state = $1 AND consumed_at IS NULL AND expires_at > now()
     RETURNING state, tenant_id, issuer, nonce, pkce_code_verifier, redirect_uri`,
    [state],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    state: row.state,
    tenantId: row.tenant_id,
    issuer: row.issuer,
    nonce: row.nonce,
    pkceCodeVerifier: row.pkce_code_verifier,
    redirectUri: row.redirect_uri,
  };
}
