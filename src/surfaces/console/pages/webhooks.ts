// Webhook endpoints (docs/events.md#webhook-endpoints): the list and the form that adds one (its signing secret shown
// once), and one endpoint's page: enable or disable it, rotate its secret (the new one shown once), delete it, and its
// recent deliveries with where each stands, each with a Redeliver button. Which controls a person sees is the routes'
// own access: admins change endpoints, admins and operators redeliver, auditors read.
import type { FastifyInstance } from 'fastify';
import { eventTypes, type WebhookDeliveryAttempt, type WebhookEndpoint, type WebhookEndpointWithSecret } from '../../../contracts/events.ts';
import { pageSizeMax } from '../../../limits.ts';
import { queryString } from '../api.ts';
import type { ConsoleContext } from '../context.ts';
import { html, when, type Html } from '../html.ts';
import { errorBox, field, form, notice, page, shownOnce, table } from '../layout.ts';
import { formValue, formValues, getPage, postAction, type FormBody } from '../routing.ts';

const endpointIdPattern = /^we_[0-9a-f]{32}$/;
const endpointPath = (endpointId: string) => `/v1/webhook-endpoints/${encodeURIComponent(endpointId)}`;

/** What the create form was sent with, shown again when the API refuses it. */
interface CreateValues {
  readonly url: string;
  readonly description: string;
  readonly events: readonly string[];
}

const emptyCreate: CreateValues = { url: '', description: '', events: [] };

function createValuesOf(body: FormBody): CreateValues {
  return { url: formValue(body, 'url').trim(), description: formValue(body, 'description').trim(), events: formValues(body, 'enabled_events') };
}

function statusBadge(endpoint: WebhookEndpoint): Html {
  const words = endpoint.enabled ? 'enabled' : endpoint.disabled_reason === 'failing' ? 'disabled: its deliveries kept failing' : 'disabled';
  return html`<span class="badge endpoint-${endpoint.enabled ? 'enabled' : 'disabled'}" data-testid="endpoint-status">${words}</span>`;
}

const eventsInWords = (endpoint: WebhookEndpoint): Html =>
  endpoint.enabled_events.includes('*') ? html`every event` : html`${endpoint.enabled_events.map((type, index) => html`${index ? ', ' : ''}<code>${type}</code>`)}`;

function createForm(context: ConsoleContext, values: CreateValues): Html {
  const ticked = new Set(values.events);
  const choices: (readonly [string, Html])[] = [['*', html`every event (types added later too)`], ...eventTypes.map((type) => [type, html`<code>${type}</code>`] as const)];
  return html`<section class="card" aria-labelledby="create-heading"><h2 id="create-heading">Add an endpoint</h2>
${form(context.csrfToken, '/console/webhooks', html`<div class="row">
${field({ name: 'url', label: 'URL', value: values.url, required: true, hint: 'Where deliveries are posted: https; a sandbox tenant may use http on loopback.' })}
${field({ name: 'description', label: 'Description (optional)', value: values.description })}
</div>
<fieldset><legend>Events to send</legend><div class="choices">${choices.map(([value, label], index) => html`<div class="choice"><input type="checkbox" id="event-${index}" name="enabled_events" value="${value}"${ticked.has(value) ? html` checked` : ''}><label for="event-${index}">${label}</label></div>`)}</div></fieldset>
<button type="submit">Add endpoint</button>`)}</section>`;
}

async function listPage(context: ConsoleContext, query: Record<string, string | undefined>, top: Html = html``, values: CreateValues = emptyCreate): Promise<Html> {
  const cursor = query['cursor'] && endpointIdPattern.test(query['cursor']) ? query['cursor'] : undefined;
  const answer = await context.api<{ data?: WebhookEndpoint[]; has_more: boolean; next_cursor: string | null }>({ method: 'GET', url: `/v1/webhook-endpoints${queryString({ limit: 50, cursor })}` });
  const rows = (answer.body.data ?? []).map(
    (endpoint) => html`<tr data-endpoint-id="${endpoint.id}">
<td><a href="/console/webhooks/${endpoint.id}"><code class="wrap">${endpoint.url}</code></a>${endpoint.description ? html`<br><span class="hint">${endpoint.description}</span>` : ''}</td>
<td>${eventsInWords(endpoint)}</td><td>${statusBadge(endpoint)}</td><td>${when(endpoint.created_at)}</td></tr>`,
  );
  const next = answer.body.has_more && answer.body.next_cursor ? html`<p><a href="/console/webhooks?cursor=${answer.body.next_cursor}">Next page</a></p>` : '';
  return page(
    context,
    'Webhooks',
    html`${top}${errorBox(answer.error, context.request.id)}${context.may('POST /v1/webhook-endpoints') ? createForm(context, values) : ''}
${table('Webhook endpoints of this tenant', ['Endpoint', 'Events', 'Status', 'Created'], rows, 'No webhook endpoints yet.')}${next}`,
  );
}

