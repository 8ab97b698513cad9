// Gateway base URL resolution: option > SVC_GATEWAY_URL > SVC_GATEWAY_BASE_URL > default (spec rule 5); https
// except for loopback; trailing slash stripped; `/v1` never appended to what the caller gave.
import { describe, expect, it } from 'vitest';
import { gatewayBaseUrlDefault, InsecureGatewayUrlError, resolveGatewayBaseUrl, SvcClient, SvcConfigurationError } from '../../src/sdk/index.ts';
import { principalAnswer } from './support.ts';

const resolve = (gatewayBaseUrl: string | undefined, env: Record<string, string | undefined> = {}) => resolveGatewayBaseUrl({ gatewayBaseUrl, env });

describe('precedence', () => {
  const both = { SVC_GATEWAY_URL: 'https://from-url.example.com', SVC_GATEWAY_BASE_URL: 'https://from-base-url.example.com' };

  it('takes the option first, then SVC_GATEWAY_URL, then SVC_GATEWAY_BASE_URL, then the default', () => {
    expect(resolve('https://option.example.com', both)).toBe('https://option.example.com');
    expect(resolve(undefined, both)).toBe('https://from-url.example.com');
    expect(resolve(undefined, { SVC_GATEWAY_BASE_URL: 'https://from-base-url.example.com' })).toBe('https://from-base-url.example.com');
    expect(resolve(undefined, {})).toBe(gatewayBaseUrlDefault);
    expect(gatewayBaseUrlDefault).toBe('http://127.0.0.1:8080');
  });

  it('treats blank values as unset, so they do not hide the next source', () => {
    expect(resolve('  ', both)).toBe('https://from-url.example.com');
    expect(resolve('', { SVC_GATEWAY_URL: '', SVC_GATEWAY_BASE_URL: 'https://from-base-url.example.com' })).toBe('https://from-base-url.example.com');
    expect(resolve(undefined, { SVC_GATEWAY_URL: ' ', SVC_GATEWAY_BASE_URL: '\t' })).toBe(gatewayBaseUrlDefault);
  });

  it('reads process.env when no env is given', () => {
    const saved = { url: process.env['SVC_GATEWAY_URL'], base: process.env['SVC_GATEWAY_BASE_URL'] };
    try {
      process.env['SVC_GATEWAY_URL'] = 'https://process-env.example.com/';
      process.env['SVC_GATEWAY_BASE_URL'] = 'https://ignored.example.com';
      expect(resolveGatewayBaseUrl()).toBe('https://process-env.example.com');
    } finally {
      for (const [name, value] of [['SVC_GATEWAY_URL', saved.url], ['SVC_GATEWAY_BASE_URL', saved.base]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('shape', () => {
  it('strips trailing slashes and keeps a path prefix as given, without adding or removing /v1', () => {
    expect(resolve('https://gw.example.com/')).toBe('https://gw.example.com');
    expect(resolve('https://gw.example.com///')).toBe('https://gw.example.com');
    expect(resolve('https://gw.example.com/svc/')).toBe('https://gw.example.com/svc');
    expect(resolve('https://gw.example.com/v1')).toBe('https://gw.example.com/v1');
    expect(resolve('https://GW.Example.com:443')).toBe('https://gw.example.com');
  });

  it('never appends /v1: routes carry their own prefix', async () => {
    const urls: string[] = [];
    const fetchRecorder = async (input: string) => {
      urls.push(input);
      return new Response(JSON.stringify(principalAnswer), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = await SvcClient.open({ apiKey: 'svc_sk_sandbox_x', gatewayBaseUrl: 'https://gw.example.com/', fetch: fetchRecorder });
    expect(client.gatewayBaseUrl).toBe('https://gw.example.com');
    await client.ledger.events().catch(() => undefined);
    expect(urls).toEqual(['https://gw.example.com/v1/auth/principal', 'https://gw.example.com/harbor/ledger/v1/events']);
  });

  it('requires https except for loopback hosts', () => {
    for (const insecure of ['http://gw.example.com', 'http://10.0.0.7:8080', 'http://192.168.1.2', 'http://127.example.com', 'http://[2001:db8::1]']) {
      expect(() => resolve(insecure), insecure).toThrow(InsecureGatewayUrlError);
    }
    expect(() => resolve(undefined, { SVC_GATEWAY_URL: 'http://gw.example.com' })).toThrow(InsecureGatewayUrlError);
    for (const loopback of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://127.8.9.1', 'http://[::1]:8080', 'http://api.localhost']) {
      expect(resolve(loopback), loopback).toMatch(/^http:\/\//);
    }
  });

  it('refuses what is not an absolute http(s) URL, credentials, queries and fragments', () => {
    for (const wrong of ['gw.example.com', 'ftp://gw.example.com', 'https://user:pass@gw.example.com', 'https://gw.example.com/?a=1', 'https://gw.example.com/#x']) {
      expect(() => resolve(wrong), wrong).toThrow(SvcConfigurationError);
    }
  });

  it('fails before any request when the URL is refused', async () => {
    let called = false;
    const open = SvcClient.open({ apiKey: 'k', gatewayBaseUrl: 'http://gw.example.com', fetch: async () => ((called = true), new Response('{}')) });
    await expect(open).rejects.toThrow(InsecureGatewayUrlError);
    expect(called).toBe(false);
  });
});
