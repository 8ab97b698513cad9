-- What the public client's remaining routes need (docs/wire-compatibility.md): the spend-control reads list a
-- tenant's decisions newest first.

CREATE INDEX spend_decisions_by_tenant ON spend_decisions (tenant_id, created_at DESC, decision_id DESC);
