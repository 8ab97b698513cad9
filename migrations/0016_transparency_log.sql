-- The transparency log (docs/protocol.md#transparency-log): per tenant, an append-only RFC 6962 Merkle tree whose
-- leaves are the signed receipts and mandate imports, the perfect subtrees computed as the tree grows, and signed
-- tree heads published by the tree-head pass (src/plugins/tree-head-plugin.ts).

-- One row per tenant that has appended: how many leaves it has. Appending a leaf increments it (INSERT … ON
-- CONFLICT DO UPDATE), which locks the row until the appending transaction ends: leaves of one tenant get dense
-- indexes 0, 1, 2, … and commit in index order.
CREATE TABLE transparency_log_heads (
  tenant_id  text PRIMARY KEY REFERENCES tenants (tenant_id),
  tree_size  bigint NOT NULL CHECK (tree_size >= 1),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE transparency_log_leaves (
  tenant_id       text NOT NULL REFERENCES transparency_log_heads (tenant_id),
  leaf_index      bigint NOT NULL CHECK (leaf_index >= 0),
  -- The artifact's kind, e.g. svc.protocol_settlement_receipt_v1.
  kind            text NOT NULL CHECK (kind ~ '^[a-z0-9][a-z0-9._]{0,127}$'),
  -- receipt_id, or the mandate digest for a mandate import.
  artifact_id     text NOT NULL CHECK (length(artifact_id) BETWEEN 1 AND 128),
  -- The signed canonical bytes (what the artifact's SHA-256 digest covers) and SHA-256(0x00 ‖ those bytes).
  canonical_bytes bytea NOT NULL,
  leaf_hash       bytea NOT NULL CHECK (length(leaf_hash) = 32 AND leaf_hash = sha256('\x00'::bytea || canonical_bytes)),
  -- The signed artifact as served, kept for proofs and audit exports.
  artifact        jsonb NOT NULL,
  appended_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, leaf_index)
);
CREATE INDEX transparency_log_leaves_by_artifact ON transparency_log_leaves (tenant_id, artifact_id);
CREATE INDEX transparency_log_leaves_by_time ON transparency_log_leaves (tenant_id, appended_at, leaf_index);

-- Hashes of the perfect subtrees of level >= 1 (2^level leaves starting at node_index × 2^level), written by the
-- tree-head pass before it signs a head: every proof against a signed head is made of these and leaf hashes.
CREATE TABLE transparency_log_nodes (
  tenant_id  text NOT NULL REFERENCES transparency_log_heads (tenant_id),
  level      smallint NOT NULL CHECK (level BETWEEN 1 AND 62),
  node_index bigint NOT NULL CHECK (node_index >= 0),
  hash       bytea NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (tenant_id, level, node_index)
);

-- Signed tree heads (kind svc.transparency_tree_head_v1), at most one per tree size.
CREATE TABLE transparency_tree_heads (
  tenant_id text NOT NULL REFERENCES transparency_log_heads (tenant_id),
  tree_size bigint NOT NULL CHECK (tree_size >= 1),
  root_hash bytea NOT NULL CHECK (length(root_hash) = 32),
  issued_at timestamptz NOT NULL,
  key_id    text NOT NULL CHECK (length(key_id) BETWEEN 1 AND 64),
  -- The signed head as served.
  tree_head jsonb NOT NULL,
  PRIMARY KEY (tenant_id, tree_size)
);

-- History is append-only, whoever asks; the tree-size counter only moves forward.
CREATE FUNCTION transparency_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the transparency log is append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER transparency_log_leaves_append_only BEFORE UPDATE OR DELETE ON transparency_log_leaves
  FOR EACH ROW EXECUTE FUNCTION transparency_log_append_only();
CREATE TRIGGER transparency_log_leaves_no_truncate BEFORE TRUNCATE ON transparency_log_leaves
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_log_append_only();
CREATE TRIGGER transparency_log_nodes_append_only BEFORE UPDATE OR DELETE ON transparency_log_nodes
  FOR EACH ROW EXECUTE FUNCTION transparency_log_append_only();
CREATE TRIGGER transparency_log_nodes_no_truncate BEFORE TRUNCATE ON transparency_log_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_log_append_only();
CREATE TRIGGER transparency_tree_heads_append_only BEFORE UPDATE OR DELETE ON transparency_tree_heads
  FOR EACH ROW EXECUTE FUNCTION transparency_log_append_only();
CREATE TRIGGER transparency_tree_heads_no_truncate BEFORE TRUNCATE ON transparency_tree_heads
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_log_append_only();

CREATE FUNCTION transparency_log_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.tenant_id <> OLD.tenant_id OR NEW.tree_size < OLD.tree_size THEN
    RAISE EXCEPTION 'transparency log heads only move forward' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER transparency_log_heads_forward_only BEFORE UPDATE OR DELETE ON transparency_log_heads
  FOR EACH ROW EXECUTE FUNCTION transparency_log_heads_forward_only();

ALTER TABLE transparency_log_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE transparency_log_heads FORCE ROW LEVEL SECURITY;
CREATE POLICY transparency_log_heads_own ON transparency_log_heads TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY transparency_log_heads_system ON transparency_log_heads TO svc_system USING (true) WITH CHECK (true);

ALTER TABLE transparency_log_leaves ENABLE ROW LEVEL SECURITY;
ALTER TABLE transparency_log_leaves FORCE ROW LEVEL SECURITY;
CREATE POLICY transparency_log_leaves_own ON transparency_log_leaves TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY transparency_log_leaves_system ON transparency_log_leaves TO svc_system USING (true) WITH CHECK (true);

ALTER TABLE transparency_log_nodes ENABLE ROW LEVEL SECURITY;
ALTER TABLE transparency_log_nodes FORCE ROW LEVEL SECURITY;
CREATE POLICY transparency_log_nodes_own ON transparency_log_nodes TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY transparency_log_nodes_system ON transparency_log_nodes TO svc_system USING (true) WITH CHECK (true);

ALTER TABLE transparency_tree_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE transparency_tree_heads FORCE ROW LEVEL SECURITY;
CREATE POLICY transparency_tree_heads_own ON transparency_tree_heads TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY transparency_tree_heads_system ON transparency_tree_heads TO svc_system USING (true) WITH CHECK (true);

-- Tenant transactions append (a receipt commits with its leaf) and read proofs; the system role appends too (the
-- deadline sweeper's refunds carry receipts) and alone writes nodes and signed heads (the tree-head pass).
GRANT SELECT, INSERT, UPDATE ON transparency_log_heads TO svc_app, svc_system;
GRANT SELECT, INSERT ON transparency_log_leaves TO svc_app, svc_system;
GRANT SELECT ON transparency_log_nodes, transparency_tree_heads TO svc_app;
GRANT SELECT, INSERT ON transparency_log_nodes, transparency_tree_heads TO svc_system;
