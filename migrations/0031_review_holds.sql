-- Review holds (docs/release-gate.md): the release gate of each tenant, the signals it finds when an intent is about
-- to release, the holds it places in `critical_hold` mode, the review events reviewers record, and the state `held`,
-- in which an intent waits (its escrow still full) for an operator to resolve it as a release, a refund or a split.

ALTER TABLE intents DROP CONSTRAINT intents_state_check;
ALTER TABLE intents ADD CONSTRAINT intents_state_check
  CHECK (state IN ('open', 'funded', 'evidence_recorded', 'held', 'released', 'refunded', 'resolved_split'));

-- The sweeper refunds held intents past their deadline as it does funded ones (src/engine/expire.ts).
DROP INDEX intents_expiring;
CREATE INDEX intents_expiring ON intents (deadline) WHERE state IN ('funded', 'held');

-- One row per tenant once its gate was set; a tenant without one has the defaults (src/engine/decide/release-gate.ts).
CREATE TABLE release_gate_configs (
  tenant_id               text PRIMARY KEY REFERENCES tenants (tenant_id),
  mode                    text NOT NULL CHECK (mode IN ('review_only', 'critical_hold')),
  -- The signals' tenant settings: null turns the signal off.
  standing_score_min      integer CHECK (standing_score_min BETWEEN 1 AND 1000),
  amount_limit_cents      bigint CHECK (amount_limit_cents > 0),
  first_settlement        boolean NOT NULL,
  updated_at              timestamptz NOT NULL DEFAULT now()
);

-- Every signal the gate found at a release, in either mode (review_only records them without holding). `operator_did`
-- is the intent's payee: the operator whose standing the client's review routes are about.
CREATE TABLE fraud_signals (
  tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
  signal_id    uuid NOT NULL,
  intent_id    uuid NOT NULL,
  operator_did text NOT NULL CHECK (length(operator_did) BETWEEN 1 AND 256),
  code         text NOT NULL CHECK (code IN ('payee_standing_below_threshold', 'first_settlement_with_payee', 'amount_over_limit')),
  severity     text NOT NULL CHECK (severity IN ('elevated', 'high', 'critical')),
  gate_mode    text NOT NULL CHECK (gate_mode IN ('review_only', 'critical_hold')),
  held         boolean NOT NULL,
  summary      text NOT NULL CHECK (length(summary) <= 512),
  observed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, signal_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX fraud_signals_by_time ON fraud_signals (tenant_id, observed_at DESC);
CREATE INDEX fraud_signals_by_operator ON fraud_signals (tenant_id, operator_did, observed_at DESC);

-- One hold per intent (an intent is held at most once: `held` is left only for a terminal state). `resolution` and
-- what goes with it are written once, when the hold ends: by an operator (release, refund, split) or by the sweeper
-- (expired, refunded at the deadline).
CREATE TABLE review_holds (
  tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
  intent_id          uuid NOT NULL,
  operator_did       text NOT NULL CHECK (length(operator_did) BETWEEN 1 AND 256),
  signal_codes       text[] NOT NULL CHECK (cardinality(signal_codes) BETWEEN 1 AND 8),
  held_at            timestamptz NOT NULL DEFAULT now(),
  resolution         text CHECK (resolution IN ('release', 'refund', 'split', 'expired')),
  released_cents     bigint CHECK (released_cents >= 0),
  resolved_by        text CHECK (length(resolved_by) BETWEEN 1 AND 256),
  resolution_note    text CHECK (length(resolution_note) <= 1024),
  resolved_at        timestamptz,
  PRIMARY KEY (tenant_id, intent_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id),
  CHECK ((resolution IS NULL) = (resolved_at IS NULL)),
  CHECK ((resolution IS NULL) = (released_cents IS NULL))
);
CREATE INDEX review_holds_open ON review_holds (tenant_id, held_at) WHERE resolution IS NULL;
CREATE INDEX review_holds_by_time ON review_holds (tenant_id, held_at DESC);

-- What reviewers record about an operator (the client's review events), optionally about one intent.
CREATE TABLE review_events (
  tenant_id           text NOT NULL REFERENCES tenants (tenant_id),
  event_id            uuid NOT NULL,
  operator_did        text NOT NULL CHECK (length(operator_did) BETWEEN 1 AND 256),
  event_type          text NOT NULL CHECK (event_type IN ('review_open_requested', 'appeal_requested', 'replay_requested', 'review_outcome_recorded')),
  review_outcome      text CHECK (review_outcome IN ('confirmed_risk', 'false_positive', 'needs_more_evidence')),
  signal_code         text CHECK (length(signal_code) BETWEEN 1 AND 128),
  intent_id           uuid,
  provider_event_id   text CHECK (length(provider_event_id) BETWEEN 1 AND 256),
  summary             text NOT NULL CHECK (length(summary) BETWEEN 1 AND 1024),
  recorded_by         text NOT NULL CHECK (length(recorded_by) BETWEEN 1 AND 256),
  recorded_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, event_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id),
  CHECK ((event_type = 'review_outcome_recorded') = (review_outcome IS NOT NULL))
);
CREATE INDEX review_events_by_operator ON review_events (tenant_id, operator_did, recorded_at DESC);
CREATE INDEX review_events_by_time ON review_events (tenant_id, recorded_at DESC);

-- The signed receipt of a hold's resolution joins the protocol receipts (its id: `review-resolution:<intent id>`).
ALTER TABLE protocol_receipts DROP CONSTRAINT protocol_receipts_kind_check;
ALTER TABLE protocol_receipts ADD CONSTRAINT protocol_receipts_kind_check
  CHECK (kind IN ('svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1', 'svc.agent_receipt_v1', 'svc.review_resolution_receipt_v1'));

ALTER TABLE release_gate_configs ENABLE ROW LEVEL SECURITY;
ALTER TABLE release_gate_configs FORCE ROW LEVEL SECURITY;
CREATE POLICY release_gate_configs_own ON release_gate_configs TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY release_gate_configs_system ON release_gate_configs TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON release_gate_configs TO svc_app, svc_system;

ALTER TABLE fraud_signals ENABLE ROW LEVEL SECURITY;
ALTER TABLE fraud_signals FORCE ROW LEVEL SECURITY;
CREATE POLICY fraud_signals_own ON fraud_signals TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY fraud_signals_system ON fraud_signals TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON fraud_signals TO svc_app, svc_system;

ALTER TABLE review_holds ENABLE ROW LEVEL SECURITY;
ALTER TABLE review_holds FORCE ROW LEVEL SECURITY;
CREATE POLICY review_holds_own ON review_holds TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY review_holds_system ON review_holds TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON review_holds TO svc_app, svc_system;

ALTER TABLE review_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE review_events FORCE ROW LEVEL SECURITY;
CREATE POLICY review_events_own ON review_events TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY review_events_system ON review_events TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON review_events TO svc_app, svc_system;
