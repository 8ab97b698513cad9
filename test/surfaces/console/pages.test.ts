// The console's pages over HTTP (no browser needed): an API key's kind and scopes that disagree are refused, never
// issued; scopes are described level by level and the CLI's presets are offered; the 404 page keeps the frame for a
// signed-in person; every page names an icon that is served, and /favicon.ico answers; dates read one way on a page;
// the standing page lists the tenant's operators.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownScopes, scopePresets } from '../../../src/credentials/mcp-scopes.ts';
import type { Role } from '../../../src/credentials/roles.ts';
import { Database } from '../../../src/infra/database.ts';
import { SecretBox } from '../../../src/infra/secret-box.ts';
import { WebhookDeliverer } from '../../../src/services/webhook-deliverer.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { ConsoleHttpClient } from './http-client.ts';

const secretsKey = Buffer.alloc(32, 5).toString('base64');
let database: TestDatabase;
let system: Database;
let app: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  system = new Database({ ...database.connection, max: 2 });
  // With a secrets key, so that webhook endpoints (whose secrets are sealed) can be made.
  app = await buildTestApp(database.connection, { appOptions: { secretsKey } });
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await system?.close();
  await database?.drop();
});

let people = 0;
/** A browser signed in as a new person of the tenant with `role`. */
async function signedIn(role: Role): Promise<ConsoleHttpClient> {
  const email = `pages.${process.pid}.${++people}@example.com`;
  await createUser(system, { tenantId: tenant.tenantId, email, role });
  const browser = new ConsoleHttpClient(app, system);
  await browser.signIn(email);
  return browser;
}

const keyCount = async () => (await app.inject({ url: '/v1/admin/api-keys?limit=200', headers: bearer(tenant.adminKey) })).json().data.length as number;
/** The text of a page without its markup, as a person reads it. */
const textOf = (page: string) => page.replace(/<[^>]+>/g, ' ').replace(/&[a-z#0-9]+;/g, ' ');

describe('API keys: the kind follows what the person chose, never a guess', () => {
  it('refuses a standard key with scopes ticked, and a restricted key with none, keeping what was typed; issues nothing', async () => {
    const browser = await signedIn('admin');
    await browser.request('GET', '/console/api-keys');
    const before = await keyCount();
    const standardWithScopes = await browser.request('POST', '/console/api-keys', { csrf_token: browser.csrfToken, name: 'narrow agent', role: 'agent', key_kind: 'standard', scopes: ['mcp-readonly', 'mcp.spend:write'] });
    expect(standardWithScopes.statusCode).toBe(400);
    expect(standardWithScopes.body).toContain('data-code="console.key_kind_conflict"');
    expect(textOf(standardWithScopes.body)).toContain('Scopes are ticked (mcp-readonly, mcp.spend:write) but the kind is Standard');
    expect(standardWithScopes.body).not.toContain('data-testid="new-key"');
    // The form comes back as it was sent.
    expect(standardWithScopes.body).toMatch(/name="name" type="text" value="narrow agent"/);
    expect(standardWithScopes.body).toMatch(/value="mcp-readonly" checked/);
    expect(standardWithScopes.body).toMatch(/value="mcp\.spend:write" checked/);

    const restrictedWithout = await browser.request('POST', '/console/api-keys', { csrf_token: browser.csrfToken, role: 'agent', key_kind: 'restricted' });
    expect(restrictedWithout.statusCode).toBe(400);
    expect(textOf(restrictedWithout.body)).toContain('tick at least one preset or scope');
    expect(await keyCount()).toBe(before);
  });

  it('issues a restricted key limited to the ticked preset and scope', async () => {
    const browser = await signedIn('admin');
    await browser.request('GET', '/console/api-keys');
    const created = await browser.request('POST', '/console/api-keys', { csrf_token: browser.csrfToken, role: 'agent', key_kind: 'restricted', scopes: ['mcp-readonly', 'mcp.spend:write'] });
    expect(created.statusCode).toBe(200);
    const secret = /value="(svc_rk_[^"]+)"/.exec(created.body)?.[1];
    expect(secret).toMatch(/^svc_rk_sandbox_/);
    const principal = (await app.inject({ url: '/v1/auth/principal', headers: bearer(secret!) })).json();
    expect(principal).toMatchObject({ key_kind: 'restricted', mcp_scopes: ['mcp.compliance:read', 'mcp.discovery:read', 'mcp.receipts:read', 'mcp.signal:read', 'mcp.spend:write'] });
  });

  it('offers the CLI\'s presets, and describes each scope by what its level grants', async () => {
    const browser = await signedIn('admin');
    const page = (await browser.request('GET', '/console/api-keys')).body;
    for (const preset of scopePresets) expect(page).toContain(`name="scopes" value="${preset.id}"`);
    const grantOf = (scope: string) => textOf(new RegExp(`value="${scope.replace('.', '\\.')}"[^]*?</label>`).exec(page)![0]);
    for (const scope of knownScopes()) expect(page).toContain(`name="scopes" value="${scope}"`);
    // A read level never says it grants a write.
    expect(grantOf('mcp.spend:read')).not.toMatch(/Intent creation|authorization/);
    expect(grantOf('mcp.spend:read')).toContain('Nothing yet');
    expect(grantOf('mcp.spend:write')).toContain('Intent creation');
    expect(grantOf('mcp.settlement:read')).not.toContain('moves money');
    expect(grantOf('mcp.a2a:read')).not.toContain('import');
    expect(grantOf('mcp.a2a:write')).toContain('Mandate import');
  });
});

