// `deviceLogin()`: signs a person in from a device with no browser of its own (a CLI, a script on a server), by
// RFC 8628 device login (docs/sign-in.md#device-login). It asks the gateway for a user code, hands the code and the
// page to type it in to `onPrompt`, polls at the interval the gateway sets (slowing down when told), and returns
// the credential once the person approved: their session token, or in a sandbox tenant an API key an admin granted.
// Client-side only, like the rest of the SDK.
import { engineHttpErrorFor, SvcConnectionError, SvcError, SvcResponseError } from './errors.ts';
import { sdkUserAgent } from './defaults.ts';
import { parseRetryAfterMs } from './retry.ts';
import { resolveGatewayBaseUrl } from './url.ts';

export const deviceCodeGrantType = 'urn:ietf:params:oauth:grant-type:device_code';
/** Per-request timeout of the flow's calls: each is one small database transaction on the server. */
const deviceRequestTimeoutMs = 30_000;
/** RFC 8628 section 3.5: slow_down adds 5 s to the interval. */
const slowDownStepMs = 5_000;
/** A server asking for less than this between polls is not obeyed: a floor against a hot loop. */
const pollIntervalMinMs = 1_000;

/** What the person must be shown: where to go and what to type. */
export interface DeviceLoginPrompt {
  /** XXXX-XXXX. */
  readonly userCode: string;
  /** The console page where a signed-in person types the code. */
  readonly verificationUri: string;
  /** The same page with the code filled in (for a link or a QR code). */
  readonly verificationUriComplete: string;
  readonly expiresInSeconds: number;
}

export interface DeviceLoginOptions {
  /** The gateway; default SVC_GATEWAY_URL, then the self-hosted default. https unless the host is loopback. */
  readonly baseUrl?: string | undefined;
  /** Shows the prompt to the person (print it, open a browser); polling starts when it returns. */
  readonly onPrompt: (prompt: DeviceLoginPrompt) => void | Promise<void>;
  /** What the device calls itself, shown to the approver (1–64 printable characters). */
  readonly clientName?: string | undefined;
  /** Stops waiting: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** Injectable for tests. */
  readonly fetch?: ((input: string, init: RequestInit) => Promise<Response>) | undefined;
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  readonly now?: (() => number) | undefined;
}

/** The session the person granted the device: the same token as a one-time-code sign-in's. */
export interface DeviceLoginSession {
  readonly kind: 'session';
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly expiresInSeconds: number;
  /** When the token stops working, by this machine's clock. */
  readonly expiresAt: Date;
  readonly tenantId: string;
  readonly userId: string;
  readonly roles: readonly string[];
}

/** An API key an admin of a sandbox tenant granted the device instead (`accessToken` is the key); it does not expire. */
export interface DeviceLoginApiKey {
  readonly kind: 'api_key';
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly tenantId: string;
  readonly keyId: string;
  readonly roles: readonly string[];
}

export type DeviceLoginCredential = DeviceLoginSession | DeviceLoginApiKey;

/** The person denied the device (or lost the membership that would have been granted). */
export class DeviceLoginDeniedError extends SvcError {}
/** Nobody approved the code within its life; start again. */
export class DeviceLoginExpiredError extends SvcError {}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
  readonly json: Record<string, unknown> | undefined;
}

