-- Tenant policies (DESIGN.md §4): per template, numbered immutable versions with their parameters, materialized
-- predicate and content digest; one head per template, moved by rollout and rollback, every move recorded.

CREATE TABLE policy_templates (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  template_id       text NOT NULL CHECK (template_id ~ '^[a-z0-9_]{1,64}$'),
  -- Allocates version numbers: drafting increments it under the row lock, so concurrent drafts get 1, 2, 3…
  last_version_seq  integer NOT NULL CHECK (last_version_seq >= 0),
  head_version_seq  integer CHECK (head_version_seq BETWEEN 1 AND last_version_seq),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, template_id)
);

CREATE TABLE policy_versions (
  tenant_id              text NOT NULL,
  template_id            text NOT NULL,
  version_seq            integer NOT NULL CHECK (version_seq >= 1),
  parameters             jsonb NOT NULL,
  materialized_predicate jsonb NOT NULL,
  human_summary          text NOT NULL,
  -- SHA-256 of the sorted-key compact JSON of {template_id, version_seq, parameters, materialized_predicate}.
  content_digest         bytea NOT NULL CHECK (length(content_digest) = 32),
  created_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, template_id, version_seq),
  UNIQUE (tenant_id, template_id, content_digest),
  FOREIGN KEY (tenant_id, template_id) REFERENCES policy_templates (tenant_id, template_id)
);

ALTER TABLE policy_templates
  ADD FOREIGN KEY (tenant_id, template_id, head_version_seq) REFERENCES policy_versions (tenant_id, template_id, version_seq)
  DEFERRABLE INITIALLY DEFERRED;

-- Every head move, for audit: who moved which template from which version to which, and how.
CREATE TABLE policy_head_moves (
  tenant_id        text NOT NULL,
  template_id      text NOT NULL,
  moved_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  action           text NOT NULL CHECK (action IN ('rollout', 'rollback')),
  from_version_seq integer,
  to_version_seq   integer NOT NULL,
  actor            text NOT NULL,
  FOREIGN KEY (tenant_id, template_id, to_version_seq) REFERENCES policy_versions (tenant_id, template_id, version_seq)
);
CREATE INDEX policy_head_moves_by_template ON policy_head_moves (tenant_id, template_id, moved_at);

-- Versions are immutable, whoever asks: even the owner cannot rewrite what an intent was bound to.
CREATE FUNCTION policy_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'policy versions are immutable' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER policy_versions_immutable BEFORE UPDATE OR DELETE ON policy_versions
  FOR EACH ROW EXECUTE FUNCTION policy_versions_immutable();

ALTER TABLE policy_templates ENABLE ROW LEVEL SECURITY;
ALTER TABLE policy_templates FORCE ROW LEVEL SECURITY;
CREATE POLICY policy_templates_own ON policy_templates TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY policy_templates_system ON policy_templates TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON policy_templates TO svc_app, svc_system;

ALTER TABLE policy_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE policy_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY policy_versions_own ON policy_versions TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY policy_versions_system ON policy_versions TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON policy_versions TO svc_app, svc_system;

ALTER TABLE policy_head_moves ENABLE ROW LEVEL SECURITY;
ALTER TABLE policy_head_moves FORCE ROW LEVEL SECURITY;
CREATE POLICY policy_head_moves_own ON policy_head_moves TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY policy_head_moves_system ON policy_head_moves TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON policy_head_moves TO svc_app, svc_system;
