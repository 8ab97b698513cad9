-- Tenants, service-account API keys, and the two database roles that row-level security is written for.
--
-- svc_app    : the role of every request's transaction. Policies let it see only rows whose tenant_id equals
--              the transaction's `app.tenant_id` setting, so a query that forgets its WHERE clause still
--              cannot read or write another tenant's rows.
-- svc_system : the role of operator work that spans tenants (CLI, credential lookup, sweepers). Explicit in
--              the code (Database.system), never the default.
-- Neither role owns a table, and FORCE ROW LEVEL SECURITY binds the owner too; only a superuser bypasses it.

DO $$
BEGIN
  CREATE ROLE svc_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- Roles are cluster-wide: another database of this cluster (or a concurrent start) created it.
END $$;

DO $$
BEGIN
  CREATE ROLE svc_system NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END $$;

-- The login role must be able to SET ROLE to both. A superuser can already; an owner with CREATEROLE gets it here.
DO $$
BEGIN
  EXECUTE format('GRANT svc_app, svc_system TO %I', current_user);
EXCEPTION WHEN OTHERS THEN
  NULL;
END $$;

GRANT USAGE ON SCHEMA public TO svc_app, svc_system;

CREATE TABLE tenants (
  tenant_id   text PRIMARY KEY
              CHECK (length(tenant_id) BETWEEN 1 AND 64 AND tenant_id ~ '^[a-z0-9][a-z0-9._-]*$'),
  tenant_uuid uuid NOT NULL UNIQUE,
  environment text NOT NULL CHECK (environment IN ('sandbox', 'live')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  key_id        text PRIMARY KEY CHECK (key_id ~ '^key_[0-9a-f]{32}$'),
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  kind          text NOT NULL CHECK (kind IN ('standard', 'restricted')),
  role          text NOT NULL CHECK (role IN ('admin', 'operator', 'agent', 'auditor')),
  name          text NOT NULL DEFAULT '' CHECK (length(name) <= 128),
  scopes        text[] NOT NULL DEFAULT '{}' CHECK (cardinality(scopes) <= 32),
  -- SHA-256 of the 256-bit secret: enough, since the secret is random and never chosen by a person.
  secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  CHECK (kind = 'restricted' OR cardinality(scopes) = 0)
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at DESC, key_id DESC);

-- Row-level security on every tenant-owned table.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenants_own ON tenants TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY tenants_system ON tenants TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT ON tenants TO svc_app;
GRANT SELECT, INSERT ON tenants TO svc_system;

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY api_keys_own ON api_keys TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY api_keys_system ON api_keys TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON api_keys TO svc_app;
GRANT SELECT, INSERT, UPDATE ON api_keys TO svc_system;
GRANT SELECT ON schema_migrations TO svc_app, svc_system;
