// The console over HTTP as a browser reaches it (a cookie jar, forms, sign-in with the outbox code), for tests that
// need no rendering: cheaper than Chromium, and exact about statuses, headers and cookies.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Database } from '../../../src/infra/database.ts';
import { takeOutboxCode } from '../../../src/services/sign-in-service.ts';

/** A browser's cookie jar for one site, enough for HTTP tests of the console: forms, cookies, sign-in. */
export class ConsoleHttpClient {
  readonly cookies = new Map<string, string>();
  readonly setCookieLines: string[] = [];
  constructor(
    private readonly app: FastifyInstance,
    private readonly system: Database,
    readonly host = '127.0.0.1',
    readonly remoteAddress = '127.0.0.1',
  ) {}

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form ?? {})) for (const item of [value].flat()) body.append(name, item);
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await this.app.inject({
      method,
      url,
      remoteAddress: this.remoteAddress,
      headers: { host: this.host, ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      ...(form ? { payload: body.toString() } : {}),
    });
    for (const line of [response.headers['set-cookie'] ?? []].flat()) {
      this.setCookieLines.push(line);
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      if (/Max-Age=0\b/.test(line)) this.cookies.delete(name!);
      else this.cookies.set(name!, value!);
    }
    return response;
  }

  get csrfToken(): string {
    return this.cookies.get('svc_console_csrf')!;
  }

  /** Signs in as a person with the outbox code, through the console's own forms. */
  async signIn(email: string): Promise<string> {
    await this.request('GET', '/console/sign-in');
    const started = await this.request('POST', '/console/sign-in', { csrf_token: this.csrfToken, email });
    expect(started.statusCode).toBe(200);
    const challengeId = /name="challenge_id" value="(lch_[0-9a-f]{32})"/.exec(started.body)![1]!;
    const code = (await takeOutboxCode(this.system, email))!.code;
    const verified = await this.request('POST', '/console/sign-in/verify', { csrf_token: this.csrfToken, challenge_id: challengeId, email, code });
    expect(verified.statusCode, verified.body).toBe(303);
    expect(verified.headers.location).toBe('/console');
    return this.cookies.get('svc_console_session')!;
  }
}
