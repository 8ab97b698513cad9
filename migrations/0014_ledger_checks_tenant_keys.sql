-- Two rules the database now keeps itself.
--
-- 1. ledger_post refuses a transaction the ledger does not allow: fewer than two entries or more than sixteen
--    (ledgerTransactionEntriesMax in src/limits.ts), or debits that do not equal credits. The service checks the
--    same before it queues a posting (ledgerTransactionProblems, src/services/ledger-service.ts), so a refusal here
--    means a programmer error got past that check: it fails the caller's transaction whole, which answers 500
--    internal.error, never a 4xx. The checks run before the tenant's head is locked, so they add nothing to the time
--    that lock is held. Same signature as in 0011, so the service's call and the grants are unchanged.
--
-- 2. Every tenant table's primary key leads with tenant_id (docs/scaling.md: what sharding by tenant needs).
--    api_keys, registered_keys and sso_states were keyed by their id alone, and policy_head_moves had no key.
--    An API key and an SSO state are found by their id before the tenant is known (authentication, the OIDC
--    callback), so their ids stay unique on their own as well; test/foundation/tenant-keys.test.ts names these two
--    exceptions and checks the rule for every table.

CREATE OR REPLACE FUNCTION ledger_post(
  tenant text, transaction_uuid uuid, intent_uuid uuid, currency_code text, kind text, recorded timestamptz,
  accounts text[], sides smallint[], amounts bigint[], body_heads bytea[], body_tails bytea[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  entry_count integer := coalesce(cardinality(accounts), 0);
  seq bigint;
  prev_hash bytea;
  row_body bytea;
  next_hash bytea;
  debits numeric := 0;
  credits numeric := 0;
BEGIN
  IF coalesce(cardinality(sides), -1) <> entry_count OR coalesce(cardinality(amounts), -1) <> entry_count
     OR coalesce(cardinality(body_heads), -1) <> entry_count OR coalesce(cardinality(body_tails), -1) <> entry_count THEN
    RAISE EXCEPTION 'ledger_post: the entry arrays must be of one length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF entry_count < 2 OR entry_count > 16 THEN
    RAISE EXCEPTION 'ledger_post: transaction % has % entries; a transaction has 2 to 16', transaction_uuid, entry_count
      USING ERRCODE = 'check_violation';
  END IF;
  FOR entry IN 1 .. entry_count LOOP
    IF amounts[entry] IS NULL OR amounts[entry] <= 0 THEN
      RAISE EXCEPTION 'ledger_post: transaction % entry % has amount %; amounts are positive', transaction_uuid, entry - 1, amounts[entry]
        USING ERRCODE = 'check_violation';
    END IF;
    IF sides[entry] = 0 THEN
      debits := debits + amounts[entry];
    ELSIF sides[entry] = 1 THEN
      credits := credits + amounts[entry];
    ELSE
      RAISE EXCEPTION 'ledger_post: transaction % entry % has side %; 0 is a debit, 1 a credit', transaction_uuid, entry - 1, sides[entry]
        USING ERRCODE = 'check_violation';
    END IF;
  END LOOP;
  IF debits <> credits THEN
    RAISE EXCEPTION 'ledger_post: transaction % is unbalanced: debits %, credits %', transaction_uuid, debits, credits
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT last_ledger_seq, last_row_hash INTO seq, prev_hash FROM ledger_heads WHERE tenant_id = tenant FOR UPDATE;
  IF NOT FOUND THEN
    -- The tenant's first posting. Of two racing first postings, the loser finds the winner's row and queues on it.
    INSERT INTO ledger_heads (tenant_id, last_ledger_seq, last_row_hash) VALUES (tenant, 0, decode(repeat('00', 32), 'hex'))
      ON CONFLICT (tenant_id) DO NOTHING;
    SELECT last_ledger_seq, last_row_hash INTO STRICT seq, prev_hash FROM ledger_heads WHERE tenant_id = tenant FOR UPDATE;
  END IF;
  FOR entry IN 1 .. entry_count LOOP
    seq := seq + 1;
    row_body := body_heads[entry] || ledger_u64_varint(seq) || body_tails[entry];
    next_hash := sha256(prev_hash || row_body);
    INSERT INTO ledger_rows (tenant_id, ledger_seq, transaction_id, intent_id, entry_index, account, side, amount_cents,
                             currency, event_kind, recorded_at, body, prev_row_hash, row_hash)
      VALUES (tenant, seq, transaction_uuid, intent_uuid, entry - 1, accounts[entry], sides[entry], amounts[entry],
              currency_code, kind, recorded, row_body, prev_hash, next_hash);
    prev_hash := next_hash;
  END LOOP;
  UPDATE ledger_heads SET last_ledger_seq = seq, last_row_hash = prev_hash, updated_at = now() WHERE tenant_id = tenant;
  RETURN seq;
END $$;

-- API keys: found by key_id alone when a request authenticates, so key_id stays unique by itself.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_pkey;
ALTER TABLE api_keys ADD PRIMARY KEY (tenant_id, key_id);
CREATE UNIQUE INDEX api_keys_key_id ON api_keys (key_id);

-- Registered keys are always read within their tenant.
ALTER TABLE registered_keys DROP CONSTRAINT registered_keys_pkey;
ALTER TABLE registered_keys ADD PRIMARY KEY (tenant_id, registered_key_id);

-- SSO states: the OIDC callback finds its state before it knows the tenant, so state stays unique by itself.
ALTER TABLE sso_states DROP CONSTRAINT sso_states_pkey;
ALTER TABLE sso_states ADD PRIMARY KEY (tenant_id, state);
CREATE UNIQUE INDEX sso_states_state ON sso_states (state);

-- Head moves had no key: each gets a number, in the order they were recorded.
ALTER TABLE policy_head_moves ADD COLUMN move_seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE policy_head_moves ADD PRIMARY KEY (tenant_id, template_id, move_seq);
