-- The idempotency key of the fund request that claimed an attempt (docs/engine.md "Funding in two phases"). A retry
-- under the same key is the same request: it continues that attempt with the credential first presented, whatever
-- it presents now (a client that lost its answer may have answered a fresh challenge with a new credential), so
-- its money cannot move twice. Kept after the claim, while the attempt is pending (a retry polls it), and so that
-- the sweeper, resolving a claim whose process died, can store the funded answer under that key.
ALTER TABLE funding_attempts ADD COLUMN idempotency_key text CHECK (length(idempotency_key) BETWEEN 1 AND 256);
