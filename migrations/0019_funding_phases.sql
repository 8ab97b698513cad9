-- Funding in two phases (src/engine/fund.ts, docs/engine.md "Funding in two phases"): a rail call
-- never runs while the intent's row lock or the idempotency lock is held. The first phase claims the attempt the
-- credential names and commits; the rail is called with no lock held; the second phase re-locks, re-checks the
-- claim and commits the outcome (the attempt, the funding, the ledger posting, the stored answer) at once.
--
-- claimed_at is when the rail call began; NULL when none is under way. A claim older than the lease is presumed
-- dead (its process crashed between the phases): a retry with the same credential takes it over.
ALTER TABLE funding_attempts ADD COLUMN claimed_at timestamptz;

-- One rail call per intent at a time: two credentials for one intent must never both reach their rails, or the
-- principal could be charged twice for one funding.
CREATE UNIQUE INDEX funding_attempts_one_claim ON funding_attempts (tenant_id, intent_id) WHERE claimed_at IS NOT NULL;
