// Standing: the operators this tenant has settled intents with, from the signed portfolio snapshot
// (`GET /signal/v1/portfolio/signed-export`), each linking to its signed operator receipt
// (`GET /reputation/{operator_did}`): the score and the released, refunded and expired counts over three windows.
import type { FastifyInstance } from 'fastify';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, page, table } from '../layout.ts';
import { getPage } from '../routing.ts';

interface WindowMetrics {
  from_day: string | null;
  released_count: number;
  refunded_count: number;
  expired_count: number;
  disputed_count: number;
  predicate_pass_rate_bps: number | null;
}

interface OperatorReceipt {
  updated_at: string;
  receipt: {
    operator_did: string;
    issued_at: string;
    score: number;
    scoring_model: string;
    metrics: { all_time: WindowMetrics; last_30_days: WindowMetrics; last_7_days: WindowMetrics };
  };
}

interface PortfolioOperator {
  operator_did: string;
  score: number;
  metrics: { last_activity_at: string | null; all_time: WindowMetrics };
}

/** The operators of the signed portfolio snapshot, best score first, each a link to its receipt; or the API's
 * refusal (a tenant with more operators than one snapshot carries is told so, and can still type a DID). */
async function operatorList(context: ConsoleContext, chosen: string | undefined): Promise<Html> {
  const answer = await context.api<{ operators: PortfolioOperator[] }>({ method: 'GET', url: '/signal/v1/portfolio/signed-export' });
  if (answer.error) return errorBox(answer.error, context.request.id);
  const operators = [...answer.body.operators].sort((left, right) => right.score - left.score || (left.operator_did < right.operator_did ? -1 : 1));
  const rows = operators.map((operator) => {
    const { all_time: total, last_activity_at: lastActivity } = operator.metrics;
    const href = `/console/standing?${new URLSearchParams({ operator_did: operator.operator_did })}`;
    return html`<tr data-testid="operator"${operator.operator_did === chosen ? html` aria-current="true"` : ''}><td><a href="${href}"><code class="wrap">${operator.operator_did}</code></a></td><td class="number">${operator.score}</td><td class="number">${total.released_count}</td><td class="number">${total.refunded_count}</td><td class="number">${total.expired_count}</td><td>${when(lastActivity)}</td></tr>`;
  });
  return table('Operators this tenant has settled intents with', ['Operator (payee)', 'Score', 'Released', 'Refunded', 'Expired', 'Last activity'], rows, 'No settled intents yet: an operator appears here once an intent paying it is released or refunded.');
}

const windows = [
  ['last_7_days', 'Last 7 days'],
  ['last_30_days', 'Last 30 days'],
  ['all_time', 'All time'],
] as const;

async function standingPage(context: ConsoleContext, operatorDid: string | undefined): Promise<Html> {
  const lookup = html`<form method="get" action="/console/standing" class="filters" aria-label="Find an operator">
${field({ name: 'operator_did', label: 'Operator (payee) DID', value: operatorDid, required: true })}<button type="submit">Show standing</button></form>`;
  const operators = await operatorList(context, operatorDid);
  if (!operatorDid) return page(context, 'Standing', html`<p>An operator's standing is counted from this tenant's settled intents that paid it. Pick one, or type its DID.</p>${operators}${lookup}`);
  const answer = await context.api<OperatorReceipt>({ method: 'GET', url: `/reputation/${encodeURIComponent(operatorDid)}` });
  if (answer.error) return page(context, 'Standing', html`${lookup}${errorBox(answer.error, context.request.id)}${operators}`);
  const receipt = answer.body.receipt;
  const rows = windows.map(([key, label]) => {
    const metrics = receipt.metrics[key];
    const rate = metrics.predicate_pass_rate_bps === null ? '—' : `${(metrics.predicate_pass_rate_bps / 100).toFixed(2)} %`;
    return html`<tr><td>${label}</td><td class="number">${metrics.released_count}</td><td class="number">${metrics.refunded_count}</td><td class="number">${metrics.expired_count}</td><td class="number">${rate}</td></tr>`;
  });
  return page(
    context,
    'Standing',
    html`${lookup}<div class="tiles"><div class="tile"><span class="label">Score</span><span class="value" data-testid="score">${receipt.score}</span></div></div>
<p class="hint">Signed receipt issued ${when(receipt.issued_at)} with model <code>${receipt.scoring_model}</code>; last activity ${when(answer.body.updated_at)}.</p>
${table(`Settled intents paying ${receipt.operator_did}`, ['Window', 'Released', 'Refunded', 'Expired', 'Rule pass rate'], rows, 'No settled intents.')}
<h2>All operators</h2>${operators}`,
  );
}

export async function standingPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/standing', (context, _params, query) => standingPage(context, query['operator_did']?.trim() || undefined));
}
