// The gateway base URL (rules 3 and 5 of docs/wire-compatibility.md#rules-every-surface-follows): the explicit option,
// else SVC_GATEWAY_URL, else SVC_GATEWAY_BASE_URL, else the self-hosted default. https unless the host is loopback;
// never a `/v1` appended.
import { isIP } from 'node:net';
import { gatewayBaseUrlDefault } from './defaults.ts';
import { InsecureGatewayUrlError, SvcConfigurationError } from './errors.ts';

export interface GatewayBaseUrlSources {
  /** The `gatewayBaseUrl` client option; wins over the environment. */
  readonly gatewayBaseUrl?: string | undefined;
  /** Defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Blank values count as unset, so an exported-but-empty variable does not hide the next source. */
const present = (value: string | undefined): string | undefined => (value !== undefined && value.trim() !== '' ? value.trim() : undefined);

/** The base URL to call, without a trailing slash. Throws `InsecureGatewayUrlError` for http on a non-loopback host
 * and `SvcConfigurationError` for anything that is not an absolute http(s) URL without credentials, query or
 * fragment. The path is kept as given (a gateway behind a path prefix works); `/v1` is never added. */
export function resolveGatewayBaseUrl(sources: GatewayBaseUrlSources = {}): string {
  const env = sources.env ?? process.env;
  const chosen = present(sources.gatewayBaseUrl) ?? present(env['SVC_GATEWAY_URL']) ?? present(env['SVC_GATEWAY_BASE_URL']) ?? gatewayBaseUrlDefault;
  let url: URL;
  try {
    url = new URL(chosen);
  } catch {
    throw new SvcConfigurationError(`The gateway base URL is not an absolute URL: ${chosen}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SvcConfigurationError(`The gateway base URL must be http(s): ${chosen}`);
  }
  if (url.username !== '' || url.password !== '') throw new SvcConfigurationError('The gateway base URL must not carry credentials; pass apiKey.');
  if (url.search !== '' || url.hash !== '') throw new SvcConfigurationError(`The gateway base URL must not have a query or fragment: ${chosen}`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw new InsecureGatewayUrlError(chosen);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8 and ::1 (also IPv4-mapped). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^::ffff:7f[0-9a-f]{2}:/.test(host);
  return false;
}
