-- Gateway rate limits (docs/operations.md "Rate limits", docs/decisions.md "Rate limiting"): one fixed-window
-- counter per bucket and window, shared by every replica. A bucket is a policy and its subject: `credential:<key id>`
-- for authenticated routes, `ip:<client address>` for public ones. src/plugins/rate-limit.ts adds a request (or
-- a batch of concurrent requests of one process) with one UPSERT:
--   INSERT … ON CONFLICT (bucket, window_start_ms, window_end_ms) DO UPDATE SET hits = hits + EXCLUDED.hits RETURNING hits
--
-- Not tenant data, so no row-level security: public routes have no tenant, and a row names a key id or an address,
-- never a tenant. Instead the tenant role svc_app gets no privilege at all on the table (a tenant transaction can
-- neither read nor forge counters); only svc_system, the role the limiter's statement runs as, may touch it.
--
-- UNLOGGED: a counter lives for one window (a minute by default) and is rewritten on every request, so it is not
-- worth a WAL record. After a crash Postgres empties the table and the current windows start again from zero; a
-- standby promoted by failover starts empty too. That admits at most one extra quota per bucket per crash, which
-- is the right price for a limiter (it protects capacity; it is not an accounting record).

CREATE UNLOGGED TABLE rate_limit_counters (
  bucket          text   NOT NULL CHECK (length(bucket) BETWEEN 1 AND 200),
  window_start_ms bigint NOT NULL CHECK (window_start_ms >= 0),
  -- The window's end: part of the key, so that a changed window length never adds to a counter of another length
  -- that happens to start at the same instant, and pruning needs no knowledge of the policies.
  window_end_ms   bigint NOT NULL CHECK (window_end_ms > window_start_ms),
  hits            bigint NOT NULL CHECK (hits > 0),
  PRIMARY KEY (bucket, window_start_ms, window_end_ms)
);
-- For the maintenance pass, which deletes windows that ended. `hits` is in no index, so the per-request update
-- stays a HOT update.
CREATE INDEX rate_limit_counters_by_end ON rate_limit_counters (window_end_ms);

GRANT SELECT, INSERT, UPDATE, DELETE ON rate_limit_counters TO svc_system;
