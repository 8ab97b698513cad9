// Contracts of agent runs (docs/agent-runs.md): a run is one bind of an agent's tool middleware to an intent, and its
// trace events are what the middleware did at each tool call (selected, authorized or denied, executed, evidence,
// finalized). PUT /v1/agent-runs/{run_id} registers it, POST …/trace-events appends to it; the reads serve the
// console's intent page.
import Type, { type Static } from 'typebox';
import {
  agentRunTextLengthMax,
  agentRunTraceEventsPerRequestMax,
  allowedToolLengthMax,
  allowedToolsMax,
  pageSizeMax,
  toolCallIdLengthMax,
} from '../limits.ts';
import { AnyObject, Nullable, Timestamp, Uuid } from './common.ts';

/** A UUID or a slug, as the client mints run ids; never `.` or `..` (the first character is a letter or digit). */
export const AgentRunId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' });

export const AgentRunParams = Type.Object({ run_id: AgentRunId });
export type AgentRunParams = Static<typeof AgentRunParams>;

export const AgentRunBody = Type.Object(
  {
    intent_id: Uuid,
    operation: Type.String({ maxLength: agentRunTextLengthMax, default: '' }),
    sandbox: Type.Boolean({ default: false }),
    allowed_tools: Type.Array(Type.String({ maxLength: allowedToolLengthMax }), { maxItems: allowedToolsMax, default: [] }),
    completion_preset: Type.String({ maxLength: agentRunTextLengthMax, default: '' }),
  },
  { additionalProperties: false },
);
export type AgentRunBody = Static<typeof AgentRunBody>;

/** The event types the public client's middleware reports. */
export const traceEventTypes = ['tool_selected', 'spend_authorized', 'spend_denied', 'approval_required', 'tool_executed', 'evidence_submitted', 'spend_finalized'] as const;

/** One trace event as the middleware writes it (camelCase, as sent): the members every event has are checked, the
 * rest are the event type's own and kept as sent, bounded in size (agentRunTraceEventBytesMax). */
export const AgentRunTraceEventInput = Type.Object(
  {
    type: Type.Enum(traceEventTypes),
    /** The run it belongs to: the path's run id. */
    runId: AgentRunId,
    toolCallId: Type.String({ minLength: 1, maxLength: toolCallIdLengthMax }),
    operation: Type.String({ maxLength: agentRunTextLengthMax }),
    recordedAt: Timestamp,
  },
  { additionalProperties: true },
);

export const AgentRunTraceEventsBody = Type.Object(
  { events: Type.Array(AgentRunTraceEventInput, { minItems: 1, maxItems: agentRunTraceEventsPerRequestMax }) },
  { additionalProperties: false },
);
export type AgentRunTraceEventsBody = Static<typeof AgentRunTraceEventsBody>;

export const AgentRun = Type.Object(
  {
    object: Type.Literal('agent_run'),
    run_id: Type.String(),
    tenant_id: Type.String(),
    intent_id: Uuid,
    operation: Type.String(),
    sandbox: Type.Boolean(),
    allowed_tools: Type.Array(Type.String()),
    completion_preset: Type.String(),
    trace_event_count: Type.Integer({ minimum: 0 }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export type AgentRun = Static<typeof AgentRun>;

export const AgentRunTraceEventsAccepted = Type.Object(
  {
    object: Type.Literal('agent_run_trace_events'),
    run_id: Type.String(),
    /** Events stored by this request. */
    accepted: Type.Integer({ minimum: 0 }),
    /** Events the run already held (a retried report): stored once. */
    duplicates: Type.Integer({ minimum: 0 }),
    trace_event_count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type AgentRunTraceEventsAccepted = Static<typeof AgentRunTraceEventsAccepted>;

export const AgentRunTraceEvent = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    type: Type.Enum(traceEventTypes),
    tool_call_id: Type.String(),
    operation: Type.String(),
    recorded_at: Timestamp,
    received_at: Timestamp,
    /** The event exactly as the middleware reported it. */
    event: AnyObject('The trace event as reported.'),
  },
  { additionalProperties: false },
);
export type AgentRunTraceEvent = Static<typeof AgentRunTraceEvent>;

export const AgentRunListQuery = Type.Object({ intent_id: Uuid }, { additionalProperties: false });
export type AgentRunListQuery = Static<typeof AgentRunListQuery>;

export const AgentRunList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(AgentRun),
    has_more: Type.Literal(false),
    next_cursor: Type.Null(),
  },
  { additionalProperties: false, description: 'Every run of the intent (at most agentRunsPerIntentMax), oldest first.' },
);
export type AgentRunList = Static<typeof AgentRunList>;

export const AgentRunReadQuery = Type.Object(
  {
    /** Events after this sequence number (default 0: from the first). */
    after_seq: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeMax })),
  },
  { additionalProperties: false },
);
export type AgentRunReadQuery = Static<typeof AgentRunReadQuery>;

export const AgentRunWithEvents = Type.Object(
  {
    ...AgentRun.properties,
    trace_events: Type.Array(AgentRunTraceEvent),
    /** Pass as `after_seq` for the next page; null on the last page. */
    next_after_seq: Nullable(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type AgentRunWithEvents = Static<typeof AgentRunWithEvents>;
