// The MPP rail's sandbox simulator (docs/rails.md "Sandbox test credentials"): the credential must answer a challenge
// issued for this intent, echoed unchanged and unexpired (./protocol.ts), then its token picks the outcome. Nothing
// is charged; the reference is derived from the challenge and the credential.
import { randomBytes } from 'node:crypto';
import { mppChallengeLifetimeMs } from '../../limits.ts';
import type { CredentialOutcome, FundingContext, IssuedChallenge, PresentedCredential, RailAdapter } from '../types.ts';
import { encodeBase64UrlJson, paymentProblem, sha256Hex, storedChallengeOf, type PaymentProblemCode } from '../wire.ts';
import {
  differingFields,
  encodeMppRequest,
  issuedMppChallenge,
  mppChargeRequest,
  readMppCredential,
  rfc3339Seconds,
  withIssuedOptionalParams,
  type MppChallengeParams,
  type MppCredential,
  type StoredMppChallenge,
} from './protocol.ts';
import { mppIntent, mppMethod, mppRailName, mppReceiptHeaderName, sandboxMppTokens } from './wire.ts';

export class MppSandboxAdapter implements RailAdapter {
  readonly rail = mppRailName;
  constructor(readonly settlementRail: string = mppRailName) {}

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
    const stored = storedChallengeOf<StoredMppChallenge>(mppRailName, challenge);
    const reject = (code: PaymentProblemCode, detail: string) => this.#rejected(code, detail);
    if (!stored || stored.intent_id !== context.intentId) {
      return reject('invalid-challenge', 'No challenge with this id was issued for this intent; answer the latest WWW-Authenticate challenge.');
    }
    // The id names a challenge issued for this intent, so what the echo leaves out of its optional params is known:
    // the public client's challenge parser drops `expires`. A param present with another value is still refused,
    // and the expiry is still enforced below, from the issued challenge.
    const issued = stored.challenge;
    const differing = differingFields(issued, withIssuedOptionalParams(issued, echoed));
    if (differing.length > 0) {
      return reject('invalid-challenge', `The credential's challenge differs from the one issued in ${differing.join(', ')}; echo it unchanged.`);
    }
    if (context.nowMs >= stored.expires_at_ms) {
      return reject('invalid-challenge', `The challenge expired at ${stored.challenge.expires}; answer a fresh challenge.`);
    }
    return this.#simulate(context, credential, typeof payload['token'] === 'string' ? payload['token'] : '');
  }

  async poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown> }): Promise<CredentialOutcome> {
    const stored = storedChallengeOf<StoredMppChallenge>(mppRailName, pending.stored);
    if (!stored || stored.intent_id !== context.intentId) {
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
