-- An x402 payment authorization is spent once (docs/rails.md#x402-x402_usdc_base). An EIP-3009 authorization names
-- a nonce that its token contract accepts once per payer; the sandbox simulates that contract, and a live rail must
-- not hand one authorization to its facilitator for two payments. The attempt that claims a credential records the
-- authorization it spends (token, payer and nonce, src/rails/x402.ts `x402AuthorizationKey`); the key is cleared
-- when the rail refused or declined the credential (nothing was spent) and kept once the payment is pending or done,
-- and this index lets one attempt of a tenant hold it, across intents and processes.
ALTER TABLE funding_attempts ADD COLUMN authorization_key text CHECK (length(authorization_key) BETWEEN 1 AND 256);
CREATE UNIQUE INDEX funding_attempts_authorization_once ON funding_attempts (tenant_id, rail, authorization_key)
  WHERE authorization_key IS NOT NULL;
