// A tenant's settlement configuration (spec: Settlement configuration; docs/rails.md#settlement-configuration): which
// rails it funds with and where the money goes on each. Pure validation here; storage in
// db/settlement-config-repository.ts, routes in surfaces/gateway/routes/settlement-config.ts. Each of the spec's five
// 400 cases has its own code.
import type { Environment } from '../credentials/api-key.ts';
import { ServiceError } from '../errors/service-error.ts';
import { mppProfileIdLengthMax, processorDestinationLengthMax, settlementRailsMax } from '../limits.ts';
import { isValidEvmAddress } from './evm.ts';

/** The rails this service runs, by their wire names. */
export type RailName = 'x402_usdc_base' | 'processor_mpp';

export interface SettlementConfig {
  rails: RailName[];
  x402_address: string | null;
  mpp_profile_id: string | null;
  mpp_session_enabled: boolean;
  settlement_network_recipient: string | null;
  processor_destination: string | null;
  /** Set by storage: when the configuration was last written (RFC 3339). */
  updated_at?: string;
}

/** The body of `PUT /v1/admin/settlement/config`, as the route's schema admits it. */
export interface SettlementConfigBody {
  rails: string[];
  x402_address?: string | null;
  mpp_profile_id?: string | null;
  mpp_session_enabled?: boolean;
  settlement_network_recipient?: string | null;
  processor_destination?: string | null;
}

const configurableRails: readonly RailName[] = ['x402_usdc_base', 'processor_mpp'];

const nullableString = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;

/** JSON schema of the body: types and sizes only. Unknown fields are a 400 `request.invalid`; everything the spec
 * names as a 400 case is left to validateSettlementConfig, so that each answers with its own code. */
export const settlementConfigBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rails'],
  properties: {
    rails: { type: 'array', maxItems: settlementRailsMax, items: { type: 'string', maxLength: 64 } },
    x402_address: nullableString(64),
    mpp_profile_id: nullableString(mppProfileIdLengthMax),
    mpp_session_enabled: { type: 'boolean' },
    settlement_network_recipient: nullableString(64),
    processor_destination: nullableString(processorDestinationLengthMax),
  },
} as const;

/** Profile ids: the environment's prefix, then at least one of `A-Za-z0-9_-`. */
const profileIdPattern = /^profile_[A-Za-z0-9_-]+$/;
/** A destination is an opaque processor id (e.g. a connected account `acct_…`): printable ASCII, no spaces. */
const processorDestinationPattern = /^[\x21-\x7e]+$/;

type SettlementConfigErrorCode =
  | 'settlement_config.invalid_rail_combination'
  | 'settlement_config.processor_destination_required'
  | 'settlement_config.x402_address_invalid'
  | 'settlement_config.mpp_profile_invalid'
  | 'settlement_config.settlement_recipient_required';

function invalid(code: SettlementConfigErrorCode, field: string, message?: string): never {
  throw new ServiceError(code, { details: { field }, ...(message ? { message } : {}) });
}

/** Empty or blank text means "not set". */
function optionalText(value: string | null | undefined): string | null {
  return value === undefined || value === null || value.trim() === '' ? null : value;
}

function validateRails(rails: readonly string[]): RailName[] {
  const code = 'settlement_config.invalid_rail_combination';
  if (rails.length === 0) invalid(code, 'rails', 'rails must name at least one rail (x402_usdc_base, processor_mpp).');
  const seen = new Set<string>();
  for (const rail of rails) {
    if (!(configurableRails as readonly string[]).includes(rail)) {
      invalid(code, 'rails', `rails may only contain x402_usdc_base and processor_mpp; ${JSON.stringify(rail)} is not a rail.`);
    }
    if (seen.has(rail)) invalid(code, 'rails', `rails names ${rail} twice.`);
    seen.add(rail);
  }
  return rails as RailName[];
}

/** Checks a configuration body for the tenant's environment and returns it normalized (absent fields null,
 * blank text null). Throws ServiceError 400 with the spec case's code, checked in the spec's order. */
export function validateSettlementConfig(body: SettlementConfigBody, environment: Environment): SettlementConfig {
  const rails = validateRails(body.rails);
  const x402Address = optionalText(body.x402_address);
  const mppProfileId = optionalText(body.mpp_profile_id);
  const recipient = optionalText(body.settlement_network_recipient);
  const processorDestination = optionalText(body.processor_destination);
  const sessionEnabled = body.mpp_session_enabled ?? false;

  if (rails.includes('processor_mpp') && processorDestination === null) {
    invalid('settlement_config.processor_destination_required', 'processor_destination');
  }
  if (processorDestination !== null && !processorDestinationPattern.test(processorDestination)) {
    invalid('settlement_config.processor_destination_required', 'processor_destination',
      'processor_destination must be a processor id of printable characters without spaces.');
  }
  if (rails.includes('x402_usdc_base') && x402Address === null) {
    invalid('settlement_config.x402_address_invalid', 'x402_address', 'The x402_usdc_base rail needs an x402_address (0x and 40 hex digits).');
  }
  if (x402Address !== null && !isValidEvmAddress(x402Address)) {
    invalid('settlement_config.x402_address_invalid', 'x402_address');
  }
  if (rails.includes('processor_mpp') && mppProfileId === null) {
    invalid('settlement_config.mpp_profile_invalid', 'mpp_profile_id', 'The processor_mpp rail needs an mpp_profile_id.');
  }
  if (mppProfileId !== null && !isProfileForEnvironment(mppProfileId, environment)) {
    invalid('settlement_config.mpp_profile_invalid', 'mpp_profile_id',
      environment === 'sandbox'
        ? 'In sandbox, mpp_profile_id must start with profile_test_.'
        : 'In live, mpp_profile_id must start with profile_ and must not be a test profile (profile_test_).');
  }
  if (sessionEnabled && recipient === null) {
    invalid('settlement_config.settlement_recipient_required', 'settlement_network_recipient');
  }
  if (recipient !== null && !isValidEvmAddress(recipient)) {
    invalid('settlement_config.settlement_recipient_required', 'settlement_network_recipient',
      'settlement_network_recipient must be 0x and 40 hex digits (EIP-55 checksum if mixed case).');
  }
  return {
    rails,
    x402_address: x402Address,
    mpp_profile_id: mppProfileId,
    mpp_session_enabled: sessionEnabled,
    settlement_network_recipient: recipient,
    processor_destination: processorDestination,
  };
}

function isProfileForEnvironment(profileId: string, environment: Environment): boolean {
  if (!profileIdPattern.test(profileId)) return false;
  const isTestProfile = profileId.startsWith('profile_test_') && profileId.length > 'profile_test_'.length;
  return environment === 'sandbox' ? isTestProfile : !profileId.startsWith('profile_test_');
}
