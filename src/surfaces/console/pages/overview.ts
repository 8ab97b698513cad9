// The overview and the usage page. Both are read from the intents API, page by page up to a bound: intents by
// state, volume today and over 7 days, funding by rail, recent failures (with the funding-attempts and evidence
// reads), engine mutations and volume per day and per rail (an inline SVG chart). There is no usage route yet; the
// figures are counted here from the intents' own timestamps.
import type { FastifyInstance } from 'fastify';
import type { ApiAnswer } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, money, when, type Html } from '../html.ts';
import { page, table } from '../layout.ts';
import { getPage } from '../routing.ts';
import { lifecycleStates, terminalStates } from '../../../engine/lifecycle.ts';
import { capitalized, stateLabel, type IntentView } from './intents.ts';

/** The overview reads at most this many intents (pages of 200), newest first; the page says when it stopped. */
const intentsReadMax = 2000;
/** Rows of the overview's recent failures. */
const recentFailuresMax = 10;
const dayMs = 86_400_000;
const chartDays = 14;

interface IntentSample {
  readonly intents: IntentView[];
  readonly complete: boolean;
}

async function readIntents(context: ConsoleContext): Promise<IntentSample> {
  const intents: IntentView[] = [];
  let cursor: string | null = null;
  for (;;) {
    const answer: ApiAnswer<{ items: IntentView[]; has_more: boolean; next_cursor: string | null }> = await context.api({
      method: 'GET',
      url: `/harbor/operator/v1/intents?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
    });
    if (answer.error) return { intents, complete: false };
    intents.push(...answer.body.items);
    if (!answer.body.has_more || !answer.body.next_cursor) return { intents, complete: true };
    if (intents.length >= intentsReadMax) return { intents, complete: false };
    cursor = answer.body.next_cursor;
  }
}

const dayOf = (time: string) => time.slice(0, 10);

function tally<K>(entries: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const entry of entries) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  return counts;
}

function sampleNote(sample: IntentSample): Html {
  return sample.complete ? html`` : html`<p class="hint">Counted from the newest ${sample.intents.length} intents.</p>`;
}

async function overview(context: ConsoleContext): Promise<Html> {
  if (!context.may('GET /harbor/operator/v1/intents')) return page(context, 'Overview', html`<p class="empty">Your role reads no intents.</p>`);
  const sample = await readIntents(context);
  const now = Date.now();
  const byState = tally(sample.intents.map((intent) => intent.state));
  const volume = (sinceMs: number) => sample.intents.filter((intent) => Date.parse(intent.created_at) >= sinceMs).reduce((sum, intent) => sum + intent.amount_cents, 0);
  const today = Date.parse(`${new Date(now).toISOString().slice(0, 10)}T00:00:00Z`);
  const rails = [...new Set(sample.intents.map((intent) => intent.settlement_rail))].sort();
  const railRows = rails.map((rail) => {
    const ofRail = sample.intents.filter((intent) => intent.settlement_rail === rail);
    const funded = ofRail.filter((intent) => intent.funded_at !== null).length;
    const settled = terminalStates.map((state) => html`<td class="number">${ofRail.filter((intent) => intent.state === state).length}</td>`);
    return html`<tr><td>${rail}</td><td class="number">${ofRail.length}</td><td class="number">${funded}</td><td class="number">${ofRail.length - funded}</td>${settled}</tr>`;
  });
  const failures = await recentFailures(context, sample.intents);
  return page(
    context,
    'Overview',
    html`${sampleNote(sample)}
<div class="tiles">
<div class="tile"><span class="label">Volume today</span><span class="value" data-testid="volume-today">${money(volume(today))}</span></div>
<div class="tile"><span class="label">Volume, 7 days</span><span class="value">${money(volume(now - 7 * dayMs))}</span></div>
${lifecycleStates.map((state) => html`<div class="tile"><span class="label">${stateLabel(state)}</span><span class="value" data-testid="count-${state}">${byState.get(state) ?? 0}</span></div>`)}
</div>
<section aria-labelledby="rails-heading"><h2 id="rails-heading">Funding by rail</h2>
${table('Intents and funding outcomes per rail', ['Rail', 'Intents', 'Funded', 'Not funded', ...terminalStates.map((state) => capitalized(stateLabel(state)))], railRows, 'No intents yet.')}</section>
<section aria-labelledby="failures-heading"><h2 id="failures-heading">Recent failures</h2>
${table(
  `Recent failures, newest first (at most ${recentFailuresMax})`,
  ['When', 'What', 'Intent', 'Reason'],
  failures.map((failure) => html`<tr data-testid="failure" data-kind="${failure.kind}"><td>${when(failure.at)}</td><td>${failure.what}</td><td><a href="/console/intents/${failure.intentId}"><code class="wrap">${failure.intentId}</code></a></td><td>${failure.reason}</td></tr>`),
  'No failures: no declined payments, failed evidence or expired intents.',
)}
<p class="hint">Failed API requests are in the server log under their request id; the console has no log reader.</p></section>`,
  );
}

interface Failure {
  readonly kind: 'payment_declined' | 'evidence_failed' | 'deadline_passed';
  readonly at: string;
  readonly intentId: string;
  readonly what: string;
  readonly reason: string;
}

interface FundingAttemptView {
  intent_id: string;
  settlement_rail: string;
  updated_at: string;
}

interface EvidenceView {
  predicate_evaluation?: { trace?: Array<{ kind: string; detail: string; data?: { passed?: boolean } }> };
}

/**
 * The tenant's recent failures an operator acts on, newest first: payments a rail declined (the funding-attempts
 * read), evidence that failed the release rule (with the failing clauses from the stored trace; the intent refunded
 * or about to be), and intents refunded because their deadline passed. An intent refunded with no evidence was
 * refunded for its deadline: the engine refunds for no other reason without evidence (docs/engine.md).
 */
async function recentFailures(context: ConsoleContext, intents: readonly IntentView[]): Promise<Failure[]> {
  const failures: Failure[] = [];
  if (context.may('GET /harbor/funding-attempts')) {
    const answer = await context.api<{ data: FundingAttemptView[] }>({ method: 'GET', url: `/harbor/funding-attempts?status=declined&limit=${recentFailuresMax}` });
    for (const attempt of answer.body.data ?? []) {
      failures.push({
        kind: 'payment_declined',
        at: attempt.updated_at,
        intentId: attempt.intent_id,
        what: 'Payment declined',
        reason: `The ${attempt.settlement_rail} rail declined the payment; nothing moved.`,
      });
    }
  }
  for (const intent of intents) {
    if (intent.predicate_passed === false && intent.evidence_recorded_at !== null) {
      const refunded = intent.state === 'refunded' && intent.settled_at !== null;
      failures.push({
        kind: 'evidence_failed',
        at: refunded ? intent.settled_at! : intent.evidence_recorded_at,
        intentId: intent.intent_id,
        what: refunded ? 'Refunded: evidence failed the release rule' : 'Evidence failed the release rule',
        reason: 'The evidence did not satisfy the release rule.',
      });
    } else if (intent.state === 'refunded' && intent.evidence_recorded_at === null && intent.settled_at !== null) {
      failures.push({
        kind: 'deadline_passed',
        at: intent.settled_at,
        intentId: intent.intent_id,
        what: 'Refunded: deadline passed',
        reason: `No evidence arrived before the deadline (${when(intent.deadline)}); the amount went back to the principal.`,
      });
    }
  }
  failures.sort((left, right) => Date.parse(right.at) - Date.parse(left.at));
  const recent = failures.slice(0, recentFailuresMax);
  // The failing clauses in the evaluator's own words, for the few evidence failures shown.
  return Promise.all(recent.map((failure) => (failure.kind === 'evidence_failed' ? withFailedClauses(context, failure) : failure)));
}

/** Clauses that only combine others: their failure is said by the clauses under them. */
const combinators = new Set(['and', 'or', 'not']);

async function withFailedClauses(context: ConsoleContext, failure: Failure): Promise<Failure> {
  if (!context.may('GET /harbor/intents/:intent_id/evidence')) return failure;
  const answer = await context.api<{ data: EvidenceView[] }>({ method: 'GET', url: `/harbor/intents/${encodeURIComponent(failure.intentId)}/evidence?limit=1` });
  const failed = (answer.body.data?.[0]?.predicate_evaluation?.trace ?? []).filter((step) => step.data?.passed === false && !combinators.has(step.kind));
  return failed.length === 0 ? failure : { ...failure, reason: failed.map((step) => step.detail).join('; ') };
}

interface DayFigures {
  mutations: number;
  volumeCents: number;
}

/** Per day and rail: engine mutations (each create, fund, evidence and settlement counted on its day) and the
 * volume of intents created that day. */
function perDay(intents: readonly IntentView[], days: readonly string[]): Map<string, Map<string, DayFigures>> {
  const figures = new Map<string, Map<string, DayFigures>>();
  const cell = (rail: string, day: string) => {
    const ofRail = figures.get(rail) ?? new Map<string, DayFigures>();
    figures.set(rail, ofRail);
    const found = ofRail.get(day) ?? { mutations: 0, volumeCents: 0 };
    ofRail.set(day, found);
    return found;
  };
  const inRange = new Set(days);
  for (const intent of intents) {
    for (const time of [intent.created_at, intent.funded_at, intent.evidence_recorded_at, intent.settled_at]) {
      if (time !== null && inRange.has(dayOf(time))) cell(intent.settlement_rail, dayOf(time)).mutations++;
    }
    if (inRange.has(dayOf(intent.created_at))) cell(intent.settlement_rail, dayOf(intent.created_at)).volumeCents += intent.amount_cents;
  }
  return figures;
}

const railColours = ['#1d4ed8', '#b45309', '#047857', '#7c3aed'];

/** Stacked bars, one per day, one colour per rail; with a text table beside it for screen readers. */
function chart(title: string, days: readonly string[], figures: Map<string, Map<string, DayFigures>>, value: (figure: DayFigures) => number): Html {
  const rails = [...figures.keys()].sort();
  const totals = days.map((day) => rails.reduce((sum, rail) => sum + value(figures.get(rail)?.get(day) ?? { mutations: 0, volumeCents: 0 }), 0));
  const top = Math.max(1, ...totals);
  const width = 40 * days.length;
  const bars = days.map((day, index) => {
    let y = 200;
    return rails.map((rail, railIndex) => {
      const amount = value(figures.get(rail)?.get(day) ?? { mutations: 0, volumeCents: 0 });
      const height = (amount / top) * 180;
      y -= height;
      return amount === 0 ? '' : html`<rect x="${index * 40 + 6}" y="${y.toFixed(1)}" width="28" height="${height.toFixed(1)}" fill="${railColours[railIndex % railColours.length]!}"><title>${day} ${rail}: ${amount}</title></rect>`;
    });
  });
  const labels = days.map((day, index) => html`<text x="${index * 40 + 20}" y="216" text-anchor="middle" font-size="10">${day.slice(5)}</text>`);
  const legend = rails.map((rail, railIndex) => html`<li><span class="swatch" data-colour="${railIndex % railColours.length}"></span>${rail}</li>`);
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${width} 224" role="img" aria-label="${title}, per day for ${days.length} days" preserveAspectRatio="none">${bars}${labels}</svg>
<ul class="legend">${legend}</ul></figure>`;
}

async function usage(context: ConsoleContext): Promise<Html> {
  const sample = await readIntents(context);
  const now = Date.now();
  const days = Array.from({ length: chartDays }, (_, index) => new Date(now - (chartDays - 1 - index) * dayMs).toISOString().slice(0, 10));
  const figures = perDay(sample.intents, days);
  const rows = [...figures.keys()].sort().flatMap((rail) =>
    days.filter((day) => figures.get(rail)?.has(day)).map((day) => {
      const figure = figures.get(rail)!.get(day)!;
      return html`<tr><td>${day}</td><td>${rail}</td><td class="number">${figure.mutations}</td><td class="number">${money(figure.volumeCents)}</td></tr>`;
    }),
  );
  return page(
    context,
    'Usage',
    html`${sampleNote(sample)}
${chart('Engine mutations per day and rail', days, figures, (figure) => figure.mutations)}
${chart('Volume created per day and rail (cents)', days, figures, (figure) => figure.volumeCents)}
${table('Usage per day and rail', ['Day', 'Rail', 'Mutations', 'Volume'], rows, `No activity in the last ${chartDays} days.`)}`,
  );
}

export async function overviewPages(app: FastifyInstance): Promise<void> {
  // '' under the /console prefix: the overview is /console itself.
  getPage(app, '', (context) => overview(context));
  getPage(app, '/usage', (context) => usage(context));
}
