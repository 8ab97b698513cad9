-- The transaction engine (DESIGN.md §3): intents and their state, the evidence submitted for them, funding
-- attempts on the rails, idempotent responses, and spend reservations against capability tokens.

CREATE TABLE intents (
  tenant_id                text NOT NULL REFERENCES tenants (tenant_id),
  intent_id                uuid NOT NULL,
  state                    text NOT NULL CHECK (state IN ('open', 'funded', 'evidence_recorded', 'released', 'refunded')),
  -- 6 or 7 for signed intents; 0 for sandbox guardrail intents, which are created unsigned by the gateway.
  signing_version          smallint NOT NULL CHECK (signing_version IN (0, 6, 7)),
  principal_did            text NOT NULL,
  principal_pubkey         bytea CHECK (length(principal_pubkey) = 32),
  principal_signature      bytea CHECK (length(principal_signature) = 64),
  principal_key_registered boolean NOT NULL,
  payee_did                text NOT NULL,
  payee_pubkey             bytea CHECK (length(payee_pubkey) = 32),
  budget                   jsonb NOT NULL,
  currency                 text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  amount_cents             bigint NOT NULL CHECK (amount_cents > 0),
  evidence_schema          jsonb NOT NULL,
  -- The deadline exactly as signed, and as a time for the sweeper.
  deadline_text            text NOT NULL,
  deadline                 timestamptz NOT NULL,
  -- The rule evaluated at evidence: the signed predicate_dsl, or the bound policy version's materialized rule.
  predicate_dsl            jsonb NOT NULL,
  predicate_ref            text NOT NULL DEFAULT '',
  policy_template_id       text,
  policy_version_seq       integer,
  policy_content_digest    bytea CHECK (length(policy_content_digest) = 32),
  settlement_rail          text NOT NULL,
  allowed_tools            text[] NOT NULL,
  completion_preset_id     text,
  predicate_passed         boolean,
  funding_reference        text,
  created_at               timestamptz NOT NULL DEFAULT now(),
  funded_at                timestamptz,
  evidence_recorded_at     timestamptz,
  settled_at               timestamptz,
  PRIMARY KEY (tenant_id, intent_id),
  CHECK ((signing_version = 0) OR (principal_pubkey IS NOT NULL AND principal_signature IS NOT NULL AND payee_pubkey IS NOT NULL)),
  CHECK ((policy_template_id IS NULL) = (policy_version_seq IS NULL))
);
CREATE INDEX intents_by_created ON intents (tenant_id, created_at DESC, intent_id DESC);
CREATE INDEX intents_by_state ON intents (tenant_id, state, created_at DESC);
-- The sweeper looks for funded intents past their deadline, across tenants.
CREATE INDEX intents_expiring ON intents (deadline) WHERE state = 'funded';

CREATE TABLE evidence_submissions (
  tenant_id         text NOT NULL,
  intent_id         uuid NOT NULL,
  payload           jsonb NOT NULL,
  artifacts         text[] NOT NULL,
  payee_did         text NOT NULL,
  payee_signature   bytea CHECK (length(payee_signature) = 64),
  submitted_at      text NOT NULL,
  payload_digest    bytea NOT NULL CHECK (length(payload_digest) = 32),
  artifacts_digest  bytea NOT NULL CHECK (length(artifacts_digest) = 32),
  predicate_passed  boolean NOT NULL,
  evaluation        jsonb NOT NULL,
  recorded_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, intent_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);

-- Each 402 challenge issued and each credential presented for an intent. A pending credential is polled by
-- re-sending the same request; the money moves once, when an attempt settles.
CREATE TABLE funding_attempts (
  tenant_id          text NOT NULL,
  intent_id          uuid NOT NULL,
  attempt_id         uuid NOT NULL,
  rail               text NOT NULL,
  challenge_id       text NOT NULL,
  challenge          jsonb NOT NULL,
  status             text NOT NULL CHECK (status IN ('challenged', 'pending', 'succeeded', 'declined')),
  credential_digest  bytea CHECK (length(credential_digest) = 32),
  reference          text,
  polls              integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, attempt_id),
  UNIQUE (tenant_id, rail, challenge_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX funding_attempts_by_intent ON funding_attempts (tenant_id, intent_id, created_at DESC);
-- At most one success per intent: the second would move the money twice.
CREATE UNIQUE INDEX funding_attempts_one_success ON funding_attempts (tenant_id, intent_id) WHERE status = 'succeeded';

-- Stored answers of the idempotent engine POSTs (spec: Idempotency), kept at least 24 hours.
CREATE TABLE idempotency_records (
  tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
  operation        text NOT NULL,
  idempotency_key  text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 256),
  fingerprint      bytea NOT NULL CHECK (length(fingerprint) = 32),
  response_status  integer NOT NULL,
  response_headers jsonb NOT NULL,
  response_body    text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, operation, idempotency_key)
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (created_at);

-- Spend reserved by POST /verify against an intent's capability, until the guarded tool reports back.
CREATE TABLE spend_decisions (
  tenant_id       text NOT NULL,
  decision_id     uuid NOT NULL,
  intent_id       uuid NOT NULL,
  audit_id        uuid NOT NULL,
  operation       text NOT NULL,
  requested_cents bigint NOT NULL CHECK (requested_cents >= 0),
  status          text NOT NULL CHECK (status IN ('reserved', 'consumed', 'released')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz,
  PRIMARY KEY (tenant_id, decision_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX spend_decisions_by_intent ON spend_decisions (tenant_id, intent_id) WHERE status <> 'released';

DO $$
DECLARE
  name text;
BEGIN
  FOREACH name IN ARRAY ARRAY['intents', 'evidence_submissions', 'funding_attempts', 'idempotency_records', 'spend_decisions'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
    EXECUTE format($p$CREATE POLICY %I ON %I TO svc_app
      USING (tenant_id = current_setting('app.tenant_id', true))
      WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, name || '_own', name);
    EXECUTE format('CREATE POLICY %I ON %I TO svc_system USING (true) WITH CHECK (true)', name || '_system', name);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON intents, funding_attempts, spend_decisions TO svc_app, svc_system;
GRANT SELECT, INSERT ON evidence_submissions, idempotency_records TO svc_app, svc_system;
GRANT DELETE ON idempotency_records TO svc_system;
