// The overview and the usage page. Both are read from the intents API, page by page up to a bound: intents by
// state, volume today and over 7 days, funding by rail, engine mutations and volume per day and per rail (an
// inline SVG chart). There is no usage route yet; the figures are counted here from the intents' own timestamps.
import type { FastifyInstance } from 'fastify';
import type { ApiAnswer } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, money, when, type Html } from '../html.ts';
import { page, table } from '../layout.ts';
import { getPage } from '../routing.ts';
import type { IntentView } from './intents.ts';

/** The overview reads at most this many intents (pages of 200), newest first; the page says when it stopped. */
const intentsReadMax = 2000;
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
    const released = ofRail.filter((intent) => intent.state === 'released').length;
    const refunded = ofRail.filter((intent) => intent.state === 'refunded').length;
    return html`<tr><td>${rail}</td><td class="number">${ofRail.length}</td><td class="number">${funded}</td><td class="number">${ofRail.length - funded}</td><td class="number">${released}</td><td class="number">${refunded}</td></tr>`;
  });
  const failures = sample.intents.filter((intent) => intent.predicate_passed === false).slice(0, 10);
  return page(
    context,
    'Overview',
    html`${sampleNote(sample)}
<div class="tiles">
<div class="tile"><span class="label">Volume today</span><span class="value" data-testid="volume-today">${money(volume(today))}</span></div>
<div class="tile"><span class="label">Volume, 7 days</span><span class="value">${money(volume(now - 7 * dayMs))}</span></div>
${['open', 'funded', 'evidence_recorded', 'released', 'refunded'].map((state) => html`<div class="tile"><span class="label">${state.replace('_', ' ')}</span><span class="value" data-testid="count-${state}">${byState.get(state) ?? 0}</span></div>`)}
</div>
<section aria-labelledby="rails-heading"><h2 id="rails-heading">Funding by rail</h2>
${table('Intents and funding outcomes per rail', ['Rail', 'Intents', 'Funded', 'Not funded', 'Released', 'Refunded'], railRows, 'No intents yet.')}</section>
<section aria-labelledby="failures-heading"><h2 id="failures-heading">Recent failed releases</h2>
${table('Intents whose release rule failed, newest first', ['Intent', 'Amount', 'Evidence recorded'], failures.map((intent) => html`<tr><td><a href="/console/intents/${intent.intent_id}"><code>${intent.intent_id}</code></a></td><td class="number">${money(intent.amount_cents, intent.currency)}</td><td>${when(intent.evidence_recorded_at)}</td></tr>`), 'No failed releases.')}
<p class="hint">Failed API requests are in the server log under their request id; the console has no log reader.</p></section>`,
  );
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
