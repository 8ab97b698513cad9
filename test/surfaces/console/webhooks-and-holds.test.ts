// Webhook endpoints and review holds in the console, in a real browser (Debian's Chromium through playwright-core)
// against the real app on loopback over a fresh Postgres: an endpoint added with its secret shown once, its deliveries
// to a real receiver on loopback (which checks each signature with its own Standard Webhooks code) shown with their
// status, one redelivered, a failing one pending with its next try, the secret rotated, the endpoint disabled,
// enabled and deleted; an intent the release gate held, shown in the review queue and resolved as a split with the
// outcome and its resolution receipt; and an auditor who sees no write control, whose forged posts the API refuses.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../src/infra/secret-box.ts';
import { WebhookDeliverer } from '../../../src/services/webhook-deliverer.ts';
import { bearer } from '../../helpers/app.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';
import { overflowsHorizontally, screenshot, signIn, startConsoleHarness, type ConsoleHarness } from './harness.ts';

const secretsKey = Buffer.alloc(32, 7).toString('base64');
/** This file's receiver port (the console helpers' range, 7770–7799). */
const receiverPort = 7770;
let harness: ConsoleHarness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  harness = await startConsoleHarness({ secretsKey });
  receiver = await startWebhookReceiver(receiverPort);
}, 90_000);

afterAll(async () => {
  await receiver?.close();
  await harness?.close();
});

/** The deliverer a replica runs, driven by hand so that each delivery happens when the test says. */
const deliverer = () =>
  new WebhookDeliverer({ database: harness.system, secretBox: SecretBox.fromBase64(secretsKey), keyring: harness.app.gatewayKeys, log: { info() {}, warn() {}, error() {} }, attemptTimeoutMs: 2_000 });

async function asAdmin(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
  const response = await harness.app.inject({ method, url, headers: bearer(harness.tenant.adminKey), ...(payload === undefined ? {} : { payload }) });
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json();
}

/** An event of the tenant: an API key created. */
const makeEvent = (name: string) => asAdmin('POST', '/v1/admin/api-keys', { role: 'auditor', name });

/** A sandbox intent of `cents` that the release gate (critical_hold, amount over 200) holds at its evidence. */
async function heldIntent(cents: number): Promise<string> {
  await asAdmin('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold', amount_limit_cents: 200, first_settlement: false, standing_score_min: null });
  const { intent_id: intentId } = await asAdmin('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: cents, completion_preset: 'cost_and_completion' });
  const held = await asAdmin('POST', `/v1/sandbox/guardrails/${intentId}/evidence`, { payload: { status: 'completed', cost_cents: 1 }, operation: 'search.web' });
  expect(held.sandbox_lifecycle_status).toBe('held');
  return intentId;
}

const acceptNextDialog = (page: Page) => page.once('dialog', (dialog) => void dialog.accept());

