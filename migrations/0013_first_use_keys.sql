-- How each registered key came to be registered: through POST /v1/registry/keys (`api`), by the operator CLI
-- (`cli`), or on first use of a sandbox agent key by a valid recognition proof (`first_use`, docs/signing.md).
-- Keys registered before this migration came through the API.

ALTER TABLE registered_keys
  ADD COLUMN registered_by text NOT NULL DEFAULT 'api' CHECK (registered_by IN ('api', 'cli', 'first_use'));

-- Only a recognition proof registers a key on first use, and a proof names an agent key.
ALTER TABLE registered_keys
  ADD CONSTRAINT registered_keys_first_use_agent CHECK (registered_by <> 'first_use' OR kind = 'agent');
