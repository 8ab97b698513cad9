// The console in a real browser (Debian's Chromium through playwright-core) against the real app listening on
// loopback over a fresh Postgres: sign-in with the outbox code, API keys, a sandbox intent walked to released with
// its stored evidence and trace, the agent runs reported for an intent, recent failures on the overview, settlement configuration errors, `svc login` approved in the page, an auditor's read-only view, CSRF refusal, and the
// layout at desktop and phone sizes. Each test saves screenshots under test-results/console/.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStates } from '../../../src/engine/lifecycle.ts';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../../src/rails/mpp/wire.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { bearer } from '../../helpers/app.ts';
import { party, signedCreateBody } from '../../helpers/intents.ts';
import { startTestIdentityProvider } from '../../helpers/oidc-provider.ts';
import { projectRoot } from '../../helpers/server-process.ts';
import { overflowsHorizontally, screenshot, signIn, startConsoleHarness, type ConsoleHarness } from './harness.ts';

let harness: ConsoleHarness;

/** A signed MPP intent of the harness's tenant whose payment the sandbox processor declines; answers its id. */
async function declinedMppPayment(): Promise<string> {
  const body = signedCreateBody({ tenantId: harness.tenant.tenantId, principal: party('did:principal:console'), payee: party('did:payee:console'), settlementRail: 'processor_mpp' });
  const post = (headers: Record<string, string> = {}) =>
    fetch(`${harness.baseUrl}/harbor/intents/${body.intent_id as string}/fund`, { method: 'POST', headers: { ...bearer(harness.tenant.adminKey), 'content-type': 'application/json', ...headers }, body: '{}' });
  const created = await fetch(`${harness.baseUrl}/harbor/intents`, { method: 'POST', headers: { ...bearer(harness.tenant.adminKey), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(created.status).toBe(201);
  const challenge = await post();
  const declined = await post({ 'x-svc-payment-authorization': sandboxMppAuthorization(challenge.headers.get('www-authenticate')!, sandboxMppTokens.decline) });
  expect(declined.status).toBe(402);
  return body.intent_id as string;
}

beforeAll(async () => {
  harness = await startConsoleHarness();
}, 90_000);

afterAll(async () => {
  await harness?.close();
});

describe('the console in a browser', { timeout: 60_000 }, () => {
  it('signs in with the outbox code, shows the overview, and fits 1280×800 and 390×844 with keyboard focus visible', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.getByTestId('role').textContent()).toBe('admin');
    await screenshot(page, 'overview-1280');
    expect(await overflowsHorizontally(page)).toBe(false);

    // The first Tab reaches the skip link, which is then on screen with a visible outline.
    await page.keyboard.press('Tab');
    // Evaluated in the page (a string, so that this file needs no DOM types).
    const focused = (await page.evaluate(`(() => {
      const element = document.activeElement;
      return { text: element.textContent, outline: getComputedStyle(element).outlineStyle, left: element.getBoundingClientRect().left };
    })()`)) as { text: string; outline: string; left: number };
    expect(focused).toMatchObject({ text: 'Skip to content', outline: 'solid' });
    expect(focused.left).toBeGreaterThanOrEqual(0);

    for (const path of ['/console', '/console/intents', '/console/api-keys', '/console/settlement', '/console/policies', '/console/usage', '/console/exports', '/console/registered-keys']) {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(path);
      expect(await overflowsHorizontally(page), `${path} at 390×844`).toBe(false);
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(path);
      expect(await overflowsHorizontally(page), `${path} at 1280×800`).toBe(false);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/console/intents');
    await screenshot(page, 'intents-390');
    // Every form control has a label.
    for (const path of ['/console/intents', '/console/api-keys', '/console/settlement', '/console/exports', '/console/registered-keys']) {
      await page.goto(path);
      const unlabelled = await page.evaluate(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter((control) => control.labels.length === 0).map((control) => control.name)`);
      expect(unlabelled, path).toEqual([]);
    }
    // The state filter and the overview's tiles name every state of the lifecycle table, in its order.
    await page.goto('/console/intents');
    expect(await page.evaluate(`[...document.querySelectorAll('select[name=state] option')].map((option) => option.value)`)).toEqual(['', ...lifecycleStates]);
    await page.goto('/console');
    for (const state of lifecycleStates) expect(await page.getByTestId(`count-${state}`).count(), state).toBe(1);
  });

  it('creates an API key (shown once), which works over HTTP until it is revoked in the page', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.goto('/console/api-keys');
    // Ticking a preset makes the key restricted, in sight, before anything is sent.
    const preset = page.locator('input[name="scopes"][value="mcp-readonly"]');
    expect(await page.getByLabel('Kind').inputValue()).toBe('standard');
    await preset.check();
    expect(await page.getByLabel('Kind').inputValue()).toBe('restricted');
    await preset.uncheck();
    await page.getByLabel('Kind').selectOption('standard');
    await page.getByLabel('Name').fill('browser test key');
    await page.getByLabel('Role').selectOption('operator');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('new-key-secret').inputValue();
    expect(secret).toMatch(/^svc_sk_sandbox_[0-9a-f]{32}_[0-9a-f]{64}$/);
    await screenshot(page, 'api-key-created');

    const principal = await fetch(`${harness.baseUrl}/v1/auth/principal`, { headers: { authorization: `Bearer ${secret}` } });
    expect(principal.status).toBe(200);
    expect((await principal.json()) as object).toMatchObject({ tenant_id: harness.tenant.tenantId, roles: ['operator'] });

    // Shown once: the list, read again, has the key but not its secret.
    await page.goto('/console/api-keys');
    expect(await page.content()).not.toContain(secret.slice(-64));
    const keyId = secret.split('_')[3]!;
    const row = page.locator(`tr[data-key-id="key_${keyId}"]`);
    await expect.poll(() => row.textContent()).toContain('browser test key');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByTestId('notice').waitFor();
    expect(await row.textContent()).toContain('revoked');
    await screenshot(page, 'api-key-revoked');

    const refused = await fetch(`${harness.baseUrl}/v1/auth/principal`, { headers: { authorization: `Bearer ${secret}` } });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('auth.credential_revoked');
  });

  it('walks a sandbox intent from bootstrap to released and shows its timeline, rule trace, ledger rows and verified receipt', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('operator'));
    await page.goto('/console/intents');
    await page.getByLabel('Amount in cents').fill('250');
    await page.getByRole('button', { name: 'Create and fund' }).click();
    await page.waitForURL(/\/console\/intents\/[0-9a-f-]{36}$/);
    const intentPath = new URL(page.url()).pathname;
    expect(await page.getByTestId('state').first().textContent()).toBe('funded');
    expect(await page.getByTestId('no-evidence').textContent()).toContain('No evidence');
    await page.getByLabel('Cost in cents').fill('90');
    await page.getByRole('button', { name: 'Submit evidence' }).click();
    await screenshot(page, 'intent-after-evidence');
    await page.getByTestId('trace').waitFor();
    expect(await page.getByTestId('state').first().textContent()).toBe('released');
    expect(await page.getByTestId('notice').textContent()).toContain('the release rule passed');

    // Opened again, the page reads the evidence as stored: its payload, outcome and the trace in words.
    await page.goto(intentPath);
    const evidence = page.getByTestId('evidence');
    expect(await evidence.getAttribute('data-outcome')).toBe('pass');
    expect(JSON.parse(await page.getByTestId('evidence-payload').innerText())).toEqual({ status: 'completed', cost_cents: 90 });
    const storedTrace = await evidence.getByTestId('trace').innerText();
    expect(storedTrace).toContain('✓');
    expect(storedTrace).not.toContain('✗');
    expect(storedTrace).toMatch(/status/);
    await screenshot(page, 'intent-stored-evidence');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(intentPath);
    expect(await overflowsHorizontally(page), 'the intent page at 390×844').toBe(false);
    await page.setViewportSize({ width: 1280, height: 800 });
    const timeline = await page.getByTestId('timeline').innerText();
    for (const step of ['Created', 'Funded', 'Evidence recorded', 'Released']) expect(timeline).toContain(step);
    expect(timeline).not.toContain('—');
    expect(await page.getByTestId('trace').innerText()).toContain('✓');
    expect(await page.locator('table').last().innerText()).toMatch(/release|settle/i);
    // The settlement receipt, verified by the API's verifier.
    await page.getByRole('button', { name: 'Verify receipt' }).click();
    await page.getByTestId('receipt-verdict').waitFor();
    expect(await page.getByTestId('receipt-verdict').getAttribute('data-valid')).toBe('true');
    await screenshot(page, 'intent-released');

    // The list filters by state.
    await page.goto('/console/intents?state=released');
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await page.goto('/console/intents?state=refunded');
    await page.getByTestId('empty').waitFor();

    // The operator it paid now has standing, which an admin reads (operators may not).
    expect(await page.getByRole('link', { name: 'Standing' }).count()).toBe(0);
    const admin = await harness.newPage();
    await signIn(harness, admin.page, await harness.member('admin'));
    await admin.page.goto(`/console/standing?operator_did=${encodeURIComponent('did:svc:sandbox:payee')}`);
    expect(Number(await admin.page.getByTestId('score').textContent())).toBeGreaterThan(0);
    expect(await admin.page.locator('tbody tr').first().innerText()).toMatch(/Last 7 days\s+1\s+0\s+0/);
    await screenshot(admin.page, 'standing');
  });

  it('shows on an intent\'s page the agent runs its middleware reported, each with its trace events in order', async () => {
    const api = (method: string, url: string, body: object) =>
      fetch(`${harness.baseUrl}${url}`, { method, headers: { ...bearer(harness.tenant.adminKey), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const boot = await (await api('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 300 })).json() as { intent_id: string };
    const runId = 'run-console-1';
    // As the public client's trace reporter sends them: the run registered, then each event alone.
    expect((await api('PUT', `/v1/agent-runs/${runId}`, { intent_id: boot.intent_id, operation: 'search.web', sandbox: true, allowed_tools: ['search.web'], completion_preset: 'cost_and_completion' })).status).toBe(200);
    const base = { runId, toolCallId: 'call-7', operation: 'search.web' };
    const events = [
      { type: 'tool_selected', ...base, toolName: 'search.web', recordedAt: '2026-11-25T04:00:00.000Z' },
      { type: 'spend_authorized', ...base, auditId: 'a1', decisionId: 'd1', amountCents: 120, recordedAt: '2026-11-25T04:00:01.000Z' },
      { type: 'tool_executed', ...base, durationMs: 42, recordedAt: '2026-11-25T04:00:02.000Z' },
      { type: 'spend_denied', ...base, message: 'over budget', code: 'capability.budget_exceeded', recordedAt: '2026-11-25T04:00:03.000Z' },
    ];
    for (const event of events) expect((await api('POST', `/v1/agent-runs/${runId}/trace-events`, { events: [event] })).status).toBe(200);

    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('auditor'));
    await page.goto(`/console/intents/${boot.intent_id}`);
    const run = page.getByTestId('agent-run');
    expect(await run.getAttribute('data-run-id')).toBe(runId);
    const rows = run.getByTestId('trace-event');
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-type')))).toEqual(['tool_selected', 'spend_authorized', 'tool_executed', 'spend_denied']);
    expect(await rows.nth(1).innerText()).toContain('1.20 USD reserved');
    expect(await rows.nth(3).innerText()).toContain('capability.budget_exceeded: over budget');
    await screenshot(page, 'intent-agent-runs');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/console/intents/${boot.intent_id}`);
    expect(await overflowsHorizontally(page), 'the intent page with agent runs at 390×844').toBe(false);

    // An intent no agent reported on says so.
    const quiet = await (await api('POST', '/v1/sandbox/guardrails/bootstrap', { operation: 'search.web', requested_spend_cents: 300 })).json() as { intent_id: string };
    await page.goto(`/console/intents/${quiet.intent_id}`);
    await page.getByTestId('no-agent-runs').waitFor();
  });

  it('shows an admin the API key a device asked for by name, and approves exactly that', async () => {
    const started = await (await fetch(`${harness.baseUrl}/v1/public/auth/device/start`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'svc-kit-cli', client_name: 'Svc CLI', requested_environment: 'sandbox', service_account_role: 'operator' }),
    })).json() as { user_code: string; device_code: string; verification_uri_complete: string };
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.goto(new URL(started.verification_uri_complete).pathname + new URL(started.verification_uri_complete).search);
    const asks = await page.getByTestId('device-asks-key').innerText();
    expect(asks).toContain('Svc CLI');
    expect(asks).toMatch(/role\s+operator/);
    expect(asks).toContain('sandbox');
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.getByTestId('device-status').textContent()).toBe('approved');
    await screenshot(page, 'device-key-approved');
    const token = await (await fetch(`${harness.baseUrl}/v1/public/auth/device/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.device_code, client_id: 'svc-kit-cli' }),
    })).json() as { access_token: string; service_account_role: string };
    expect(token.service_account_role).toBe('operator');
    expect(token.access_token).toMatch(/^svc_sk_sandbox_/);
  });

  it('lists recent failures on the overview: evidence that failed its rule, in words, and a declined payment', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('operator'));
    // Evidence that fails "completed, within cost", submitted from the page: the intent is refunded.
    await page.goto('/console/intents');
    await page.getByLabel('Amount in cents').fill('300');
    await page.getByRole('button', { name: 'Create and fund' }).click();
    await page.waitForURL(/\/console\/intents\/[0-9a-f-]{36}$/);
    const failedIntent = new URL(page.url()).pathname.split('/').at(-1)!;
    await page.getByLabel('Status reported by the tool').fill('failed');
    await page.getByRole('button', { name: 'Submit evidence' }).click();
    await page.getByTestId('evidence').waitFor();
    expect(await page.getByTestId('evidence').getAttribute('data-outcome')).toBe('fail');
    expect(await page.getByTestId('evidence').getByTestId('trace').innerText()).toContain('✗');
    await screenshot(page, 'intent-failed-evidence');

    // A payment the MPP rail declines, through the API as an agent's client would send it.
    const declinedIntent = await declinedMppPayment();

    await page.goto('/console');
    const failures = page.getByTestId('failure');
    await failures.first().waitFor();
    const evidenceRow = page.locator(`[data-testid="failure"][data-kind="evidence_failed"]:has(a[href="/console/intents/${failedIntent}"])`);
    expect(await evidenceRow.innerText()).toMatch(/Refunded: evidence failed the release rule[\s\S]*does not equal "completed"/);
    const declinedRow = page.locator(`[data-testid="failure"][data-kind="payment_declined"]:has(a[href="/console/intents/${declinedIntent}"])`);
    expect(await declinedRow.innerText()).toContain('The processor_mpp rail declined the payment');
    // Newest first: the decline came last.
    expect(await failures.first().getAttribute('data-kind')).toBe('payment_declined');
    await screenshot(page, 'overview-recent-failures');
    await declinedRow.getByRole('link').click();
    await page.waitForURL(`**/console/intents/${declinedIntent}`);
    expect(await page.getByTestId('state').first().textContent()).toBe('open');
  });

  it('shows a settlement validation error beside its field, then saves a valid configuration', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.goto('/console/settlement');
    await page.getByLabel('x402 (USDC on Base)').check();
    await page.getByLabel('x402 receiving address').fill('0x1234');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    const fieldError = page.getByTestId('field-error-x402_address');
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toMatch(/address/i);
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('settlement_config.x402_address_invalid');
    expect(await page.getByLabel('x402 receiving address').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'settlement-error');

    await page.getByLabel('x402 receiving address').fill(`0x${'ab'.repeat(20)}`);
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByLabel('x402 receiving address').inputValue()).toBe(`0x${'ab'.repeat(20)}`);
  });

  it('runs `svc login` from the CLI and approves its code in the page, reached by the link the CLI prints', async () => {
    const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-login-'));
    const cli = spawn(process.execPath, ['bin/svc.js', 'login', '--server', harness.baseUrl, '--client-name', 'svc CLI on build-7', '--json'], {
      cwd: projectRoot,
      env: { ...process.env, XDG_CONFIG_HOME: configDirectory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve));
    try {
      await expect.poll(() => /open (\S+)/.exec(stderr)?.[1], { timeout: 20_000 }).toBeDefined();
      const link = new URL(/open (\S+)/.exec(stderr)![1]!);
      expect(link.pathname).toBe('/console/device');

      // Not signed in yet: the link leads through sign-in and back to the code.
      const { page } = await harness.newPage();
      await page.goto(link.pathname + link.search);
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      const email = await harness.member('operator');
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      const message = await takeOutboxCode(harness.system, email);
      await page.getByLabel('Code', { exact: true }).fill(message!.code);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('device-login').waitFor();
      expect(await page.getByTestId('device-login').innerText()).toContain('svc CLI on build-7');
      await screenshot(page, 'device-approval');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByTestId('notice').waitFor();
      expect(await page.getByTestId('device-status').textContent()).toBe('approved');

      expect(await exited).toBe(0);
      const result = JSON.parse(stdout.trim()) as { tenant_id: string; roles: string[]; credentials_file: string };
      expect(result).toMatchObject({ tenant_id: harness.tenant.tenantId, roles: ['operator'] });
      const kept = JSON.parse(fs.readFileSync(result.credentials_file, 'utf8')) as { access_token: string };
      const principal = await fetch(`${harness.baseUrl}/v1/auth/principal`, { headers: { authorization: `Bearer ${kept.access_token}` } });
      expect(((await principal.json()) as { roles: string[] }).roles).toEqual(['operator']);
    } finally {
      if (cli.exitCode === null) cli.kill('SIGTERM');
      fs.rmSync(configDirectory, { recursive: true, force: true });
    }
  }, 60_000);

  it('signs in with the tenant\'s SSO provider, and refuses a callback this browser did not start', async () => {
    const idp = await startTestIdentityProvider({ emailInIdToken: true });
    try {
      const configured = await harness.app.inject({
        method: 'PUT',
        url: '/v1/admin/sso/config',
        headers: bearer(harness.tenant.adminKey),
        payload: { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, redirect_uri: idp.redirectUri, allowed_email_domains: ['acme.test'], default_role: 'operator' },
      });
      expect(configured.statusCode).toBe(200);
      idp.addAccount('sso-person', { email: 'sso.person@acme.test', email_verified: true });

      const { page } = await harness.newPage();
      // The provider's sign-in is played by the test helper: the address the console sends the browser to is read
      // here, and the provider's answer is brought back to the console's callback as the provider's redirect would.
      let authorizationUrl: string | undefined;
      page.on('request', (request) => {
        if (authorizationUrl === undefined && request.url().startsWith(`${idp.issuer}/auth`)) authorizationUrl = request.url();
      });
      await page.goto('/console/sign-in');
      await page.getByLabel('Tenant id').fill(harness.tenant.tenantId);
      await page.getByRole('button', { name: 'Continue with SSO' }).click();
      await expect.poll(() => authorizationUrl).toBeDefined();
      const redirect = await idp.authorize(authorizationUrl!, 'sso-person');

      // Another browser that did not start this sign-in cannot finish it with the same answer.
      const stranger = await harness.newPage();
      const refused = await stranger.page.goto(`/console/sso/callback?${redirect.toString()}`);
      expect(refused!.status()).toBe(400);
      expect(await stranger.page.getByTestId('error').getAttribute('data-code')).toBe('sso.state_invalid');

      await page.goto(`/console/sso/callback?${redirect.toString()}`);
      await page.getByTestId('continue').click();
      await page.getByTestId('role').waitFor();
      expect(await page.getByTestId('role').textContent()).toBe('operator');
      expect(await page.getByTestId('who').textContent()).toContain(harness.tenant.tenantId);
      await screenshot(page, 'sso-signed-in');
    } finally {
      await idp.close();
    }
  });

  it('creates, downloads and deletes an audit export; previews, tests, drafts, rolls out and rolls back a policy', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.goto('/console/exports');
    await page.getByTestId('empty').waitFor();
    await page.getByRole('button', { name: 'Create export' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('export-status').first().textContent()).toBe('ready');
    const downloading = page.waitForEvent('download');
    await page.getByRole('link', { name: /Download/ }).first().click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(/^audit-export-job_[0-9a-f]{32}\.zip$/);
    const bytes = fs.readFileSync((await download.path())!);
    expect(bytes.subarray(0, 2).toString()).toBe('PK');
    await screenshot(page, 'exports');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: /Delete export/ }).first().click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('export-status').first().textContent()).toBe('deleted');

    await page.goto('/console/policies/completion_v1');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByTestId('summary').waitFor();
    await page.getByLabel('Evidence to test against (JSON)').fill('{"status": "failed"}');
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByTestId('trace').waitFor();
    expect(await page.getByRole('heading', { name: /Test: fails/ }).count()).toBe(1);
    for (let draft = 0; draft < 2; draft++) {
      await page.getByRole('button', { name: 'Save as draft version' }).click();
      await page.getByTestId('notice').waitFor();
    }
    // Roll out version 1, then 2; then roll back to 1 through the confirmation page.
    for (const version of ['1', '2']) {
      await page.locator(`form[action$="/rollout"]:has(input[value="${version}"]) button`).click();
      await page.getByTestId('notice').waitFor();
    }
    await page.getByRole('link', { name: 'Roll back to this' }).first().click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Roll back completion_v1?');
    await page.getByLabel(/I understand/).check();
    await page.getByRole('button', { name: 'Roll back' }).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('notice').textContent()).toContain('Rolled back');
    await screenshot(page, 'policy-rolled-back');
  });

  it('shows an auditor no write control anywhere', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('auditor'));
    const navigation = await page.getByRole('navigation', { name: 'Console' }).innerText();
    expect(navigation).not.toContain('API keys');
    for (const path of ['/console', '/console/intents', '/console/settlement', '/console/registered-keys', '/console/policies', '/console/policies/completion_v1', '/console/api-keys']) {
      await page.goto(path);
      // The only forms that post are sign-out and a policy's preview and test, which change nothing.
      const posting = await page.locator('form[method="post"]:not(.sign-out):not([action$="/try"])').count();
      expect(posting, path).toBe(0);
      const enabledEditors = await page.locator('form.settlement input:not([disabled]):not([type=hidden])').count();
      expect(enabledEditors, path).toBe(0);
      for (const name of [/create/i, /revoke/i, /register/i, /save/i, /roll/i, /delete/i, /submit evidence/i]) {
        expect(await page.getByRole('button', { name }).count(), `${path}: ${name}`).toBe(0);
      }
    }
    await page.goto('/console/api-keys');
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('auth.role_insufficient');
    await page.goto('/console/settlement');
    await screenshot(page, 'auditor-settlement');
  });

  it('refuses a state-changing request without the CSRF token, in the browser as anywhere', async () => {
    const { page } = await harness.newPage();
    await signIn(harness, page, await harness.member('admin'));
    await page.goto('/console/api-keys');
    const status = (await page.evaluate(`fetch('/console/api-keys', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'role=admin&name=forged' })
      .then(async (response) => ({ status: response.status, text: await response.text() }))`)) as { status: number; text: string };
    expect(status.status).toBe(403);
    expect(status.text).toContain('console.csrf_invalid');
    await page.goto('/console/api-keys');
    expect(await page.content()).not.toContain('forged');
  });
});
