// The contract between the fund route and the funding rails: what a rail is given, what it issues in a 402, what
// it reads from a retry, and what it decides. Re-exported by ./index.ts, which is where callers import it from.
import type { SecretBox } from '../infra/secret-box.ts';
import { railRetryAfterSecondsDefault } from '../limits.ts';
import type { RailName, SettlementConfig } from './settlement-config.ts';

// RailName is declared beside the validation of rail lists; it is re-exported here, with the rest of the contract.
export type { RailName };

export interface FundingContext {
  readonly tenantId: string;
  readonly environment: 'sandbox' | 'live';
  readonly intentId: string;
  readonly amountCents: number;
  readonly currency: string;
  /** Absolute URL of the fund route, for x402 `resource.url` and MPP `realm`. */
  readonly resourceUrl: string;
  /** The tenant's settlement configuration, if any. */
  readonly config: SettlementConfig | undefined;
  readonly nowMs: number;
}

export interface IssuedChallenge {
  /** The engine stores it and finds the challenge by it later. */
  readonly challengeId: string;
  /** JSON the adapter needs to judge a credential later. */
  readonly stored: Record<string, unknown>;
  /** Rail headers of the 402 (PAYMENT-REQUIRED, WWW-Authenticate…), not Cache-Control. */
  readonly headers: Record<string, string | string[]>;
  /** Extra fields for the response's `funding` object (challenge_id, asset, network, …). */
  readonly funding: Record<string, unknown>;
}

export type PresentedCredential =
  | { readonly kind: 'absent' }
  | { readonly kind: 'malformed'; readonly reason: string }
  | {
      readonly kind: 'credential';
      readonly challengeId: string;
      /** SHA-256 of the header value exactly as sent. */
      readonly digest: Buffer;
      readonly data: unknown;
      /** The payment authorization the credential spends, on a rail whose authorizations are good once (x402: the
       * EIP-3009 authorization's token, payer and nonce). The engine records it with the attempt that claims it, and
       * a unique index lets one attempt hold it (docs/rails.md#x402-x402_usdc_base). */
      readonly authorizationKey?: string;
    };

/** An RFC 9457 problem for a credential the rail refused (MPP's problem types, used by both rails). */
export interface PaymentProblem {
  type: string;
  title: string;
  detail: string;
}

/** `details`: what the rail reported about the payment (x402: `transaction`, `payer`, `network`; MPP: the
 * processor's payment id, receipt reference…), stored with the funding attempt and shown on the intent as
 * `funding_details`. Plain JSON, no secret. */
export type CredentialOutcome =
  | { readonly status: 'succeeded'; readonly reference: string; readonly funding: Record<string, unknown>; readonly headers?: Record<string, string>; readonly details?: Record<string, unknown> }
  | { readonly status: 'pending'; readonly reference: string; readonly funding: Record<string, unknown>; readonly headers?: Record<string, string>; readonly details?: Record<string, unknown> }
  | { readonly status: 'declined'; readonly reason: string; readonly funding: Record<string, unknown>; readonly headers?: Record<string, string> }
  | { readonly status: 'rejected'; readonly problem: PaymentProblem; readonly funding: Record<string, unknown> };

export interface RailAdapter {
  readonly rail: RailName;
  /** The rail name as the intent carries it (`rail`, or a client alias such as `stripe_mpp`); every `funding`
   * object this adapter builds echoes it as `settlement_rail`. */
  readonly settlementRail: string;
  issueChallenge(context: FundingContext): IssuedChallenge;
  /** Reads the rail's credential header(s) from the request headers (lowercase names). */
  readCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential;
  /** Judges a credential against the stored challenge it names (undefined when the engine has no such challenge). */
  authorize(
    context: FundingContext,
    credential: Extract<PresentedCredential, { kind: 'credential' }>,
    challenge: Record<string, unknown> | undefined,
  ): Promise<CredentialOutcome>;
  /** A pending credential presented again (a poll): the sandbox settles it now. `credential` is the credential's
   * data as presented again (readCredential's `data`), for a rail that must ask with it. */
  poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown>; credential?: unknown }): Promise<CredentialOutcome>;
  /** Optional for sandbox adapters: see LiveRailAdapter.resolve (the sweeper uses it when present). */
  resolve?(context: FundingContext, claimed: ClaimedAttempt): Promise<CredentialOutcome>;
  /** For a rail whose credentials carry an `authorizationKey`: the refusal of a credential whose authorization
   * another attempt already holds (spent, pending, or under way). */
  refuseReusedAuthorization?(context: FundingContext): Extract<CredentialOutcome, { status: 'rejected' }>;
}

// ---- Live rails (docs/rails.md#live-rails) ----

/** A tenant's rail secrets, decrypted (src/infra/secret-box.ts seals them at rest). Never logged, never answered,
 * never exported: only a live adapter holds them, to authenticate to its facilitator or processor. */
export interface RailSecrets {
  readonly x402_facilitator_api_key: string | null;
  readonly mpp_processor_secret_key: string | null;
}

/** What a live adapter is built with: the tenant's configuration (with its endpoint URL), its secrets, and the
 * deadline of one HTTP call to the rail. */
