// The review queue (docs/release-gate.md): the intents the release gate held, each with the signals that held it, its
// amount, payee and deadline, and for admins and operators the form that resolves it as a release, a refund or a
// split. Resolving goes through the engine's own route (POST /harbor/intents/{id}/review/resolve), so the money moves
// by the one code path the API uses; the page then shows the outcome and the signed resolution receipt's id.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { reviewResolutions, type ResolveAnswer, type ReviewQueue } from '../../../contracts/review.ts';
import { isIntentState } from '../../../engine/lifecycle.ts';
import { queryString, type ApiError } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, money, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, select } from '../layout.ts';
import { formValue, getPage, postAction, type FormBody } from '../routing.ts';
import { stateLabel } from './intents.ts';

type HoldView = ReviewQueue['items'][number];

/** The queue's filter: left out, the holds awaiting a resolution (the API's default). */
const queueStates = [['', 'Awaiting a resolution'], ['closed', 'Resolved or expired'], ['all', 'All holds']] as const;
const isQueueState = (value: string | undefined): value is 'closed' | 'all' => value === 'closed' || value === 'all';

const resolutionWords: Record<(typeof reviewResolutions)[number], string> = {
  release: 'Release: all to the payee',
  refund: 'Refund: all back to the principal',
  split: 'Split: the part below to the payee, the rest back',
};

/** What a refused resolve form was sent with, shown again beside that hold. */
interface Refusal {
  readonly intentId: string;
  readonly error: ApiError;
  readonly values: { resolution: string; releasedCents: string; note: string };
}

const resolveRoute = 'POST /harbor/intents/:intent_id/review/resolve';

function resolveForm(context: ConsoleContext, hold: HoldView, index: number, refusal: Refusal | undefined): Html {
  const values = refusal?.intentId === hold.intent_id ? refusal.values : { resolution: 'release', releasedCents: '', note: '' };
  return html`<h3 class="small">Resolve</h3>
${form(context.csrfToken, `/console/review/${hold.intent_id}/resolve`, html`<input type="hidden" name="idempotency_key" value="${newIdempotencyKey()}">
<div class="row">
${select({ name: 'resolution', id: `resolution-${index}`, label: 'Resolution', value: values.resolution, options: reviewResolutions.map((resolution) => [resolution, resolutionWords[resolution]] as const) })}
${field({ name: 'released_cents', id: `released-cents-${index}`, label: 'Released to the payee, in cents (split only)', type: 'number', value: values.releasedCents, hint: `More than 0 and less than ${hold.amount_cents}; the rest is refunded. The service checks it.` })}
${field({ name: 'note', id: `note-${index}`, label: 'Note (optional, signed into the receipt)', value: values.note })}
</div><button type="submit" data-confirm="Resolve this hold? The money moves at once and cannot be called back.">Resolve</button>`)}`;
}

/** A fresh key for each form shown: sending the same form twice replays the first answer instead of failing. */
const newIdempotencyKey = () => `console_${randomBytes(16).toString('hex')}`;

function holdCard(context: ConsoleContext, hold: HoldView, index: number, refusal: Refusal | undefined): Html {
  const summaries = new Map<string, string>(hold.fraud_signals.map((signal) => [signal.code, signal.summary] as const));
  const resolved = hold.resolution !== null;
  return html`<article class="card" data-testid="hold" data-intent-id="${hold.intent_id}">
<h2>Intent <a href="/console/intents/${hold.intent_id}"><code class="wrap">${hold.intent_id}</code></a></h2>
<dl class="facts">
<dt>Amount</dt><dd>${money(hold.amount_cents, hold.currency)}</dd>
<dt>Payee</dt><dd>${hold.operator_did}</dd>
<dt>Held</dt><dd>${when(hold.held_at)}</dd>
<dt>Deadline</dt><dd>${when(hold.deadline)}${!resolved && Date.parse(hold.deadline) <= Date.now() ? ' (passed: only a refund is accepted)' : ''}</dd>
<dt>Signals</dt><dd><ul class="signals" data-testid="signals">${hold.signal_codes.map((code) => html`<li><code>${code}</code>${summaries.has(code) ? html`: ${summaries.get(code)}` : ''}</li>`)}</ul></dd>
<dt>Review</dt><dd>${hold.review_state}${hold.review_outcome === 'none' ? '' : `, ${hold.review_outcome}`}</dd>
${resolved
  ? html`<dt>Resolution</dt><dd data-testid="hold-resolution">${hold.resolution}${hold.released_cents === null ? '' : `, ${money(hold.released_cents, hold.currency)} to the payee`} (${isIntentState(hold.intent_state) ? stateLabel(hold.intent_state) : hold.intent_state})${hold.resolved_by ? `, by ${hold.resolved_by}` : ''}${hold.resolved_at ? ` at ${when(hold.resolved_at)}` : ''}</dd>`
  : ''}
</dl>
${refusal?.intentId === hold.intent_id ? errorBox(refusal.error, context.request.id) : ''}
${!resolved && context.may(resolveRoute) ? resolveForm(context, hold, index, refusal) : ''}
</article>`;
}

