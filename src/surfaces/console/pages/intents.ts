// Intents: the list with its filters, one intent with its timeline, rule, stored evidence with the trace of its
// evaluation in words, its agent runs, ledger rows and receipt, and in a sandbox tenant the two calls that walk an
// intent from bootstrap to released (sandbox guardrails).
import type { FastifyInstance } from 'fastify';
import type { IntentState } from '../../../contracts/intents.ts';
import { fromStates, isIntentState, isTerminalState, lifecycleStates } from '../../../engine/lifecycle.ts';
import { ledgerEventsPageMax } from '../../../limits.ts';
import { queryString, type ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, money, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, select, table } from '../layout.ts';
import { formValue, getPage, postAction } from '../routing.ts';
import { agentRunsSection } from './agent-runs.ts';

export interface IntentView {
  intent_id: string;
  state: IntentState;
  payee_did: string;
  principal_did: string;
  amount_cents: number;
  currency: string;
  settlement_rail: string;
  created_at: string;
  funded_at: string | null;
  evidence_recorded_at: string | null;
  settled_at: string | null;
  /** Once settled: the parts to the payee and back to the principal (docs/engine.md#the-split-rule). */
  released_cents: number | null;
  refunded_cents: number | null;
  release_mode: 'full' | 'metered';
  deadline: string;
  predicate_dsl: unknown;
  predicate_passed: boolean | null;
  allowed_tools: string[];
  completion_preset_id: string | null;
  policy_binding: { template_id: string; version_seq: number } | null;
}

interface LedgerLineView {
  ledger_seq: number;
  intent_id: string | null;
  account: string;
  side: string;
  amount_cents: number;
  currency: string;
  event_kind: string;
  recorded_at: string;
}

interface TraceStep {
  kind: string;
  detail: string;
  data?: { passed?: boolean; expected?: unknown; observed?: unknown; observed_truncated?: boolean };
}

/** One stored evidence submission (`GET /harbor/intents/{id}/evidence`). */
interface EvidenceSubmissionView {
  submission_id: string;
  submitted_at: string;
  recorded_at: string;
  payee_signed: boolean;
  evidence: { payload: unknown; artifacts: string[] };
  outcome: 'pass' | 'fail';
  predicate_evaluation: { passed: boolean; trace: TraceStep[] };
}

/** How many ledger pages the detail page reads looking for the intent's rows (each up to the route's maximum). */
const ledgerPagesRead = 5;
const intentIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A state in words (`evidence recorded`); the filter, the badges and the overview name every state of the lifecycle
 * table (src/engine/lifecycle.ts) this way. */
export const stateLabel = (state: IntentState): string => state.replaceAll('_', ' ');
export const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** A settled intent's parts (the payee's, then the principal's), or a dash before it settles. */
const settledParts = (intent: IntentView): string =>
  intent.released_cents === null ? '—' : `${money(intent.released_cents, intent.currency)} / ${money(intent.refunded_cents ?? 0, intent.currency)}`;

const stateBadge = (state: IntentState) => html`<span class="badge state-${state}" data-testid="state">${stateLabel(state)}</span>`;

function bootstrapForm(context: ConsoleContext, error?: ApiError): Html {
  if (context.viewer.environment !== 'sandbox' || !context.may('POST /v1/sandbox/guardrails/bootstrap')) return html``;
  return html`<section aria-labelledby="bootstrap-heading" class="card">
<h2 id="bootstrap-heading">Start a sandbox intent</h2>
${errorBox(error, context.request.id)}
${form(context.csrfToken, '/console/intents/sandbox', html`<div class="row">
${field({ name: 'operation', label: 'Operation (tool name)', value: 'search.web', required: true })}
${field({ name: 'requested_spend_cents', label: 'Amount in cents', type: 'number', value: '250', required: true, attributes: html` min="1"` })}
${select({ name: 'completion_preset', label: 'Release rule', value: 'cost_and_completion', options: [['cost_and_completion', 'Completed, within cost'], ['api_response_ok', 'API response OK'], ['sandbox_permissive', 'Anything (permissive)']] })}
</div><button type="submit">Create and fund</button>`)}
</section>`;
}

