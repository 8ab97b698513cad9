-- People who sign in to the console (DESIGN.md §2, docs/sign-in.md): user identities, their tenant memberships,
-- one-time sign-in challenges, and the local mail outbox used when no SMTP transport is configured.
--
-- A person is one identity by email (`users`, global) and belongs to tenants through `tenant_memberships`
-- (tenant-owned, one role per tenant), so one person can belong to several tenants.
--
-- Sign-in starts from an email alone, before any tenant is known: `users`, `login_challenges` and `mail_outbox`
-- are not owned by a tenant and are reached only through Database.system (role svc_system). They still have row
-- level security, with a policy for svc_system alone and no grant to svc_app, so a request transaction sees none
-- of their rows even if a grant were added by mistake.

CREATE TABLE users (
  user_id    text PRIMARY KEY CHECK (user_id ~ '^usr_[0-9a-f]{32}$'),
  -- Stored lowercased, so the address a person types finds them whatever its case.
  email      text NOT NULL UNIQUE
             CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email) AND email ~ '^[^@[:space:][:cntrl:]]+@[^@[:space:][:cntrl:]]+$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tenant_memberships (
  tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
  user_id    text NOT NULL REFERENCES users (user_id),
  role       text NOT NULL CHECK (role IN ('admin', 'operator', 'agent', 'auditor')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id)
);
-- Sign-in lists a person's tenants by user.
CREATE INDEX tenant_memberships_by_user ON tenant_memberships (user_id, tenant_id);

-- One login/start. `user_id` is NULL when the email had no membership: such a challenge was sent to nobody and
-- its digest is of random bytes, so it can never verify, yet it answers, counts attempts and locks exactly like
-- any other (no account enumeration).
CREATE TABLE login_challenges (
  challenge_id text PRIMARY KEY CHECK (challenge_id ~ '^lch_[0-9a-f]{32}$'),
  email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  user_id      text REFERENCES users (user_id),
  -- SHA-256 of "<challenge_id>:<code>"; the code itself is never stored here.
  code_sha256  bytea NOT NULL CHECK (length(code_sha256) = 32),
  attempts     integer NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 5),
  locked       boolean NOT NULL DEFAULT false,
  expires_at   timestamptz NOT NULL,
  consumed_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK (expires_at > created_at),
  CHECK (NOT (locked AND consumed_at IS NOT NULL)),
  CHECK (locked = (attempts = 5))
);
CREATE INDEX login_challenges_expiry ON login_challenges (expires_at);
CREATE INDEX login_challenges_by_email ON login_challenges (email, created_at DESC);

-- Sign-in codes waiting for the operator (`svc auth outbox`) when no SMTP_URL is set. The code is here in clear:
-- this is the local-development transport, and the same code is written to the server log (DESIGN.md §2).
CREATE TABLE mail_outbox (
  challenge_id text PRIMARY KEY REFERENCES login_challenges (challenge_id),
  email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  code         text NOT NULL CHECK (code ~ '^[0-9]{6}$'),
  created_at   timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX mail_outbox_undelivered ON mail_outbox (email, created_at DESC) WHERE delivered_at IS NULL;

-- Row-level security: memberships are tenant-owned (the authenticator re-reads a session's membership inside the
-- session's tenant); the other three are system-only.
ALTER TABLE tenant_memberships ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_memberships FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_memberships_own ON tenant_memberships TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY tenant_memberships_system ON tenant_memberships TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT ON tenant_memberships TO svc_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_memberships TO svc_system;

ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;
CREATE POLICY users_system ON users TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON users TO svc_system;

ALTER TABLE login_challenges ENABLE ROW LEVEL SECURITY;
ALTER TABLE login_challenges FORCE ROW LEVEL SECURITY;
CREATE POLICY login_challenges_system ON login_challenges TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON login_challenges TO svc_system;

ALTER TABLE mail_outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE mail_outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY mail_outbox_system ON mail_outbox TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_outbox TO svc_system;
