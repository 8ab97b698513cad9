-- Device login (RFC 8628, docs/sign-in.md#device-login): a CLI or SDK asks for a device code and a short user code,
-- a signed-in person approves or denies the user code in the console, and the device, polling with its device
-- code, receives a session token once.
--
-- A request starts before any tenant is known (the device does not say who will approve it), so `tenant_id` is
-- NULL while the request is pending and set to the approving person's tenant by the decision. Row-level security
-- follows that life: the tenant role svc_app sees a row that no tenant has decided yet, or one its own tenant
-- decided, and may only write its own tenant into a row. A request decided by tenant A is invisible to tenant B
-- (the service checks it too). The device's polls run as svc_system: the device has no tenant.
--
-- An approval grants a session of the approving person by default. In a sandbox tenant an admin may instead grant an
-- API key (`grant_kind = 'api_key'`, with its role): it is minted when the device collects it, like any other key.
--
-- The device code is a bearer secret: only SHA-256 of it is stored (`device_code_sha256`), found by the id that
-- prefixes the code and compared in constant time. The user code is stored normalized (8 letters, no dash); it is
-- low-entropy by design (a person types it), so lookups by user code are rate limited per person and per address.

CREATE TABLE device_authorizations (
  device_authorization_id text PRIMARY KEY CHECK (device_authorization_id ~ '^[0-9a-f]{32}$'),
  device_code_sha256      bytea NOT NULL CHECK (length(device_code_sha256) = 32),
  -- 8 characters of the alphabet BCDFGHJKMNPQRSTVWXZ (no vowels, no 0/O/1/I/L); unique, so a typed code names one
  -- request. Expired rows are pruned a day after expiry, which frees their codes.
  user_code               text NOT NULL UNIQUE CHECK (user_code ~ '^[BCDFGHJKMNPQRSTVWXZ]{8}$'),
  -- What the device called itself (`svc CLI on build-7`), shown to the approver; printable, at most 64 characters.
  client_name             text CHECK (length(client_name) BETWEEN 1 AND 64 AND client_name !~ '[[:cntrl:]]'),
  status                  text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  -- The polling interval the device must keep; grows by 5 s with each slow_down (RFC 8628 section 3.5).
  interval_seconds        integer NOT NULL CHECK (interval_seconds BETWEEN 1 AND 60),
  last_polled_at          timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  expires_at              timestamptz NOT NULL,
  -- Set by the decision: who decided, in which tenant.
  tenant_id               text REFERENCES tenants (tenant_id),
  user_id                 text REFERENCES users (user_id),
  decided_at              timestamptz,
  -- What an approval grants the device: a session of the approver (any tenant), or, in a sandbox tenant and decided
  -- by an admin, an API key of `key_role`, minted when the device collects it (its secret is never stored here).
  grant_kind              text NOT NULL DEFAULT 'session' CHECK (grant_kind IN ('session', 'api_key')),
  key_role                text CHECK (key_role IN ('admin', 'operator', 'agent', 'auditor')),
  -- The key minted for the device, once it collected it.
  key_id                  text CHECK (key_id ~ '^key_[0-9a-f]{32}$'),
  -- Set when the device received its token: a device code answers with a token once.
  consumed_at             timestamptz,
  CHECK (expires_at > created_at),
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'pending') = (tenant_id IS NULL)),
  CHECK ((tenant_id IS NULL) = (user_id IS NULL)),
  CHECK (consumed_at IS NULL OR status = 'approved'),
  CHECK ((grant_kind = 'api_key') = (key_role IS NOT NULL)),
  CHECK (grant_kind = 'session' OR status = 'approved'),
  CHECK (key_id IS NULL OR (grant_kind = 'api_key' AND consumed_at IS NOT NULL))
);
CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

ALTER TABLE device_authorizations ENABLE ROW LEVEL SECURITY;
ALTER TABLE device_authorizations FORCE ROW LEVEL SECURITY;
-- Undecided requests belong to no tenant yet, so every tenant may read them (by user code, rate limited); a
-- decision writes the deciding tenant, and only its own.
CREATE POLICY device_authorizations_own ON device_authorizations TO svc_app
  USING (tenant_id IS NULL OR tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY device_authorizations_system ON device_authorizations TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, UPDATE ON device_authorizations TO svc_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON device_authorizations TO svc_system;
