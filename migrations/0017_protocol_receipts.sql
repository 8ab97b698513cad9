-- Protocol v2 (docs/protocol.md): the receipts this service signs and the mandates it imports.
--
-- `protocol_receipts` holds every signed receipt as the exact JSON text it was signed and answered with (`json`, not
-- `jsonb`: jsonb reorders keys, and a receipt's field order is part of its canonical bytes). Two families share the
-- table because their ids overlap by design: a settlement receipt and an intent-terminal agent receipt are both
-- named by their intent id. `leaf_index` is the receipt's position in the tenant's transparency log.
--
-- `mandate_imports` records each imported mandate; its nonce is single-use per tenant (the unique key), so a mandate
-- cannot authorize a second intent by being presented again.

CREATE TABLE protocol_receipts (
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  family        text NOT NULL CHECK (family IN ('protocol', 'agent')),
  receipt_id    text NOT NULL CHECK (receipt_id ~ '^[a-z0-9][a-z0-9._:/-]{0,127}$'),
  kind          text NOT NULL CHECK (kind IN ('svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1', 'svc.agent_receipt_v1')),
  -- Agent receipts only: `action` or `intent_terminal`.
  scope         text CHECK (scope IN ('action', 'intent_terminal')),
  intent_id     uuid NOT NULL,
  -- Action-scoped agent receipts only: the tool call the receipt is about.
  tool_call_id  text CHECK (length(tool_call_id) BETWEEN 1 AND 256),
  wire          json NOT NULL,
  leaf_index    bigint CHECK (leaf_index >= 0),
  issued_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, family, receipt_id),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id),
  CHECK ((family = 'agent') = (scope IS NOT NULL)),
  CHECK ((family = 'agent') = (kind = 'svc.agent_receipt_v1')),
  CHECK ((scope = 'action') = (tool_call_id IS NOT NULL))
);
CREATE INDEX protocol_receipts_by_intent ON protocol_receipts (tenant_id, intent_id, family);
CREATE INDEX protocol_receipts_by_age ON protocol_receipts (tenant_id, family, issued_at DESC, receipt_id DESC);

-- Receipts are never rewritten: the log holds their bytes, and a changed receipt would no longer match its leaf.
CREATE FUNCTION protocol_receipts_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'protocol receipts are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER protocol_receipts_append_only BEFORE UPDATE OR DELETE ON protocol_receipts
  FOR EACH ROW EXECUTE FUNCTION protocol_receipts_append_only();

ALTER TABLE protocol_receipts ENABLE ROW LEVEL SECURITY;
ALTER TABLE protocol_receipts FORCE ROW LEVEL SECURITY;
CREATE POLICY protocol_receipts_own ON protocol_receipts TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY protocol_receipts_system ON protocol_receipts TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON protocol_receipts TO svc_app;
GRANT SELECT, INSERT ON protocol_receipts TO svc_system;

CREATE TABLE mandate_imports (
  tenant_id                 text NOT NULL REFERENCES tenants (tenant_id),
  nonce                     text NOT NULL CHECK (length(nonce) BETWEEN 1 AND 256),
  intent_id                 uuid NOT NULL,
  mandate_digest            bytea NOT NULL CHECK (length(mandate_digest) = 32),
  authorization_receipt_id  text NOT NULL,
  -- The transport binding of the import, which the intent's settlement receipt repeats.
  transport_binding         json NOT NULL,
  -- The signed mandate as received (json keeps its text).
  signed_mandate            json NOT NULL,
  imported_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, nonce),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX mandate_imports_by_intent ON mandate_imports (tenant_id, intent_id, imported_at DESC);

ALTER TABLE mandate_imports ENABLE ROW LEVEL SECURITY;
ALTER TABLE mandate_imports FORCE ROW LEVEL SECURITY;
CREATE POLICY mandate_imports_own ON mandate_imports TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY mandate_imports_system ON mandate_imports TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON mandate_imports TO svc_app;
GRANT SELECT, INSERT ON mandate_imports TO svc_system;
