// Standing: the tenant's signed operator receipt for one operator (the payee of its intents), read from
// `GET /reputation/{operator_did}`: the score and the released, refunded and expired counts over three windows.
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

const windows = [
  ['last_7_days', 'Last 7 days'],
  ['last_30_days', 'Last 30 days'],
  ['all_time', 'All time'],
] as const;

async function standingPage(context: ConsoleContext, operatorDid: string | undefined): Promise<Html> {
  const lookup = html`<form method="get" action="/console/standing" class="filters" aria-label="Find an operator">
${field({ name: 'operator_did', label: 'Operator (payee) DID', value: operatorDid, required: true })}<button type="submit">Show standing</button></form>`;
  if (!operatorDid) return page(context, 'Standing', html`<p>An operator's standing is counted from this tenant's settled intents that paid it.</p>${lookup}`);
  const answer = await context.api<OperatorReceipt>({ method: 'GET', url: `/reputation/${encodeURIComponent(operatorDid)}` });
  if (answer.error) return page(context, 'Standing', html`${lookup}${errorBox(answer.error, context.request.id)}`);
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
${table(`Settled intents paying ${receipt.operator_did}`, ['Window', 'Released', 'Refunded', 'Expired', 'Rule pass rate'], rows, 'No settled intents.')}`,
  );
}

export async function standingPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/standing', (context, _params, query) => standingPage(context, query['operator_did']?.trim() || undefined));
}
