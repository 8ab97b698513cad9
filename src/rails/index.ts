// The funding rails behind one interface (docs/rails.md). The fund route asks railAdapterFor for the adapter of
// an intent's rail in the tenant's environment and drives the 402 handshake through it. Sandbox tenants get
// simulators with documented test credentials; live tenants get nothing faked: a live adapter that reaches the
// facilitator (x402) or processor (MPP) the tenant configured, or 422 `funding.rail_not_configured`.
import { ServiceError } from '../errors/service-error.ts';
import { MppSandboxAdapter, readMppCredential } from './mpp.ts';
import type { SettlementConfig } from './settlement-config.ts';
import type { FundingContext, LiveRailAdapter, LiveRailOptions, PresentedCredential, RailAdapter, RailName, RailSecrets } from './types.ts';
import { readX402Credential, X402SandboxAdapter } from './x402.ts';

export type {
  CredentialOutcome,
  FundingContext,
  IssuedChallenge,
  PaymentProblem,
  PresentedCredential,
  RailAdapter,
  RailName,
  ClaimedAttempt,
  InstructionKind,
  InstructionOutcome,
  LiveRailAdapter,
  LiveRailOptions,
  ProbeResult,
  RailInstructionRequest,
  RailRuntime,
  RailSecrets,
} from './types.ts';
export { RailOutcomeUnknownError, RailUnavailableError } from './types.ts';
export type { RailSecretField, SecretChanges, SettlementConfig } from './settlement-config.ts';
export type { SettlementConfigBody } from '../contracts/settlement-config.ts';
export { railSecretFields, secretChangesOf, validateSettlementConfig } from './settlement-config.ts';
export { paymentProblem, paymentProblemTypeBase, type PaymentProblemCode } from './wire.ts';
export {
  sandboxX402PayTo,
  sandboxX402Payers,
  x402ChallengeHeaderName,
  x402CredentialHeaderName,
  x402Networks,
  x402ResponseHeaderName,
} from './x402.ts';
export { mppChallengeHeaderName, mppCredentialHeaderName, mppReceiptHeaderName, sandboxMppTokens } from './mpp.ts';

export const railNames: readonly RailName[] = ['x402_usdc_base', 'processor_mpp'];

/** Each rail's reader of the credential a fund request presents (what its adapter's readCredential answers). They
 * need no intent, so the engine reads credentials before it has read the intent that decides the rail. */
export const credentialReaders: Readonly<Record<RailName, (headers: Record<string, string | string[] | undefined>) => PresentedCredential>> = {
  x402_usdc_base: readX402Credential,
  processor_mpp: readMppCredential,
};

/** The client's rail names that mean one of ours (docs/rails.md#funding-rails), where the alias changes nothing. The
 * adapter echoes the name the intent carries as `funding.settlement_rail`, since the client checks it against its own
 * list. */
export const railAliases: Readonly<Record<string, RailName>> = { stripe_mpp: 'processor_mpp' };

/** Our rail for a rail name (ours or an alias), or undefined when we do not run it. */
export function resolveRailName(rail: string): RailName | undefined {
  if ((railNames as readonly string[]).includes(rail)) return rail as RailName;
  return Object.hasOwn(railAliases, rail) ? railAliases[rail] : undefined;
}

/** Rails that can carry each currency: both rails settle US dollars only (USDC, and card/processor charges in usd). */
const railCurrencies: Readonly<Record<RailName, readonly string[]>> = { x402_usdc_base: ['usd'], processor_mpp: ['usd'] };

/** The live adapter of each rail, loaded on first use: their protocol libraries (@x402/core's facilitator client,
 * mppx with stripe and viem) hold some 40 MB of heap after start-up (docs/performance.md), which a sandbox-only
 * process never needs and would otherwise carry, and collect around, on every request. */
const liveAdapters: Readonly<Record<RailName, ((options: LiveRailOptions) => Promise<LiveRailAdapter>) | undefined>> = {
  x402_usdc_base: async (options) => new (await import('./x402-live.ts')).X402LiveAdapter(options),
  processor_mpp: async (options) => new (await import('./mpp-live.ts')).MppLiveAdapter(options),
};

