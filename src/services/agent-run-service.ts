// Agent runs (docs/agent-runs.md): the public client's middleware registers a run when it binds to an intent and
// reports what it did at each tool call. Stored per tenant, bounded per intent and per run, each event once.
import { createHash } from 'node:crypto';
import type { AgentRun, AgentRunBody, AgentRunTraceEventsAccepted, AgentRunTraceEventsBody, AgentRunWithEvents } from '../contracts/agent-runs.ts';
import {
  appendTraceEvents,
  countAgentRunsOfIntent,
  existingTraceEventDigests,
  findAgentRun,
  insertAgentRun,
  listAgentRunsOfIntent,
  listTraceEvents,
  updateAgentRun,
  type AgentRunRecord,
  type NewTraceEvent,
} from '../db/agent-run-repository.ts';
import { findIntent, lockIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { agentRunsPerIntentMax, agentRunTraceEventBytesMax, agentRunTraceEventsPerRunMax } from '../limits.ts';
import { canonicalJson } from '../signing/canonical-json.ts';

function presentRun(tenantId: string, run: AgentRunRecord): AgentRun {
  return {
    object: 'agent_run',
    run_id: run.runId,
    tenant_id: tenantId,
    intent_id: run.intentId,
    operation: run.operation,
    sandbox: run.sandbox,
    allowed_tools: [...run.allowedTools],
    completion_preset: run.completionPreset,
    trace_event_count: run.traceEventCount,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
  };
}

/**
 * `PUT /v1/agent-runs/{run_id}`: registers the run, or rewrites what was registered of it (the client registers once
 * per bind and may repeat it). A run belongs to one intent for good: the same run id for another intent is 409. The
 * intent's row lock orders concurrent registrations, so its run count never passes agentRunsPerIntentMax.
 */
export async function registerAgentRun(tx: Queryable, tenantId: string, runId: string, body: AgentRunBody): Promise<AgentRun> {
  const intentId = body.intent_id.toLowerCase();
  const fields = { operation: body.operation, sandbox: body.sandbox, allowedTools: body.allowed_tools, completionPreset: body.completion_preset };
  const existing = await findAgentRun(tx, tenantId, runId);
  if (existing) {
    if (existing.intentId !== intentId) throw new ServiceError('agent_run.intent_mismatch', { details: { run_id: runId } });
    return presentRun(tenantId, await updateAgentRun(tx, tenantId, runId, fields));
  }
  const intent = await lockIntent(tx, tenantId, intentId);
  if (!intent) throw new ServiceError('intent.not_found');
  // Another registration of the same run may have committed while this one waited for the intent's lock.
  const raced = await findAgentRun(tx, tenantId, runId);
  if (raced) return registerAgentRun(tx, tenantId, runId, body);
  if ((await countAgentRunsOfIntent(tx, tenantId, intentId)) >= agentRunsPerIntentMax) {
    throw new ServiceError('agent_run.limit_reached', { details: { runs_per_intent_max: agentRunsPerIntentMax } });
  }
  return presentRun(tenantId, await insertAgentRun(tx, tenantId, runId, { intentId, ...fields }));
}

/**
 * `POST /v1/agent-runs/{run_id}/trace-events`: appends the events in the order sent, all or none. An event the run
 * already holds (the same canonical JSON: a report retried after a lost answer) is counted as a duplicate and not
 * stored again. Past agentRunTraceEventsPerRunMax the whole batch is refused and the run keeps what it had.
 */
export async function appendAgentRunTraceEvents(tx: Queryable, tenantId: string, runId: string, body: AgentRunTraceEventsBody): Promise<AgentRunTraceEventsAccepted> {
  const run = await findAgentRun(tx, tenantId, runId, { forUpdate: true });
  if (!run) throw new ServiceError('agent_run.not_found');
  const candidates: NewTraceEvent[] = [];
  for (const [index, event] of body.events.entries()) {
    if (event.runId !== runId) throw new ServiceError('agent_run.trace_event_invalid', { details: { index, reason: 'runId is not the run of the path' } });
    const canonical = canonicalJson(event);
    if (Buffer.byteLength(canonical) > agentRunTraceEventBytesMax) {
      throw new ServiceError('agent_run.trace_event_invalid', { details: { index, reason: `larger than ${agentRunTraceEventBytesMax} bytes of canonical JSON` } });
    }
    candidates.push({
      type: event.type,
      toolCallId: event.toolCallId,
      operation: event.operation,
      recordedAt: event.recordedAt,
      event,
      digest: createHash('sha256').update(canonical).digest(),
    });
  }
  const held = await existingTraceEventDigests(tx, tenantId, runId, candidates.map((event) => event.digest));
  const fresh: NewTraceEvent[] = [];
  for (const event of candidates) {
    const key = event.digest.toString('hex');
    if (held.has(key)) continue;
    held.add(key);
    fresh.push(event);
  }
  if (run.traceEventCount + fresh.length > agentRunTraceEventsPerRunMax) {
    throw new ServiceError('agent_run.trace_events_exceeded', { details: { trace_events_per_run_max: agentRunTraceEventsPerRunMax, trace_event_count: run.traceEventCount } });
  }
  const count = fresh.length === 0 ? run.traceEventCount : await appendTraceEvents(tx, tenantId, runId, run.traceEventCount + 1, fresh);
  return { object: 'agent_run_trace_events', run_id: runId, accepted: fresh.length, duplicates: candidates.length - fresh.length, trace_event_count: count };
}

/** `GET /v1/agent-runs?intent_id=`: the intent's runs, oldest first; another tenant's intent is 404, as an unknown one. */
export async function listAgentRuns(tx: Queryable, tenantId: string, intentId: string) {
  const intent = await findIntent(tx, tenantId, intentId.toLowerCase());
  if (!intent) throw new ServiceError('intent.not_found');
  const runs = await listAgentRunsOfIntent(tx, tenantId, intent.intentId);
  return { object: 'list' as const, data: runs.map((run) => presentRun(tenantId, run)), has_more: false as const, next_cursor: null };
}

/** `GET /v1/agent-runs/{run_id}`: the run with a page of its events in the order received. */
export async function readAgentRun(tx: Queryable, tenantId: string, runId: string, page: { afterSeq: number; limit: number }): Promise<AgentRunWithEvents> {
  const run = await findAgentRun(tx, tenantId, runId);
  if (!run) throw new ServiceError('agent_run.not_found');
  const events = await listTraceEvents(tx, tenantId, runId, page);
  const last = events.at(-1);
  return {
    ...presentRun(tenantId, run),
    trace_events: events.map((event) => ({
      seq: event.seq,
      type: event.type as AgentRunWithEvents['trace_events'][number]['type'],
      tool_call_id: event.toolCallId,
      operation: event.operation,
      recorded_at: event.recordedAt.toISOString(),
      received_at: event.receivedAt.toISOString(),
      event: event.event,
    })),
    next_after_seq: last !== undefined && last.seq < run.traceEventCount ? last.seq : null,
  };
}
