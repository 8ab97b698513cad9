// The contract between the engine and the funding rails: what a rail is given, what it issues in a 402, what it
// reads from a retry, what it decides, and what it is configured with. Re-exported by ./index.ts (the registry),
// which is where callers import it from; each rail's folder implements it, and ./definition.ts declares a rail.
import type { SecretBox } from '../infra/secret-box.ts';
import { railRetryAfterSecondsDefault } from '../limits.ts';

/** A rail's wire name (`x402_usdc_base`, `processor_mpp`): whichever rails the registry (./index.ts) holds. */
export type RailName = string;

/** What a rail can be asked to do with money. `charge` takes the payment when the intent is funded (the 402
 * handshake); `payout` (escrow to the payee on release) and `refund` (escrow back to the payer) carry out a settled
 * intent's money; `authorize`, `capture` and `void` are a hold taken at funding and captured or released later. A
 * rail declares the ones it carries out in each environment (RailDefinition.operations). */
export type RailOperation = 'charge' | 'authorize' | 'capture' | 'void' | 'refund' | 'payout';

/** One configuration value: text (null when not set) or a flag. */
export type RailSettingValue = string | boolean | null;

/** One rail's public configuration values, by field name (RailDefinition.fields): every field of the rail, text
 * null when not set, flags false. */
export type RailSettings = Readonly<Record<string, RailSettingValue>>;

/** A tenant's settlement configuration (docs/rails.md#settlement-configuration), stored per rail. */
export interface SettlementConfig {
  /** The rails the tenant funds with, in the order it listed them. */
  readonly rails: readonly RailName[];
  /** Each registered rail's public values, by rail name (a rail with nothing set has every field null or false). */
  readonly settings: Readonly<Record<RailName, RailSettings>>;
  /** The secret fields a value is stored for (the values themselves never leave storage but through
   * openRailSecrets, to a live adapter). */
  readonly secretsSet: readonly string[];
  /** Set by storage: when the configuration was last written (RFC 3339). */
  readonly updated_at?: string;
}

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
  /** The intent's deadline (epoch ms): an escrow held at the rail is captured by then, plus a margin. */
  readonly intentDeadlineMs?: number;
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

/** One rail's secrets, decrypted, by field name (src/infra/secret-box.ts seals them at rest); null when none is
 * stored. Never logged, never answered, never exported: only that rail's live adapter holds them, to authenticate to
 * its facilitator or processor. */
export type RailSecrets = Readonly<Record<string, string | null>>;

/** What a live adapter is built with: its rail's configuration values (with its endpoint URL) and secrets, and the
 * deadline of one HTTP call to the rail. */
export interface LiveRailOptions {
  /** The rail name as the intent carries it (see RailAdapter.settlementRail). */
  readonly settlementRail: string;
  /** This rail's values of the tenant's settlement configuration. */
  readonly settings: RailSettings;
  /** This rail's secrets, opened. */
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

/** The operations a settled intent instructs its live rail to carry out. */
export type InstructionKind = Extract<RailOperation, 'payout' | 'refund'>;

/** A payout (release: escrow to the payee) or refund (escrow back to the payer) the rail is asked to carry out, for
 * `amountCents` (today the intent's amount; the request names it so that settling part of an amount needs no new
 * shape). */
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
  | { readonly status: 'succeeded'; readonly reference: string; readonly details?: Record<string, unknown> }
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
  /** Carries out (or records with the rail) a payout or refund, the operations RailDefinition.operations declares
   * for live. Throws RailUnavailableError when unreachable. */
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
