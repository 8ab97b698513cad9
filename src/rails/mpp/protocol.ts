// The MPP protocol (`processor_mpp`) as sandbox and live share it: the HTTP `Payment` authentication scheme, method
// `stripe`, intent `charge`. A 402 carries `WWW-Authenticate: Payment id=…, realm=…, method=…, intent=…, request=…,
// expires=…`; the retry carries `x-svc-payment-authorization: Payment <base64url JSON {challenge, payload}>`, or the
// same after the Bearer key in `Authorization`. This file formats challenges and reads credentials; ./sandbox.ts
// settles by the token (docs/rails.md), ./live.ts through the tenant's processor.
import { readAuthorizationHeader } from '../../credentials/authorization-header.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { paymentCredentialHeaderBytesMax } from '../../limits.ts';
import { canonicalJson } from '../../signing/canonical-json.ts';
import { settingsOf, textSetting } from '../settings.ts';
import type { FundingContext, IssuedChallenge, PresentedCredential } from '../types.ts';
import { decodeBase64Url, isPlainObject, parseJsonBytes, readOneHeader, sha256 } from '../wire.ts';
import { mppProfileIdField } from './settings.ts';
import { mppChallengeHeaderName, mppCredentialHeaderName, mppRailName } from './wire.ts';

/** The auth-params of one `Payment` challenge, in the order they are written. */
export type MppChallengeParams = {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: string;
  expires: string;
};

/** The `charge` request: amount in the currency's minor units (cents for usd), as a string. */
export function mppChargeRequest(context: Pick<FundingContext, 'amountCents' | 'config'>): Record<string, string> {
  const request: Record<string, string> = { amount: String(context.amountCents), currency: 'usd' };
  const profileId = textSetting(settingsOf(context.config, mppRailName), mppProfileIdField);
  if (profileId) request['recipient'] = profileId;
  return request;
}

/** base64url without padding of the JCS (RFC 8785) form of the request JSON. */
export function encodeMppRequest(request: Record<string, string>): string {
  return Buffer.from(canonicalJson(request), 'utf8').toString('base64url');
}

/** RFC 3339 in UTC, whole seconds. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A quoted-string (RFC 9110 §5.6.4). Our values never hold control characters; one that did would let a value
 * break out of the header, so it is a programmer error. */
function quoted(value: string): string {
  if (/[\x00-\x1f\x7f]/.test(value)) throw new Error('an auth-param value may not contain control characters');
  return `"${value.replace(/[\\"]/g, (character) => `\\${character}`)}"`;
}

export function formatMppChallenge(params: MppChallengeParams): string {
  const { id, realm, method, intent, request, expires } = params;
  const pairs = Object.entries({ id, realm, method, intent, request, expires }).map(([name, value]) => `${name}=${quoted(value)}`);
  return `Payment ${pairs.join(', ')}`;
}

export interface StoredMppChallenge {
  rail: typeof mppRailName;
  intent_id: string;
  challenge: MppChallengeParams;
  expires_at_ms: number;
}

/** A parsed credential. The payload carries the sandbox's `token`, or the processor's shared payment token `spt`
 * that live clients send (the `stripe` method's payload, src/rails/mpp-live.ts); each adapter judges its own. */
export interface MppCredential {
  challenge: Record<string, unknown>;
  /** The sandbox's `token` or the processor's `spt`, with whatever else the client's method puts there (live sends it on). */
  payload: Record<string, unknown>;
  source?: string;
}

function parseCredential(json: unknown): MppCredential | string {
  if (!isPlainObject(json)) return 'the credential is not a JSON object';
  const { challenge, payload, source } = json;
  if (!isPlainObject(challenge)) return 'the credential has no challenge object';
  if (typeof challenge['id'] !== 'string' || challenge['id'].length === 0) return 'challenge.id is missing';
  if (!isPlainObject(payload)) return 'the credential has no payload object';
  const token = payload['token'] ?? payload['spt'];
  if (typeof token !== 'string' || token.length === 0) return 'payload.token (or payload.spt) is missing';
  if (source !== undefined && typeof source !== 'string') return 'source must be a string';
  return { ...json, challenge, payload, ...(source === undefined ? {} : { source }) };
}

