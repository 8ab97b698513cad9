-- The tenant key registry (DESIGN.md §2): Ed25519 public keys of the tenant's principals (by principal_did),
-- agents (by recognition-proof key_id) and operators (by operator_did). Keys are revoked, never deleted, so
-- that what they signed stays explainable. And the single-use nonces of recognition proofs.

CREATE TABLE registered_keys (
  registered_key_id text PRIMARY KEY CHECK (registered_key_id ~ '^rkey_[0-9a-f]{32}$'),
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  kind              text NOT NULL CHECK (kind IN ('principal', 'agent', 'operator')),
  subject           text NOT NULL CHECK (length(subject) BETWEEN 1 AND 256),
  public_key        bytea NOT NULL CHECK (length(public_key) = 32),
  created_at        timestamptz NOT NULL DEFAULT now(),
  revoked_at        timestamptz
);
CREATE INDEX registered_keys_by_tenant ON registered_keys (tenant_id, created_at DESC, registered_key_id DESC);
-- A subject may hold several keys (rotation), but the same key only once while it is live.
CREATE UNIQUE INDEX registered_keys_live_key ON registered_keys (tenant_id, kind, subject, public_key) WHERE revoked_at IS NULL;
-- A recognition proof names only its key_id, so a live agent key id must name exactly one key.
CREATE UNIQUE INDEX registered_keys_live_agent ON registered_keys (tenant_id, subject) WHERE kind = 'agent' AND revoked_at IS NULL;
CREATE INDEX registered_keys_lookup ON registered_keys (tenant_id, kind, subject);

ALTER TABLE registered_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE registered_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY registered_keys_own ON registered_keys TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY registered_keys_system ON registered_keys TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON registered_keys TO svc_app, svc_system;

-- A recognition proof's nonce is accepted once per tenant and key. A retry under the same idempotency key may
-- present it again (client-wire.md §10): the stored idempotency key tells the two apart.
CREATE TABLE recognition_nonces (
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  key_id          text NOT NULL,
  nonce           text NOT NULL CHECK (length(nonce) BETWEEN 1 AND 256),
  purpose         text NOT NULL,
  idempotency_key text,
  expires_at      timestamptz NOT NULL,
  first_seen_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key_id, nonce)
);
CREATE INDEX recognition_nonces_expiry ON recognition_nonces (expires_at);

ALTER TABLE recognition_nonces ENABLE ROW LEVEL SECURITY;
ALTER TABLE recognition_nonces FORCE ROW LEVEL SECURITY;
CREATE POLICY recognition_nonces_own ON recognition_nonces TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY recognition_nonces_system ON recognition_nonces TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON recognition_nonces TO svc_app;
GRANT SELECT, INSERT, DELETE ON recognition_nonces TO svc_system;