export async function deviceLogin(options: DeviceLoginOptions): Promise<DeviceLoginCredential> {
  const baseUrl = resolveGatewayBaseUrl({ gatewayBaseUrl: options.baseUrl });
  const fetchFunction = options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
  const sleep = options.sleep ?? ((ms: number) => abortableSleep(ms, options.signal));
  const now = options.now ?? Date.now;
  const post = (path: string, body: Record<string, unknown>) => postJson(fetchFunction, `${baseUrl}${path}`, body, options.signal);

  const started = await post('/v1/public/auth/device/code', options.clientName === undefined ? {} : { client_name: options.clientName });
  if (started.status !== 200) throw engineHttpErrorFor(started.status, `${baseUrl}/v1/public/auth/device/code`, started.bodyText, started.headers.get('x-request-id'));
  const codes = readCodes(started, `${baseUrl}/v1/public/auth/device/code`);
  await options.onPrompt(codes.prompt);

  const deadlineMs = now() + codes.prompt.expiresInSeconds * 1000;
  let intervalMs = codes.intervalMs;
  for (;;) {
    await sleep(intervalMs);
    if (now() >= deadlineMs) throw new DeviceLoginExpiredError('Nobody approved the device login before its code expired; start again.');
    let answer: Answer;
    try {
      answer = await post('/v1/public/auth/device/token', { grant_type: deviceCodeGrantType, device_code: codes.deviceCode });
    } catch (error) {
      // A lost poll is retried at the next interval (RFC 8628 section 3.5 lets a client keep polling); the code's
      // life bounds how long.
      if (error instanceof SvcConnectionError) continue;
      throw error;
    }
    if (answer.status === 200) return readCredential(answer, `${baseUrl}/v1/public/auth/device/token`, now());
    const oauthError = typeof answer.json?.['error'] === 'string' ? answer.json['error'] : undefined;
    if (answer.status === 400 && oauthError === 'authorization_pending') continue;
    if (answer.status === 400 && oauthError === 'slow_down') {
      const told = typeof answer.json?.['interval'] === 'number' ? answer.json['interval'] * 1000 : 0;
      intervalMs = Math.max(intervalMs + slowDownStepMs, told);
      continue;
    }
    if (answer.status === 400 && oauthError === 'access_denied') throw new DeviceLoginDeniedError('The device login was denied.');
    if (answer.status === 400 && oauthError === 'expired_token') throw new DeviceLoginExpiredError('The device code expired before it was approved; start again.');
    if (answer.status === 429 || answer.status === 503) {
      // Rate limited or briefly unavailable: wait what the server asks (at least the interval) and poll again.
      intervalMs = Math.max(intervalMs, parseRetryAfterMs(answer.headers.get('retry-after'), now()) ?? 0);
      continue;
    }
    throw engineHttpErrorFor(answer.status, `${baseUrl}/v1/public/auth/device/token`, answer.bodyText, answer.headers.get('x-request-id'));
  }
}

async function postJson(
  fetchFunction: (input: string, init: RequestInit) => Promise<Response>,
  url: string,
  body: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  const timeout = AbortSignal.timeout(deviceRequestTimeoutMs);
  let response: Response;
  let bodyText: string;
  try {
    response = await fetchFunction(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': sdkUserAgent },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    bodyText = await response.text();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new SvcConnectionError(url, timeout.aborted, error);
  }
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(bodyText);
    json = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, bodyText, json };
}

function readCodes(answer: Answer, url: string): { deviceCode: string; intervalMs: number; prompt: DeviceLoginPrompt } {
  const body = answer.json ?? {};
  const { device_code: deviceCode, user_code: userCode, verification_uri: uri, verification_uri_complete: complete, expires_in: expiresIn, interval } = body;
  if (typeof deviceCode !== 'string' || typeof userCode !== 'string' || typeof uri !== 'string' || typeof expiresIn !== 'number') {
    throw new SvcResponseError('The device code answer lacks device_code, user_code, verification_uri or expires_in.', url, answer.status, answer.bodyText);
  }
  return {
    deviceCode,
    // RFC 8628 section 3.2: interval is optional, 5 seconds when absent.
    intervalMs: Math.max(pollIntervalMinMs, (typeof interval === 'number' ? interval : 5) * 1000),
    prompt: { userCode, verificationUri: uri, verificationUriComplete: typeof complete === 'string' ? complete : uri, expiresInSeconds: expiresIn },
  };
}

function readCredential(answer: Answer, url: string, nowMs: number): DeviceLoginCredential {
  const body = answer.json ?? {};
  const { access_token: accessToken, expires_in: expiresIn, tenant_id: tenantId, user_id: userId, key_id: keyId, roles } = body;
  const lacking = (fields: string) => new SvcResponseError(`The token answer lacks ${fields}.`, url, answer.status, answer.bodyText);
  if (typeof accessToken !== 'string' || typeof tenantId !== 'string' || !Array.isArray(roles)) throw lacking('access_token, tenant_id or roles');
  const roleNames = roles.filter((role): role is string => typeof role === 'string');
  if (body['credential_type'] === 'api_key') {
    if (typeof keyId !== 'string') throw lacking('key_id');
    return { kind: 'api_key', accessToken, tokenType: 'Bearer', tenantId, keyId, roles: roleNames };
  }
  if (typeof expiresIn !== 'number' || typeof userId !== 'string') throw lacking('expires_in or user_id');
  return {
    kind: 'session',
    accessToken,
    tokenType: 'Bearer',
    expiresInSeconds: expiresIn,
    expiresAt: new Date(nowMs + expiresIn * 1000),
    tenantId,
    userId,
    roles: roleNames,
  };
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