async function listPage(context: ConsoleContext, query: Record<string, string | undefined>, bootstrapError?: ApiError): Promise<Html> {
  const requested = query['state'];
  const state = requested !== undefined && isIntentState(requested) ? requested : undefined;
  const operator = query['operator_did']?.trim() || undefined;
  const cursor = query['cursor'] && intentIdPattern.test(query['cursor']) ? query['cursor'] : undefined;
  const answer = await context.api<{ items: IntentView[]; has_more: boolean; next_cursor: string | null }>({
    method: 'GET',
    url: `/harbor/operator/v1/intents${queryString({ limit: 25, status: state, operator_did: operator, cursor })}`,
  });
  const rows = (answer.body.items ?? []).map(
    (intent) => html`<tr>
<td><a href="/console/intents/${intent.intent_id}"><code>${intent.intent_id}</code></a></td>
<td>${stateBadge(intent.state)}</td>
<td class="number">${money(intent.amount_cents, intent.currency)}</td>
<td data-testid="settled-split">${settledParts(intent)}</td>
<td>${intent.settlement_rail}</td>
<td>${intent.payee_did}</td>
<td>${when(intent.created_at)}</td></tr>`,
  );
  const next = answer.body.has_more && answer.body.next_cursor
    ? html`<p><a href="/console/intents${queryString({ state, operator_did: operator, cursor: answer.body.next_cursor })}">Next page</a></p>`
    : '';
  return page(
    context,
    'Intents',
    html`${bootstrapForm(context, bootstrapError)}
<form method="get" action="/console/intents" class="filters" role="search" aria-label="Filter intents">
${select({ name: 'state', label: 'State', value: state ?? '', options: [['', 'Any state'], ...lifecycleStates.map((name) => [name, stateLabel(name)] as const)] })}
${field({ name: 'operator_did', label: 'Operator (payee) DID', value: operator })}
<button type="submit">Filter</button>
</form>
${errorBox(answer.error, context.request.id)}
${table('Intents, newest first', ['Intent', 'State', 'Amount', 'Released / refunded', 'Rail', 'Operator', 'Created'], rows, 'No intents match.')}
${next}`,
  );
}

/** The rule in words: one line per clause of the stored rule, nested as the rule nests. Only wording: what the rule
 * decided is the API's (`predicate_passed`, and the evaluation trace when evidence is submitted). */
export function ruleInWords(node: unknown): Html {
  if (typeof node !== 'object' || node === null) return html``;
  const clause = node as { op?: string; path?: unknown[]; value?: unknown; field?: string; limit_source?: unknown; clauses?: unknown[]; clause?: unknown; root?: unknown };
  if (clause.root !== undefined) return ruleInWords(clause.root);
  const path = Array.isArray(clause.path) ? clause.path.join('.') : '';
  const words: Record<string, string> = {
    true: 'always passes',
    and: 'all of these hold:',
    or: 'at least one of these holds:',
    not: 'this does not hold:',
    eq: `${path} equals ${JSON.stringify(clause.value)}`,
    completion: `${path} reports completion as ${JSON.stringify(clause.value)}`,
    lte: `${path} is at most ${typeof clause.limit_source === 'string' ? clause.limit_source : JSON.stringify(clause.limit_source)}`,
    budget_cap: `${path} is within the intent's amount`,
    schema_field: `the evidence has the field ${clause.field ?? ''}`,
    array_nonempty: `${clause.field ?? ''} is a non-empty list`,
  };
  const children = clause.clauses ?? (clause.clause === undefined ? undefined : [clause.clause]);
  return html`<li>${words[clause.op ?? ''] ?? clause.op ?? ''}${children?.length ? html`<ul>${children.map((child) => ruleInWords(child))}</ul>` : ''}</li>`;
}

