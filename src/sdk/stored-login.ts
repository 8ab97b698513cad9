// The credential `svc login` keeps (docs/sign-in.md#device-login): where its file lives, what it holds, and when a
// client uses it. A client given no API key (no option, no SVC_API_KEY) uses the stored login, with the server it was
// obtained from, and never sends it to another server. The Python SDK reads the same file by the same rules.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DeviceLoginCredential } from './device-login.ts';
import { SvcConfigurationError } from './errors.ts';

/** What the file holds: the server and the credential, with what the credential is (never printed). */
export interface StoredLogin {
  readonly file: string;
  /** The gateway base URL the credential was obtained from (and may only be sent to). */
  readonly server: string;
  readonly credentialType: 'session' | 'api_key';
  readonly accessToken: string;
  readonly tenantId: string;
  /** A session's end; null for an API key, which lasts until revoked. */
  readonly expiresAt: Date | null;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** `$XDG_CONFIG_HOME/svc/credentials.json`, else `%APPDATA%\svc\credentials.json` on Windows, else
 * `$HOME/.config/svc/credentials.json`. An environment given in place of the process's is read alone (no home
 * folder of the user's own is looked up), so a client given one sees no stored login that the caller did not point it
 * to; undefined when it names no folder. */
export function storedLoginPath(environment: Environment = process.env): string | undefined {
  const xdg = environment['XDG_CONFIG_HOME']?.trim();
  const appData = environment['APPDATA']?.trim();
  const home = environment['HOME']?.trim() || (environment === process.env ? os.homedir() : undefined);
  const configDir = xdg ? xdg : process.platform === 'win32' && appData ? appData : home ? path.join(home, '.config') : undefined;
  return configDir === undefined ? undefined : path.join(configDir, 'svc', 'credentials.json');
}

/** The file's content for a credential device login answered (what `svc login` writes). */
export function storedLoginContent(server: string, credential: DeviceLoginCredential): Record<string, unknown> {
  return { server, credential_type: credential.kind, access_token: credential.accessToken, token_type: credential.tokenType, ...storedLoginDescription(credential) };
}

/** What the credential is, without its secret: kept beside it in the file, and printed by `svc login`. */
export function storedLoginDescription(credential: DeviceLoginCredential): Record<string, unknown> {
  return credential.kind === 'session'
    ? { tenant_id: credential.tenantId, user_id: credential.userId, roles: credential.roles, expires_at: credential.expiresAt.toISOString() }
    : { tenant_id: credential.tenantId, key_id: credential.keyId, roles: credential.roles, expires_at: null };
}

/** The stored login, or undefined when there is no file. A file that is there but unreadable or malformed is an
 * error that names it, rather than a silent fall back to no credential. */
export function readStoredLogin(environment: Environment = process.env): StoredLogin | undefined {
  const file = storedLoginPath(environment);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SvcConfigurationError(`The stored login ${file} cannot be read: ${(error as Error).message}`);
  }
  const malformed = () => new SvcConfigurationError(`The stored login ${file} is not one \`svc login\` wrote; run \`svc login\` again.`);
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw malformed();
  }
  const { server, credential_type: credentialType, access_token: accessToken, tenant_id: tenantId, expires_at: expiresAt } = content ?? {};
  if (typeof server !== 'string' || typeof accessToken !== 'string' || accessToken === '' || typeof tenantId !== 'string') throw malformed();
  if (credentialType !== 'session' && credentialType !== 'api_key') throw malformed();
  const expiry = typeof expiresAt === 'string' ? new Date(expiresAt) : null;
  if (expiry !== null && Number.isNaN(expiry.getTime())) throw malformed();
  return { file, server, credentialType, accessToken, tenantId, expiresAt: expiry };
}

/** Where a client's credential came from: `apiKey`, `SVC_API_KEY`, or the stored login. */
export type CredentialSource = 'option' | 'environment' | 'stored_login';

export interface ResolvedCredential {
  readonly apiKey: string;
  readonly gatewayBaseUrl: string;
  readonly source: CredentialSource;
}

/**
 * The credential and the base URL a client uses: the `apiKey` option, else `SVC_API_KEY`, else the stored login. The
 * stored login comes with its server: used when no base URL is given, and refused when the given one is another
 * (its token is never sent anywhere but where it was obtained). `resolveBaseUrl` applies the URL rules to a chosen
 * URL (undefined: the environment, then the default).
 */
export function resolveCredential(
  options: { apiKey?: string | undefined; gatewayBaseUrl?: string | undefined; env?: Environment | undefined; now?: (() => number) | undefined },
  resolveBaseUrl: (gatewayBaseUrl: string | undefined) => string,
): ResolvedCredential {
  const environment = options.env ?? process.env;
  const given = options.apiKey ?? environment['SVC_API_KEY'];
  if (given !== undefined && given.trim() !== '') {
    return { apiKey: checkedKey(given), gatewayBaseUrl: resolveBaseUrl(options.gatewayBaseUrl), source: options.apiKey !== undefined ? 'option' : 'environment' };
  }
  const stored = readStoredLogin(environment);
  if (stored === undefined) throw new SvcConfigurationError('apiKey is required (or set SVC_API_KEY, or sign in with `svc login`).');
  const storedServer = resolveBaseUrl(stored.server);
  const explicitUrl = [options.gatewayBaseUrl, environment['SVC_GATEWAY_URL'], environment['SVC_GATEWAY_BASE_URL']].some((value) => value !== undefined && value.trim() !== '');
  const gatewayBaseUrl = explicitUrl ? resolveBaseUrl(options.gatewayBaseUrl) : storedServer;
  if (gatewayBaseUrl !== storedServer) {
    throw new SvcConfigurationError(`No API key given, and the stored login (${stored.file}) is for ${storedServer}, not ${gatewayBaseUrl}: pass apiKey, set SVC_API_KEY, or run \`svc login --server ${gatewayBaseUrl}\`.`);
  }
  if (stored.expiresAt !== null && stored.expiresAt.getTime() <= (options.now ?? Date.now)()) {
    throw new SvcConfigurationError(`The stored login (${stored.file}) expired at ${stored.expiresAt.toISOString()}: run \`svc login\` again, or pass apiKey.`);
  }
  return { apiKey: checkedKey(stored.accessToken), gatewayBaseUrl, source: 'stored_login' };
}

function checkedKey(apiKey: string): string {
  if (/\s/.test(apiKey.trim())) throw new SvcConfigurationError('apiKey must not contain whitespace.');
  return apiKey.trim();
}