describe('the frame and the icon', () => {
  it('answers an unknown console address with the 404 page inside the navigation when signed in, bare when not', async () => {
    const browser = await signedIn('operator');
    const signedInNotFound = await browser.request('GET', '/console/no-such-page');
    expect(signedInNotFound.statusCode).toBe(404);
    expect(signedInNotFound.body).toContain('data-testid="not-found"');
    expect(signedInNotFound.body).toContain('<nav aria-label="Console">');
    expect(signedInNotFound.body).toContain('data-testid="who"');
    // A page that names a missing thing (an intent of nobody) keeps the frame too.
    const missingIntent = await browser.request('GET', '/console/intents/00000000-0000-4000-8000-000000000000');
    expect(missingIntent.statusCode).toBe(404);
    expect(missingIntent.body).toContain('<nav aria-label="Console">');

    const stranger = new ConsoleHttpClient(app, system);
    const bare = await stranger.request('GET', '/console/no-such-page');
    expect(bare.statusCode).toBe(404);
    expect(bare.body).toContain('data-testid="not-found"');
    expect(bare.body).not.toContain('<nav');
  });

  it('names an icon on every page that is served, and answers /favicon.ico', async () => {
    const browser = await signedIn('admin');
    for (const path of ['/console', '/console/sign-in', '/console/no-such-page', '/console/api-keys']) {
      const page = await browser.request('GET', path);
      const icon = /<link rel="icon" href="([^"]+)"/.exec(page.body)?.[1];
      expect(icon, path).toBe('/console/assets/favicon.svg');
    }
    const asset = await app.inject({ url: '/console/assets/favicon.svg' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toBe('image/svg+xml');
    const root = await app.inject({ url: '/favicon.ico' });
    expect(root.statusCode).toBe(200);
    expect(root.headers['content-type']).toBe('image/svg+xml');
    expect(root.body).toBe(asset.body);
  });
});

