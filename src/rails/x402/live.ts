// The x402 rail in live (docs/rails.md#x402-live): the same challenge and credential as the sandbox (./x402.ts), but
// the credential is verified and settled by the tenant's facilitator, through @x402/core's own facilitator client
// (`/verify`, `/settle`, `/supported`). The facilitator submits the payer's EIP-3009 authorization on chain: the
// USDC moves from the payer to the tenant's `x402_address` (the escrow account), and this service records it.
//
// What the facilitator answers, and what we make of it:
// - verify invalid (bad signature, wrong amount, …) → refused credential (402 problem); `insufficient_funds` →
//   declined (402, fresh challenge). Nothing moved either way.
// - verify or settle unreachable before anything could have moved, or a 5xx from verify → RailUnavailableError
//   (503 `rail.unavailable`, the claim released).
// - settle timed out or failed in a way that leaves the outcome open → settle asked again with the identical
//   payload: a facilitator reconciles a repeated settle of one authorization (nonce) against the transaction it
//   already broadcast (`settlement_pending` carries it), and the chain refuses a second use of the nonce, so
//   asking again can never move the money twice. Still open → RailOutcomeUnknownError (the claim stays, resolved
//   later by the retry or the sweeper through `resolve`).
import { randomBytes } from 'node:crypto';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { PaymentRequiredV2Schema, type PaymentPayloadV2, type PaymentRequirementsV2 } from '@x402/core/schemas';
import type { PrivateKeyAccount } from 'viem/accounts';
import { ServiceError } from '../../errors/service-error.ts';
import { x402MaxTimeoutSeconds } from '../../limits.ts';
import { FacilitatorTimeoutError, SettleError, VerifyError, type PaymentPayload, type PaymentRequirements } from '@x402/core/types';
import { textSetting } from '../settings.ts';
import {
  checkX402Credential,
  encodeStandardBase64Json,
  issueX402Challenge,
  judgeX402Credential,
  readX402Credential,
  x402AuthorizationReused,
  x402ChallengeId,
  x402Funding,
  x402Networks,
  x402Rejected,
  usdcBaseUnits,
  type StoredX402Challenge,
} from './protocol.ts';
import {
  authCaptureRequirements,
  checkAuthCapturePayload,
  heldPaymentOf,
  isAuthCaptureRequirement,
  lifecyclePayload,
  receiverAuthorizerAccount,
  type HeldPayment,
} from './escrow.ts';
import {
  x402AddressField,
  x402CaptureAuthorizerField,
  x402FacilitatorApiKeyField,
  x402FacilitatorUrlField,
  x402ReceiverAuthorizerKeyField,
  x402SchemeOf,
} from './settings.ts';
import { storedChallengeOf } from '../wire.ts';
import { x402ChallengeHeaderName, x402RailName, x402ResponseHeaderName } from './wire.ts';
import {
  RailOutcomeUnknownError,
  RailUnavailableError,
  type ClaimedAttempt,
  type CredentialOutcome,
  type FundingContext,
  type InstructionOutcome,
  type IssuedChallenge,
  type LiveRailAdapter,
  type LiveRailOptions,
  type PresentedCredential,
  type ProbeResult,
  type RailInstructionRequest,
} from '../types.ts';

/** The x402 reason a facilitator gives when the payer's balance does not cover the amount: a decline. */
const insufficientFunds = 'insufficient_funds';
/** A settle the facilitator broadcast but has not seen confirmed: pending, its transaction the reference. */
const settlementPending = 'settlement_pending';

/** What a settle (or a repeated settle) came to. */
type SettleVerdict =
  | { kind: 'settled'; transaction: string; payer: string | undefined; network: string; amount: string | undefined }
  | { kind: 'pending'; transaction: string; payer: string | undefined; network: string }
  | { kind: 'failed'; reason: string; payer: string | undefined; network: string }
  | { kind: 'unreached'; reason: string }
  | { kind: 'open'; reason: string };

export class X402LiveAdapter implements LiveRailAdapter {
  readonly rail = x402RailName;
  readonly settlementRail: string;
  readonly #client: HTTPFacilitatorClient;
  readonly #endpoint: string | null;
  readonly #apiKey: string | null;
  readonly #callTimeoutMs: number;
  readonly #options: LiveRailOptions;
  /** auth-capture: this service's consent key (the receiver authorizer), when configured and usable. */
  readonly #authorizer: PrivateKeyAccount | undefined;