/** A delivery as the page shows it: the attempts log (newest first) folded by delivery, its newest attempt saying
 * where it stands. */
export interface DeliveryView {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookDeliveryAttempt['delivery_status'];
  readonly attempts: number;
  readonly lastAttemptAt: string;
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly nextAttemptAt: string | null;
}

export function deliveriesOf(attempts: readonly WebhookDeliveryAttempt[]): DeliveryView[] {
  const deliveries = new Map<string, DeliveryView>();
  for (const attempt of attempts) {
    if (deliveries.has(attempt.delivery_id)) continue;
    deliveries.set(attempt.delivery_id, {
      deliveryId: attempt.delivery_id,
      eventId: attempt.event_id,
      eventType: attempt.event_type,
      status: attempt.delivery_status,
      // Attempts are numbered from 1: the newest one's number is how many were made.
      attempts: attempt.attempt,
      lastAttemptAt: attempt.attempted_at,
      responseStatus: attempt.response_status,
      error: attempt.error,
      nextAttemptAt: attempt.next_attempt_at,
    });
  }
  return [...deliveries.values()];
}

function deliveriesSection(context: ConsoleContext, endpoint: WebhookEndpoint, attempts: readonly WebhookDeliveryAttempt[], more: boolean): Html {
  const canRedeliver = context.may('POST /v1/webhook-endpoints/:endpoint_id/events/:event_id/redeliver');
  const rows = deliveriesOf(attempts).map(
    (delivery) => html`<tr data-testid="delivery" data-delivery-id="${delivery.deliveryId}" data-event-id="${delivery.eventId}">
<td><code>${delivery.eventType}</code><br><code class="wrap hint">${delivery.eventId}</code></td>
<td><span class="badge delivery-${delivery.status}" data-testid="delivery-status">${delivery.status}</span></td>
<td class="number" data-testid="delivery-attempts">${delivery.attempts}</td>
<td>${when(delivery.lastAttemptAt)}</td>
<td data-testid="delivery-response">${delivery.responseStatus === null ? '' : `HTTP ${delivery.responseStatus}`}${delivery.error ? html` <span class="hint">${delivery.error}</span>` : ''}</td>
<td>${delivery.nextAttemptAt ? when(delivery.nextAttemptAt) : '—'}</td>
${canRedeliver ? html`<td>${form(context.csrfToken, `/console/webhooks/${endpoint.id}/events/${delivery.eventId}/redeliver`, html`<button type="submit" aria-label="Redeliver ${delivery.eventType} ${delivery.eventId}">Redeliver</button>`, 'inline')}</td>` : ''}</tr>`,
  );
  const headings = ['Event', 'Status', 'Attempts', 'Last attempt', 'Last response', 'Next try', ...(canRedeliver ? ['Actions'] : [])];
  return html`<section aria-labelledby="deliveries-heading"><h2 id="deliveries-heading">Recent deliveries</h2>
<p class="hint">A delivery appears here after its first attempt; its newest attempt says where it stands.</p>
${table('Deliveries to this endpoint, newest first', headings, rows, 'No delivery attempted yet.')}
${more ? html`<p class="hint">Only the newest ${pageSizeMax} attempts are shown.</p>` : ''}</section>`;
}

function controls(context: ConsoleContext, endpoint: WebhookEndpoint): Html {
  const base = `/console/webhooks/${endpoint.id}`;
  const buttons = [
    context.may('POST /v1/webhook-endpoints/:endpoint_id')
      ? form(context.csrfToken, `${base}/enabled`, html`<input type="hidden" name="enabled" value="${endpoint.enabled ? 'false' : 'true'}"><button type="submit">${endpoint.enabled ? 'Disable' : 'Enable'}</button>`, 'inline')
      : '',
    context.may('POST /v1/webhook-endpoints/:endpoint_id/rotate-secret')
      ? form(context.csrfToken, `${base}/rotate-secret`, html`<button type="submit" data-confirm="Rotate the signing secret? For a day, deliveries carry a signature by the old secret too.">Rotate secret</button>`, 'inline')
      : '',
    context.may('DELETE /v1/webhook-endpoints/:endpoint_id')
      ? form(context.csrfToken, `${base}/delete`, html`<button type="submit" class="danger" data-confirm="Delete this endpoint? Its pending deliveries are dropped.">Delete</button>`, 'inline')
      : '',
  ].filter((control) => control !== '');
  return buttons.length ? html`<div class="buttons" data-testid="endpoint-controls">${buttons}</div>` : html``;
}