describe('pages with data', () => {
  let intentId: string;
  let browser: ConsoleHttpClient;
  beforeAll(async () => {
    // A released sandbox intent with evidence: its page has a timeline, evidence with its submission time, ledger
    // rows and a receipt; its payee becomes an operator with standing.
    const asAdmin = async (url: string, payload: Record<string, unknown>) => {
      const response = await app.inject({ method: 'POST', url, headers: bearer(tenant.adminKey), payload });
      expect(response.statusCode, response.body).toBeLessThan(300);
      return response.json();
    };
    ({ intent_id: intentId } = await asAdmin('/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 100, completion_preset: 'sandbox_permissive' }));
    await asAdmin(`/v1/sandbox/guardrails/${intentId}/evidence`, { payload: { status: 'completed' } });
    await asAdmin('/v1/compliance/audit-exports', { disclosure_tier: 'standard', retention_hours: 24, filter: { time_start: '2026-01-01T00:00:00Z', time_end: '2036-01-01T00:00:00Z' } });
    browser = await signedIn('admin');
  });

  /** RFC 3339 times outside the console's own form (`2026-11-25 04:10:00 UTC`); stored payloads (`<pre>`) and the
   * hints that show what to type in a time field aside. */
  const otherDateForms = (page: string) =>
    textOf(page.replace(/<pre[^]*?<\/pre>/g, '').replace(/<p class="hint"[^>]*>[^<]*<\/p>/g, '')).match(/\d{4}-\d\d-\d\dT\d\d:\d\d\S*/g) ?? [];

  it('prints every date of the intent page and the exports page one way', async () => {
    const intentPage = (await browser.request('GET', `/console/intents/${intentId}`)).body;
    expect(textOf(intentPage)).toContain('Submitted at');
    expect(textOf(intentPage)).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(otherDateForms(intentPage)).toEqual([]);
    const exportsPage = (await browser.request('GET', '/console/exports')).body;
    expect(textOf(exportsPage)).toContain('2026-01-01 00:00:00 UTC → 2036-01-01 00:00:00 UTC');
    expect(otherDateForms(exportsPage)).toEqual([]);
  });

  it('lists the tenant\'s operators on the standing page, each a link to its receipt', async () => {
    const standing = await browser.request('GET', '/console/standing');
    expect(standing.statusCode).toBe(200);
    expect(standing.body).toContain('data-testid="operator"');
    expect(standing.body).toContain('href="/console/standing?operator_did=did%3Asvc%3Asandbox%3Apayee"');
    const chosen = await browser.request('GET', '/console/standing?operator_did=did%3Asvc%3Asandbox%3Apayee');
    expect(chosen.body).toContain('data-testid="score"');
    expect(chosen.body).toContain('aria-current="true"');
  });
});

describe('webhooks and the review queue, by role', () => {
  it('shows an operator the deliveries with Redeliver but no endpoint control, and an agent neither page', async () => {
    // An endpoint on a loopback port nobody listens on (this file's, 7771): its first attempt fails and stays pending.
    const endpoint = (await app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: bearer(tenant.adminKey), payload: { url: 'http://127.0.0.1:7771/hooks', enabled_events: ['api_key.created'] } })).json();
    expect(endpoint.id).toMatch(/^we_/);
    await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: bearer(tenant.adminKey), payload: { role: 'agent', name: 'an event' } });
    const deliverer = new WebhookDeliverer({ database: system, secretBox: SecretBox.fromBase64(secretsKey), keyring: app.gatewayKeys, log: { info() {}, warn() {}, error() {} }, attemptTimeoutMs: 2_000 });
    expect(await deliverer.drain()).toBe(1);

    const operator = await signedIn('operator');
    const list = await operator.request('GET', '/console/webhooks');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`data-endpoint-id="${endpoint.id}"`);
    expect(list.body).not.toContain('action="/console/webhooks"');
    const detail = await operator.request('GET', `/console/webhooks/${endpoint.id}`);
    expect(detail.body).toContain('data-testid="delivery-status">pending</span>');
    expect(detail.body).not.toContain('data-testid="endpoint-controls"');
    const eventId = /data-event-id="(evt_[0-9a-f]{32})"/.exec(detail.body)![1]!;
    const redelivered = await operator.request('POST', `/console/webhooks/${endpoint.id}/events/${eventId}/redeliver`, { csrf_token: operator.csrfToken });
    expect(redelivered.statusCode).toBe(200);
    expect(textOf(redelivered.body)).toMatch(new RegExp(`Event\\s+${eventId}\\s+is queued again`));
    // The review queue is the operator's to resolve (empty here: the gate holds nothing in review_only).
    const queue = await operator.request('GET', '/console/review');
    expect(queue.statusCode).toBe(200);
    expect(queue.body).toContain('data-testid="empty"');

    const agent = await signedIn('agent');
    const overview = (await agent.request('GET', '/console')).body;
    expect(overview).not.toContain('href="/console/webhooks"');
    expect(overview).not.toContain('href="/console/review"');
    for (const path of ['/console/webhooks', '/console/review']) {
      const page = await agent.request('GET', path);
      expect(page.body, path).toContain('data-code="auth.role_insufficient"');
      expect(page.body, path).not.toContain(endpoint.id);
    }
    await app.inject({ method: 'DELETE', url: `/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(tenant.adminKey) });
  });
});
