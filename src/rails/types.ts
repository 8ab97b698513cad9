// The contract between the fund route and the funding rails: what a rail is given, what it issues in a 402, what
// it reads from a retry, and what it decides. Re-exported by ./index.ts, which is where callers import it from.
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
    };

/** An RFC 9457 problem for a credential the rail refused (MPP's problem types, used by both rails). */
export interface PaymentProblem {
  type: string;
  title: string;
  detail: string;
}

export type CredentialOutcome =
  | { readonly status: 'succeeded'; readonly reference: string; readonly funding: Record<string, unknown>; readonly headers?: Record<string, string> }
  | { readonly status: 'pending'; readonly reference: string; readonly funding: Record<string, unknown>; readonly headers?: Record<string, string> }
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
  /** A pending credential presented again (a poll): the sandbox settles it now. */
  poll(context: FundingContext, pending: { reference: string; stored: Record<string, unknown> }): Promise<CredentialOutcome>;
}