async function detailPage(context: ConsoleContext, endpointId: string, top: Html = html``): Promise<Html> {
  const endpoint = await context.read<WebhookEndpoint>(endpointPath(endpointId));
  const attempts = await context.api<{ data?: WebhookDeliveryAttempt[]; has_more: boolean }>({ method: 'GET', url: `${endpointPath(endpoint.id)}/deliveries?limit=${pageSizeMax}` });
  return page(
    context,
    'Webhook endpoint',
    html`${top}
<dl class="facts">
<dt>Endpoint</dt><dd><code>${endpoint.id}</code></dd>
<dt>URL</dt><dd><code class="wrap" data-testid="endpoint-url">${endpoint.url}</code></dd>
${endpoint.description ? html`<dt>Description</dt><dd>${endpoint.description}</dd>` : ''}
<dt>Events</dt><dd>${eventsInWords(endpoint)}</dd>
<dt>Status</dt><dd>${statusBadge(endpoint)}</dd>
${endpoint.previous_secret_expires_at ? html`<dt>Previous secret</dt><dd>still signs until ${when(endpoint.previous_secret_expires_at)}</dd>` : ''}
<dt>Created</dt><dd>${when(endpoint.created_at)}</dd>
<dt>Changed</dt><dd>${when(endpoint.updated_at)}</dd>
</dl>
${controls(context, endpoint)}
${attempts.error ? errorBox(attempts.error, context.request.id) : deliveriesSection(context, endpoint, attempts.body.data ?? [], attempts.body.has_more)}
<p><a href="/console/webhooks">All endpoints</a></p>`,
  );
}

const secretOf = (answer: WebhookEndpointWithSecret, heading: string): Html =>
  shownOnce({ name: 'new-webhook', heading, kept: 'The service keeps it sealed and never shows it again.', label: html`Signing secret of <code>${answer.id}</code>`, secret: answer.secret });

export async function webhookPages(app: FastifyInstance): Promise<void> {
  getPage(app, '/webhooks', (context, _params, query) => listPage(context, query));
  getPage<{ endpoint_id: string }>(app, '/webhooks/:endpoint_id', (context, params) => detailPage(context, params.endpoint_id));

  postAction(app, '/webhooks', async (context, body) => {
    const values = createValuesOf(body);
    const answer = await context.api<WebhookEndpointWithSecret>({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      body: { url: values.url, enabled_events: values.events, ...(values.description ? { description: values.description } : {}) },
    });
    if (answer.error) return { status: answer.status, html: await listPage(context, {}, errorBox(answer.error, context.request.id), values) };
    // Answered in place, never by redirect: the secret must not travel in a URL or be re-readable from history.
    return listPage(context, {}, html`${secretOf(answer.body, 'Your new endpoint\'s signing secret')}<p><a href="/console/webhooks/${answer.body.id}">Open the endpoint</a></p>`);
  });

  postAction<{ endpoint_id: string }>(app, '/webhooks/:endpoint_id/enabled', async (context, body, params) => {
    const wanted = formValue(body, 'enabled');
    // Anything but the two words goes to the API as typed, which refuses it: the page never guesses a switch.
    const enabled = wanted === 'true' ? true : wanted === 'false' ? false : wanted;
    const answer = await context.act<WebhookEndpoint>({ method: 'POST', url: endpointPath(params.endpoint_id), body: { enabled } });
    if (answer.error) return { status: answer.status, html: await detailPage(context, params.endpoint_id, errorBox(answer.error, context.request.id)) };
    return detailPage(context, answer.body.id, notice(answer.body.enabled ? 'The endpoint is enabled: deliveries resume.' : 'The endpoint is disabled: nothing is sent to it until it is enabled again.'));
  });

  postAction<{ endpoint_id: string }>(app, '/webhooks/:endpoint_id/rotate-secret', async (context, _body, params) => {
    const answer = await context.act<WebhookEndpointWithSecret>({ method: 'POST', url: `${endpointPath(params.endpoint_id)}/rotate-secret`, body: {} });
    if (answer.error) return { status: answer.status, html: await detailPage(context, params.endpoint_id, errorBox(answer.error, context.request.id)) };
    return detailPage(context, answer.body.id, secretOf(answer.body, 'The new signing secret'));
  });

  postAction<{ endpoint_id: string }>(app, '/webhooks/:endpoint_id/delete', async (context, _body, params) => {
    const answer = await context.act<{ id: string }>({ method: 'DELETE', url: endpointPath(params.endpoint_id) });
    if (answer.error) return { status: answer.status, html: await detailPage(context, params.endpoint_id, errorBox(answer.error, context.request.id)) };
    return listPage(context, {}, notice(html`Endpoint <code class="wrap">${answer.body.id}</code> is deleted.`));
  });

  postAction<{ endpoint_id: string; event_id: string }>(app, '/webhooks/:endpoint_id/events/:event_id/redeliver', async (context, _body, params) => {
    const answer = await context.act<{ id: string; event_id: string }>({ method: 'POST', url: `${endpointPath(params.endpoint_id)}/events/${encodeURIComponent(params.event_id)}/redeliver` });
    if (answer.error) return { status: answer.status, html: await detailPage(context, params.endpoint_id, errorBox(answer.error, context.request.id)) };
    return detailPage(context, params.endpoint_id, notice(html`Event <code class="wrap">${answer.body.event_id}</code> is queued again as delivery <code class="wrap">${answer.body.id}</code>; it appears below after its first attempt.`));
  });
}
