-- Escrow held at the rail and atomic phases for every rail call (docs/rails.md#rail-instructions-and-the-sweeper,
-- docs/rails.md#x402-auth-capture-escrow-held-at-the-rail).

-- A rail instruction is carried out in two phases, as funding is: the sweeper claims it (claimed_at, committed
-- before the rail is called), calls the rail with no transaction open, and records the outcome only under its own
-- claim. A process that dies between the rail's answer and the record leaves the claim; after its lease
-- (railInstructionClaimLeaseMs) another pass takes it over and asks the rail again under the same idempotency key,
-- which the rail answers with the first outcome.
-- rail_details: what the rail reported of the operation (x402 auth-capture: the capture's or void's transaction).
ALTER TABLE rail_instructions
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN rail_details jsonb CHECK (rail_details IS NULL OR jsonb_typeof(rail_details) = 'object');

-- A split settles one intent with a payout (the payee's part) and a refund (the rest); the refund waits for the
-- payout (x402 auth-capture: a void returns whatever the hold still holds, so it must follow the capture).
CREATE INDEX rail_instructions_intent_kind ON rail_instructions (tenant_id, intent_id, kind);

-- The x402 rail's escrow settings, as src/rails/x402/settings.ts checks them.
ALTER TABLE settlement_configs
  ADD CHECK (rail_settings #>> '{x402_usdc_base,x402_scheme}' IN ('exact', 'auth-capture')),
  ADD CHECK (rail_settings #>> '{x402_usdc_base,x402_capture_authorizer}' ~ '^0x[0-9a-fA-F]{40}$');
