-- ledger_post_group appends several balanced transactions of one tenant under one lock of its head: the postings of
-- a group commit (src/engine/group-commit.ts, docs/engine.md "Group commit"), which the service sends as one call in
-- the message that commits, so the head is read, locked and moved once per group instead of once per posting
-- (docs/scaling.md). Each transaction is checked exactly as ledger_post checks one (2 to 16 entries, positive
-- amounts, known sides, debits equal to credits), all of them before the head is locked; any refusal fails the call
-- and the caller's transaction whole. The rows, their sequence numbers and their hash chain are exactly what
-- ledger_post would write for the same transactions posted one after the other, in the order given.
--
-- The transactions travel as parallel arrays: per transaction its id, intent, currency, kind, recording time and
-- number of entries; per entry (all transactions' entries, in order) its account, side, amount and the two halves of
-- its encoded body.

CREATE FUNCTION ledger_post_group(
  tenant text, transaction_uuids uuid[], intent_uuids uuid[], currency_codes text[], kinds text[], recordeds timestamptz[],
  entry_counts integer[], accounts text[], sides smallint[], amounts bigint[], body_heads bytea[], body_tails bytea[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  transaction_count integer := coalesce(cardinality(transaction_uuids), 0);
  entry_total integer := coalesce(cardinality(accounts), 0);
  first_entry integer := 1;
  entry_count integer;
  seq bigint;
  prev_hash bytea;
  row_body bytea;
  next_hash bytea;
  debits numeric;
  credits numeric;
BEGIN
  IF coalesce(cardinality(intent_uuids), -1) <> transaction_count OR coalesce(cardinality(currency_codes), -1) <> transaction_count
     OR coalesce(cardinality(kinds), -1) <> transaction_count OR coalesce(cardinality(recordeds), -1) <> transaction_count
     OR coalesce(cardinality(entry_counts), -1) <> transaction_count THEN
    RAISE EXCEPTION 'ledger_post_group: the transaction arrays must be of one length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF coalesce(cardinality(sides), -1) <> entry_total OR coalesce(cardinality(amounts), -1) <> entry_total
     OR coalesce(cardinality(body_heads), -1) <> entry_total OR coalesce(cardinality(body_tails), -1) <> entry_total THEN
    RAISE EXCEPTION 'ledger_post_group: the entry arrays must be of one length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF transaction_count = 0 THEN
    RAISE EXCEPTION 'ledger_post_group: no transaction to post' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- Every transaction checked before the head is locked, as ledger_post checks one.
  FOR t IN 1 .. transaction_count LOOP
    entry_count := entry_counts[t];
    IF entry_count IS NULL OR entry_count < 2 OR entry_count > 16 THEN
      RAISE EXCEPTION 'ledger_post_group: transaction % has % entries; a transaction has 2 to 16', transaction_uuids[t], entry_count
        USING ERRCODE = 'check_violation';
    END IF;
    IF first_entry + entry_count - 1 > entry_total THEN
      RAISE EXCEPTION 'ledger_post_group: the entry counts add up to more than the % entries given', entry_total
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    debits := 0;
    credits := 0;
    FOR entry IN first_entry .. first_entry + entry_count - 1 LOOP
      IF amounts[entry] IS NULL OR amounts[entry] <= 0 THEN
        RAISE EXCEPTION 'ledger_post_group: transaction % entry % has amount %; amounts are positive', transaction_uuids[t], entry - first_entry, amounts[entry]
          USING ERRCODE = 'check_violation';
      END IF;
      IF sides[entry] = 0 THEN
        debits := debits + amounts[entry];
      ELSIF sides[entry] = 1 THEN
        credits := credits + amounts[entry];
      ELSE
        RAISE EXCEPTION 'ledger_post_group: transaction % entry % has side %; 0 is a debit, 1 a credit', transaction_uuids[t], entry - first_entry, sides[entry]
          USING ERRCODE = 'check_violation';
      END IF;
    END LOOP;
    IF debits <> credits THEN
      RAISE EXCEPTION 'ledger_post_group: transaction % is unbalanced: debits %, credits %', transaction_uuids[t], debits, credits
        USING ERRCODE = 'check_violation';
    END IF;
    first_entry := first_entry + entry_count;
  END LOOP;
  IF first_entry - 1 <> entry_total THEN
    RAISE EXCEPTION 'ledger_post_group: the entry counts add up to %, not the % entries given', first_entry - 1, entry_total
      USING ERRCODE = 'invalid_parameter_value';
  END IF;

  SELECT last_ledger_seq, last_row_hash INTO seq, prev_hash FROM ledger_heads WHERE tenant_id = tenant FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ledger_heads (tenant_id, last_ledger_seq, last_row_hash) VALUES (tenant, 0, decode(repeat('00', 32), 'hex'))
      ON CONFLICT (tenant_id) DO NOTHING;
    SELECT last_ledger_seq, last_row_hash INTO STRICT seq, prev_hash FROM ledger_heads WHERE tenant_id = tenant FOR UPDATE;
  END IF;
  first_entry := 1;
  FOR t IN 1 .. transaction_count LOOP
    FOR entry IN first_entry .. first_entry + entry_counts[t] - 1 LOOP
      seq := seq + 1;
      row_body := body_heads[entry] || ledger_u64_varint(seq) || body_tails[entry];
      next_hash := sha256(prev_hash || row_body);
      INSERT INTO ledger_rows (tenant_id, ledger_seq, transaction_id, intent_id, entry_index, account, side, amount_cents,
                               currency, event_kind, recorded_at, body, prev_row_hash, row_hash)
        VALUES (tenant, seq, transaction_uuids[t], intent_uuids[t], entry - first_entry, accounts[entry], sides[entry], amounts[entry],
                currency_codes[t], kinds[t], recordeds[t], row_body, prev_hash, next_hash);
      prev_hash := next_hash;
    END LOOP;
    first_entry := first_entry + entry_counts[t];
  END LOOP;
  UPDATE ledger_heads SET last_ledger_seq = seq, last_row_hash = prev_hash, updated_at = now() WHERE tenant_id = tenant;
  RETURN seq;
END $$;

GRANT EXECUTE ON FUNCTION ledger_post_group(text, uuid[], uuid[], text[], text[], timestamptz[], integer[], text[], smallint[], bigint[], bytea[], bytea[])
  TO svc_app, svc_system;