async function fitsBothSizes(page: Page, path: string): Promise<void> {
  for (const [width, height] of [[390, 844], [1280, 800]] as const) {
    await page.setViewportSize({ width, height });
    await page.goto(path);
    expect(await overflowsHorizontally(page), `${path} at ${width}×${height}`).toBe(false);
    const unlabelled = await page.evaluate(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter((control) => control.labels.length === 0).map((control) => control.name)`);
    expect(unlabelled, path).toEqual([]);
  }
}

describe('webhooks and review holds in the console', { timeout: 90_000 }, () => {
  it('adds an endpoint with its secret shown once, shows its deliveries with their status, redelivers one, rotates, disables and deletes it', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Description (optional)').fill('browser test receiver');
    await page.locator('input[name="enabled_events"][value="api_key.created"]').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByTestId('new-webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    receiver.secrets = [secret];
    await screenshot(page, 'webhook-created');

    // Shown once: neither the list nor the endpoint's page has it again.
    await page.goto('/console/webhooks');
    expect(await page.content()).not.toContain(secret.slice(6));
    const row = page.locator('tr[data-endpoint-id]').filter({ hasText: 'browser test receiver' });
    expect(await row.getByTestId('endpoint-status').textContent()).toBe('enabled');
    await row.getByRole('link').click();
    await page.waitForURL(/\/console\/webhooks\/we_[0-9a-f]{32}$/);
    const endpointPath = new URL(page.url()).pathname;
    expect(await page.content()).not.toContain(secret.slice(6));
    expect(await page.getByTestId('endpoint-url').textContent()).toBe(receiver.url);
    expect(await page.getByTestId('empty').textContent()).toContain('No delivery attempted yet');

    // An event delivered: the receiver checks its signature with the secret the page showed.
    await makeEvent('webhook event one');
    expect(await deliverer().drain()).toBe(1);
    expect(receiver.refused).toEqual([]);
    expect(receiver.deliveries).toHaveLength(1);
    const eventId = receiver.deliveries[0]!.id;
    await page.goto(endpointPath);
    const delivered = page.locator(`tr[data-event-id="${eventId}"]`);
    expect(await delivered.getByTestId('delivery-status').textContent()).toBe('succeeded');
    expect(await delivered.getByTestId('delivery-attempts').textContent()).toBe('1');
    expect(await delivered.getByTestId('delivery-response').textContent()).toContain('HTTP 200');
    await screenshot(page, 'webhook-deliveries');

    // Redelivered: queued again, sent again, and listed as a second delivery of the same event.
    await delivered.getByRole('button', { name: /Redeliver/ }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('notice').textContent()).toContain(eventId);
    expect(await deliverer().drain()).toBe(1);
    expect(receiver.deliveries.map((delivery) => delivery.id)).toEqual([eventId, eventId]);
    await page.goto(endpointPath);
    expect(await page.locator(`tr[data-event-id="${eventId}"]`).count()).toBe(2);

    // A receiver answering 500: the delivery stays pending with its next try.
    receiver.answer = 500;
    await makeEvent('webhook event two');
    expect(await deliverer().drain()).toBe(1);
    receiver.answer = 200;
    await page.goto(endpointPath);
    const pending = page.getByTestId('delivery').filter({ has: page.getByTestId('delivery-status').getByText('pending') });
    expect(await pending.count()).toBe(1);
    expect(await pending.getByTestId('delivery-response').textContent()).toContain('HTTP 500');
    expect(await pending.locator('td').nth(5).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await fitsBothSizes(page, endpointPath);

    // Rotated: the new secret shown once, the old one still signing for the overlap.
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByTestId('new-webhook-secret').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.goto(endpointPath);
    expect(await page.content()).not.toContain(rotated.slice(6));
    expect(await page.locator('.facts').textContent()).toContain('still signs until');

    // Disabled, then enabled again.
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('endpoint-status').textContent()).toBe('disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('endpoint-status').textContent()).toBe('enabled');

    // Deleted.
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('notice').textContent()).toContain('is deleted');
    const endpointId = endpointPath.split('/').at(-1)!;
    const gone = await harness.app.inject({ url: `/v1/webhook-endpoints/${endpointId}`, headers: bearer(harness.tenant.adminKey) });
    expect(gone.statusCode).toBe(404);
  });

  it('shows an intent the release gate held in the review queue, resolves it as a split, and shows the outcome and its receipt', async () => {
    await asAdmin('PUT', '/signal/v1/fraud/release-gate', { mode: 'critical_hold', amount_limit_cents: 200, first_settlement: false, standing_score_min: null });
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('operator'));
    // Evidence submitted in the page: the rule passes, and the gate holds the release.
    await page.goto('/console/intents');
    await page.getByLabel('Amount in cents').fill('250');
    await page.getByRole('button', { name: 'Create and fund' }).click();
    await page.waitForURL(/\/console\/intents\/[0-9a-f-]{36}$/);
    const intentPath = new URL(page.url()).pathname;
    const intentId = intentPath.split('/').at(-1)!;
    await page.getByLabel('Cost in cents').fill('90');
    await page.getByRole('button', { name: 'Submit evidence' }).click();
    await page.getByTestId('held').waitFor();
    expect(await page.getByTestId('state').first().textContent()).toBe('held');
    expect(await page.getByTestId('notice').textContent()).toContain('held the release for review');

    await page.getByTestId('held').getByRole('link', { name: 'the review queue' }).click();
    await page.waitForURL(/\/console\/review$/);
    const hold = page.locator(`[data-testid="hold"][data-intent-id="${intentId}"]`);
    const facts = await hold.locator('.facts').innerText();
    expect(facts).toContain('2.50 USD');
    expect(facts).toContain('did:svc:sandbox:payee');
    expect(facts).toMatch(/Deadline\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(await hold.getByTestId('signals').textContent()).toContain('amount_over_limit');
    await screenshot(page, 'review-queue');
    await fitsBothSizes(page, '/console/review');

    // A split of the whole amount is refused by the API, shown beside the hold with what was typed; nothing moves.
    await hold.getByLabel('Resolution').selectOption('split');
    await hold.getByLabel(/Released to the payee/).fill('250');
    acceptNextDialog(page);
    await hold.getByRole('button', { name: 'Resolve' }).click();
    await hold.getByTestId('error').waitFor();
    expect(await hold.getByTestId('error').getAttribute('data-code')).toBe('settlement.released_amount_invalid');
    expect(await hold.getByLabel(/Released to the payee/).inputValue()).toBe('250');
    expect((await asAdmin('GET', `/harbor/intents/${intentId}`)).state).toBe('held');

    await hold.getByLabel('Resolution').selectOption('split');
    await hold.getByLabel(/Released to the payee/).fill('120');
    await hold.getByLabel(/Note/).fill('Reviewed: 120 of 250 delivered.');
    acceptNextDialog(page);
    await hold.getByRole('button', { name: 'Resolve' }).click();
    await page.getByTestId('resolution-outcome').waitFor();
    const outcome = await page.getByTestId('resolution-outcome').textContent();
    expect(outcome).toContain('resolved as split');
    expect(outcome).toContain('1.20 USD to the payee, 1.30 USD back to the principal');
    expect(await page.getByTestId('resolved-state').textContent()).toBe('resolved split');
    expect(await page.getByTestId('resolution-receipt').textContent()).toBe(`review-resolution:${intentId}`);
    await screenshot(page, 'review-resolved');
    // Resolved, it leaves the queue of holds awaiting a resolution.
    expect(await page.locator(`[data-testid="hold"][data-intent-id="${intentId}"]`).count()).toBe(0);

    // The API agrees, and the receipt is served and verifies.
    expect(await asAdmin('GET', `/harbor/intents/${intentId}`)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    const verdict = await asAdmin('POST', '/protocol/v2/receipts/verify', { receipt_id: `review-resolution:${intentId}` });
    expect(verdict.valid).toBe(true);

    // The closed holds show the resolution; the intent and the intents list carry the split.
    await page.goto('/console/review?state=closed');
    expect(await page.locator(`[data-testid="hold"][data-intent-id="${intentId}"]`).getByTestId('hold-resolution').textContent()).toContain('split, 1.20 USD to the payee (resolved split)');
    await page.goto(intentPath);
    expect(await page.getByTestId('settled-parts').textContent()).toBe('1.20 USD to the payee, 1.30 USD back to the principal');
    await page.goto('/console/intents?state=resolved_split');
    expect(await page.locator('tr').filter({ hasText: intentId }).getByTestId('settled-split').textContent()).toBe('1.20 USD / 1.30 USD');
    await page.goto('/console/intents?state=held');
    expect(await page.locator('tr').filter({ hasText: intentId }).count()).toBe(0);
  });

  it('shows an auditor the endpoints, deliveries and holds without a write control, and the API refuses its forged posts', async () => {
    const endpoint = await asAdmin('POST', '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['api_key.created'], description: 'for the auditor' });
    receiver.secrets = [endpoint.secret];
    await makeEvent('webhook event for the auditor');
    expect(await deliverer().drain()).toBe(1);
    const intentId = await heldIntent(300);

    const { context, page } = await harness.newPage();
    await signIn(harness, page, await harness.member('auditor'));
    const navigation = await page.getByRole('navigation', { name: 'Console' }).innerText();
    expect(navigation).toContain('Webhooks');
    expect(navigation).toContain('Review queue');
    for (const path of ['/console/webhooks', `/console/webhooks/${endpoint.id}`, '/console/review']) {
      await page.goto(path);
      expect(await page.locator('form[method="post"]:not(.sign-out)').count(), path).toBe(0);
      for (const name of [/add endpoint/i, /redeliver/i, /rotate/i, /disable/i, /delete/i, /resolve/i]) {
        expect(await page.getByRole('button', { name }).count(), `${path}: ${name}`).toBe(0);
      }
    }
    await page.goto(`/console/webhooks/${endpoint.id}`);
    expect(await page.getByTestId('delivery').count()).toBe(1);
    await page.goto('/console/review');
    expect(await page.locator(`[data-testid="hold"][data-intent-id="${intentId}"]`).count()).toBe(1);
    await screenshot(page, 'auditor-review-queue');

    // Posts forged with the auditor's own CSRF token reach the API, which refuses the role; nothing changes.
    const csrfToken = (await context.cookies()).find((cookie) => cookie.name === 'svc_console_csrf')!.value;
    const eventId = receiver.deliveries.at(-1)!.id;
    const endpointsBefore = (await asAdmin('GET', '/v1/webhook-endpoints')).data.length;
    const forged: [string, Record<string, string>][] = [
      ['/console/webhooks', { url: 'https://example.com/hooks', enabled_events: '*' }],
      [`/console/webhooks/${endpoint.id}/rotate-secret`, {}],
      [`/console/webhooks/${endpoint.id}/enabled`, { enabled: 'false' }],
      [`/console/webhooks/${endpoint.id}/delete`, {}],
      [`/console/webhooks/${endpoint.id}/events/${eventId}/redeliver`, {}],
      [`/console/review/${intentId}/resolve`, { resolution: 'release' }],
    ];
    for (const [url, form] of forged) {
      // Sent from the page itself, as a script on it could: same origin, so the browser sends both cookies.
      const body = new URLSearchParams({ ...form, csrf_token: csrfToken }).toString();
      const answer = (await page.evaluate(`fetch(${JSON.stringify(url)}, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: ${JSON.stringify(body)} })
        .then(async (response) => ({ status: response.status, text: await response.text() }))`)) as { status: number; text: string };
      expect(answer.status, url).toBe(403);
      expect(answer.text, url).toContain('data-code="auth.role_insufficient"');
    }
    expect((await asAdmin('GET', '/v1/webhook-endpoints')).data.length).toBe(endpointsBefore);
    expect(await asAdmin('GET', `/v1/webhook-endpoints/${endpoint.id}`)).toMatchObject({ enabled: true, previous_secret_expires_at: null });
    expect(await deliverer().drain()).toBe(0);
    expect((await asAdmin('GET', `/harbor/intents/${intentId}`)).state).toBe('held');
  });
});
