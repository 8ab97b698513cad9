-- Standing (docs/standing.md): per (tenant, operator, currency) the settled history of an operator, kept
-- incrementally in the transaction that settles an intent, all-time and per UTC day (the 30- and 7-day windows
-- sum day rows). `svc standing rebuild` recomputes both tables from the intents and must agree with them.

-- The bucket (1-based) of a funding-to-terminal duration: lower bounds 0, 1, 5, 15, 60, 300, 900, 3600, 14400, 86400,
-- 259200, 604800, 2592000 seconds (13 buckets; the last is open; a negative duration, which the clock cannot give, falls
-- in the first). A bucket holds durations d with bound[i] <= d < bound[i+1]. Changing them is a new migration and a new
-- scoring/metrics version, never an edit here.
CREATE FUNCTION standing_duration_bucket(seconds numeric) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN seconds < 1 THEN 1 WHEN seconds < 5 THEN 2 WHEN seconds < 15 THEN 3 WHEN seconds < 60 THEN 4
    WHEN seconds < 300 THEN 5 WHEN seconds < 900 THEN 6 WHEN seconds < 3600 THEN 7 WHEN seconds < 14400 THEN 8
    WHEN seconds < 86400 THEN 9 WHEN seconds < 259200 THEN 10 WHEN seconds < 604800 THEN 11 WHEN seconds < 2592000 THEN 12
    ELSE 13 END
$$;

CREATE TABLE standing_operator_totals (
  tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
  -- didLengthMax in src/limits.ts.
  operator_did       text NOT NULL CHECK (length(operator_did) BETWEEN 1 AND 256),
  currency           text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  released_count     bigint NOT NULL CHECK (released_count >= 0),
  refunded_count     bigint NOT NULL CHECK (refunded_count >= 0),
  expired_count      bigint NOT NULL CHECK (expired_count >= 0),
  -- Sums of amounts are not bounded by 2^63 - 1: numeric, handed to the service as text.
  released_cents     numeric NOT NULL CHECK (released_cents >= 0 AND released_cents = trunc(released_cents)),
  refunded_cents     numeric NOT NULL CHECK (refunded_cents >= 0 AND refunded_cents = trunc(refunded_cents)),
  expired_cents      numeric NOT NULL CHECK (expired_cents >= 0 AND expired_cents = trunc(expired_cents)),
  duration_histogram bigint[] NOT NULL CHECK (cardinality(duration_histogram) = 13 AND array_ndims(duration_histogram) = 1),
  first_funded_at    timestamptz NOT NULL,
  last_settled_at    timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, operator_did, currency),
  CHECK (released_count + refunded_count + expired_count > 0)
);

CREATE TABLE standing_operator_days (
  tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
  operator_did       text NOT NULL CHECK (length(operator_did) BETWEEN 1 AND 256),
  -- The UTC day of the terminal transition (intents.settled_at).
  day                date NOT NULL,
  currency           text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  released_count     bigint NOT NULL CHECK (released_count >= 0),
  refunded_count     bigint NOT NULL CHECK (refunded_count >= 0),
  expired_count      bigint NOT NULL CHECK (expired_count >= 0),
  released_cents     numeric NOT NULL CHECK (released_cents >= 0 AND released_cents = trunc(released_cents)),
  refunded_cents     numeric NOT NULL CHECK (refunded_cents >= 0 AND refunded_cents = trunc(refunded_cents)),
  expired_cents      numeric NOT NULL CHECK (expired_cents >= 0 AND expired_cents = trunc(expired_cents)),
  duration_histogram bigint[] NOT NULL CHECK (cardinality(duration_histogram) = 13 AND array_ndims(duration_histogram) = 1),
  PRIMARY KEY (tenant_id, operator_did, day, currency),
  CHECK (released_count + refunded_count + expired_count > 0)
);
-- The export reads the recent days of every operator of a tenant.
CREATE INDEX standing_operator_days_by_day ON standing_operator_days (tenant_id, day);

