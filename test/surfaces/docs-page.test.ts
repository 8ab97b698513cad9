// GET /docs: the reference page renders in headless Chromium from the process alone (no CDN: every request the page
// makes goes to this server), with the route list visible; a screenshot is kept under test-results/api/.
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from './console/harness.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot } from '../helpers/server-process.ts';

const screenshotDirectory = path.join(projectRoot, 'test-results', 'api');

let database: TestDatabase;
let app: FastifyInstance;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  fs.mkdirSync(screenshotDirectory, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await database?.drop();
});

describe('GET /docs', () => {
  it('redirects to the page, which is public HTML loading its script from this server', async () => {
    const redirect = await app.inject({ method: 'GET', url: '/docs' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/docs/');
    const page = await app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('src="js/scalar.js"');
    expect(page.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"']*\.js/);
    const script = await app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('javascript');
    // The page reads the one document at /openapi.json; the package's own copies under /docs/ are not served.
    for (const copy of ['/docs/openapi.json', '/docs/openapi.yaml']) expect((await app.inject({ method: 'GET', url: copy })).statusCode).toBe(404);
  });

  it('renders in Chromium with the route list visible, asking nothing of any other host', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const foreign: string[] = [];
    // Offline but for this server: a CDN the page needed would show as a refused request, and the page would not render.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(baseUrl)) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      // The sidebar lists operations by their summaries, grouped under the surface tags.
      await page.getByText('Create an intent from a principal-signed envelope').first().waitFor({ state: 'visible', timeout: 30_000 });
      await expect(page.getByText('harbor', { exact: false }).first().isVisible()).resolves.toBe(true);
      await page.screenshot({ path: path.join(screenshotDirectory, 'docs-page.png'), fullPage: false });
      expect(errors).toEqual([]);
      expect(foreign).toEqual([]);
    } catch (error) {
      await page.screenshot({ path: path.join(screenshotDirectory, 'docs-page-failed.png') });
      throw new Error(`${String(error)}\npage errors: ${errors.join(' | ')}\nforeign requests: ${foreign.join(' ')}`);
    } finally {
      await context.close();
    }
  }, 90_000);
});
