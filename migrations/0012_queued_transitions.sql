-- Intent transitions that travel with COMMIT (src/db/intent-repository.ts, docs/performance.md). The service has
-- read the intent under its row lock and checked its state, so each queued guarded UPDATE moves exactly one row.
-- Should one move none (a programmer error), this fails the message: the transaction rolls back instead of
-- committing the rest of the work around a state that did not change.
CREATE FUNCTION expect_one_row(changed bigint, what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF changed IS DISTINCT FROM 1 THEN
    RAISE EXCEPTION '%: expected to change one row, changed %', what, changed USING ERRCODE = 'cardinality_violation';
  END IF;
END $$;
