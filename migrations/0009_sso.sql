-- Single sign-on with OpenID Connect (DESIGN.md §2, docs/sso.md): one identity-provider configuration per tenant,
-- and the short-lived authorization requests (state, nonce, PKCE verifier) between sso/start and sso/callback.
--
-- `sso_configs` is tenant-owned (row-level security like every tenant table): the admin routes read and write it
-- inside the admin's tenant. `client_secret` is stored as given: it is a secret at rest, protected only by the
-- database's access control, until the service has a key-management story to encrypt it with.
--
-- `sso_states` is reached only through Database.system: the callback knows the state, not the tenant. Like the
-- sign-in tables it has a policy for svc_system alone and no grant to svc_app.

CREATE TABLE sso_configs (
  tenant_id             text PRIMARY KEY REFERENCES tenants (tenant_id),
  -- https, or http on a loopback host (tests, local identity providers): checked by the application.
  issuer                text NOT NULL CHECK (length(issuer) BETWEEN 8 AND 2048 AND issuer ~ '^https?://'),
  client_id             text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 255),
  client_secret         text NOT NULL CHECK (length(client_secret) BETWEEN 1 AND 1024),
  redirect_uri          text NOT NULL CHECK (length(redirect_uri) BETWEEN 8 AND 2048 AND redirect_uri ~ '^https?://'),
  -- Lowercase DNS names, each checked by the application; at least one, so a configuration always admits someone.
  allowed_email_domains text[] NOT NULL CHECK (cardinality(allowed_email_domains) BETWEEN 1 AND 50),
  -- The role a person gets when SSO creates their membership; never admin (docs/sso.md).
  default_role          text NOT NULL CHECK (default_role IN ('operator', 'agent', 'auditor')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE sso_configs ENABLE ROW LEVEL SECURITY;
ALTER TABLE sso_configs FORCE ROW LEVEL SECURITY;
CREATE POLICY sso_configs_own ON sso_configs TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY sso_configs_system ON sso_configs TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON sso_configs TO svc_app;
GRANT SELECT, INSERT, UPDATE ON sso_configs TO svc_system;

-- One sso/start. The state is the key the identity provider hands back; it is single use (consumed_at) and
-- lives 10 minutes (ssoStateLifetimeMs), judged by the database clock. `issuer` is the configuration's issuer at
-- start, so a configuration changed mid-flight fails the callback instead of mixing two providers.
CREATE TABLE sso_states (
  state              text PRIMARY KEY CHECK (state ~ '^[A-Za-z0-9_-]{43}$'),
  tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
  issuer             text NOT NULL CHECK (length(issuer) BETWEEN 8 AND 2048),
  nonce              text NOT NULL CHECK (nonce ~ '^[A-Za-z0-9_-]{43}$'),
  pkce_code_verifier text NOT NULL CHECK (pkce_code_verifier ~ '^[A-Za-z0-9_-]{43,128}$'),
  redirect_uri       text NOT NULL CHECK (length(redirect_uri) BETWEEN 8 AND 2048),
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz NOT NULL,
  consumed_at        timestamptz,
  CHECK (expires_at > created_at)
);
CREATE INDEX sso_states_expiry ON sso_states (expires_at);

ALTER TABLE sso_states ENABLE ROW LEVEL SECURITY;
ALTER TABLE sso_states FORCE ROW LEVEL SECURITY;
CREATE POLICY sso_states_system ON sso_states TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON sso_states TO svc_system;
