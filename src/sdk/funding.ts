// The 402 funding handshake (docs/rails.md, docs/sdk.md#intents-clientintents): ask, answer the rail's challenge
// with a credential the caller's callback supplies, then poll while the rail is pending. One idempotency key for the
// whole call.
import { randomUUID } from 'node:crypto';
import { recognitionPurposes } from '../signing/index.ts';
import { checkedAnswer } from './answers.ts';
import { checkIdempotencyKey, intentPath, type ClientCore } from './core.ts';
import { fundPollIntervalMsDefault, fundPollsMaxDefault } from './defaults.ts';
import { FundingFailedError, FundingPendingError, SvcArgumentError } from './errors.ts';
import { credentialHeaderValue } from './rails.ts';
import { jsonObjectOf, type TransportResponse } from './transport.ts';
import type { FundAnswer, SettlementRail } from './types.ts';

/** What a 402 asked for, handed to the credential callback. */
export interface FundChallenge {
  readonly intentId: string;
  readonly rail: SettlementRail;
  /** x402: the `PAYMENT-REQUIRED` header (standard base64 of the PaymentRequired JSON). */
  readonly paymentRequired: string | undefined;
  /** MPP: the `WWW-Authenticate` value(s), `Payment id="…", …` (several challenges are comma-joined). */
  readonly wwwAuthenticate: string | undefined;
  /** The 402 body: the intent's funding state and `funding.challenge_id`. */
  readonly body: FundAnswer;
  readonly headers: Headers;
}

/** Returns the credential headers for a challenge: `payment-signature` (x402) or `x-svc-payment-authorization`
 * (MPP; the `Payment ` prefix is added when missing). `sandboxCredential()` builds one for sandbox tenants. */
export type FundCredentialCallback = (challenge: FundChallenge) => Promise<Readonly<Record<string, string>>> | Readonly<Record<string, string>>;

export interface FundOptions {
  readonly credential: FundCredentialCallback;
  /** One key for the whole handshake; a fresh UUID when not given. Calling `fund` again with the same key after a
   * lost answer replays the stored 200 instead of answering 409. */
  readonly idempotencyKey?: string;
  /** Between polls while the rail answers 202 (default 2 s). */
  readonly pollIntervalMs?: number;
  /** Polls after the credentialed request before `FundingPendingError` (default 30). */
  readonly pollsMax?: number;
}

export interface FundResult {
  /** The final 200 answer (`funded: true`). */
  readonly intent: FundAnswer;
  readonly capabilityToken: string;
  /** Fund requests made (challenge, credential, polls; transport retries not counted). */
  readonly requests: number;
  /** The engine replayed a stored answer (`idempotent-replayed: true`). */
  readonly replayed: boolean;
  /** x402 `PAYMENT-RESPONSE` / MPP `Payment-Receipt`, as sent. */
  readonly paymentResponse: string | undefined;
  readonly paymentReceipt: string | undefined;
}

/** `funding.status` values after which the rail will not fund on this credential
 * (docs/sdk.md#intents-clientintents). */
export const fundingFailureStatuses: readonly string[] = [
  'authorization_failed', 'capture_failed', 'void_failed', 'credential_rejected', 'payment_failed', 'charge_failed', 'session_open_failed',
];

/** Headers a credential callback must not set: they belong to the SDK. */
const reservedHeaderNames = new Set(['authorization', 'idempotency-key', 'x-tenant-id', 'x-svc-agent-recognition-proof', 'content-type', 'accept']);

export async function fundIntent(core: ClientCore, intentId: string, options: FundOptions): Promise<FundResult> {
  if (typeof options?.credential !== 'function') throw new SvcArgumentError('fund needs a credential callback (see sandboxCredential()).');
  const path = intentPath(intentId, '/fund');
  const idempotencyKey = checkIdempotencyKey(options.idempotencyKey ?? randomUUID());
  const pollIntervalMs = options.pollIntervalMs ?? fundPollIntervalMsDefault;
  const pollsMax = options.pollsMax ?? fundPollsMaxDefault;
  let credentialHeaders: Record<string, string> | undefined;
  let requests = 0;
  let polls = 0;
  for (;;) {
    // Each step is a new request with a fresh recognition proof, under the same key and body (spec, 402 row).
    const response = await core.mutate({
      path, purpose: recognitionPurposes.intentFund, body: {}, idempotencyKey, expectStatuses: [202, 402], headers: credentialHeaders ?? {},
    });
    requests += 1;
    const answer = fundAnswerOf(core, response, intentId);
    const status = answer.funding?.status;
    const failed = (): FundingFailedError => new FundingFailedError({ intentId, lastResult: answer, attempts: requests });
    if (response.status === 402) {
      // A 402 after a credential is the rail's refusal or decline; the answer carries a fresh challenge for a new call.
      if (credentialHeaders !== undefined) throw failed();
      credentialHeaders = credentialHeadersOf(await options.credential(challengeOf(intentId, answer, response)));
      continue;
    }
    if (status !== undefined && fundingFailureStatuses.includes(status)) throw failed();
    if (response.status === 200 && answer.funded && typeof answer.capability_token === 'string' && answer.capability_token !== '') {
      return {
        intent: answer,
        capabilityToken: answer.capability_token,
        requests,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        paymentResponse: response.headers.get('payment-response') ?? undefined,
        paymentReceipt: response.headers.get('payment-receipt') ?? undefined,
      };
    }
    // 202, or a 200 not funded yet: the same request again is a poll.
    if (polls >= pollsMax) throw new FundingPendingError({ intentId, lastResult: answer, attempts: requests });
    polls += 1;
    await core.sleep(pollIntervalMs);
  }
}

function fundAnswerOf(core: ClientCore, response: TransportResponse, intentId: string): FundAnswer {
  const body = jsonObjectOf(response);
  core.checkEcho(body, response, intentId);
  return checkedAnswer('FundAnswer', body, response);
}

function challengeOf(intentId: string, answer: FundAnswer, response: TransportResponse): FundChallenge {
  return {
    intentId,
    rail: answer.settlement_rail,
    paymentRequired: response.headers.get('payment-required') ?? undefined,
    wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
    body: answer,
    headers: response.headers,
  };
}

function credentialHeadersOf(supplied: Readonly<Record<string, string>>): Record<string, string> {
  if (typeof supplied !== 'object' || supplied === null || Object.keys(supplied).length === 0) {
    throw new SvcArgumentError('The credential callback must return the credential header(s), e.g. {"payment-signature": "…"}.');
  }
  const headers: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(supplied)) {
    const name = rawName.toLowerCase();
    if (reservedHeaderNames.has(name)) throw new SvcArgumentError(`The credential callback may not set ${name}.`);
    if (typeof value !== 'string' || value.trim() === '' || /[\r\n]/.test(value)) throw new SvcArgumentError(`The credential header ${name} must be a non-empty single-line string.`);
    headers[name] = credentialHeaderValue(name, value);
  }
  return headers;
}
