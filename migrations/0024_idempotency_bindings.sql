-- An idempotency key is bound to its first request's fingerprint from that request's first execution, not only once
-- a final answer is stored (docs/engine.md#idempotency): a key whose first request answered an error, a 402
-- challenge or a 202 refuses another body (409 idempotency.key_reused), while the same request may run again (the
-- rails' handshake re-sends it with a credential, a poll re-sends it as it is).
--
-- A row without a response is such a binding: the key ran with this fingerprint and has no final answer yet. Its
-- final answer, when one comes, is written onto the same row (hence UPDATE), at most once.
ALTER TABLE idempotency_records
  ALTER COLUMN response_status DROP NOT NULL,
  ALTER COLUMN response_headers DROP NOT NULL,
  ALTER COLUMN response_body DROP NOT NULL,
  ADD CONSTRAINT idempotency_records_whole_answer CHECK (
    (response_status IS NULL) = (response_headers IS NULL) AND (response_status IS NULL) = (response_body IS NULL)
  );

GRANT UPDATE ON idempotency_records TO svc_app, svc_system;