  constructor(options: LiveRailOptions) {
    this.settlementRail = options.settlementRail;
    this.#options = options;
    this.#endpoint = textSetting(options.settings, x402FacilitatorUrlField);
    this.#apiKey = options.secrets[x402FacilitatorApiKeyField] ?? null;
    this.#callTimeoutMs = options.callTimeoutMs;
    this.#client = this.#facilitatorClient({});
    this.#authorizer = receiverAuthorizerAccount(options.secrets[x402ReceiverAuthorizerKeyField]);
  }

  /** A facilitator client; `settleHeaders` go on /settle only (a lifecycle operation's idempotency key). */
  #facilitatorClient(settleHeaders: Record<string, string>): HTTPFacilitatorClient {
    const apiKey = this.#apiKey;
    const auth: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
    return new HTTPFacilitatorClient({
      url: this.#endpoint ?? 'http://127.0.0.1:9/unconfigured',
      timeoutMs: this.#callTimeoutMs,
      // Bearer on every facilitator path, as hosted facilitators take their API keys.
      ...(apiKey || Object.keys(settleHeaders).length > 0
        ? { createAuthHeaders: async () => ({ verify: auth, settle: { ...auth, ...settleHeaders }, supported: auth }) }
        : {}),
    });
  }

  issueChallenge(context: FundingContext): IssuedChallenge {
    if (x402SchemeOf(this.#options.settings) === 'exact') return issueX402Challenge(this.settlementRail, context);
    return this.#issueEscrowChallenge(context);
  }

  /** An auth-capture challenge: the payment is held by the escrow contract until the intent settles, its capture
   * deadline the intent's deadline plus the margin (x402CaptureDeadlineMarginSeconds). */
  #issueEscrowChallenge(context: FundingContext): IssuedChallenge {
    const authorizer = this.#authorizer;
    if (!authorizer) {
      throw new ServiceError('funding.rail_not_configured', {
        message: `Live x402 auth-capture needs ${x402ReceiverAuthorizerKeyField}, the key that signs this service's consent to capture and void (0x and 64 hex digits).`,
        details: { settlement_rail: this.settlementRail, missing_fields: [x402ReceiverAuthorizerKeyField] },
      });
    }
    if (context.intentDeadlineMs === undefined) throw new Error('an auth-capture challenge needs the intent\'s deadline');
    const chain = x402Networks.live;
    const requirements = authCaptureRequirements({
      network: chain.network,
      asset: chain.asset,
      tokenName: chain.name,
      tokenVersion: chain.version,
      amount: usdcBaseUnits(context.amountCents),
      payTo: textSetting(this.#options.settings, x402AddressField)!,
      maxTimeoutSeconds: x402MaxTimeoutSeconds,
      captureAuthorizer: textSetting(this.#options.settings, x402CaptureAuthorizerField)!,
      receiverAuthorizer: authorizer.address,
      intentDeadlineMs: context.intentDeadlineMs,
      challengeNonce: randomBytes(16).toString('hex'),
    });
    const paymentRequired = {
      x402Version: 2 as const,
      error: 'PAYMENT-SIGNATURE header is required',
      resource: { url: context.resourceUrl, description: `Fund intent ${context.intentId}`, mimeType: 'application/json' },
      accepts: [requirements],
    };
    const checked = PaymentRequiredV2Schema.safeParse(paymentRequired);
    if (!checked.success) throw new Error(`x402 PaymentRequired does not match the v2 schema: ${checked.error.message}`);
    const challengeId = x402ChallengeId(requirements);
    const stored: StoredX402Challenge = { rail: x402RailName, intent_id: context.intentId, requirements };
    const extra = requirements.extra as { captureDeadline: number; refundDeadline: number };
    return {
      challengeId,
      stored: { ...stored },
      headers: { [x402ChallengeHeaderName]: encodeStandardBase64Json(paymentRequired) },
      funding: {
        ...x402Funding(this.settlementRail, 'created', context, challengeId),
        scheme: requirements.scheme,
        target_address: requirements.payTo,
        capture_expires_at: isoSeconds(extra.captureDeadline),
        refund_expires_at: isoSeconds(extra.refundDeadline),
      },
    };
  }

  readCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
    return readX402Credential(headers);
  }

  async authorize(
    context: FundingContext,
    credential: Extract<PresentedCredential, { kind: 'credential' }>,
    challenge: Record<string, unknown> | undefined,
  ): Promise<CredentialOutcome> {
    const payload = credential.data as PaymentPayloadV2;
    // The facilitator checks the same terms; a credential it would refuse is refused here without a call.
    const stored = storedChallengeOf<StoredX402Challenge>(x402RailName, challenge);
    if (stored && isAuthCaptureRequirement(stored.requirements)) return this.#authorizeHold(context, payload, stored, credential.challengeId, context.nowMs);
    const checked = judgeX402Credential(this.settlementRail, context, payload, stored, context.nowMs);
    if (!checked.ok) return checked.outcome;
    const verified = await this.#verify(context, payload, checked.requirements);
    if (verified) return verified;
    return this.#settleResolving(context, payload, checked.requirements, credential.challengeId);
  }

  /** auth-capture's `authorize`: our checks of the escrow payload (at `nowMs`; none of the time checks when asking
   * about a claim), the facilitator's /verify, then its /settle, which collects the full amount into the escrow. */
  async #authorizeHold(
    context: FundingContext,
    payload: PaymentPayloadV2,
    stored: StoredX402Challenge,
    challengeId: string,
    nowMs: number | undefined,
  ): Promise<CredentialOutcome> {
    const bound = checkX402Credential(this.settlementRail, context, payload, stored);
    if (!bound.ok) return bound.outcome;
    const checked = checkAuthCapturePayload(payload, bound.requirements, nowMs);
    if (!checked.ok) return x402Rejected(this.settlementRail, context, 'verification-failed', checked.reason, checked.detail);
    if (nowMs !== undefined) {
      const verified = await this.#verify(context, payload, bound.requirements);
      if (verified) return verified;
    }
    return withHold(await this.#settleResolving(context, payload, bound.requirements, challengeId), checked.held);
  }

  refuseReusedAuthorization(context: FundingContext): Extract<CredentialOutcome, { status: 'rejected' }> {
    return x402AuthorizationReused(this.settlementRail, context);
  }

  /** A pending settlement presented again: settle asked again with the same payload, which a facilitator answers
   * from the transaction it broadcast. */
  async poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown>; credential?: unknown }): Promise<CredentialOutcome> {
    const stored = storedChallengeOf<StoredX402Challenge>(x402RailName, pending.stored);
    if (!stored) throw new RailOutcomeUnknownError(this.rail, 'the pending settlement names no x402 challenge');
    if (pending.credential === undefined) throw new RailOutcomeUnknownError(this.rail, 'the pending settlement cannot be asked about without its credential');
    const payload = pending.credential as PaymentPayloadV2;
    if (isAuthCaptureRequirement(stored.requirements)) return this.#authorizeHold(context, payload, stored, x402ChallengeId(stored.requirements), undefined);
    return this.#settleResolving(context, payload, stored.requirements, x402ChallengeId(stored.requirements));
  }

  async resolve(context: FundingContext, claimed: ClaimedAttempt): Promise<CredentialOutcome> {
    const payload = claimed.credential as PaymentPayloadV2 | undefined;
    const stored = storedChallengeOf<StoredX402Challenge>(x402RailName, claimed.challenge);
    if (!payload) throw new RailOutcomeUnknownError(this.rail, 'no credential was kept for this attempt');
    if (stored && isAuthCaptureRequirement(stored.requirements)) return this.#authorizeHold(context, payload, stored, x402ChallengeId(stored.requirements), undefined);
    // The binding only, never the terms: the facilitator may already have settled this authorization (a settle
    // asked again answers its transaction), and a validity window that has passed since must not hide that.
    const checked = checkX402Credential(this.settlementRail, context, payload, stored);
    if (!checked.ok) return checked.outcome;
    return this.#settleResolving(context, payload, checked.requirements, x402ChallengeId(checked.requirements));
  }

  async probe(): Promise<ProbeResult> {
    if (!this.#endpoint) return { ok: false, field: x402FacilitatorUrlField, reason: 'no facilitator URL is configured', transient: false };
    const { network } = x402Networks.live;
    try {
      const supported = await this.#client.getSupported();
      const scheme = x402SchemeOf(this.#options.settings);
      const listed = supported.kinds.some((kind) => kind.x402Version === 2 && kind.scheme === scheme && kind.network === network);
      if (!listed) {
        return { ok: false, field: x402FacilitatorUrlField, reason: `the facilitator's /supported does not list x402 v2 scheme ${scheme} on ${network}`, transient: false };
      }
      return { ok: true };
    } catch (error) {
      const status = httpStatusOf(error);
      if (status === 401 || status === 403) {
        return { ok: false, field: x402FacilitatorApiKeyField, reason: `the facilitator refused the API key (HTTP ${status})`, transient: false };
      }
      // No answer, a timeout, a 5xx or a rate limit may pass; any other 4xx says the URL is not a facilitator's.
      const transient = status === undefined || status >= 500 || status === 408 || status === 429;
      return { ok: false, field: x402FacilitatorUrlField, reason: `the facilitator's /supported did not answer: ${describe(error)}`, transient };
    }
  }

  /**
   * x402 moves the payer's USDC to the tenant's `x402_address` when it funds; from there, only the holder of that
   * account's key can move it. This service holds no such key: a payout (to the payee) or refund (to the payer)
   * is an instruction the operator's wallet executes. It stays pending, with the transfer to make in `detail`,
   * until the operator records it done (docs/rails.md#x402-live).
   */
  async instruct(instruction: RailInstructionRequest): Promise<InstructionOutcome> {
    const held = heldPaymentOf(instruction.fundingDetails);
    if (held) return this.#settleHold(instruction, held);
    const { network, asset } = x402Networks.live;
    const units = (BigInt(instruction.amountCents) * 10_000n).toString();
    const payer = typeof instruction.fundingDetails['payer'] === 'string' ? instruction.fundingDetails['payer'] : 'the payer of the funding transaction';
    const to = instruction.kind === 'refund' ? payer : 'the payee';
    return {
      status: 'pending',
      reference: null,
      detail: `operator transfer: ${units} base units of USDC (${asset}) on ${network} from the x402_address to ${to} (funding transaction ${instruction.fundingReference})`,
    };
  }

  /**
   * An escrow hold's settlement, automatic: a payout is `capture` of the instruction's amount to the receiver (the
   * tenant's x402_address), a refund is `void` of what the hold still holds, back to the payer. One facilitator
   * `/settle` each, with this service's consent signed by the receiver authorizer and the instruction's id as the
   * operation's idempotency key. Asked again (a sweeper pass after a crash between the facilitator's answer and our
   * commit), the facilitator replays the first outcome; and a capture's signature expects the hold untouched, so it
   * can never capture twice.
   */
  async #settleHold(instruction: RailInstructionRequest, held: HeldPayment): Promise<InstructionOutcome> {
    const authorizer = this.#authorizer;
    if (!authorizer) throw new RailUnavailableError(this.rail, `no usable ${x402ReceiverAuthorizerKeyField} is configured to sign the ${instruction.kind === 'payout' ? 'capture' : 'void'}`);
    const operation = instruction.kind === 'payout'
      ? { type: 'capture' as const, amount: usdcBaseUnits(instruction.amountCents) }
      : { type: 'void' as const };
    const payload = await lifecyclePayload(held, authorizer, operation);
    const client = this.#facilitatorClient({ 'Idempotency-Key': `svc_${instruction.instructionId}` });
    let verdict = await this.#settle(payload, held.requirements, client);
    if (verdict.kind === 'open') verdict = await this.#settle(payload, held.requirements, client);
    switch (verdict.kind) {
      case 'settled':
        return { status: 'succeeded', reference: verdict.transaction, details: { operation: operation.type, transaction: verdict.transaction, network: verdict.network } };
      case 'pending':
        return { status: 'pending', reference: verdict.transaction, detail: `${operation.type} broadcast, not confirmed yet` };
      case 'failed':
        return { status: 'failed', error: `the facilitator refused the ${operation.type}: ${verdict.reason}` };
      case 'unreached':
      case 'open':
        throw new RailUnavailableError(this.rail, verdict.reason);
    }
  }

  /** A verify that refuses the credential answers the outcome; undefined when the credential verified. */
  async #verify(context: FundingContext, payload: PaymentPayloadV2, requirements: PaymentRequirementsV2): Promise<CredentialOutcome | undefined> {
    let verdict: { isValid: boolean; invalidReason?: string | undefined; invalidMessage?: string | undefined; payer?: string | undefined };
    try {
      verdict = await this.#client.verify(...wire(payload, requirements));
    } catch (error) {
      if (error instanceof VerifyError && error.statusCode < 500) {
        verdict = { isValid: false, invalidReason: error.invalidReason, invalidMessage: error.invalidMessage, payer: error.payer };
      } else {
        // Verify moves nothing: whatever went wrong, nothing moved and asking again later is safe.
        throw new RailUnavailableError(this.rail, `the facilitator's /verify failed: ${describe(error)}`);
      }
    }
    if (verdict.isValid) return undefined;
    const reason = verdict.invalidReason ?? 'invalid_payload';
    if (reason === insufficientFunds) return this.#declined(context, reason, verdict.payer);
    return x402Rejected(this.settlementRail, context, 'verification-failed', reason,
      `the facilitator refused the payment: ${reason}${verdict.invalidMessage ? ` (${verdict.invalidMessage})` : ''}`);
  }

  /** Settles, asking once more when the first settle's outcome is open. */
  async #settleResolving(context: FundingContext, payload: PaymentPayloadV2, requirements: PaymentRequirementsV2, challengeId: string): Promise<CredentialOutcome> {
    let verdict = await this.#settle(payload, requirements);
    if (verdict.kind === 'open') verdict = await this.#settle(payload, requirements);
    switch (verdict.kind) {
      case 'settled': {
        const settled = { success: true, transaction: verdict.transaction, network: verdict.network, payer: verdict.payer, amount: verdict.amount ?? requirements.amount };
        return {
          status: 'succeeded',
          reference: verdict.transaction,
          headers: { [x402ResponseHeaderName]: encodeStandardBase64Json(settled) },
          details: detailsOf(verdict, verdict.amount ?? requirements.amount),
          funding: {
            ...x402Funding(this.settlementRail, 'authorization_succeeded', context, challengeId),
            ...(verdict.payer ? { source_address: verdict.payer } : {}),
            payment_reference: verdict.transaction,
            transaction: verdict.transaction,
            accepted_cumulative_base_units: verdict.amount ?? requirements.amount,
          },
        };
      }
      case 'pending':
        return {
          status: 'pending',
          reference: verdict.transaction,
          details: detailsOf(verdict, requirements.amount),
          funding: {
            ...x402Funding(this.settlementRail, 'authorization_pending', context, challengeId),
            ...(verdict.payer ? { source_address: verdict.payer } : {}),
            payment_reference: verdict.transaction,
            pending_cumulative_base_units: requirements.amount,
          },
        };
      case 'failed':
        return this.#declined(context, verdict.reason, verdict.payer);
      case 'unreached':
        throw new RailUnavailableError(this.rail, verdict.reason);
      case 'open':
        throw new RailOutcomeUnknownError(this.rail, verdict.reason);
    }
  }

  async #settle(payload: PaymentPayloadV2, requirements: PaymentRequirementsV2, client = this.#client): Promise<SettleVerdict> {
    try {
      const answer = await client.settle(...wire(payload, requirements));
      return settleVerdict(answer, requirements.network);
    } catch (error) {
      if (error instanceof SettleError) {
        // A settle the facilitator answered with a failure body: a definite answer below 500 and for a pending
        // broadcast; a 5xx may have broadcast first, so its outcome is open.
        const body = { success: false, errorReason: error.errorReason, payer: error.payer, transaction: error.transaction ?? '', network: error.network ?? requirements.network };
        if (error.statusCode < 500 || (error.errorReason === settlementPending && error.transaction)) return settleVerdict(body, requirements.network);
        return { kind: 'open', reason: `the facilitator's /settle failed (HTTP ${error.statusCode})` };
      }
      if (error instanceof FacilitatorTimeoutError) return { kind: 'open', reason: `the facilitator's /settle did not answer in time` };
      if (connectionRefused(error)) return { kind: 'unreached', reason: `the facilitator could not be reached: ${describe(error)}` };
      return { kind: 'open', reason: `the facilitator's /settle failed: ${describe(error)}` };
    }
  }

  #declined(context: FundingContext, reason: string, payer: string | undefined): CredentialOutcome {
    const { network } = x402Networks.live;
    const settled = { success: false, errorReason: reason, transaction: '', network, ...(payer ? { payer } : {}) };
    return {
      status: 'declined',
      reason,
      headers: { [x402ResponseHeaderName]: encodeStandardBase64Json(settled) },
      funding: { ...x402Funding(this.settlementRail, 'authorization_failed', context), ...(payer ? { source_address: payer } : {}), error_reason: reason },
    };
  }
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** An escrow funding's outcome with the hold: kept in the attempt's details (what the lifecycle is authored from,
 * the scheme's durable state), and the client's authorize fields in `funding`. */
function withHold(outcome: CredentialOutcome, held: HeldPayment): CredentialOutcome {
  if (outcome.status !== 'succeeded' && outcome.status !== 'pending') return outcome;
  const info = held.payment_info;
  return {
    ...outcome,
    details: { ...outcome.details, hold: held },
    funding: {
      ...outcome.funding,
      scheme: held.requirements.scheme,
      authorization_id: held.payment_info_hash,
      authorization_expires_at: isoSeconds(info.authorizationExpiry),
      capture_expires_at: isoSeconds(info.authorizationExpiry),
      refund_expires_at: isoSeconds(info.refundExpiry),
      onchain_transaction_hashes: { authorizations: [outcome.reference] },
    },
  };
}

/** Our schema-checked v2 payload and requirement, as the facilitator client's types spell them (the network a
 * CAIP-2 `namespace:reference` string, which the schema checked). */
function wire(payload: PaymentPayloadV2, requirements: PaymentRequirementsV2): [PaymentPayload, PaymentRequirements] {
  return [payload as unknown as PaymentPayload, { ...requirements, extra: requirements.extra ?? {} } as PaymentRequirements];
}

function settleVerdict(
  answer: { success: boolean; errorReason?: string | undefined; payer?: string | undefined; transaction: string; network: string; amount?: string | undefined },
  network: string,
): SettleVerdict {
  if (answer.success && answer.transaction) {
    return { kind: 'settled', transaction: answer.transaction, payer: answer.payer, network: answer.network || network, amount: answer.amount };
  }
  if (answer.errorReason === settlementPending && answer.transaction) {
    return { kind: 'pending', transaction: answer.transaction, payer: answer.payer, network: answer.network || network };
  }
  if (answer.success) return { kind: 'open', reason: 'the facilitator reported success without a transaction' };
  return { kind: 'failed', reason: answer.errorReason ?? 'settle_failed', payer: answer.payer, network: answer.network || network };
}

/** What the funding attempt keeps from the facilitator's answer (shown on the intent as `funding_details`): with the
 * base units it settled, so that what was paid is on record even if it ever differed from the amount. */
function detailsOf(verdict: { transaction: string; payer: string | undefined; network: string }, amount: string): Record<string, unknown> {
  return { transaction: verdict.transaction, payer: verdict.payer ?? null, network: verdict.network, amount };
}

/** The connection was refused or the name did not resolve: the request never reached the facilitator. */
function connectionRefused(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The HTTP status in @x402/core's error message (`… failed (401): …`), if any. */
function httpStatusOf(error: unknown): number | undefined {
  const match = error instanceof Error ? /\((\d{3})\)/.exec(error.message) : null;
  return match ? Number(match[1]) : undefined;
}

/** A short, safe description of a failure: its kind and status, never a response body (which could echo a header). */
function describe(error: unknown): string {
  if (error instanceof FacilitatorTimeoutError) return 'timed out';
  const status = httpStatusOf(error);
  if (status !== undefined) return `HTTP ${status}`;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.name : 'unknown error';
}
