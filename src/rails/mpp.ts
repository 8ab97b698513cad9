// The MPP rail (`processor_mpp`): the HTTP `Payment` authentication scheme, method `stripe`, intent `charge`.
// A 402 carries `WWW-Authenticate: Payment id=…, realm=…, method=…, intent=…, request=…, expires=…`; the retry
// carries `x-svc-payment-authorization: Payment <base64url JSON {challenge, payload: {token}}>`, or the same after the
// Bearer key in `Authorization`. Sandbox tenants are settled by a simulator chosen by the token (docs/rails.md); live
// needs a processor endpoint we do not have.
import { randomBytes } from 'node:crypto';
import { readAuthorizationHeader } from '../credentials/authorization-header.ts';
import { ServiceError } from '../errors/service-error.ts';
import { mppChallengeLifetimeMs, paymentCredentialHeaderBytesMax } from '../limits.ts';
import { canonicalJson } from '../signing/canonical-json.ts';
import type { CredentialOutcome, FundingContext, IssuedChallenge, PresentedCredential, RailAdapter } from './types.ts';
import { decodeBase64Url, encodeBase64UrlJson, isPlainObject, paymentProblem, parseJsonBytes, readOneHeader, sha256, sha256Hex, type PaymentProblemCode } from './wire.ts';

export const mppChallengeHeaderName = 'WWW-Authenticate';
export const mppCredentialHeaderName = 'x-svc-payment-authorization';
export const mppReceiptHeaderName = 'Payment-Receipt';
export const mppMethod = 'stripe';
export const mppIntent = 'charge';

/** Sandbox tokens with a fixed outcome (docs/rails.md). Any other token is refused as `verification-failed`. */
export const sandboxMppTokens = {
  success: 'tok_sandbox_success',
  decline: 'tok_sandbox_decline',
  pending: 'tok_sandbox_pending',
} as const;

/** The auth-params of one `Payment` challenge, in the order they are written. */
export interface MppChallengeParams {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: string;
  expires: string;
}

