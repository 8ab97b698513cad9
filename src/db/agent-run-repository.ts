// Agent runs and their trace events (tables agent_runs, agent_run_trace_events): the run registered per bind, and
// the events appended to it in the order received, each stored once by its digest.
import type { Queryable } from '../infra/database.ts';

export interface AgentRunRecord {
  readonly runId: string;
  readonly intentId: string;
  readonly operation: string;
  readonly sandbox: boolean;
  readonly allowedTools: readonly string[];
  readonly completionPreset: string;
  readonly traceEventCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface AgentRunRow {
  run_id: string;
  intent_id: string;
  operation: string;
  sandbox: boolean;
  allowed_tools: string[];
  completion_preset: string;
  trace_event_count: number;
  created_at: Date;
  updated_at: Date;
}

const runColumns = 'run_id, intent_id, operation, sandbox, allowed_tools, completion_preset, trace_event_count, created_at, updated_at';

const toRun = (row: AgentRunRow): AgentRunRecord => ({
  runId: row.run_id,
  intentId: row.intent_id,
  operation: row.operation,
  sandbox: row.sandbox,
  allowedTools: row.allowed_tools,
  completionPreset: row.completion_preset,
  traceEventCount: row.trace_event_count,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function findAgentRun(tx: Queryable, tenantId: string, runId: string, options: { forUpdate?: boolean } = {}): Promise<AgentRunRecord | undefined> {
  const { rows } = await tx.query<AgentRunRow>(
    `SELECT ${runColumns} FROM agent_runs WHERE tenant_id = $1 AND run_id = $2 ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [tenantId, runId],
  );
  return rows[0] && toRun(rows[0]);
}

export async function countAgentRunsOfIntent(tx: Queryable, tenantId: string, intentId: string): Promise<number> {
  const { rows } = await tx.query<{ runs: number }>('SELECT count(*)::integer AS runs FROM agent_runs WHERE tenant_id = $1 AND intent_id = $2', [tenantId, intentId]);
  return rows[0]!.runs;
}

export interface AgentRunFields {
  readonly intentId: string;
  readonly operation: string;
  readonly sandbox: boolean;
  readonly allowedTools: readonly string[];
  readonly completionPreset: string;
}

export async function insertAgentRun(tx: Queryable, tenantId: string, runId: string, fields: AgentRunFields): Promise<AgentRunRecord> {
  const { rows } = await tx.query<AgentRunRow>(
    `INSERT INTO agent_runs (tenant_id, run_id, intent_id, operation, sandbox, allowed_tools, completion_preset)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${runColumns}`,
    [tenantId, runId, fields.intentId, fields.operation, fields.sandbox, fields.allowedTools, fields.completionPreset],
  );
  return toRun(rows[0]!);
}

/** Rewrites what the client registers of a run (its intent stays); `updated_at` moves only when something changed. */
export async function updateAgentRun(tx: Queryable, tenantId: string, runId: string, fields: Omit<AgentRunFields, 'intentId'>): Promise<AgentRunRecord> {
  const { rows } = await tx.query<AgentRunRow>(
    `UPDATE agent_runs SET operation = $3, sandbox = $4, allowed_tools = $5, completion_preset = $6,
       updated_at = CASE WHEN (operation, sandbox, allowed_tools, completion_preset) IS DISTINCT FROM ($3, $4, $5::text[], $6)
                         THEN now() ELSE updated_at END
     WHERE tenant_id = $1 AND run_id = $2 RETURNING ${runColumns}`,
    [tenantId, runId, fields.operation, fields.sandbox, fields.allowedTools, fields.completionPreset],
  );
  return toRun(rows[0]!);
}

/** Oldest first; at most agentRunsPerIntentMax by construction. */
export async function listAgentRunsOfIntent(tx: Queryable, tenantId: string, intentId: string): Promise<AgentRunRecord[]> {
  const { rows } = await tx.query<AgentRunRow>(
    `SELECT ${runColumns} FROM agent_runs WHERE tenant_id = $1 AND intent_id = $2 ORDER BY created_at, run_id`,
    [tenantId, intentId],
  );
  return rows.map(toRun);
}

export interface NewTraceEvent {
  readonly type: string;
  readonly toolCallId: string;
  readonly operation: string;
  readonly recordedAt: string;
  readonly event: Record<string, unknown>;
  readonly digest: Buffer;
}

/** The digests among `digests` the run already holds. */
export async function existingTraceEventDigests(tx: Queryable, tenantId: string, runId: string, digests: readonly Buffer[]): Promise<Set<string>> {
  const { rows } = await tx.query<{ event_digest: Buffer }>(
    'SELECT event_digest FROM agent_run_trace_events WHERE tenant_id = $1 AND run_id = $2 AND event_digest = ANY ($3::bytea[])',
    [tenantId, runId, digests],
  );
  return new Set(rows.map((row) => row.event_digest.toString('hex')));
}

/** Appends events after the run's count and moves the count; the caller holds the run's row lock. */
export async function appendTraceEvents(tx: Queryable, tenantId: string, runId: string, firstSeq: number, events: readonly NewTraceEvent[]): Promise<number> {
  await tx.query(
    `INSERT INTO agent_run_trace_events (tenant_id, run_id, seq, event_type, tool_call_id, operation, recorded_at, event, event_digest)
     SELECT $1, $2, $3 + ordinality - 1, type, tool_call_id, operation, recorded_at, event, digest
     FROM unnest($4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::jsonb[], $9::bytea[])
       WITH ORDINALITY AS batch (type, tool_call_id, operation, recorded_at, event, digest, ordinality)`,
    [
      tenantId,
      runId,
      firstSeq,
      events.map((event) => event.type),
      events.map((event) => event.toolCallId),
      events.map((event) => event.operation),
      events.map((event) => event.recordedAt),
      events.map((event) => JSON.stringify(event.event)),
      events.map((event) => event.digest),
    ],
  );
  const { rows } = await tx.query<{ trace_event_count: number }>(
    `UPDATE agent_runs SET trace_event_count = trace_event_count + $3, updated_at = now()
     WHERE tenant_id = $1 AND run_id = $2 RETURNING trace_event_count`,
    [tenantId, runId, events.length],
  );
  return rows[0]!.trace_event_count;
}

export interface TraceEventRecord {
  readonly seq: number;
  readonly type: string;
  readonly toolCallId: string;
  readonly operation: string;
  readonly recordedAt: Date;
  readonly receivedAt: Date;
  readonly event: Record<string, unknown>;
}

export async function listTraceEvents(tx: Queryable, tenantId: string, runId: string, page: { afterSeq: number; limit: number }): Promise<TraceEventRecord[]> {
  const { rows } = await tx.query<{ seq: number; event_type: string; tool_call_id: string; operation: string; recorded_at: Date; received_at: Date; event: Record<string, unknown> }>(
    `SELECT seq, event_type, tool_call_id, operation, recorded_at, received_at, event FROM agent_run_trace_events
     WHERE tenant_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
    [tenantId, runId, page.afterSeq, page.limit],
  );
  return rows.map((row) => ({
    seq: row.seq,
    type: row.event_type,
    toolCallId: row.tool_call_id,
    operation: row.operation,
    recordedAt: row.recorded_at,
    receivedAt: row.received_at,
    event: row.event,
  }));
}