-- One settled intent's contribution, added in its settling transaction. `outcome` is released, refunded (the
-- predicate failed) or expired (refunded because the deadline passed without evidence). The settled time is the
-- transaction's timestamp, which is what the intent's settled_at records; the funding time is the intent's.
CREATE FUNCTION standing_record_settlement(p_tenant_id text, p_intent_id uuid, p_outcome text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  intent record;
  settled timestamptz := transaction_timestamp();
  bucket integer;
  released integer := CASE WHEN p_outcome = 'released' THEN 1 ELSE 0 END;
  refunded integer := CASE WHEN p_outcome = 'refunded' THEN 1 ELSE 0 END;
  expired integer := CASE WHEN p_outcome = 'expired' THEN 1 ELSE 0 END;
  histogram bigint[];
BEGIN
  IF p_outcome NOT IN ('released', 'refunded', 'expired') THEN
    RAISE EXCEPTION 'standing: unknown outcome %', p_outcome;
  END IF;
  -- A funding queued in this same transaction has not reached the row yet; it records this transaction's time.
  SELECT payee_did, currency, amount_cents, coalesce(funded_at, settled) AS funded_at INTO STRICT intent
    FROM intents WHERE tenant_id = p_tenant_id AND intent_id = p_intent_id;
  bucket := standing_duration_bucket(extract(epoch FROM settled - intent.funded_at));
  histogram := array_fill(0::bigint, ARRAY[13]);
  histogram[bucket] := 1;

  INSERT INTO standing_operator_totals AS t VALUES
    (p_tenant_id, intent.payee_did, intent.currency, released, refunded, expired,
     released * intent.amount_cents, refunded * intent.amount_cents, expired * intent.amount_cents,
     histogram, intent.funded_at, settled)
  ON CONFLICT (tenant_id, operator_did, currency) DO UPDATE SET
    released_count = t.released_count + released, refunded_count = t.refunded_count + refunded,
    expired_count = t.expired_count + expired,
    released_cents = t.released_cents + excluded.released_cents, refunded_cents = t.refunded_cents + excluded.refunded_cents,
    expired_cents = t.expired_cents + excluded.expired_cents,
    duration_histogram[bucket] = t.duration_histogram[bucket] + 1,
    first_funded_at = least(t.first_funded_at, excluded.first_funded_at),
    last_settled_at = greatest(t.last_settled_at, excluded.last_settled_at);

  INSERT INTO standing_operator_days AS d VALUES
    (p_tenant_id, intent.payee_did, (settled AT TIME ZONE 'UTC')::date, intent.currency, released, refunded, expired,
     released * intent.amount_cents, refunded * intent.amount_cents, expired * intent.amount_cents, histogram)
  ON CONFLICT (tenant_id, operator_did, day, currency) DO UPDATE SET
    released_count = d.released_count + released, refunded_count = d.refunded_count + refunded,
    expired_count = d.expired_count + expired,
    released_cents = d.released_cents + excluded.released_cents, refunded_cents = d.refunded_cents + excluded.refunded_cents,
    expired_cents = d.expired_cents + excluded.expired_cents,
    duration_histogram[bucket] = d.duration_histogram[bucket] + 1;
END $$;

DO $$
DECLARE
  name text;
BEGIN
  FOREACH name IN ARRAY ARRAY['standing_operator_totals', 'standing_operator_days'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
    EXECUTE format($p$CREATE POLICY %I ON %I TO svc_app
      USING (tenant_id = current_setting('app.tenant_id', true))
      WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, name || '_own', name);
    EXECUTE format('CREATE POLICY %I ON %I TO svc_system USING (true) WITH CHECK (true)', name || '_system', name);
  END LOOP;
END $$;

-- Settlements run as either role (requests as svc_app, the deadline sweeper as svc_system); only a rebuild
-- (svc_system) deletes.
GRANT SELECT, INSERT, UPDATE ON standing_operator_totals, standing_operator_days TO svc_app, svc_system;
GRANT DELETE ON standing_operator_totals, standing_operator_days TO svc_system;
