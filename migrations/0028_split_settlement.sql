-- Split settlement (docs/engine.md#the-split-rule): an intent settles `released` (all to the payee), `refunded` (all
-- back to the principal) or `resolved_split` (part to the payee, the rest back), in one balanced ledger transaction
-- of kind `split`. A settled intent records both parts, and they add up to its amount.
--
-- release_mode is what the principal signed through a policy version's parameters (completion_budget_v1
-- `release_mode`): `full` releases the whole amount on a passing rule, `metered` releases the integer the payee
-- signed at the template's cost path (metered_cost_path), recorded with the evidence as metered_cost_cents.

ALTER TABLE intents DROP CONSTRAINT intents_state_check;
ALTER TABLE intents ADD CONSTRAINT intents_state_check
  CHECK (state IN ('open', 'funded', 'evidence_recorded', 'released', 'refunded', 'resolved_split'));

ALTER TABLE intents
  ADD COLUMN release_mode       text NOT NULL DEFAULT 'full' CHECK (release_mode IN ('full', 'metered')),
  ADD COLUMN metered_cost_path  text[],
  ADD COLUMN metered_cost_cents bigint CHECK (metered_cost_cents >= 0),
  ADD COLUMN released_cents     bigint CHECK (released_cents >= 0),
  ADD COLUMN refunded_cents     bigint CHECK (refunded_cents >= 0);

-- Intents settled before this migration settled whole.
UPDATE intents SET released_cents = amount_cents, refunded_cents = 0 WHERE state = 'released';
UPDATE intents SET released_cents = 0, refunded_cents = amount_cents WHERE state = 'refunded';

ALTER TABLE intents
  ADD CONSTRAINT intents_metered_cost_path CHECK ((release_mode = 'metered') = (metered_cost_path IS NOT NULL)),
  ADD CONSTRAINT intents_metered_cost_within_amount CHECK (metered_cost_cents IS NULL OR metered_cost_cents <= amount_cents),
  -- Both parts once settled, never before, and they add up to the amount; a split has both parts positive.
  ADD CONSTRAINT intents_settled_parts CHECK (
    CASE state
      WHEN 'released' THEN released_cents = amount_cents AND refunded_cents = 0
      WHEN 'refunded' THEN released_cents = 0 AND refunded_cents = amount_cents
      WHEN 'resolved_split' THEN released_cents > 0 AND refunded_cents > 0 AND released_cents + refunded_cents = amount_cents
      ELSE released_cents IS NULL AND refunded_cents IS NULL
    END);

ALTER TABLE ledger_rows DROP CONSTRAINT ledger_rows_event_kind_check;
ALTER TABLE ledger_rows ADD CONSTRAINT ledger_rows_event_kind_check CHECK (event_kind IN ('fund', 'release', 'refund', 'split'));

-- Standing (docs/standing.md#aggregates): a split counts as a delivery (released_count, and split_count, the splits
-- among them); its released part adds to released_cents and its refunded part to refunded_cents, so the volumes
-- still add up to the amounts settled.
ALTER TABLE standing_operator_totals ADD COLUMN split_count bigint NOT NULL DEFAULT 0 CHECK (split_count >= 0 AND split_count <= released_count);
ALTER TABLE standing_operator_days ADD COLUMN split_count bigint NOT NULL DEFAULT 0 CHECK (split_count >= 0 AND split_count <= released_count);

DROP FUNCTION standing_record_settlement(text, uuid, text);
CREATE FUNCTION standing_record_settlement(p_tenant_id text, p_intent_id uuid, p_outcome text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  intent record;
  settled timestamptz := transaction_timestamp();
  bucket integer;
  released integer := CASE WHEN p_outcome IN ('released', 'split') THEN 1 ELSE 0 END;
  split integer := CASE WHEN p_outcome = 'split' THEN 1 ELSE 0 END;
  refunded integer := CASE WHEN p_outcome = 'refunded' THEN 1 ELSE 0 END;
  expired integer := CASE WHEN p_outcome = 'expired' THEN 1 ELSE 0 END;
  released_part bigint;
  refunded_part bigint;
  histogram bigint[];
BEGIN
  IF p_outcome NOT IN ('released', 'split', 'refunded', 'expired') THEN
    RAISE EXCEPTION 'standing: unknown outcome %', p_outcome;
  END IF;
  -- Queued after the settling transition, so the row holds its parts; a funding queued in this same transaction has
  -- not reached the row yet, and records this transaction's time.
  SELECT payee_did, currency, amount_cents, released_cents, refunded_cents, coalesce(funded_at, settled) AS funded_at INTO STRICT intent
    FROM intents WHERE tenant_id = p_tenant_id AND intent_id = p_intent_id;
  released_part := coalesce(intent.released_cents, released * intent.amount_cents);
  refunded_part := CASE WHEN p_outcome = 'expired' THEN 0 ELSE coalesce(intent.refunded_cents, refunded * intent.amount_cents) END;
  bucket := standing_duration_bucket(extract(epoch FROM settled - intent.funded_at));
  histogram := array_fill(0::bigint, ARRAY[13]);
  histogram[bucket] := 1;

  INSERT INTO standing_operator_totals AS t
    (tenant_id, operator_did, currency, released_count, refunded_count, expired_count, released_cents, refunded_cents,
     expired_cents, duration_histogram, first_funded_at, last_settled_at, split_count)
  VALUES
    (p_tenant_id, intent.payee_did, intent.currency, released, refunded, expired,
     released_part, refunded_part, expired * intent.amount_cents, histogram, intent.funded_at, settled, split)
  ON CONFLICT (tenant_id, operator_did, currency) DO UPDATE SET
    released_count = t.released_count + released, refunded_count = t.refunded_count + refunded,
    expired_count = t.expired_count + expired, split_count = t.split_count + split,
    released_cents = t.released_cents + excluded.released_cents, refunded_cents = t.refunded_cents + excluded.refunded_cents,
    expired_cents = t.expired_cents + excluded.expired_cents,
    duration_histogram[bucket] = t.duration_histogram[bucket] + 1,
    first_funded_at = least(t.first_funded_at, excluded.first_funded_at),
    last_settled_at = greatest(t.last_settled_at, excluded.last_settled_at);

  INSERT INTO standing_operator_days AS d
    (tenant_id, operator_did, day, currency, released_count, refunded_count, expired_count, released_cents,
     refunded_cents, expired_cents, duration_histogram, split_count)
  VALUES
    (p_tenant_id, intent.payee_did, (settled AT TIME ZONE 'UTC')::date, intent.currency, released, refunded, expired,
     released_part, refunded_part, expired * intent.amount_cents, histogram, split)
  ON CONFLICT (tenant_id, operator_did, day, currency) DO UPDATE SET
    released_count = d.released_count + released, refunded_count = d.refunded_count + refunded,
    expired_count = d.expired_count + expired, split_count = d.split_count + split,
    released_cents = d.released_cents + excluded.released_cents, refunded_cents = d.refunded_cents + excluded.refunded_cents,
    expired_cents = d.expired_cents + excluded.expired_cents,
    duration_histogram[bucket] = d.duration_histogram[bucket] + 1;
END $$;
