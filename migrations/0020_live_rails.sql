-- Live rails (docs/rails.md#live-rails): the facilitator (x402) and processor (MPP) a live tenant funds through,
-- their secrets sealed at rest (src/infra/secret-box.ts), what each funding attempt learned from its rail, and the
-- payouts and refunds the rail is instructed to carry out when an intent settles.

-- Endpoints are validated by src/rails/settlement-config.ts (https, or http to a loopback host); the CHECKs only keep
-- a write path from storing something that is not a URL at all. Secrets are stored sealed (AES-256-GCM, version
-- byte, nonce, ciphertext, tag), never in the clear.
ALTER TABLE settlement_configs
  ADD COLUMN x402_facilitator_url text CHECK (x402_facilitator_url ~ '^https?://' AND length(x402_facilitator_url) <= 2048),
  ADD COLUMN mpp_processor_url text CHECK (mpp_processor_url ~ '^https?://' AND length(mpp_processor_url) <= 2048),
  ADD COLUMN x402_facilitator_api_key_sealed bytea CHECK (length(x402_facilitator_api_key_sealed) >= 29),
  ADD COLUMN mpp_processor_secret_key_sealed bytea CHECK (length(mpp_processor_secret_key_sealed) >= 29);

-- credential: the credential's parsed data, kept from the claim on, so that an outcome left unknown (a crash or a
-- timeout between the rail's settle and our commit) can be asked of the rail again without the client.
-- rail_details: what the rail reported (x402: transaction, payer, network), shown on the intent.
-- live: the attempt ran against a live rail; its settlement is instructed to that rail.
ALTER TABLE funding_attempts
  ADD COLUMN credential jsonb,
  ADD COLUMN rail_details jsonb,
  ADD COLUMN live boolean NOT NULL DEFAULT false;

-- The claims the sweeper looks at: those past their lease.
CREATE INDEX funding_attempts_claimed ON funding_attempts (claimed_at) WHERE claimed_at IS NOT NULL;

-- A payout (release: escrow to the payee) or refund (escrow back to the payer) a live rail is to carry out,
-- recorded in the transaction that settles the intent (its ledger posting is written there too), executed by the
-- maintenance sweeper outside any lock, its outcome recorded here.
CREATE TABLE rail_instructions (
  tenant_id         text NOT NULL,
  instruction_id    uuid NOT NULL,
  intent_id         uuid NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('payout', 'refund')),
  rail              text NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  amount_cents      bigint NOT NULL CHECK (amount_cents > 0),
  currency          text NOT NULL,
  funding_reference text NOT NULL,
  funding_details   jsonb NOT NULL DEFAULT '{}'::jsonb,
  reference         text,
  detail            text,
  attempts          integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  last_error        text,
  next_attempt_at   timestamptz NOT NULL DEFAULT now(),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, instruction_id),
  -- One settlement per intent, so one instruction of each kind at most.
  UNIQUE (tenant_id, intent_id, kind),
  FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, intent_id)
);
CREATE INDEX rail_instructions_due ON rail_instructions (next_attempt_at) WHERE status = 'pending';

ALTER TABLE rail_instructions ENABLE ROW LEVEL SECURITY;
ALTER TABLE rail_instructions FORCE ROW LEVEL SECURITY;
CREATE POLICY rail_instructions_own ON rail_instructions TO svc_app
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY rail_instructions_system ON rail_instructions TO svc_system USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON rail_instructions TO svc_app, svc_system;
