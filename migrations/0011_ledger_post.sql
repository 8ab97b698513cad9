-- Posting in one statement (src/services/ledger-service.ts, docs/ledger.md "Posting"). The engine sends it in the
-- same message as COMMIT, so the tenant's head lock, which serializes the tenant's postings, is held only while
-- Postgres appends and commits, never across a round trip to the service (docs/performance.md). The service
-- encodes each row body around its ledger_seq (the bincode 2 bytes before and after that field, checked by the
-- service's own encoder); this function places the seq between them and chains the hashes:
-- row_hash = SHA-256(prev_row_hash ‖ body), the first prev_row_hash 32 zero bytes.

-- bincode 2 varint of an unsigned integer: one byte up to 250, else a marker (fb, fc, fd) and the value as
-- u16, u32 or u64 little endian.
CREATE FUNCTION ledger_u64_varint(n bigint) RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  width integer;
  encoded bytea;
BEGIN
  IF n < 0 THEN
    RAISE EXCEPTION 'ledger_u64_varint: % is negative', n USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF n <= 250 THEN
    RETURN set_byte('\x00'::bytea, 0, n::integer);
  END IF;
  width := CASE WHEN n <= 65535 THEN 2 WHEN n <= 4294967295 THEN 4 ELSE 8 END;
  encoded := set_byte(decode(repeat('00', width + 1), 'hex'), 0, CASE width WHEN 2 THEN 251 WHEN 4 THEN 252 ELSE 253 END);
  FOR byte_index IN 0 .. width - 1 LOOP
    encoded := set_byte(encoded, byte_index + 1, ((n >> (8 * byte_index)) & 255)::integer);
  END LOOP;
  RETURN encoded;
END $$;

-- Appends one balanced transaction's rows (entry i: accounts[i], sides[i], amounts[i], body_heads[i] and
-- body_tails[i]) after the tenant's head, moves the head, and answers the last ledger_seq. Runs as its caller, so
-- row-level security scopes it like any other statement of the caller's transaction.
CREATE FUNCTION ledger_post(
  tenant text, transaction_uuid uuid, intent_uuid uuid, currency_code text, kind text, recorded timestamptz,
  accounts text[], sides smallint[], amounts bigint[], body_heads bytea[], body_tails bytea[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  entry_count integer := cardinality(accounts);
  seq bigint;
  prev_hash bytea;
  row_body bytea;
  next_hash bytea;
BEGIN
  IF entry_count = 0 OR cardinality(sides) <> entry_count OR cardinality(amounts) <> entry_count
     OR cardinality(body_heads) <> entry_count OR cardinality(body_tails) <> entry_count THEN
    RAISE EXCEPTION 'ledger_post: the entry arrays must be non-empty and of one length' USING ERRCODE = 'invalid_parameter_value';
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

GRANT EXECUTE ON FUNCTION ledger_u64_varint(bigint) TO svc_app, svc_system;
GRANT EXECUTE ON FUNCTION ledger_post(text, uuid, uuid, text, text, timestamptz, text[], smallint[], bigint[], bytea[], bytea[]) TO svc_app, svc_system;
