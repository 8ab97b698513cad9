-- Settlement configuration stored per rail (docs/rails.md#settlement-configuration): each rail's public values in
-- rail_settings, one object per rail keyed by the rail's name, and each rail's secrets in settlement_rail_secrets, one
-- sealed row per rail and field, in place of a column per field. A rail added later needs no migration.
-- Existing configurations are carried over value for value. Sealed secrets move as they are: the secret box binds
-- each to its tenant and field name (src/infra/secret-box.ts), not to a column, so they still open.

ALTER TABLE settlement_configs ADD COLUMN rail_settings jsonb NOT NULL DEFAULT '{}'::jsonb;

UPDATE settlement_configs SET rail_settings = jsonb_build_object(
  'x402_usdc_base', jsonb_build_object('x402_address', x402_address, 'x402_facilitator_url', x402_facilitator_url),
  'processor_mpp', jsonb_build_object(
    'mpp_profile_id', mpp_profile_id,
    'mpp_session_enabled', mpp_session_enabled,
    'settlement_network_recipient', settlement_network_recipient,
    'processor_destination', processor_destination,
    'mpp_processor_url', mpp_processor_url));

-- sealed: version byte, nonce, ciphertext, tag; never a secret in the clear. A PUT replaces a row (a new secret),
-- deletes it (null clears the secret) or leaves it (the secret left out is kept).
CREATE TABLE settlement_rail_secrets (
  tenant_id  text NOT NULL REFERENCES settlement_configs (tenant_id),
  rail       text NOT NULL CHECK (rail ~ '^[a-z0-9_]{1,64}$'),
  field      text NOT NULL CHECK (field ~ '^[a-z0-9_]{1,64}$'),
  sealed     bytea NOT NULL CHECK (length(sealed) >= 29),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, rail, field)
);

INSERT INTO settlement_rail_secrets (tenant_id, rail, field, sealed, updated_at)
  SELECT tenant_id, 'x402_usdc_base', 'x402_facilitator_api_key', x402_facilitator_api_key_sealed, updated_at
  FROM settlement_configs WHERE x402_facilitator_api_key_sealed IS NOT NULL
  UNION ALL
  SELECT tenant_id, 'processor_mpp', 'mpp_processor_secret_key', mpp_processor_secret_key_sealed, updated_at
  FROM settlement_configs WHERE mpp_processor_secret_key_sealed IS NOT NULL;

ALTER TABLE settlement_rail_secrets ENABLE ROW LEVEL SECURITY;
ALTER TABLE settlement_rail_secrets FORCE ROW LEVEL SECURITY;
CREATE POLICY settlement_rail_secrets_own ON settlement_rail_secrets TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY settlement_rail_secrets_system ON settlement_rail_secrets TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON settlement_rail_secrets TO svc_app;
GRANT SELECT ON settlement_rail_secrets TO svc_system;

-- Dropping a column drops the CHECKs that name it (those of 0006 and 0020); the list of rails loses its fixed pair.
ALTER TABLE settlement_configs
  DROP CONSTRAINT settlement_configs_rails_check,
  DROP COLUMN x402_address,
  DROP COLUMN mpp_profile_id,
  DROP COLUMN mpp_session_enabled,
  DROP COLUMN settlement_network_recipient,
  DROP COLUMN processor_destination,
  DROP COLUMN x402_facilitator_url,
  DROP COLUMN mpp_processor_url,
  DROP COLUMN x402_facilitator_api_key_sealed,
  DROP COLUMN mpp_processor_secret_key_sealed;

-- A list of rails: one to settlementRailsMax (src/limits.ts) rail names, each once. Which names run is the
-- registry's to say (src/rails/index.ts), so that a rail added later needs no migration.
CREATE FUNCTION settlement_rails_well_formed(rails text[]) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT cardinality(rails) BETWEEN 1 AND 8
     AND (SELECT count(*) = count(DISTINCT rail) AND bool_and(rail ~ '^[a-z0-9_]{1,64}$') FROM unnest(rails) AS rail)
$$;

-- What 0006 and 0020 checked of the built-in rails' values, on their new home: the values' forms (the application
-- checks them fully, knowing the environment) and what a listed rail cannot fund without. A JSON null reads as SQL
-- NULL, which every form check admits.
ALTER TABLE settlement_configs
  ADD CHECK (settlement_rails_well_formed(rails)),
  ADD CHECK (jsonb_typeof(rail_settings) = 'object'),
  ADD CHECK (rail_settings #>> '{x402_usdc_base,x402_address}' ~ '^0x[0-9a-fA-F]{40}$'),
  ADD CHECK (rail_settings #>> '{processor_mpp,mpp_profile_id}' ~ '^profile_[A-Za-z0-9_-]+$'
             AND length(rail_settings #>> '{processor_mpp,mpp_profile_id}') <= 128),
  ADD CHECK (rail_settings #>> '{processor_mpp,settlement_network_recipient}' ~ '^0x[0-9a-fA-F]{40}$'),
  ADD CHECK (length(rail_settings #>> '{processor_mpp,processor_destination}') BETWEEN 1 AND 255),
  ADD CHECK (rail_settings #>> '{x402_usdc_base,x402_facilitator_url}' ~ '^https?://'
             AND length(rail_settings #>> '{x402_usdc_base,x402_facilitator_url}') <= 2048),
  ADD CHECK (rail_settings #>> '{processor_mpp,mpp_processor_url}' ~ '^https?://'
             AND length(rail_settings #>> '{processor_mpp,mpp_processor_url}') <= 2048),
  ADD CHECK (NOT ('x402_usdc_base' = ANY (rails)) OR rail_settings #>> '{x402_usdc_base,x402_address}' IS NOT NULL),
  ADD CHECK (NOT ('processor_mpp' = ANY (rails))
             OR (rail_settings #>> '{processor_mpp,mpp_profile_id}' IS NOT NULL
                 AND rail_settings #>> '{processor_mpp,processor_destination}' IS NOT NULL)),
  ADD CHECK (NOT coalesce((rail_settings #>> '{processor_mpp,mpp_session_enabled}')::boolean, false)
             OR rail_settings #>> '{processor_mpp,settlement_network_recipient}' IS NOT NULL);
