-- What the public client's remaining routes need (docs/wire-compatibility.md): the spend-control reads list a
-- tenant's decisions newest first.

CREATE INDEX spend_decisions_by_tenant ON spend_decisions (tenant_id, created_at DESC, decision_id DESC);

-- Agent runs (docs/agent-runs.md): one bind of an agent's tool middleware to an intent, and the trace events the
-- middleware reported, each stored once (by the digest of its canonical JSON), numbered in the order received.
-- Bounds as src/limits.ts: agentRunsPerIntentMax is kept by the service under the intent's row lock,
-- agentRunTraceEventsPerRunMax by trace_event_count under the run's.
CREATE TABLE agent_runs (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  run_id            text NOT NULL CHECK (run_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  intent_id         uuid NOT NULL,
  operation         text NOT NULL CHECK (length(operation) <= 256),
  sandbox           boolean NOT NULL,
  allowed_tools     text[] NOT NULL CHECK (cardinality(allowed_tools) <= 64),
  completion_preset text NOT NULL CHECK (length(completion_preset) <= 256),
  trace_event_count integer NOT NULL DEFAULT 0 CHECK (trace_event_count BETWEEN 0 AND 1000),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX agent_runs_by_intent ON agent_runs (tenant_id, intent_id, created_at);

CREATE TABLE agent_run_trace_events (
  tenant_id    text NOT NULL,
  run_id       text NOT NULL,
  seq          integer NOT NULL CHECK (seq BETWEEN 1 AND 1000),
  event_type   text NOT NULL CHECK (event_type IN ('tool_selected', 'spend_authorized', 'spend_denied', 'approval_required',
                                                   'tool_executed', 'evidence_submitted', 'spend_finalized')),
  tool_call_id text NOT NULL CHECK (length(tool_call_id) BETWEEN 1 AND 256),
  operation    text NOT NULL CHECK (length(operation) <= 256),
  recorded_at  timestamptz NOT NULL,
  event        jsonb NOT NULL,
  -- SHA-256 of the event's canonical JSON: a report retried after a lost answer is stored once.
  event_digest bytea NOT NULL CHECK (length(event_digest) = 32),
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id, seq),
  UNIQUE (tenant_id, run_id, event_digest),
  FOREIGN KEY (tenant_id, run_id) REFERENCES agent_runs (tenant_id, run_id)
);

ALTER TABLE agent_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE agent_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY agent_runs_own ON agent_runs TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY agent_runs_system ON agent_runs TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON agent_runs TO svc_app, svc_system;

ALTER TABLE agent_run_trace_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE agent_run_trace_events FORCE ROW LEVEL SECURITY;
CREATE POLICY agent_run_trace_events_own ON agent_run_trace_events TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY agent_run_trace_events_system ON agent_run_trace_events TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON agent_run_trace_events TO svc_app, svc_system;

-- API key rotation (docs/architecture.md#credentials): a rotation gives the key a new secret under the same key id;
-- the secret it replaced keeps working until previous_secret_expires_at (at most 7 days on, apiKeyRotationOverlapSecondsMax),
-- then is refused (as rotated: an overlap of 0 keeps it only to say so). One previous secret at most: a rotation
-- during an overlap ends the older one at once.
ALTER TABLE api_keys
  ADD COLUMN previous_secret_sha256 bytea CHECK (length(previous_secret_sha256) = 32),
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD COLUMN rotated_at timestamptz,
  ADD CHECK ((previous_secret_sha256 IS NULL) = (previous_secret_expires_at IS NULL)),
  ADD CHECK (previous_secret_expires_at IS NULL OR previous_secret_expires_at <= rotated_at + interval '7 days');

-- Device login started as the public client starts it (docs/sign-in.md#device-login): the device asks by name for an
-- API key of an environment and a role. The approval then grants exactly that key, and only a tenant of that
-- environment may approve it.
ALTER TABLE device_authorizations
  ADD COLUMN requested_environment text CHECK (requested_environment IN ('sandbox', 'live')),
  ADD COLUMN requested_key_role text CHECK (requested_key_role IN ('admin', 'operator', 'agent', 'auditor')),
  ADD CHECK ((requested_environment IS NULL) = (requested_key_role IS NULL)),
  ADD CHECK (requested_key_role IS NULL OR status <> 'approved' OR key_role = requested_key_role);
