// What the console's browser tests share: the real app listening on a loopback port over a fresh database, Debian's
// Chromium driven by playwright-core, people made members of a tenant, sign-in through the page with the code read
// from the local outbox (as `svc auth outbox` reads it), and screenshots under test-results/console/.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Role } from '../../../src/credentials/roles.ts';
import { Database } from '../../../src/infra/database.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';
import { createUser } from '../../../src/services/user-service.ts';
import { buildTestApp, createTestTenant, LogCapture, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { projectRoot } from '../../helpers/server-process.ts';

/** Debian's chromium package; `.ci/run` installs it when missing. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const screenshotDirectory = path.join(projectRoot, 'test-results', 'console');

export interface ConsoleHarness {
  readonly database: TestDatabase;
  readonly system: Database;
  readonly app: FastifyInstance;
  readonly logs: LogCapture;
  readonly baseUrl: string;
  readonly browser: Browser;
  readonly tenant: TestTenant;
  /** A new member of the tenant (or of `tenantId`) with this role; returns the email. */
  member(role: Role, tenantId?: string): Promise<string>;
  /** A fresh browser context (its own cookies) with one page. */
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

let memberCounter = 0;

/** `secretsKey`: the app's SVC_SECRETS_KEY, for pages whose API seals secrets (webhook endpoints). */
export async function startConsoleHarness(options: { secretsKey?: string } = {}): Promise<ConsoleHarness> {
  const database = await createTestDatabase();
  const system = new Database({ ...database.connection, max: 2 });
  const logs = new LogCapture();
  // The default rate limits: a signed-in person's pages count against the person, not the loopback address every
  // browser here shares (docs/console.md "Rate limits").
  const app = await buildTestApp(database.connection, { logs, ...(options.secretsKey ? { appOptions: { secretsKey: options.secretsKey } } : {}) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const tenant = await createTestTenant(database.connection);
  fs.mkdirSync(screenshotDirectory, { recursive: true });
  const contexts: BrowserContext[] = [];
  return {
    database,
    system,
    app,
    logs,
    baseUrl,
    browser,
    tenant,
    async member(role, tenantId = tenant.tenantId) {
      const email = `person.${process.pid}.${++memberCounter}@example.com`;
      await createUser(system, { tenantId, email, role });
      return email;
    },
    async newPage() {
      const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 800 } });
      contexts.push(context);
      return { context, page: await context.newPage() };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await app.close();
      await system.close();
      await database.drop();
    },
  };
}

/** Signs in through the page, reading the code from the local outbox as an operator would. */
export async function signIn(harness: ConsoleHarness, page: Page, email: string): Promise<void> {
  await page.goto('/console');
  await expect.poll(() => new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Send me a code' }).click();
  await page.getByLabel('Code', { exact: true }).waitFor();
  const message = await takeOutboxCode(harness.system, email);
  expect(message, 'a code in the outbox').toBeDefined();
  await page.getByLabel('Code', { exact: true }).fill(message!.code);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('role').waitFor();
  expect(new URL(page.url()).pathname).toBe('/console');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshotDirectory, `${name}.png`), fullPage: true });
}

/** Whether the page scrolls sideways: a layout that breaks at this width does. */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  // A string, evaluated in the page, so that this file needs no DOM types.
  return (await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1')) as boolean;
}