async function queuePage(context: ConsoleContext, query: Record<string, string | undefined>, top: Html = html``, refusal?: Refusal): Promise<Html> {
  const requested = query['state'];
  const state = isQueueState(requested) ? requested : undefined;
  const answer = await context.api<ReviewQueue>({ method: 'GET', url: `/signal/v1/review-queue${queryString({ state, limit: 100 })}` });
  const holds = answer.body.items ?? [];
  // A refusal about an intent the queue does not list (no longer held, say) is shown above it.
  const unlisted = refusal && !holds.some((hold) => hold.intent_id === refusal.intentId) ? errorBox(refusal.error, context.request.id) : '';
  return page(
    context,
    'Review queue',
    html`${top}${unlisted}
<p class="hint">Releases the release gate held for a person to review (<code>critical_hold</code>). A held intent's escrow stays full until it is resolved; past its deadline the sweeper refunds it.</p>
<form method="get" action="/console/review" class="filters" role="search" aria-label="Filter holds">
${select({ name: 'state', label: 'Holds', value: state ?? '', options: queueStates })}
<button type="submit">Show</button>
</form>
${errorBox(answer.error, context.request.id)}
${holds.length === 0 && !answer.error ? html`<p class="empty" data-testid="empty">No holds here.</p>` : holds.map((hold, index) => holdCard(context, hold, index, refusal))}`,
  );
}

/** The resolve body as the API takes it: the released part and the note only when typed, as typed (the API refuses a
 * part that does not fit the resolution; the page never drops or guesses one). */
function resolveBody(values: Refusal['values']): Record<string, unknown> {
  const cents = values.releasedCents;
  return {
    resolution: values.resolution,
    ...(cents === '' ? {} : { released_cents: /^\d{1,15}$/.test(cents) ? Number(cents) : cents }),
    ...(values.note === '' ? {} : { note: values.note }),
  };
}

function outcomeOf(answer: ResolveAnswer): Html {
  const { resolution, released_cents: released, refunded_cents: refunded, resolved_by: resolvedBy, receipt } = answer.resolution;
  return notice(html`<p data-testid="resolution-outcome">Intent <a href="/console/intents/${answer.intent_id}"><code class="wrap">${answer.intent_id}</code></a> is resolved as <strong>${resolution}</strong> and now <strong data-testid="resolved-state">${stateLabel(answer.state)}</strong>: ${money(released, answer.currency)} to the payee, ${money(refunded, answer.currency)} back to the principal.</p>
<p>Resolution receipt <code class="wrap" data-testid="resolution-receipt">${String(receipt['receipt_id'] ?? '')}</code>, signed and in the transparency log; by ${resolvedBy}, ${when(answer.resolution.resolved_at)}.</p>`);
}

export async function reviewPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/review', (context, _params, query) => queuePage(context, query));

  postAction<{ intent_id: string }>(app, '/review/:intent_id/resolve', async (context, body: FormBody, params) => {
    const values = { resolution: formValue(body, 'resolution'), releasedCents: formValue(body, 'released_cents').trim(), note: formValue(body, 'note').trim() };
    const key = formValue(body, 'idempotency_key');
    const answer = await context.act<ResolveAnswer>({
      method: 'POST',
      url: `/harbor/intents/${encodeURIComponent(params.intent_id)}/review/resolve`,
      body: resolveBody(values),
      ...(key === '' ? {} : { headers: { 'idempotency-key': key } }),
    });
    if (answer.error) return { status: answer.status, html: await queuePage(context, {}, html``, { intentId: params.intent_id, error: answer.error, values }) };
    return queuePage(context, {}, outcomeOf(answer.body));
  });
}