/** A value of a trace step as short text; a value the evaluator summarized (too large to copy) says so. */
function traceValue(value: unknown, truncated = false): string {
  if (truncated && typeof value === 'object' && value !== null) {
    const summary = value as { type?: string; length?: number };
    return `a ${summary.type ?? 'value'}${summary.length === undefined ? '' : ` of length ${summary.length}`} (too large to show)`;
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

/** The evaluation trace in words: one line per evaluated clause, in evaluation order, each with the evaluator's own
 * sentence (`detail`); a failed clause also says what it expected and what the evidence held. */
export function traceInWords(trace: readonly TraceStep[] | undefined): Html {
  if (!trace?.length) return html``;
  return html`<ol class="trace" data-testid="trace">${trace.map((step) => {
    const failed = step.data?.passed === false;
    const data = step.data ?? {};
    const facts = failed && ('expected' in data || 'observed' in data)
      ? html`<span class="meta">${'expected' in data ? `expected ${traceValue(data.expected)}` : ''}${'expected' in data && 'observed' in data ? ', ' : ''}${'observed' in data ? `found ${traceValue(data.observed, data.observed_truncated === true)}` : ''}</span>`
      : '';
    return html`<li class="${failed ? 'failed' : 'passed'}"><span aria-hidden="true">${failed ? '✗' : '✓'}</span> <span class="visually-hidden">${failed ? 'Failed:' : 'Passed:'}</span> ${step.detail} ${facts}</li>`;
  })}</ol>`;
}

/** The intent's evidence as the API stored it, each submission with its outcome and the trace of its evaluation. */
async function evidenceSection(context: ConsoleContext, intent: IntentView): Promise<Html> {
  if (!context.may('GET /harbor/intents/:intent_id/evidence')) return html``;
  const answer = await context.api<{ data: EvidenceSubmissionView[] }>({ method: 'GET', url: `/harbor/intents/${encodeURIComponent(intent.intent_id)}/evidence` });
  const submissions = answer.body.data ?? [];
  const body = answer.error
    ? errorBox(answer.error, context.request.id)
    : submissions.length === 0
      ? html`<p class="empty" data-testid="no-evidence">No evidence submitted yet.</p>`
      : submissions.map(
          (submission) => html`<article class="card evidence" data-testid="evidence" data-outcome="${submission.outcome}">
<h3>Evidence of ${when(submission.recorded_at)}: <span class="badge outcome-${submission.outcome}">${submission.outcome === 'pass' ? 'the rule passed' : 'the rule failed'}</span></h3>
<dl class="facts"><dt>Submission</dt><dd><code class="wrap">${submission.submission_id}</code></dd>
<dt>Submitted at</dt><dd>${when(submission.submitted_at)}</dd>
<dt>Signed by the payee</dt><dd>${submission.payee_signed ? 'yes' : 'no (sandbox evidence is unsigned)'}</dd>
<dt>Artifacts</dt><dd>${submission.evidence.artifacts.length === 0 ? 'none' : submission.evidence.artifacts.map((artifact) => html`<code class="wrap">${artifact}</code> `)}</dd></dl>
<details open><summary>Payload</summary><pre data-testid="evidence-payload">${JSON.stringify(submission.evidence.payload, null, 2)}</pre></details>
<h4>How the rule decided</h4>
${traceInWords(submission.predicate_evaluation.trace)}
</article>`,
        );
  return html`<section aria-labelledby="evidence-heading"><h2 id="evidence-heading">Evidence</h2>${body}</section>`;
}

async function intentLedgerRows(context: ConsoleContext, intentId: string): Promise<LedgerLineView[] | undefined> {
  if (!context.may('GET /harbor/ledger/v1/events')) return undefined;
  const rows: LedgerLineView[] = [];
  let after = 0;
  for (let pageIndex = 0; pageIndex < ledgerPagesRead; pageIndex++) {
    const answer = await context.api<{ events: LedgerLineView[]; next_after_seq: number | null }>({ method: 'GET', url: `/harbor/ledger/v1/events?after_seq=${after}&limit=${ledgerEventsPageMax}` });
    if (answer.error) return rows;
    rows.push(...answer.body.events.filter((line) => line.intent_id === intentId));
    if (answer.body.next_after_seq === null) break;
    after = answer.body.next_after_seq;
  }
  return rows;
}

interface EvidenceOutcome {
  error?: ApiError;
  /** Whether the evidence just submitted from this page passed the rule (its trace is in the evidence section). */
  passed?: boolean;
  /** Whether the release gate held the release it would have made (docs/release-gate.md). */
  held?: boolean;
  verdict?: { valid: boolean; code?: string; message?: string; message_digest_sha256_hex?: string };
}

/** A signed settlement receipt as GET /protocol/v2/receipts/{id} answers it (the fields this page shows). */
interface ReceiptView {
  kind: string;
  receipt_id: string;
  issued_at?: string;
  harbor_state?: string;
  settlement_mode?: string;
}

/** The intent's settlement receipt (its id is the intent id, issued with the terminal transition), with a verify
 * button that asks the API's own verifier; none while the intent is not settled or the role reads no receipts. */
async function receiptSection(context: ConsoleContext, intent: IntentView, verdict: EvidenceOutcome['verdict']): Promise<Html> {
  if (!context.may('GET /protocol/v2/receipts/:receipt_id') || intent.settled_at === null) return html``;
  const receiptUrl = `/protocol/v2/receipts/${encodeURIComponent(intent.intent_id)}`;
  const answer = await context.api<ReceiptView>({ method: 'GET', url: receiptUrl });
  if (answer.error) return html`<section aria-labelledby="receipt-heading"><h2 id="receipt-heading">Settlement receipt</h2>${errorBox(answer.error, context.request.id)}</section>`;
  const receipt = answer.body;
  // Its place in the log: a 404 (merkle.inclusion_pending) means no signed tree head covers it yet.
  const proof = await context.api<{ leaf_index: number; tree_size: number }>({ method: 'GET', url: `${receiptUrl}/inclusion-proof` });
  const logText = proof.error ? 'not yet under a signed tree head' : `leaf ${proof.body.leaf_index}, under the signed head of ${proof.body.tree_size} leaves`;
  const verdictBox = verdict
    ? verdict.valid
      ? html`<p class="notice" data-testid="receipt-verdict" data-valid="true">✓ Signature valid: signed by this service's gateway key (digest <code>${verdict.message_digest_sha256_hex ?? ''}</code>).</p>`
      : html`<div class="error" data-testid="receipt-verdict" data-valid="false"><p>✗ ${verdict.message ?? 'The receipt does not verify.'}</p><p class="meta">Code <code>${verdict.code ?? ''}</code></p></div>`
    : '';
  return html`<section aria-labelledby="receipt-heading"><h2 id="receipt-heading">Settlement receipt</h2>
<dl class="facts"><dt>Receipt</dt><dd><code>${receipt.receipt_id}</code> (${receipt.kind})</dd>
<dt>Issued</dt><dd>${when(receipt.issued_at)}</dd><dt>Attests</dt><dd>${receipt.harbor_state ?? ''}${receipt.settlement_mode ? `, ${receipt.settlement_mode}` : ''}</dd>
<dt>Transparency log</dt><dd>${logText}</dd></dl>
${context.may('POST /protocol/v2/receipts/verify') ? form(context.csrfToken, `/console/intents/${intent.intent_id}/verify-receipt`, html`<button type="submit">Verify receipt</button>`) : ''}
${verdictBox}</section>`;
}

async function detailPage(context: ConsoleContext, intentId: string, outcome: EvidenceOutcome = {}): Promise<Html> {
  const intent = await context.read<IntentView>(`/harbor/operator/v1/intents/${encodeURIComponent(intentId)}`);
  const timeline: [string, string | null][] = [
    ['Created', intent.created_at],
    ['Funded', intent.funded_at],
    ['Evidence recorded', intent.evidence_recorded_at],
    [isTerminalState(intent.state) ? capitalized(stateLabel(intent.state)) : 'Settled', intent.settled_at],
  ];
  const ledger = await intentLedgerRows(context, intent.intent_id);
  const receipt = await receiptSection(context, intent, outcome.verdict);
  const evidence = await evidenceSection(context, intent);
  const agentRuns = await agentRunsSection(context, intent.intent_id);
  const canSubmit = context.viewer.environment === 'sandbox' && fromStates('sandboxEvidence').includes(intent.state) && context.may('POST /v1/sandbox/guardrails/:intent_id/evidence');
  const evidenceForm = canSubmit
    ? html`<section class="card" aria-labelledby="evidence-heading"><h2 id="evidence-heading">Submit sandbox evidence</h2>
${form(context.csrfToken, `/console/intents/${intent.intent_id}/sandbox-evidence`, html`<div class="row">
${field({ name: 'status', label: 'Status reported by the tool', value: 'completed', required: true })}
${field({ name: 'cost_cents', label: 'Cost in cents', type: 'number', value: String(Math.min(intent.amount_cents, 90)), attributes: html` min="0"` })}
</div><button type="submit">Submit evidence</button>`)}</section>`
    : '';
  const outcomeBox = outcome.passed === undefined && !outcome.held
    ? ''
    : notice(html`Evidence submitted: the release rule ${outcome.passed === false ? 'failed' : 'passed'}${outcome.held ? html`, and the release gate held the release for review (<a href="/console/review">the review queue</a>)` : ''}. The trace is under <a href="#evidence-heading">Evidence</a>.`);
  const heldBox = intent.state === 'held'
    ? html`<p class="card warning" data-testid="held">Held for review: the release gate stopped its release. ${context.may('GET /signal/v1/review-queue') ? html`Its signals and ${context.may('POST /harbor/intents/:intent_id/review/resolve') ? 'the form that resolves it' : 'its review'} are in <a href="/console/review">the review queue</a>.` : ''}</p>`
    : '';
  return page(
    context,
    `Intent ${intent.intent_id}`,
    html`${errorBox(outcome.error, context.request.id)}${outcomeBox}${heldBox}
<dl class="facts">
<dt>State</dt><dd>${stateBadge(intent.state)}</dd>
<dt>Amount</dt><dd>${money(intent.amount_cents, intent.currency)}${intent.release_mode === 'metered' ? ' (metered: a pass releases the cost)' : ''}</dd>
${intent.released_cents === null ? html`` : html`<dt>Settled</dt><dd data-testid="settled-parts">${money(intent.released_cents, intent.currency)} to the payee, ${money(intent.refunded_cents ?? 0, intent.currency)} back to the principal</dd>`}
<dt>Rail</dt><dd>${intent.settlement_rail}</dd>
<dt>Principal</dt><dd>${intent.principal_did}</dd>
<dt>Operator (payee)</dt><dd>${intent.payee_did}</dd>
<dt>Allowed tools</dt><dd>${intent.allowed_tools.join(', ')}</dd>
<dt>Deadline</dt><dd>${when(intent.deadline)}</dd>
<dt>Rule passed</dt><dd>${intent.predicate_passed === null ? 'not evaluated yet' : intent.predicate_passed ? 'yes' : 'no'}</dd>
</dl>
<section aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>
<ol class="timeline" data-testid="timeline">${timeline.map(([label, at]) => html`<li class="${at ? 'done' : 'pending'}"><span>${label}</span> <time>${at ? when(at) : '—'}</time></li>`)}</ol></section>
${evidenceForm}
${evidence}
${agentRuns}
${receipt}
<section aria-labelledby="rule-heading"><h2 id="rule-heading">Release rule</h2>
${intent.policy_binding ? html`<p>Bound to policy <code>${intent.policy_binding.template_id}</code> version ${intent.policy_binding.version_seq}.</p>` : ''}
<ul class="rule">${ruleInWords(intent.predicate_dsl)}</ul></section>
<section aria-labelledby="ledger-heading"><h2 id="ledger-heading">Ledger rows</h2>
${ledger === undefined
  ? html`<p class="empty">Your role does not read the ledger.</p>`
  : table('Ledger rows of this intent', ['#', 'Event', 'Account', 'Side', 'Amount', 'Recorded'], ledger.map((line) => html`<tr><td>${line.ledger_seq}</td><td>${line.event_kind}</td><td><code>${line.account}</code></td><td>${line.side}</td><td class="number">${money(line.amount_cents, line.currency)}</td><td>${when(line.recorded_at)}</td></tr>`), 'No ledger rows for this intent yet.')}
</section>
<p><a href="/console/intents">All intents</a></p>`,
  );
}

export async function intentPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/intents', (context, _params, query) => listPage(context, query));
  getPage<{ intent_id: string }>(app, '/intents/:intent_id', (context, params) => detailPage(context, params.intent_id));

  postAction(app, '/intents/sandbox', async (context, body) => {
    const preset = formValue(body, 'completion_preset');
    const answer = await context.api<{ intent_id: string }>({
      method: 'POST',
      url: '/v1/sandbox/guardrails/bootstrap',
      body: { operation: formValue(body, 'operation'), requested_spend_cents: Number(formValue(body, 'requested_spend_cents')), ...(preset ? { completion_preset: preset } : {}) },
    });
    if (answer.error) return { status: answer.status, html: await listPage(context, {}, answer.error) };
    return { redirect: `/console/intents/${answer.body.intent_id}` };
  });

  // Verifying reads and checks: it changes nothing, but it is a POST of the API, so a form with the CSRF token here.
  postAction<{ intent_id: string }>(app, '/intents/:intent_id/verify-receipt', async (context, _body, params) => {
    // The settlement receipt's id is the intent id: the API verifies the stored receipt it names.
    const answer = await context.api<NonNullable<EvidenceOutcome['verdict']>>({ method: 'POST', url: '/protocol/v2/receipts/verify', body: { receipt_id: params.intent_id } });
    if (answer.error) return { status: answer.status, html: await detailPage(context, params.intent_id, { error: answer.error }) };
    return detailPage(context, params.intent_id, { verdict: answer.body });
  });

  postAction<{ intent_id: string }>(app, '/intents/:intent_id/sandbox-evidence', async (context, body, params) => {
    const intent = await context.read<IntentView>(`/harbor/operator/v1/intents/${encodeURIComponent(params.intent_id)}`);
    const costText = formValue(body, 'cost_cents');
    const payload = { status: formValue(body, 'status'), ...(costText === '' ? {} : { cost_cents: Number(costText) }) };
    const answer = await context.api<{ predicate_evaluation?: { passed: boolean; trace: TraceStep[] }; review_hold?: { held: true } }>({
      method: 'POST',
      url: `/v1/sandbox/guardrails/${encodeURIComponent(intent.intent_id)}/evidence`,
      body: { payload, operation: intent.allowed_tools[0], ...(costText === '' ? {} : { requested_spend_cents: Number(costText) }) },
    });
    if (answer.error) return { status: answer.status, html: await detailPage(context, intent.intent_id, { error: answer.error }) };
    return detailPage(context, intent.intent_id, { passed: answer.body.predicate_evaluation?.passed, held: answer.body.review_hold?.held === true });
  });
}

