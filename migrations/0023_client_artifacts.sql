-- Artifacts in the public client's formats (docs/protocol.md, docs/wire-compatibility.md#artifacts-the-client-verifies).
--
-- Transparency-log leaves get a format: 1, the leaf hashes the artifact's signed canonical bytes (every leaf appended
-- before this migration); 2, it hashes their 32-byte SHA-256 digest, the artifact's message_digest_sha256_hex (the
-- client's rule, every leaf from now on). Existing leaves keep their hashes, so every root, signed head, inclusion and
-- consistency proof issued before stays true, and one tree goes on across the change.
ALTER TABLE transparency_log_leaves ADD COLUMN leaf_format smallint NOT NULL DEFAULT 1 CHECK (leaf_format IN (1, 2));
ALTER TABLE transparency_log_leaves DROP CONSTRAINT transparency_log_leaves_check;
-- NOT VALID: every existing row has format 1 and already passed the same check for format 1 (the constraint dropped
-- above); re-validating would re-hash the whole log under the migration's lock and prove nothing new. New rows are
-- checked as always.
ALTER TABLE transparency_log_leaves ADD CONSTRAINT transparency_log_leaves_leaf_hash_check CHECK (
  length(leaf_hash) = 32
  AND leaf_hash = sha256('\x00'::bytea || CASE WHEN leaf_format = 1 THEN canonical_bytes ELSE sha256(canonical_bytes) END)
) NOT VALID;

-- What the client told POST /verify about the guarded tool call, for the action receipt its completion issues: the
-- receipt is found by the client's tool_call_id, and names the agent the client reported.
ALTER TABLE spend_decisions
  ADD COLUMN tool_call_id text CHECK (length(tool_call_id) BETWEEN 1 AND 256),
  ADD COLUMN tool_name text CHECK (tool_name ~ '^[a-z0-9][a-z0-9._:/-]{0,127}$'),
  ADD COLUMN receipt_context jsonb CHECK (jsonb_typeof(receipt_context) = 'object');

-- The attestations (x-svc-agent-receipt-attestations) and agent run (x-svc-agent-run-id) sent with the evidence: the
-- intent-terminal agent receipt lists the attestations in external_attestations.
ALTER TABLE evidence_submissions
  ADD COLUMN external_attestations jsonb CHECK (jsonb_typeof(external_attestations) = 'array'),
  ADD COLUMN agent_run_id uuid;