/** The auth-params a `Payment` challenge may carry or not (paymentauth.org); `id`, `realm`, `method`, `intent` and
 * `request` are required, so an echo must always carry them. */
const optionalChallengeParams = ['expires', 'description', 'digest', 'opaque'] as const;

/** The echoed challenge with each optional param it leaves out taken from the issued challenge. */
export function withIssuedOptionalParams(issued: Record<string, unknown>, echoed: Record<string, unknown>): Record<string, unknown> {
  const completed = { ...echoed };
  for (const name of optionalChallengeParams) {
    if (!Object.hasOwn(echoed, name) && Object.hasOwn(issued, name)) completed[name] = issued[name];
  }
  return completed;
}

/** Names of the fields where an echoed challenge differs from the issued one: a missing, added or changed field. */
export function differingFields(issued: Record<string, unknown>, echoed: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(issued), ...Object.keys(echoed)]);
  return [...names].filter((name) => issued[name] !== echoed[name]).sort();
}

/**
 * The MPP credential a fund request presents, read without the intent (see readX402Credential): in
 * `x-svc-payment-authorization`, or after the Bearer key in `Authorization` (`Bearer …, Payment …`, the public
 * client's direct engine client). Both are judged alike. A request carrying it in both must carry the same
 * credential: two different ones are refused (`funding.credential_conflict`) rather than one picked.
 */
export function readMppCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
  const header = readOneHeader(headers, mppCredentialHeaderName);
  const authorization = headers['authorization'];
  // An Authorization header the authenticator cannot read never reaches a route; here it simply carries no credential.
  const inAuthorization = typeof authorization === 'string' ? readAuthorizationHeader(authorization)?.payment : undefined;
  if (header.kind === 'malformed') return header;
  if (inAuthorization !== undefined && Buffer.byteLength(inAuthorization, 'utf8') > paymentCredentialHeaderBytesMax) {
    return { kind: 'malformed', reason: `the Payment credential in Authorization is longer than ${paymentCredentialHeaderBytesMax} bytes` };
  }
  if (header.kind === 'absent') return inAuthorization === undefined ? header : parseMppCredential(inAuthorization, 'Authorization');
  if (inAuthorization !== undefined && credentialText(inAuthorization) !== credentialText(header.value)) {
    throw new ServiceError('funding.credential_conflict');
  }
  return parseMppCredential(header.value, mppCredentialHeaderName);
}

/** The credential without its optional, case-insensitive scheme name. */
function credentialText(value: string): string {
  return value.replace(/^payment +/i, '');
}

function parseMppCredential(value: string, headerName: string): PresentedCredential {
  // The scheme name is optional, as the client adds it when missing; scheme names are case-insensitive.
  const match = /^(?:payment[ ]+)?([^ ]+)$/i.exec(value);
  if (!match) return { kind: 'malformed', reason: `${headerName} must carry "Payment <base64url credential>"` };
  const bytes = decodeBase64Url(match[1]!);
  if (!bytes) return { kind: 'malformed', reason: 'the credential is not base64url' };
  const json = parseJsonBytes(bytes);
  if (json === undefined) return { kind: 'malformed', reason: 'the credential does not carry UTF-8 JSON' };
  const credential = parseCredential(json);
  if (typeof credential === 'string') return { kind: 'malformed', reason: credential };
  return { kind: 'credential', challengeId: credential.challenge['id'] as string, digest: sha256(value), data: credential };
}

/** A challenge as the engine stores and sends it, sandbox and live alike: the `WWW-Authenticate: Payment` header and
 * the 402's funding fields. */
export function issuedMppChallenge(challenge: MppChallengeParams, stored: object, funding: Record<string, unknown>): IssuedChallenge {
  return {
    challengeId: challenge.id,
    stored: { ...stored },
    headers: { [mppChallengeHeaderName]: formatMppChallenge(challenge) },
    funding: { ...funding, authorization_expires_at: challenge.expires },
  };
}
