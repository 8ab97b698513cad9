// Agent runs over HTTP on a real Postgres, reported exactly as the public client's trace reporter reports them (the
// run registered by PUT with its five fields, each event POSTed alone in the middleware's camelCase): stored per
// tenant in the order received, each event once, bounded per run and per intent, readable for the console, and
// another tenant's run or intent answering 404.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunsPerIntentMax, agentRunTraceEventBytesMax, agentRunTraceEventsPerRequestMax, agentRunTraceEventsPerRunMax } from '../../../src/limits.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const send = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object, key = acme.adminKey): Promise<LightMyRequestResponse> =>
  app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

async function sandboxIntent(key = acme.adminKey): Promise<string> {
  const boot = await send('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 500 }, key);
  expect(boot.statusCode, boot.body).toBe(200);
  return boot.json().intent_id;
}

/** The client's reporter: the registration body it builds, and each event as its middleware emits it. */
const registration = (intentId: string) => ({ intent_id: intentId, operation: 'search.web', sandbox: true, allowed_tools: ['search.web'], completion_preset: 'cost_and_completion' });
const at = (second: number) => new Date(Date.UTC(2026, 10, 25, 4, 0, second)).toISOString();
function toolCallEvents(runId: string, toolCallId: string, second = 0) {
  return [
    { type: 'tool_selected', runId, toolName: 'search.web', toolCallId, operation: 'search.web', recordedAt: at(second) },
    { type: 'spend_authorized', runId, toolCallId, operation: 'search.web', auditId: randomUUID(), decisionId: randomUUID(), amountCents: 120, recordedAt: at(second + 1) },
    { type: 'tool_executed', runId, toolCallId, operation: 'search.web', durationMs: 42, recordedAt: at(second + 2) },
    { type: 'spend_finalized', runId, toolCallId, operation: 'search.web', status: 'consumed', recordedAt: at(second + 3) },
    {
      type: 'evidence_submitted', runId, toolCallId, operation: 'search.web', evidenceId: `ev-${toolCallId}`, presetId: 'cost_and_completion',
      evidencePreset: 'cost_and_completion', reportedCostCents: 90, sandboxLifecycleStatus: 'released', predicatePassed: true,
      externalAttestations: [{ source: 'vendor', kind: 'receipt', digest_sha256_hex: 'ab'.repeat(32) }], recordedAt: at(second + 4),
    },
  ];
}

describe('agent runs', () => {
  it('registers a run and stores its events in the order received, readable by the console\'s routes', async () => {
    const intentId = await sandboxIntent();
    const runId = randomUUID();
    const registered = await send('PUT', `/v1/agent-runs/${runId}`, registration(intentId));
    expect(registered.statusCode, registered.body).toBe(200);
    expect(registered.json()).toMatchObject({ object: 'agent_run', run_id: runId, tenant_id: acme.tenantId, intent_id: intentId, sandbox: true, allowed_tools: ['search.web'], trace_event_count: 0 });

    const events = toolCallEvents(runId, 'call-1');
    for (const event of events) {
      const reported = await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [event] });
      expect(reported.statusCode, reported.body).toBe(200);
      // The reporter parses the answer as JSON and reads nothing of it.
      expect(() => JSON.parse(reported.body)).not.toThrow();
    }
    const list = (await send('GET', `/v1/agent-runs?intent_id=${intentId}`)).json();
    expect(list.data.map((run: { run_id: string; trace_event_count: number }) => [run.run_id, run.trace_event_count])).toEqual([[runId, 5]]);
    const read = (await send('GET', `/v1/agent-runs/${runId}`)).json();
    expect(read.trace_events.map((event: { seq: number; type: string }) => `${event.seq} ${event.type}`)).toEqual([
      '1 tool_selected', '2 spend_authorized', '3 tool_executed', '4 spend_finalized', '5 evidence_submitted',
    ]);
    // Each event is kept exactly as the middleware wrote it.
    expect(read.trace_events.map((event: { event: object }) => event.event)).toEqual(events);
    expect(read.trace_events[0]).toMatchObject({ tool_call_id: 'call-1', operation: 'search.web', recorded_at: at(0) });
    expect(read.next_after_seq).toBeNull();
    const paged = (await send('GET', `/v1/agent-runs/${runId}?after_seq=2&limit=2`)).json();
    expect(paged.trace_events.map((event: { seq: number }) => event.seq)).toEqual([3, 4]);
    expect(paged.next_after_seq).toBe(4);

    // Registering again (a second bind of the same run) rewrites what was registered and keeps the events.
    const again = (await send('PUT', `/v1/agent-runs/${runId}`, { ...registration(intentId), completion_preset: '' })).json();
    expect(again).toMatchObject({ completion_preset: '', trace_event_count: 5 });
  });

  it('stores a retried report once, and a batch all or none', async () => {
    const intentId = await sandboxIntent();
    const runId = 'run.retried-1';
    await send('PUT', `/v1/agent-runs/${runId}`, registration(intentId));
    const events = toolCallEvents(runId, 'call-9');
    expect((await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: events.slice(0, 3) })).json()).toMatchObject({ accepted: 3, duplicates: 0, trace_event_count: 3 });
    // The same three again (the answer was lost) with two new ones, and one repeated inside the batch.
    expect((await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [...events, events[4]] })).json()).toMatchObject({ accepted: 2, duplicates: 4, trace_event_count: 5 });

    // One bad event refuses the whole batch: nothing of it is stored.
    const foreignRun = { ...toolCallEvents('another-run', 'call-10')[0] };
    const refused = await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [toolCallEvents(runId, 'call-11')[0], foreignRun] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'agent_run.trace_event_invalid', details: { index: 1 } });
    const huge = { ...toolCallEvents(runId, 'call-12')[0], note: 'x'.repeat(agentRunTraceEventBytesMax) };
    expect((await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [huge] })).json().error.code).toBe('agent_run.trace_event_invalid');
    for (const body of [{ events: [] }, { events: [{ ...foreignRun, runId, type: 'tool_exploded' }] }, { events: [{ type: 'tool_selected', runId }] }]) {
      expect((await send('POST', `/v1/agent-runs/${runId}/trace-events`, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await send('GET', `/v1/agent-runs/${runId}`)).json().trace_event_count).toBe(5);
  });

  it('keeps at most the named number of events per run and runs per intent', async () => {
    const intentId = await sandboxIntent();
    const runId = 'run-full';
    await send('PUT', `/v1/agent-runs/${runId}`, registration(intentId));
    const batches = agentRunTraceEventsPerRunMax / agentRunTraceEventsPerRequestMax;
    for (let batch = 0; batch < batches; batch++) {
      const events = Array.from({ length: agentRunTraceEventsPerRequestMax }, (_, index) => ({
        type: 'tool_selected', runId, toolName: 'search.web', toolCallId: `call-${batch}-${index}`, operation: 'search.web', recordedAt: at(0),
      }));
      expect((await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events })).statusCode).toBe(200);
    }
    const over = await send('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [{ type: 'tool_selected', runId, toolCallId: 'one-more', operation: 'search.web', recordedAt: at(1) }] });
    expect(over.statusCode).toBe(422);
    expect(over.json().error).toMatchObject({ code: 'agent_run.trace_events_exceeded', details: { trace_events_per_run_max: agentRunTraceEventsPerRunMax } });
    expect((await send('GET', `/v1/agent-runs/${runId}?limit=1`)).json().trace_event_count).toBe(agentRunTraceEventsPerRunMax);

    const crowded = await sandboxIntent();
    for (let index = 0; index < agentRunsPerIntentMax; index++) expect((await send('PUT', `/v1/agent-runs/crowd-${index}`, registration(crowded))).statusCode).toBe(200);
    const refused = await send('PUT', '/v1/agent-runs/crowd-over', registration(crowded));
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.code).toBe('agent_run.limit_reached');
    expect((await send('PUT', '/v1/agent-runs/crowd-0', registration(crowded))).statusCode).toBe(200);
  });

  it('ties a run to one intent, one tenant, and refuses runs of intents it cannot see', async () => {
    const intentId = await sandboxIntent();
    const otherIntent = await sandboxIntent();
    await send('PUT', '/v1/agent-runs/run-tied', registration(intentId));
    const moved = await send('PUT', '/v1/agent-runs/run-tied', registration(otherIntent));
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error.code).toBe('agent_run.intent_mismatch');

    // Another tenant: its own run id space, and none of this tenant's runs or intents.
    const foreignIntent = await send('PUT', '/v1/agent-runs/run-tied', registration(intentId), globex.adminKey);
    expect(foreignIntent.statusCode).toBe(404);
    expect(foreignIntent.json().error.code).toBe('intent.not_found');
    for (const [method, url, body] of [
      ['GET', '/v1/agent-runs/run-tied', undefined],
      ['POST', '/v1/agent-runs/run-tied/trace-events', { events: [toolCallEvents('run-tied', 'call-x')[0]] }],
      ['GET', `/v1/agent-runs?intent_id=${intentId}`, undefined],
    ] as const) {
      const response = await send(method, url, body, globex.adminKey);
      expect(response.statusCode, url).toBe(404);
    }
    const globexIntent = await sandboxIntent(globex.adminKey);
    expect((await send('PUT', '/v1/agent-runs/run-tied', registration(globexIntent), globex.adminKey)).statusCode).toBe(200);
    expect((await send('GET', '/v1/agent-runs/run-tied')).json().intent_id).toBe(intentId);

    expect((await send('POST', '/v1/agent-runs/never-registered/trace-events', { events: [toolCallEvents('never-registered', 'c')[0]] })).json().error.code).toBe('agent_run.not_found');
    for (const runId of ['.hidden', 'has space', 'x'.repeat(129)]) {
      expect((await send('PUT', `/v1/agent-runs/${encodeURIComponent(runId)}`, registration(intentId))).statusCode, runId).toBe(400);
    }
  });

  it('takes reports from the spending roles and lets every role read', async () => {
    const intentId = await sandboxIntent();
    const agentKey = await acme.key('agent', ['mcp.spend:write']);
    expect((await send('PUT', '/v1/agent-runs/run-roles', registration(intentId), agentKey)).statusCode).toBe(200);
    expect((await send('PUT', '/v1/agent-runs/run-roles', registration(intentId), await acme.key('auditor'))).statusCode).toBe(403);
    expect((await send('PUT', '/v1/agent-runs/run-roles', registration(intentId), await acme.key('agent', ['mcp.sandbox:write']))).statusCode).toBe(403);
    expect((await send('GET', '/v1/agent-runs/run-roles', undefined, await acme.key('auditor'))).statusCode).toBe(200);
  });
});
