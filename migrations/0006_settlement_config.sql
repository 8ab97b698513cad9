-- Settlement configuration (spec: Settlement configuration; DESIGN.md §3): one row per tenant, replaced whole by
-- PUT /v1/admin/settlement/config. src/rails/settlement-config.ts validates each field with its own 400 code;
-- the CHECKs below repeat what does not depend on the tenant's environment, so that no write path can store
-- a configuration the fund route could not use.

CREATE TABLE settlement_configs (
  tenant_id                    text PRIMARY KEY REFERENCES tenants (tenant_id),
  rails                        text[] NOT NULL
                               CHECK (cardinality(rails) BETWEEN 1 AND 2
                                      AND rails <@ ARRAY['x402_usdc_base', 'processor_mpp']::text[]
                                      AND NOT (cardinality(rails) = 2 AND rails[1] = rails[2])),
  x402_address                 text CHECK (x402_address ~ '^0x[0-9a-fA-F]{40}$'),
  -- `profile_test_…` in sandbox, `profile_…` in live: checked by the application, which knows the environment.
  mpp_profile_id               text CHECK (mpp_profile_id ~ '^profile_[A-Za-z0-9_-]+$' AND length(mpp_profile_id) <= 128),
  mpp_session_enabled          boolean NOT NULL DEFAULT false,
  settlement_network_recipient text CHECK (settlement_network_recipient ~ '^0x[0-9a-fA-F]{40}$'),
  processor_destination        text CHECK (length(processor_destination) BETWEEN 1 AND 255),
  created_at                   timestamptz NOT NULL DEFAULT now(),
  updated_at                   timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT ('x402_usdc_base' = ANY (rails)) OR x402_address IS NOT NULL),
  CHECK (NOT ('processor_mpp' = ANY (rails)) OR (mpp_profile_id IS NOT NULL AND processor_destination IS NOT NULL)),
  CHECK (NOT mpp_session_enabled OR settlement_network_recipient IS NOT NULL)
);

ALTER TABLE settlement_configs ENABLE ROW LEVEL SECURITY;
ALTER TABLE settlement_configs FORCE ROW LEVEL SECURITY;
CREATE POLICY settlement_configs_own ON settlement_configs TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY settlement_configs_system ON settlement_configs TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON settlement_configs TO svc_app;
GRANT SELECT, INSERT, UPDATE ON settlement_configs TO svc_system;