export interface LiveRailOptions {
  /** The rail name as the intent carries it (see RailAdapter.settlementRail). */
  readonly settlementRail: string;
  readonly config: SettlementConfig;
  readonly secrets: RailSecrets;
  /** Deadline of one call to the facilitator/processor, in ms (AppOptions.railCallTimeoutMs; default
   * railCallTimeoutMsDefault in src/limits.ts). */
  readonly callTimeoutMs: number;
}

/** A dry call's verdict (PUT /v1/admin/settlement/config for a live tenant). `field` names the configuration field
 * at fault (e.g. `x402_facilitator_url`, `mpp_processor_secret_key`); `reason` is safe to show (no secret).
 * `transient` when the rail could not be reached, timed out or failed on its side (5xx, rate limited): the same
 * configuration may pass in a moment (503); otherwise the rail answered with a refusal of the configuration (400). */
export type ProbeResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly field: string; readonly reason: string; readonly transient: boolean };

/** A claimed attempt whose rail call's outcome is unknown (the process died between the phases, or the call timed
 * out after the rail may have acted). */
export interface ClaimedAttempt {
  /** The stored challenge (IssuedChallenge.stored). */
  readonly challenge: Record<string, unknown>;
  /** The credential's parsed data, as the adapter's readCredential produced it (`credential.data`). */
  readonly credential: unknown;
  /** SHA-256 of the credential header as sent (PresentedCredential `digest`). */
  readonly digest: Buffer;
  /** The rail reference recorded so far (a pending attempt's), if any. */
  readonly reference: string | null;
  /** When the claim was taken: a simulator whose judgement depends on the time (an authorization's validity window)
   * judges the credential as of then, as authorize would have. */
  readonly claimedAt?: Date | undefined;
}

export type InstructionKind = 'payout' | 'refund';

/** A payout (release: escrow to the payee) or refund (escrow back to the payer) the rail is asked to carry out. */
export interface RailInstructionRequest {
  readonly instructionId: string;
  readonly tenantId: string;
  readonly intentId: string;
  readonly kind: InstructionKind;
  readonly amountCents: number;
  readonly currency: string;
  /** The funding's rail reference (x402: the settlement transaction; MPP: the processor's payment id). */
  readonly fundingReference: string;
  /** What the funding attempt recorded from the rail (CredentialOutcome `details`: payer, transaction, …). */
  readonly fundingDetails: Record<string, unknown>;
  /** Times this instruction was tried before (0 the first time). */
  readonly attempts: number;
}

/** What became of an instruction. `pending`: asked, not done yet (the sweeper asks again next pass). A rail that
 * cannot be reached throws RailUnavailableError instead (the sweeper retries, counting the attempt). */
export type InstructionOutcome =
  | { readonly status: 'succeeded'; readonly reference: string }
  | { readonly status: 'pending'; readonly reference: string | null; readonly detail?: string }
  | { readonly status: 'failed'; readonly error: string };

/** A RailAdapter that reaches a real facilitator or processor. */
export interface LiveRailAdapter extends RailAdapter {
  /** The dry call of PUT /v1/admin/settlement/config: does the endpoint answer, with these secrets, for this
   * network/profile? Never throws for an unreachable rail: answers `{ ok: false }`. */
  probe(): Promise<ProbeResult>;
  /** The outcome of a claimed attempt whose rail call's outcome is unknown, asked of the rail without ever
   * charging twice (x402: settle is idempotent per authorization nonce; MPP: the same idempotency key). Throws
   * RailUnavailableError when the rail cannot tell now (the claim stays; the sweeper or a retry asks again). */
  resolve(context: FundingContext, claimed: ClaimedAttempt): Promise<CredentialOutcome>;
  /** Carries out (or records with the rail) a payout or refund. Throws RailUnavailableError when unreachable. */
  instruct(instruction: RailInstructionRequest): Promise<InstructionOutcome>;
}

/** The rail could not be reached, answered 5xx, or timed out before it could have acted. The fund route answers
 * 503 `rail.unavailable` with `Retry-After: retryAfterSeconds`, nothing moved, and the claim is released so that
 * the retry (same idempotency key) continues. `reason` is safe to show (no secret, no raw rail body). */
export class RailUnavailableError extends Error {
  constructor(
    readonly rail: RailName,
    readonly reason: string,
    readonly retryAfterSeconds: number = railRetryAfterSecondsDefault,
  ) {
    super(`${rail}: ${reason}`);
    this.name = 'RailUnavailableError';
  }
}

/** The rail call may have acted, and asking it again (resolve) did not tell: the outcome is unknown. The fund
 * route answers 503 `rail.unavailable` too, but the claim stays: after the lease, the retry with the same
 * credential or the sweeper resolves it (never a second charge). */
export class RailOutcomeUnknownError extends RailUnavailableError {
  constructor(rail: RailName, reason: string, retryAfterSeconds?: number) {
    super(rail, reason, retryAfterSeconds);
    this.name = 'RailOutcomeUnknownError';
  }
}

/** What the app gives the rails (AppOptions.secretsKey, AppOptions.railCallTimeoutMs): the box that opens stored
 * secrets (undefined when the deployment configured no SVC_SECRETS_KEY) and the deadline of one rail call. */
export interface RailRuntime {
  readonly secretBox: SecretBox | undefined;
  readonly callTimeoutMs: number;
}
