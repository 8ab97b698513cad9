-- Events and webhooks (docs/events.md). `events` is each tenant's event log, written by the transaction that makes
-- the change it describes (a transactional outbox): an event exists exactly when its change committed. `seq` orders
-- the log for its cursor (newest first); it promises nothing about the order of changes in different transactions
-- beyond commit visibility. Events older than the retention (eventRetentionMs, src/limits.ts) are deleted by the
-- maintenance pass, with their deliveries.
--
-- `webhook_endpoints` are where a tenant wants its events sent; the signing secret is sealed (src/infra/secret-box.ts)
-- and, during a rotation's overlap, so is the secret it replaced. `webhook_deliveries` holds one row per event and
-- endpoint, inserted with the event (so a committed event is never without its deliveries); a deliverer claims a due
-- row by moving its next_attempt_at past a lease (FOR UPDATE SKIP LOCKED, committed), so that two replicas never
-- send the same attempt at once and a replica that dies mid-attempt leaves the row due again once the lease ends.
-- `webhook_delivery_attempts` is the log of every attempt.

CREATE TABLE events (
  tenant_id             text NOT NULL REFERENCES tenants (tenant_id),
  event_id              text NOT NULL CHECK (event_id ~ '^evt_[0-9a-f]{32}$'),
  seq                   bigserial NOT NULL,
  type                  text NOT NULL CHECK (type ~ '^[a-z_]{1,40}\.[a-z_]{1,40}$'),
  created_at            timestamptz NOT NULL DEFAULT now(),
  -- The object as it is after the change, as the API shows it.
  data                  jsonb NOT NULL,
  ledger_transaction_id text,
  receipt_ids           text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, event_id)
);
CREATE UNIQUE INDEX events_by_seq ON events (tenant_id, seq DESC);
CREATE INDEX events_by_age ON events (created_at);

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE events FORCE ROW LEVEL SECURITY;
CREATE POLICY events_own ON events TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY events_system ON events TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON events TO svc_app;
GRANT SELECT, INSERT, DELETE ON events TO svc_system;
GRANT USAGE ON SEQUENCE events_seq_seq TO svc_app, svc_system;

CREATE TABLE webhook_endpoints (
  tenant_id                  text NOT NULL REFERENCES tenants (tenant_id),
  endpoint_id                text NOT NULL CHECK (endpoint_id ~ '^we_[0-9a-f]{32}$'),
  url                        text NOT NULL CHECK (length(url) <= 2048),
  description                text NOT NULL DEFAULT '' CHECK (length(description) <= 512),
  enabled_events             text[] NOT NULL,
  enabled                    boolean NOT NULL DEFAULT true,
  -- Why it is disabled: the tenant's choice, or repeated failure.
  disabled_reason            text CHECK (disabled_reason IN ('manual', 'failing')),
  secret_sealed              bytea NOT NULL CHECK (length(secret_sealed) >= 29),
  previous_secret_sealed     bytea CHECK (length(previous_secret_sealed) >= 29),
  previous_secret_expires_at timestamptz,
  consecutive_failures       integer NOT NULL DEFAULT 0,
  failing_since              timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, endpoint_id),
  CHECK (enabled = (disabled_reason IS NULL)),
  CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_by_age ON webhook_endpoints (tenant_id, created_at DESC, endpoint_id DESC);

CREATE TABLE webhook_deliveries (
  tenant_id            text NOT NULL,
  delivery_id          text NOT NULL CHECK (delivery_id ~ '^whd_[0-9a-f]{32}$'),
  endpoint_id          text NOT NULL,
  event_id             text NOT NULL,
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts             integer NOT NULL DEFAULT 0,
  next_attempt_at      timestamptz NOT NULL DEFAULT now(),
  -- The replica that claimed the current attempt (its lease ends at next_attempt_at).
  leased_by            text,
  last_attempt_at      timestamptz,
  last_response_status integer,
  last_error           text CHECK (length(last_error) <= 512),
  created_at           timestamptz NOT NULL DEFAULT now(),
  completed_at         timestamptz,
  PRIMARY KEY (tenant_id, delivery_id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, event_id) REFERENCES events (tenant_id, event_id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (tenant_id, event_id);

CREATE TABLE webhook_delivery_attempts (
  tenant_id       text NOT NULL,
  delivery_id     text NOT NULL,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  endpoint_id     text NOT NULL,
  attempted_at    timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  response_status integer,
  error           text CHECK (length(error) <= 512),
  succeeded       boolean NOT NULL,
  PRIMARY KEY (tenant_id, delivery_id, attempt),
  FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, delivery_id) ON DELETE CASCADE
);
CREATE INDEX webhook_delivery_attempts_by_endpoint ON webhook_delivery_attempts (tenant_id, endpoint_id, attempted_at DESC);

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_endpoints_own ON webhook_endpoints TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY webhook_endpoints_system ON webhook_endpoints TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO svc_app, svc_system;

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_deliveries_own ON webhook_deliveries TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY webhook_deliveries_system ON webhook_deliveries TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_deliveries TO svc_app, svc_system;

ALTER TABLE webhook_delivery_attempts ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_delivery_attempts FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_delivery_attempts_own ON webhook_delivery_attempts TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY webhook_delivery_attempts_system ON webhook_delivery_attempts TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_delivery_attempts TO svc_app, svc_system;
