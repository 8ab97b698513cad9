-- The double-entry ledger (DESIGN.md §3, docs/ledger.md): per tenant, a head that allocates gapless ledger_seq
-- under its row lock, and append-only rows whose bincode bodies form a SHA-256 hash chain from 32 zero bytes.

-- One row per tenant that has posted: the last sequence number and row hash. Posting locks it (SELECT … FOR
-- UPDATE), so postings of one tenant append one after another and commit in sequence order.
CREATE TABLE ledger_heads (
  tenant_id       text PRIMARY KEY REFERENCES tenants (tenant_id),
  last_ledger_seq bigint NOT NULL CHECK (last_ledger_seq >= 0),
  last_row_hash   bytea NOT NULL CHECK (length(last_row_hash) = 32),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_rows (
  tenant_id      text NOT NULL REFERENCES ledger_heads (tenant_id),
  ledger_seq     bigint NOT NULL CHECK (ledger_seq >= 1),
  transaction_id uuid NOT NULL,
  intent_id      uuid NOT NULL,
  entry_index    integer NOT NULL CHECK (entry_index >= 0),
  -- ledgerAccountLengthMax in src/limits.ts.
  account        text NOT NULL CHECK (length(account) BETWEEN 1 AND 512),
  side           smallint NOT NULL CHECK (side IN (0, 1)), -- 0 debit, 1 credit
  amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
  currency       text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  event_kind     text NOT NULL CHECK (event_kind IN ('fund', 'release', 'refund')),
  -- The body carries this instant as text with milliseconds; finer digits could not round-trip.
  recorded_at    timestamptz NOT NULL CHECK (date_trunc('milliseconds', recorded_at AT TIME ZONE 'UTC') = recorded_at AT TIME ZONE 'UTC'),
  -- LedgerRowBodyV2 (bincode 2, format_version 2), encoded from the columns above.
  body           bytea NOT NULL,
  prev_row_hash  bytea NOT NULL CHECK (length(prev_row_hash) = 32),
  -- SHA-256(prev_row_hash ‖ body).
  row_hash       bytea NOT NULL CHECK (length(row_hash) = 32),
  PRIMARY KEY (tenant_id, ledger_seq),
  UNIQUE (tenant_id, transaction_id, entry_index)
);
CREATE INDEX ledger_rows_by_intent ON ledger_rows (tenant_id, intent_id, ledger_seq);

-- Rows are append-only, whoever asks: even the owner cannot rewrite or remove history. Only a superuser can get
-- past this (by disabling the trigger), and the verifier's chain check exists for exactly that case.
CREATE FUNCTION ledger_rows_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger rows are append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER ledger_rows_append_only BEFORE UPDATE OR DELETE ON ledger_rows
  FOR EACH ROW EXECUTE FUNCTION ledger_rows_append_only();
CREATE TRIGGER ledger_rows_no_truncate BEFORE TRUNCATE ON ledger_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_rows_append_only();

-- A head only moves forward and is never removed: rewinding it would let the next posting fork the chain.
CREATE FUNCTION ledger_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.tenant_id <> OLD.tenant_id OR NEW.last_ledger_seq < OLD.last_ledger_seq THEN
    RAISE EXCEPTION 'ledger heads only move forward' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_heads_forward_only BEFORE UPDATE OR DELETE ON ledger_heads
  FOR EACH ROW EXECUTE FUNCTION ledger_heads_forward_only();

ALTER TABLE ledger_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger_heads FORCE ROW LEVEL SECURITY;
CREATE POLICY ledger_heads_own ON ledger_heads TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY ledger_heads_system ON ledger_heads TO svc_system USING (true) WITH CHECK (true);

ALTER TABLE ledger_rows ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger_rows FORCE ROW LEVEL SECURITY;
CREATE POLICY ledger_rows_own ON ledger_rows TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY ledger_rows_system ON ledger_rows TO svc_system USING (true) WITH CHECK (true);

-- The system role posts too (the deadline sweeper refunds across tenants), so both roles may append.
GRANT SELECT, INSERT, UPDATE ON ledger_heads TO svc_app, svc_system;
GRANT SELECT, INSERT ON ledger_rows TO svc_app, svc_system;
