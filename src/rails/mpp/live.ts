// The MPP rail in live (`processor_mpp`): the `Payment` challenge, the credential's verification and the charge go
// through the MPP project's own server library (mppx: `Challenge`, `Mppx.verifyCredential`, its `stripe` charge
// method, `Receipt`), which charges through the processor's SDK (`stripe`) pointed at the tenant's
// `mpp_processor_url` and authenticated with its `mpp_processor_secret_key`. What this file adds is what mppx leaves
// to its caller: telling a decline from an unreachable processor, pending payments, finding a payment whose answer
// was lost, and the payout/refund instructions of release and refund (docs/rails.md#mpp-live).
import { randomBytes } from 'node:crypto';
import { Challenge, Errors, PaymentRequest, Receipt } from 'mppx';
import { Mppx } from 'mppx/server/core';
import { Methods as stripeMethods } from 'mppx/stripe';
import { charge as stripeCharge } from 'mppx/stripe/server';
import Stripe from 'stripe';
import { mppChallengeLifetimeMs } from '../../limits.ts';
import { textSetting } from '../settings.ts';
import {
  differingFields,
  issuedMppChallenge,
  readMppCredential,
  rfc3339Seconds,
  withIssuedOptionalParams,
  type MppChallengeParams,
  type MppCredential,
} from './protocol.ts';
import { mppProcessorSecretKeyField, mppProcessorUrlField, mppProfileIdField, processorDestinationField } from './settings.ts';
import { mppIntent, mppMethod, mppRailName, mppReceiptHeaderName } from './wire.ts';
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
import { encodeBase64UrlJson, paymentProblem, storedChallengeOf, type PaymentProblemCode } from '../wire.ts';

/** The card-network payment methods a charge offers; the processor's shared payment token (SPT) is minted for one. */
const paymentMethodTypes = ['card'];

/** The processor's metadata key mppx writes the challenge id under (its analytics metadata): the key we find a
 * payment by when its answer was lost. */
const challengeIdMetadataKey = 'mpp_challenge_id';

/** What issueChallenge stores; the engine hands it back to authorize, poll and resolve. */
interface StoredLiveChallenge {
  rail: typeof mppRailName;
  intent_id: string;
  /** The auth-params exactly as sent in WWW-Authenticate. */
  challenge: MppChallengeParams;
  expires_at_ms: number;
  /** The HMAC key mppx binds this one challenge's id to its params with (RFC: `id` bound to the other params). It
   * never leaves the service: only the stored challenge holds it, and a credential is judged against both. */
  binding_key: string;
}

/** The payment object as the processor answers it (the fields read here). */
interface ProcessorPayment {
  id: string;
  status: string;
  amount?: number;
  latest_charge?: string | { id: string } | null;
  last_payment_error?: { code?: string; decline_code?: string } | null;
}

/** What the processor answered the one create call mppx made, seen through the client handed to mppx: mppx folds
 * every processor error into VerificationFailedError, and only the original tells a decline from an outage. */
interface ObservedCharge {
  payment?: ProcessorPayment;
  replayed?: boolean;
  error?: unknown;
}

export class MppLiveAdapter implements LiveRailAdapter {
  readonly rail = mppRailName;
  readonly settlementRail: string;
  readonly #options: LiveRailOptions;

  constructor(options: LiveRailOptions) {
    this.settlementRail = options.settlementRail;
    this.#options = options;
  }

  /** The seller's profile at the processor (the `networkId` a client's shared payment token is granted to). */
  get #profileId(): string | null {
    return textSetting(this.#options.settings, mppProfileIdField);
  }