/** The `charge` request: amount in the currency's minor units (cents for usd), as a string. */
export function mppChargeRequest(context: Pick<FundingContext, 'amountCents' | 'config'>): Record<string, string> {
  const request: Record<string, string> = { amount: String(context.amountCents), currency: 'usd' };
  if (context.config?.mpp_profile_id) request['recipient'] = context.config.mpp_profile_id;
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

interface StoredMppChallenge {
  rail: 'processor_mpp';
  intent_id: string;
  challenge: MppChallengeParams;
  expires_at_ms: number;
}

/** A parsed credential. The payload carries the sandbox's `token`, or the processor's shared payment token `spt`
 * that live clients send (the `stripe` method's payload, src/rails/mpp-live.ts); each adapter judges its own. */
export interface MppCredential {
  challenge: Record<string, unknown>;
  payload: { token?: string; spt?: string } & Record<string, unknown>;
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
  return json as unknown as MppCredential;
}

export class MppSandboxAdapter implements RailAdapter {
  readonly rail = 'processor_mpp' as const;
  constructor(readonly settlementRail: string = 'processor_mpp') {}

  issueChallenge(context: FundingContext): IssuedChallenge {
    const expiresAtMs = Math.floor((context.nowMs + mppChallengeLifetimeMs) / 1000) * 1000;
    const challenge: MppChallengeParams = {
      id: randomBytes(16).toString('base64url'),
      realm: context.resourceUrl,
      method: mppMethod,
      intent: mppIntent,
      request: encodeMppRequest(mppChargeRequest(context)),
      expires: rfc3339Seconds(expiresAtMs),
    };
    const stored: StoredMppChallenge = { rail: this.rail, intent_id: context.intentId, challenge, expires_at_ms: expiresAtMs };
    return issuedMppChallenge(challenge, stored, this.#funding('created', challenge.id));
  }

  readCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
    return readMppCredential(headers);
  }

  async authorize(
    context: FundingContext,
    credential: Extract<PresentedCredential, { kind: 'credential' }>,
    challenge: Record<string, unknown> | undefined,
  ): Promise<CredentialOutcome> {
    const { challenge: echoed, payload } = credential.data as MppCredential;
    const stored = challenge as StoredMppChallenge | undefined;
    const reject = (code: PaymentProblemCode, detail: string) => this.#rejected(code, detail);
    if (!stored || stored.intent_id !== context.intentId) {
      return reject('invalid-challenge', 'No challenge with this id was issued for this intent; answer the latest WWW-Authenticate challenge.');
    }
    // The id names a challenge issued for this intent, so what the echo leaves out of its optional params is known:
    // the public client's challenge parser drops `expires`. A param present with another value is still refused,
    // and the expiry is still enforced below, from the issued challenge.
    const issued = stored.challenge as unknown as Record<string, unknown>;
    const differing = differingFields(issued, withIssuedOptionalParams(issued, echoed));
    if (differing.length > 0) {
      return reject('invalid-challenge', `The credential's challenge differs from the one issued in ${differing.join(', ')}; echo it unchanged.`);
    }
    if (context.nowMs >= stored.expires_at_ms) {
      return reject('invalid-challenge', `The challenge expired at ${stored.challenge.expires}; answer a fresh challenge.`);
    }
    return this.#simulate(context, credential, payload.token ?? '');
  }

  async poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown> }): Promise<CredentialOutcome> {
    const stored = pending.stored as unknown as StoredMppChallenge;
    if (stored.intent_id !== context.intentId) {
      return this.#rejected('invalid-challenge', 'The pending payment belongs to another intent.');
    }
    return this.#succeeded(context, stored.challenge.id, pending.reference);
  }

  /** The sandbox processor: the token picks the outcome. */
  #simulate(context: FundingContext, credential: Extract<PresentedCredential, { kind: 'credential' }>, token: string): CredentialOutcome {
    const reference = `pi_sandbox_${sha256Hex(`mpp-sandbox:${context.tenantId}:${credential.challengeId}:${credential.digest.toString('hex')}`).slice(0, 24)}`;
    switch (token) {
      case sandboxMppTokens.success:
        return this.#succeeded(context, credential.challengeId, reference);
      case sandboxMppTokens.pending:
        return {
          status: 'pending',
          reference,
          funding: { ...this.#funding('payment_pending', credential.challengeId), payment_reference: reference, stripe_payment_intent_id: reference },
        };
      case sandboxMppTokens.decline:
        return {
          status: 'declined',
          reason: 'card_declined',
          funding: { ...this.#funding('payment_failed'), error_reason: 'card_declined' },
        };
      default:
        return this.#rejected('verification-failed',
          'The payment token was not accepted (sandbox tokens: tok_sandbox_success, tok_sandbox_decline, tok_sandbox_pending).');
    }
  }

  #succeeded(context: FundingContext, challengeId: string, reference: string): CredentialOutcome {
    const receipt = { status: 'success', method: mppMethod, timestamp: rfc3339Seconds(context.nowMs), reference };
    return {
      status: 'succeeded',
      reference,
      // The fund route must send Cache-Control: private (MPP) with a receipt; it owns Cache-Control.
      headers: { [mppReceiptHeaderName]: encodeBase64UrlJson(receipt) },
      funding: { ...this.#funding('payment_succeeded', challengeId), payment_reference: reference, stripe_payment_intent_id: reference },
    };
  }

  /** Outcomes that end in a fresh 402 (declined, rejected) name no challenge: the fresh challenge's id is the one
   * to answer, and the fund route merges these fields over it. */
  #funding(status: string, challengeId?: string): Record<string, unknown> {
    return { settlement_rail: this.settlementRail, status, ...(challengeId ? { challenge_id: challengeId } : {}), method: mppMethod, intent: mppIntent };
  }

  #rejected(code: PaymentProblemCode, detail: string): CredentialOutcome {
    return { status: 'rejected', problem: paymentProblem(code, detail), funding: this.#funding('credential_rejected') };
  }
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
