-- Audit exports (client-wire.md §9, DESIGN.md §6, docs/audit-exports.md): one row per export job of a tenant. The
-- bundle (a ZIP with a signed manifest.json) is built when the job is created and kept in `bundle` as bytea: a
-- bundle is bounded by auditExportBundleBytesMax (src/limits.ts), small enough for a row. Moving bundles to object
-- storage, and building them on a job queue (status `pending`), are later changes.
--
-- `expired` is not written by a sweeper yet: a `ready` job whose expires_at has passed is answered as `expired`
-- (judged by the database clock) and its bundle is refused with 410. Deleting a job drops the bundle bytes and
-- keeps the row (status `deleted`), so a second DELETE answers the same record.

CREATE TABLE audit_exports (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  job_id            text NOT NULL CHECK (job_id ~ '^job_[0-9a-f]{32}$'),
  status            text NOT NULL CHECK (status IN ('pending', 'ready', 'failed', 'expired', 'deleted')),
  disclosure_tier   text NOT NULL CHECK (disclosure_tier IN ('standard', 'extended')),
  -- The normalized filter the bundle was built with (time_start, time_end, intent_id).
  filter            jsonb NOT NULL,
  -- Who asked: the key id or user id of the creating principal.
  created_by        text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  -- created_at + retention_hours (default 168, at most 720: auditExportRetentionHoursMax).
  expires_at        timestamptz NOT NULL,
  deleted_at        timestamptz,
  manifest_sha256   bytea CHECK (length(manifest_sha256) = 32),
  bundle_sha256     bytea CHECK (length(bundle_sha256) = 32),
  bundle_size_bytes integer CHECK (bundle_size_bytes > 0),
  bundle            bytea,
  error             text CHECK (length(error) <= 1024),
  PRIMARY KEY (tenant_id, job_id),
  CHECK (expires_at > created_at AND expires_at <= created_at + interval '720 hours'),
  -- A ready job has its bundle and digests; a deleted one has no bytes left.
  CHECK (status <> 'ready' OR (bundle IS NOT NULL AND bundle_sha256 IS NOT NULL AND manifest_sha256 IS NOT NULL AND bundle_size_bytes IS NOT NULL)),
  CHECK (status <> 'deleted' OR (bundle IS NULL AND deleted_at IS NOT NULL))
);
CREATE INDEX audit_exports_by_age ON audit_exports (tenant_id, created_at DESC, job_id DESC);

ALTER TABLE audit_exports ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_exports FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_exports_own ON audit_exports TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY audit_exports_system ON audit_exports TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON audit_exports TO svc_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON audit_exports TO svc_system;
