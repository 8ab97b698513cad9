// The agent runs of an intent on its console page: each run an agent's middleware registered for the intent, and its
// trace events in the order they arrived (what the agent selected, was allowed or denied, ran and proved), read from
// the API as the signed-in person.
import type { AgentRun, AgentRunTraceEvent, AgentRunWithEvents } from '../../../contracts/agent-runs.ts';
import type { ConsoleContext } from '../context.ts';
import { html, money, when, type Html } from '../html.ts';
import { errorBox, table } from '../layout.ts';

/** Events shown per run: one page of the read route; a run with more says how many more there are. */
const eventsShown = 200;

/** What one event says beyond its type, tool call and operation, in a few words. */
function eventDetail(event: AgentRunTraceEvent): string {
  const fields = event.event as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
  switch (event.type) {
    case 'tool_selected':
      return text('toolName') ?? '';
    case 'spend_authorized':
      return typeof fields['amountCents'] === 'number' ? `${money(fields['amountCents'] as number)} reserved${text('decisionId') ? `, decision ${text('decisionId')}` : ''}` : '';
    case 'spend_denied':
    case 'approval_required':
      return [text('code'), text('message')].filter(Boolean).join(': ');
    case 'tool_executed':
      return typeof fields['durationMs'] === 'number' ? `ran ${fields['durationMs']} ms` : '';
    case 'evidence_submitted':
      return [text('presetId') ? `preset ${text('presetId')}` : undefined, fields['predicatePassed'] === true ? 'rule passed' : fields['predicatePassed'] === false ? 'rule failed' : undefined].filter(Boolean).join(', ');
    case 'spend_finalized':
      return text('status') ?? '';
  }
}

function runArticle(run: AgentRunWithEvents): Html {
  const rows = run.trace_events.map((event) => html`<tr data-testid="trace-event" data-type="${event.type}">
<td>${event.seq}</td><td>${event.type.replaceAll('_', ' ')}</td><td><code class="wrap">${event.tool_call_id}</code></td>
<td>${event.operation}</td><td>${eventDetail(event)}</td><td>${when(event.recorded_at)}</td></tr>`);
  const more = run.trace_event_count - run.trace_events.length;
  return html`<article class="card" data-testid="agent-run" data-run-id="${run.run_id}">
<h3>Run <code class="wrap">${run.run_id}</code></h3>
<dl class="facts"><dt>Registered</dt><dd>${when(run.created_at)}</dd>
<dt>Operation</dt><dd>${run.operation || '—'}</dd>
<dt>Allowed tools</dt><dd>${run.allowed_tools.join(', ') || '—'}</dd>
<dt>Completion preset</dt><dd>${run.completion_preset || '—'}</dd>
<dt>Sandbox</dt><dd>${run.sandbox ? 'yes' : 'no'}</dd></dl>
${table(`Trace events of run ${run.run_id}, in the order received`, ['#', 'Event', 'Tool call', 'Operation', 'Detail', 'Recorded'], rows, 'No trace events reported yet.')}
${more > 0 ? html`<p class="meta">${more} later events are not shown.</p>` : ''}
</article>`;
}

/** The section, or nothing for a role that reads no runs. */
export async function agentRunsSection(context: ConsoleContext, intentId: string): Promise<Html> {
  if (!context.may('GET /v1/agent-runs') || !context.may('GET /v1/agent-runs/:run_id')) return html``;
  const list = await context.api<{ data: AgentRun[] }>({ method: 'GET', url: `/v1/agent-runs?intent_id=${encodeURIComponent(intentId)}` });
  let body: Html | Html[];
  if (list.error) body = errorBox(list.error, context.request.id);
  else if ((list.body.data ?? []).length === 0) body = html`<p class="empty" data-testid="no-agent-runs">No agent has reported a run for this intent.</p>`;
  else {
    body = [];
    for (const run of list.body.data) {
      const read = await context.api<AgentRunWithEvents>({ method: 'GET', url: `/v1/agent-runs/${encodeURIComponent(run.run_id)}?limit=${eventsShown}` });
      body.push(read.error ? errorBox(read.error, context.request.id) : runArticle(read.body));
    }
  }
  return html`<section aria-labelledby="agent-runs-heading"><h2 id="agent-runs-heading">Agent runs</h2>${body}</section>`;
}
