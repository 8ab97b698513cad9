// The x402 rail's sandbox simulator (docs/rails.md "Sandbox test credentials"): the credential gets every check a
// facilitator makes of the EIP-3009 authorization save its signature (./protocol.ts), then the payer address picks
// the outcome. Nothing is broadcast; references are derived from the challenge and the credential.
import type { PaymentPayloadV2 } from '@x402/core/schemas';
import { sameEvmAddress } from '../evm.ts';
import type { ClaimedAttempt, CredentialOutcome, FundingContext, IssuedChallenge, PresentedCredential, RailAdapter } from '../types.ts';
import { sha256Hex, storedChallengeOf, type PaymentProblemCode } from '../wire.ts';
import {
  encodeStandardBase64Json,
  issueX402Challenge,
  judgeX402Credential,
  readX402Credential,
  x402AuthorizationReused,
  x402ChallengeId,
  x402Funding,
  x402Networks,
  x402Rejected,
  type Authorization,
  type StoredX402Challenge,
} from './protocol.ts';
import { sandboxX402Payers, x402RailName, x402ResponseHeaderName } from './wire.ts';

export class X402SandboxAdapter implements RailAdapter {
  readonly rail = x402RailName;
  constructor(readonly settlementRail: string = x402RailName) {}

  issueChallenge(context: FundingContext): IssuedChallenge {
    return issueX402Challenge(this.settlementRail, context);
  }

  readCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
    return readX402Credential(headers);
  }

  async authorize(
    context: FundingContext,
    credential: Extract<PresentedCredential, { kind: 'credential' }>,
    challenge: Record<string, unknown> | undefined,
  ): Promise<CredentialOutcome> {
    const checked = judgeX402Credential(this.settlementRail, context, credential.data as PaymentPayloadV2, storedChallengeOf<StoredX402Challenge>(x402RailName, challenge), context.nowMs);
    if (!checked.ok) return checked.outcome;
    return this.#simulate(context, credential.challengeId, credential.digest, checked.authorization);
  }

  refuseReusedAuthorization(context: FundingContext): Extract<CredentialOutcome, { status: 'rejected' }> {
    return x402AuthorizationReused(this.settlementRail, context);
  }

  /** A claim whose outcome is unknown (the process died between the phases): the simulator's rules are a pure
   * function of the credential and the time it was claimed at, so it answers what authorize would have then. */
  async resolve(context: FundingContext, claimed: ClaimedAttempt): Promise<CredentialOutcome> {
    const payload = claimed.credential as PaymentPayloadV2;
    const judgedAtMs = claimed.claimedAt?.getTime() ?? context.nowMs;
    const checked = judgeX402Credential(this.settlementRail, context, payload, storedChallengeOf<StoredX402Challenge>(x402RailName, claimed.challenge), judgedAtMs);
    if (!checked.ok) return checked.outcome;
    const challengeId = x402ChallengeId(payload.accepted);
    return this.#simulate(context, challengeId, claimed.digest, checked.authorization, claimed.reference);
  }

  async poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown> }): Promise<CredentialOutcome> {
    const stored = storedChallengeOf<StoredX402Challenge>(x402RailName, pending.stored);
    if (!stored || stored.intent_id !== context.intentId) {
      return this.#rejected(context, 'invalid-challenge', 'invalid_payment_requirements', 'the pending payment belongs to another intent');
    }
    const challengeId = x402ChallengeId(stored.requirements);
    const { network } = x402Networks[context.environment];
    const settled = { success: true, transaction: pending.reference, network, amount: stored.requirements.amount };
    return {
      status: 'succeeded',
      reference: pending.reference,
      headers: { [x402ResponseHeaderName]: encodeStandardBase64Json(settled) },
      funding: {
        ...this.#funding('authorization_succeeded', context, challengeId),
        payment_reference: pending.reference,
        accepted_cumulative_base_units: stored.requirements.amount,
      },
    };
  }

  /** The sandbox facilitator: the payer address picks the outcome; the EIP-712 signature is not checked. */
  #simulate(context: FundingContext, challengeId: string, digest: Buffer, authorization: Authorization, knownReference?: string | null): CredentialOutcome {
    const credential = { challengeId };
    const { network } = x402Networks[context.environment];
    const transaction = knownReference ?? `0x${sha256Hex(`x402-sandbox:${context.tenantId}:${challengeId}:${digest.toString('hex')}`)}`;
    if (sameEvmAddress(authorization.from, sandboxX402Payers.decline)) {
      const settled = { success: false, errorReason: 'insufficient_funds', transaction: '', network, payer: authorization.from };
      return {
        status: 'declined',
        reason: 'insufficient_funds',
        headers: { [x402ResponseHeaderName]: encodeStandardBase64Json(settled) },
        funding: { ...this.#funding('authorization_failed', context), source_address: authorization.from, error_reason: 'insufficient_funds' },
      };
    }
    if (sameEvmAddress(authorization.from, sandboxX402Payers.pending)) {
      return {
        status: 'pending',
        reference: transaction,
        funding: {
          ...this.#funding('authorization_pending', context, credential.challengeId),
          source_address: authorization.from,
          payment_reference: transaction,
          pending_cumulative_base_units: authorization.value,
        },
      };
    }
    const settled = { success: true, transaction, network, payer: authorization.from, amount: authorization.value };
    return {
      status: 'succeeded',
      reference: transaction,
      headers: { [x402ResponseHeaderName]: encodeStandardBase64Json(settled) },
      funding: {
        ...this.#funding('authorization_succeeded', context, credential.challengeId),
        source_address: authorization.from,
        payment_reference: transaction,
        accepted_cumulative_base_units: authorization.value,
      },
    };
  }

  #funding(status: string, context: FundingContext, challengeId?: string): Record<string, unknown> {
    return x402Funding(this.settlementRail, status, context, challengeId);
  }

  #rejected(context: FundingContext, problem: PaymentProblemCode, errorReason: string, detail: string): CredentialOutcome {
    return x402Rejected(this.settlementRail, context, problem, errorReason, detail);
  }
}