  get #secretKey(): string | null {
    return this.#options.secrets[mppProcessorSecretKeyField] ?? null;
  }

  issueChallenge(context: FundingContext): IssuedChallenge {
    const expiresAtMs = Math.floor((context.nowMs + mppChallengeLifetimeMs) / 1000) * 1000;
    const bindingKey = randomBytes(32).toString('base64url');
    // mppx's stripe charge request: the amount in the currency's minor units (decimals 0 keeps the cents as sent),
    // the seller's profile as `networkId` (the processor scopes the client's SPT to it), and our intent id in the
    // payment's metadata, for the operator's reconciliation.
    const issued = Challenge.fromMethod(stripeMethods.charge, {
      secretKey: bindingKey,
      realm: context.resourceUrl,
      expires: rfc3339Seconds(expiresAtMs),
      request: {
        amount: String(context.amountCents),
        currency: context.currency,
        decimals: 0,
        networkId: this.#profileId ?? '',
        paymentMethodTypes,
        ...(this.#profileId ? { recipient: this.#profileId } : {}),
        metadata: { svc_intent_id: context.intentId },
      },
    });
    const challenge: MppChallengeParams = {
      id: issued.id,
      realm: issued.realm,
      method: issued.method,
      intent: issued.intent,
      request: PaymentRequest.serialize(issued.request),
      expires: issued.expires ?? rfc3339Seconds(expiresAtMs),
    };
    const stored: StoredLiveChallenge = { rail: this.rail, intent_id: context.intentId, challenge, expires_at_ms: expiresAtMs, binding_key: bindingKey };
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
    const { challenge: echoed, payload, source } = credential.data as MppCredential;
    const stored = storedChallengeOf<StoredLiveChallenge>(mppRailName, challenge);
    if (!stored || stored.intent_id !== context.intentId || typeof stored.binding_key !== 'string') {
      return this.#rejected('invalid-challenge', 'No challenge with this id was issued for this intent; answer the latest WWW-Authenticate challenge.');
    }
    // As in sandbox: an echo may leave out optional params (the public client drops `expires`); one present with
    // another value is refused. mppx then judges the credential rebuilt on the issued params.
    const issued = stored.challenge;
    const differing = differingFields(issued, withIssuedOptionalParams(issued, echoed));
    if (differing.length > 0) {
      return this.#rejected('invalid-challenge', `The credential's challenge differs from the one issued in ${differing.join(', ')}; echo it unchanged.`);
    }
    if (context.nowMs >= stored.expires_at_ms) {
      return this.#rejected('invalid-challenge', `The challenge expired at ${stored.challenge.expires}; answer a fresh challenge.`);
    }
    if (typeof payload['spt'] !== 'string' || payload['spt'].length === 0) {
      return this.#rejected('malformed-credential', 'A live MPP credential carries the processor\'s shared payment token as payload.spt.');
    }
    const serialized = `Payment ${encodeBase64UrlJson({ challenge: stored.challenge, payload, ...(source !== undefined ? { source } : {}) })}`;
    return this.#charge(context, stored, serialized);
  }

  async poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown> }): Promise<CredentialOutcome> {
    const stored = storedChallengeOf<StoredLiveChallenge>(mppRailName, pending.stored);
    if (!stored || stored.intent_id !== context.intentId) return this.#rejected('invalid-challenge', 'The pending payment belongs to another intent.');
    const payment = await this.#call('the payment look-up', false, (processor) => processor.paymentIntents.retrieve(pending.reference));
    return this.#outcomeOf(context, stored, payment);
  }

  async resolve(context: FundingContext, claimed: ClaimedAttempt): Promise<CredentialOutcome> {
    const stored = storedChallengeOf<StoredLiveChallenge>(mppRailName, claimed.challenge);
    if (!stored || stored.intent_id !== context.intentId) return this.#rejected('invalid-challenge', 'The claimed payment belongs to another intent.');
    const payment = claimed.reference
      ? (await this.#call('the payment look-up', true, (processor) => processor.paymentIntents.retrieve(claimed.reference!)))
      : await this.#findPayment(stored);
    if (payment) return this.#outcomeOf(context, stored, payment);
    // The processor has no payment for this challenge (its search may lag a write by moments): present the same
    // credential again. mppx sends the same Idempotency-Key (challenge id and token), so the processor answers
    // the first call's result if it ran, and runs it once if it never did: never a second charge.
    const data = claimed.credential as MppCredential | undefined;
    if (!data || typeof data.payload?.spt !== 'string') {
      return this.#rejected('invalid-challenge', 'The processor made no payment for this challenge; answer a fresh challenge.');
    }
    if (context.nowMs >= stored.expires_at_ms) {
      return this.#rejected('invalid-challenge', 'The processor made no payment for this challenge before it expired; answer a fresh challenge.');
    }
    const serialized = `Payment ${encodeBase64UrlJson({ challenge: stored.challenge, payload: data.payload, ...(data.source !== undefined ? { source: data.source } : {}) })}`;
    try {
      return await this.#charge(context, stored, serialized);
    } catch (error) {
      // The first call's outcome is still not known from the processor itself: the claim stays.
      if (error instanceof RailUnavailableError && !(error instanceof RailOutcomeUnknownError)) {
        throw new RailOutcomeUnknownError(this.rail, error.reason, error.retryAfterSeconds);
      }
      throw error;
    }
  }

  async probe(): Promise<ProbeResult> {
    if (!this.#secretKey) return { ok: false, field: mppProcessorSecretKeyField, reason: 'No processor secret key is configured.', transient: false };
    // Two dry reads: the platform's own account (the URL answers, the key is accepted), then the connected account
    // payouts go to (it exists for this key).
    let processor: Stripe;
    try {
      processor = this.#processor();
      await processor.accounts.retrieveCurrent();
    } catch (error) {
      return probeFailure(error);
    }
    const destination = textSetting(this.#options.settings, processorDestinationField);
    if (!destination) return { ok: true };
    try {
      await processor.accounts.retrieve(destination);
      return { ok: true };
    } catch (error) {
      const failure = probeFailure(error);
      return failure.ok || !(error instanceof Stripe.errors.StripeError && (error.statusCode === 404 || error.statusCode === 403))
        ? failure
        : { ok: false, field: processorDestinationField, reason: 'the processor knows no account with this id for this key', transient: false };
    }
  }

  async instruct(instruction: RailInstructionRequest): Promise<InstructionOutcome> {
    return instruction.kind === 'payout' ? this.#payout(instruction) : this.#refund(instruction);
  }

  /** Release: the charge settled on the platform's account (mppx confirms with automatic capture), so the payee's
   * share is a transfer to the connected account `processor_destination`, tied to the charge it comes from. The
   * Idempotency-Key is the instruction's: a sweeper pass repeating it gets the same transfer back. */
  async #payout(instruction: RailInstructionRequest): Promise<InstructionOutcome> {
    const destination = textSetting(this.#options.settings, processorDestinationField);
    if (!destination) return { status: 'failed', error: 'The settlement configuration has no processor_destination to pay out to.' };
    const chargeId = await this.#chargeOf(instruction);
    try {
      const processor = this.#processor();
      const transfer = await processor.transfers.create({
        amount: instruction.amountCents,
        currency: instruction.currency,
        destination,
        ...(chargeId ? { source_transaction: chargeId } : {}),
        transfer_group: instruction.intentId,
        metadata: { svc_intent_id: instruction.intentId, svc_instruction_id: instruction.instructionId },
      }, { idempotencyKey: `svc_${instruction.instructionId}` });
      return { status: 'succeeded', reference: transfer.id };
    } catch (error) {
      return instructionFailure(error, 'transfer');
    }
  }

  /** Refund: the processor refunds the payment to the payer's card. A refund it created for this instruction before
   * (found by its metadata) is asked for its status instead of being created again. */
  async #refund(instruction: RailInstructionRequest): Promise<InstructionOutcome> {
    try {
      const processor = this.#processor();
      const existing = await processor.refunds.list({ payment_intent: instruction.fundingReference, limit: 100 });
      const earlier = existing.data.find((refund) => refund.metadata?.['svc_instruction_id'] === instruction.instructionId);
      const refund = earlier ?? await processor.refunds.create({
        payment_intent: instruction.fundingReference,
        amount: instruction.amountCents,
        metadata: { svc_intent_id: instruction.intentId, svc_instruction_id: instruction.instructionId },
      }, { idempotencyKey: `svc_${instruction.instructionId}` });
      if (refund.status === 'succeeded') return { status: 'succeeded', reference: refund.id };
      if (refund.status === 'failed' || refund.status === 'canceled') {
        return { status: 'failed', error: `The processor's refund ${refund.id} ${refund.status}${refund.failure_reason ? ` (${refund.failure_reason})` : ''}.` };
      }
      return { status: 'pending', reference: refund.id, detail: `refund ${refund.status ?? 'pending'}` };
    } catch (error) {
      return instructionFailure(error, 'refund');
    }
  }

  /** The charge a payout draws on: from the funding's details, or from the payment itself. */
  async #chargeOf(instruction: RailInstructionRequest): Promise<string | undefined> {
    const recorded = instruction.fundingDetails['charge'];
    if (typeof recorded === 'string' && recorded.length > 0) return recorded;
    const payment = await this.#call('the payment look-up', false, (processor) => processor.paymentIntents.retrieve(instruction.fundingReference));
    return chargeIdOf(payment);
  }

  /** One charge through mppx: verifyCredential checks the HMAC-bound challenge, its expiry and the payload, and its
   * stripe method creates the payment with the processor (confirm, Idempotency-Key `mpp_<challenge id>_<spt>`). */
  async #charge(context: FundingContext, stored: StoredLiveChallenge, serialized: string): Promise<CredentialOutcome> {
    const observed: ObservedCharge = {};
    const processor = this.#processor();
    const client = {
      paymentIntents: {
        create: async (params: Stripe.PaymentIntentCreateParams, options?: Stripe.RequestOptions) => {
          try {
            const payment = await processor.paymentIntents.create(params, options);
            observed.payment = payment;
            observed.replayed = payment.lastResponse?.headers?.['idempotent-replayed'] === 'true';
            return payment;
          } catch (error) {
            observed.error = error;
            throw error;
          }
        },
      },
    };
    const mppx = Mppx.create({
      methods: [stripeCharge({ client, networkId: this.#profileId ?? '', currency: 'usd', decimals: 0, paymentMethodTypes })],
      secretKey: stored.binding_key,
      realm: stored.challenge.realm,
    });
    try {
      const receipt = await mppx.verifyCredential(serialized);
      return this.#succeeded(context, stored, observed.payment ?? { id: receipt.reference, status: 'succeeded' }, Receipt.serialize(receipt));
    } catch (error) {
      return this.#afterFailedCharge(context, stored, observed, error);
    }
  }

  /** What a charge that mppx did not answer with a receipt comes to. */
  async #afterFailedCharge(context: FundingContext, stored: StoredLiveChallenge, observed: ObservedCharge, error: unknown): Promise<CredentialOutcome> {
    // The processor answered with a payment: pending (processing, requires_action), or a replay of this same
    // credential's earlier call (mppx refuses replays; here it is the answer the first call lost).
    if (observed.payment) return this.#outcomeOf(context, stored, observed.payment);
    if (observed.error === undefined) {
      // mppx refused the credential before any processor call.
      if (error instanceof Errors.InvalidChallengeError || error instanceof Errors.PaymentExpiredError) {
        return this.#rejected('invalid-challenge', `${error.message}; answer a fresh challenge.`);
      }
      if (error instanceof Errors.PaymentError) return this.#rejected('malformed-credential', error.message);
      if (error instanceof Error && error.name === 'InvalidCredentialEncodingError') return this.#rejected('malformed-credential', error.message);
      throw error;
    }
    const failure = observed.error;
    if (failure instanceof Stripe.errors.StripeCardError) {
      const reason = failure.decline_code ?? failure.code ?? 'card_declined';
      return { status: 'declined', reason, funding: { ...this.#funding('payment_failed'), error_reason: reason } };
    }
    if (failure instanceof Stripe.errors.StripeInvalidRequestError) {
      // The processor refused the token itself (unknown, used, expired, for another amount): nothing was charged.
      return this.#rejected('verification-failed', `The processor refused the payment token (${failure.code ?? 'invalid_request_error'}); answer a fresh challenge with a new token.`);
    }
    if (reachedProcessor(failure)) {
      // A timeout, a dropped connection or a 5xx after the request was sent: the processor may have charged.
      // Ask it before answering; a payment found is the outcome.
      const found = await this.#findPayment(stored).catch(() => undefined);
      if (found) return this.#outcomeOf(context, stored, found);
      if (failure instanceof Stripe.errors.StripeAPIError && (failure.statusCode ?? 500) >= 500) {
        // It answered 5xx and has no payment for the challenge: nothing moved; the same credential retried carries
        // the same Idempotency-Key, so a charge that did happen is answered, not repeated.
        throw new RailUnavailableError(this.rail, `the processor answered ${failure.statusCode ?? '5xx'}`);
      }
      throw new RailOutcomeUnknownError(this.rail, `${safeReason(failure)}; the payment is looked up before the next answer`);
    }
    throw unavailable(this.rail, failure);
  }

  /** The outcome a payment's status stands for. */
  #outcomeOf(context: FundingContext, stored: StoredLiveChallenge, payment: ProcessorPayment): CredentialOutcome {
    switch (payment.status) {
      case 'succeeded': {
        const receipt = Receipt.from({ method: mppMethod, status: 'success', reference: payment.id, timestamp: new Date(context.nowMs).toISOString() });
        return this.#succeeded(context, stored, payment, Receipt.serialize(receipt));
      }
      case 'processing':
      case 'requires_action':
      case 'requires_confirmation':
        return {
          status: 'pending',
          reference: payment.id,
          funding: { ...this.#funding('payment_pending', stored.challenge.id), payment_reference: payment.id, stripe_payment_intent_id: payment.id },
          details: { payment_intent: payment.id, processor_status: payment.status },
        };
      default: {
        // requires_payment_method (the confirmation failed), canceled, requires_capture (not a charge mppx makes).
        const reason = payment.last_payment_error?.decline_code ?? payment.last_payment_error?.code ?? `payment_${payment.status}`;
        return { status: 'declined', reason, funding: { ...this.#funding('payment_failed'), error_reason: reason } };
      }
    }
  }

  #succeeded(_context: FundingContext, stored: StoredLiveChallenge, payment: ProcessorPayment, receipt: string): CredentialOutcome {
    const charge = chargeIdOf(payment);
    return {
      status: 'succeeded',
      reference: payment.id,
      // The fund route sends Cache-Control: private with a receipt (MPP).
      headers: { [mppReceiptHeaderName]: receipt },
      funding: { ...this.#funding('payment_succeeded', stored.challenge.id), payment_reference: payment.id, stripe_payment_intent_id: payment.id },
      details: { payment_intent: payment.id, ...(charge ? { charge } : {}) },
    };
  }

  /** The payment the processor made for a challenge, found by the challenge id mppx writes into its metadata. */
  async #findPayment(stored: StoredLiveChallenge): Promise<ProcessorPayment | undefined> {
    const result = await this.#call('the payment search', true, (processor) =>
      processor.paymentIntents.search({ query: `metadata['${challengeIdMetadataKey}']:'${stored.challenge.id}'`, limit: 10 }));
    const payments: ProcessorPayment[] = result.data;
    // One challenge, one Idempotency-Key per token: a succeeded payment wins over a failed try with another token.
    return payments.find((payment) => payment.status === 'succeeded') ?? payments.find((payment) => payment.status !== 'canceled') ?? payments[0];
  }

  /** A read-only processor call; an unreachable processor throws RailUnavailableError, or, when the outcome of an
   * earlier charge hangs on the answer, RailOutcomeUnknownError (the claim stays). */
  async #call<T>(what: string, outcomeHangsOnIt: boolean, call: (processor: Stripe) => Promise<T>): Promise<T> {
    try {
      return await call(this.#processor());
    } catch (error) {
      if (outcomeHangsOnIt) throw new RailOutcomeUnknownError(this.rail, `${what} failed: ${safeReason(error)}`);
      throw unavailable(this.rail, error, what);
    }
  }

  /** The processor's SDK, pointed at the configured endpoint. No SDK retries: the engine decides what is retried,
   * and a retry of a charge must carry the same credential (the same Idempotency-Key). */
  #processor(): Stripe {
    const url = new URL(textSetting(this.#options.settings, mppProcessorUrlField) ?? '');
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    const basePath = url.pathname.replace(/\/+$/, '');
    const nodeClient = Stripe.createNodeHttpClient();
    return new Stripe(this.#secretKey ?? '', {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || (protocol === 'http' ? 80 : 443),
      protocol,
      maxNetworkRetries: 0,
      timeout: this.#options.callTimeoutMs,
      telemetry: false,
      // The processor's API paths (/v1/…) under the configured URL's path, for a processor behind a path prefix.
      httpClient: basePath
        ? { getClientName: () => nodeClient.getClientName(), makeRequest: (host, port, path, ...rest) => nodeClient.makeRequest(host, port, `${basePath}${path}`, ...rest) }
        : nodeClient,
    });
  }

  /** Outcomes that end in a fresh 402 name no challenge (the fresh one's id is the one to answer). */
  #funding(status: string, challengeId?: string): Record<string, unknown> {
    return { settlement_rail: this.settlementRail, status, ...(challengeId ? { challenge_id: challengeId } : {}), method: mppMethod, intent: mppIntent };
  }

  #rejected(code: PaymentProblemCode, detail: string): CredentialOutcome {
    return { status: 'rejected', problem: paymentProblem(code, detail), funding: this.#funding('credential_rejected') };
  }
}

function chargeIdOf(payment: ProcessorPayment): string | undefined {
  const charge = payment.latest_charge;
  if (typeof charge === 'string') return charge;
  return charge?.id;
}

/** Whether a processor error came after the request reached the processor (so it may have acted): a timeout, a
 * connection dropped mid-call, a 5xx or an idempotency conflict. A refused connection or an unknown host never
 * reached it. */
function reachedProcessor(error: unknown): boolean {
  // StripeAPIError: a 5xx, or a 409 (the same Idempotency-Key still running); StripeIdempotencyError: the key was
  // used before with other parameters. Either way a call under this key may have charged.
  if (error instanceof Stripe.errors.StripeAPIError || error instanceof Stripe.errors.StripeIdempotencyError) return true;
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const code = (error.detail as { code?: unknown } | undefined)?.code;
    return !(typeof code === 'string' && notSentCodes.has(code));
  }
  return false;
}

/** Socket errors that mean the request never left for the processor. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

/** A reason safe to show and log: the processor error's kind and code, never its message (it may echo a request)
 * nor the key. */
function safeReason(error: unknown): string {
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const code = (error.detail as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' && code === 'ETIMEDOUT' ? 'the processor did not answer in time' : `the processor could not be reached${typeof code === 'string' ? ` (${code})` : ''}`;
  }
  if (error instanceof Stripe.errors.StripeAuthenticationError) return 'the processor refused the secret key';
  if (error instanceof Stripe.errors.StripePermissionError) return 'the secret key may not do this at the processor';
  if (error instanceof Stripe.errors.StripeRateLimitError) return 'the processor is rate limiting';
  if (error instanceof Stripe.errors.StripeError) return `the processor answered ${error.statusCode ?? 'an error'}${error.code ? ` (${error.code})` : ''}`;
  if (error instanceof Error && error.message.startsWith('Invalid URL')) return 'mpp_processor_url is not a URL';
  return 'the processor call failed';
}

function unavailable(rail: typeof mppRailName, error: unknown, what = 'the processor call'): RailUnavailableError {
  return new RailUnavailableError(rail, `${what} failed: ${safeReason(error)}`);
}

/** A payout or refund the processor did not carry out: final when it refused it, retried when it was not reached. */
function instructionFailure(error: unknown, what: string): InstructionOutcome {
  if (error instanceof RailUnavailableError) throw error;
  if (error instanceof Stripe.errors.StripeInvalidRequestError || error instanceof Stripe.errors.StripeCardError) {
    return { status: 'failed', error: `The processor refused the ${what} (${error.code ?? error.type}).` };
  }
  throw unavailable(mppRailName, error, `the ${what}`);
}

/** The field a failed dry call points at, and whether the failure may pass by itself: the processor not reached,
 * too slow, failing on its side or rate limiting is transient; a refusal of the key or of the request is not. */
function probeFailure(error: unknown): ProbeResult {
  if (error instanceof Stripe.errors.StripeAuthenticationError || error instanceof Stripe.errors.StripePermissionError) {
    return { ok: false, field: mppProcessorSecretKeyField, reason: safeReason(error), transient: false };
  }
  const transient =
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    (error instanceof Stripe.errors.StripeError && (error.statusCode ?? 500) >= 500);
  return { ok: false, field: mppProcessorUrlField, reason: safeReason(error), transient };
}