/** The configuration field naming each rail's live endpoint. */
export const liveEndpointFields: Readonly<Record<RailName, 'x402_facilitator_url' | 'mpp_processor_url'>> = {
  x402_usdc_base: 'x402_facilitator_url',
  processor_mpp: 'mpp_processor_url',
};

/** What a live tenant must have configured for each rail before funding could even be attempted. */
function missingLiveConfiguration(rail: RailName, config: SettlementConfig | undefined): string[] {
  const missing: string[] = [];
  if (!config?.rails.includes(rail)) missing.push('rails');
  if (rail === 'x402_usdc_base' && !config?.x402_address) missing.push('x402_address');
  if (rail === 'processor_mpp' && !config?.mpp_profile_id) missing.push('mpp_profile_id');
  if (rail === 'processor_mpp' && !config?.processor_destination) missing.push('processor_destination');
  if (config && !config[liveEndpointFields[rail]]) missing.push(liveEndpointFields[rail]);
  return missing;
}

/** The live adapter of `rail` for a configuration (the probe of a PUT, the sweeper), or undefined when this
 * deployment has none for the rail. */
export async function liveAdapterFor(rail: RailName, options: LiveRailOptions): Promise<LiveRailAdapter | undefined> {
  return liveAdapters[rail]?.(options);
}

/** What railAdapterFor needs beyond the funding context in live: the tenant's secrets, opened, and the call deadline. */
export interface LiveAccess {
  readonly secrets: RailSecrets;
  readonly callTimeoutMs: number;
}

/**
 * The adapter for an intent's rail in a tenant's environment. Rejects with ServiceError 422:
 * - `funding.rail_unsupported` for a rail name we do not run (e.g. the client's `stripe_connect`);
 * - `funding.currency_not_allowed` when the rail cannot carry the currency (both rails: usd only);
 * - `funding.rail_not_configured` when a sandbox tenant's configuration leaves the rail out of `rails`, and in
 *   live without the rail's configuration (its endpoint included) or when this deployment has no live adapter
 *   for the rail (nothing is faked in live).
 */
export async function railAdapterFor(
  rail: string,
  context: Pick<FundingContext, 'environment' | 'config' | 'currency'>,
  live?: LiveAccess,
): Promise<RailAdapter> {
  const railName = resolveRailName(rail);
  if (!railName) {
    throw new ServiceError('funding.rail_unsupported', {
      message: `This service does not run the settlement rail ${JSON.stringify(rail)}; use x402_usdc_base or processor_mpp.`,
      details: { settlement_rail: rail, supported_rails: [...railNames, ...Object.keys(railAliases)] },
    });
  }
  const currencies = railCurrencies[railName];
  if (!currencies.includes(context.currency)) {
    throw new ServiceError('funding.currency_not_allowed', {
      message: `The ${railName} rail carries ${currencies.join(', ')} only, not ${JSON.stringify(context.currency)}.`,
      details: { settlement_rail: rail, currency: context.currency, allowed_currencies: currencies },
    });
  }
  if (context.environment === 'live') {
    const missing = missingLiveConfiguration(railName, context.config);
    if (missing.length > 0) {
      throw new ServiceError('funding.rail_not_configured', {
        message: `Live funding on ${railName} needs the settlement configuration (PUT /v1/admin/settlement/config): ${missing.join(', ')}.`,
        details: { settlement_rail: rail, missing_fields: missing },
      });
    }
    const adapter = live && context.config
      ? await liveAdapterFor(railName, { settlementRail: rail, config: context.config, secrets: live.secrets, callTimeoutMs: live.callTimeoutMs })
      : undefined;
    if (adapter) return adapter;
    throw new ServiceError('funding.rail_not_configured', {
      message: `Live funding on ${railName} needs a ${railName === 'x402_usdc_base' ? 'facilitator' : 'payment processor'} connection, and this deployment has none for it.`,
      details: { settlement_rail: rail, missing_fields: [liveEndpointFields[railName]] },
    });
  }
  if (context.config && !context.config.rails.includes(railName)) {
    throw new ServiceError('funding.rail_not_configured', {
      message: `The settlement configuration of this tenant does not enable ${railName}; add it to rails.`,
      details: { settlement_rail: rail, missing_fields: ['rails'] },
    });
  }
  return railName === 'x402_usdc_base' ? new X402SandboxAdapter(rail) : new MppSandboxAdapter(rail);
}
