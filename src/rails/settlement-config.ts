// A tenant's settlement configuration (spec: Settlement configuration; docs/rails.md#settlement-configuration): which
// rails it funds with and where the money goes on each. Pure validation here; storage in
// db/settlement-config-repository.ts, routes in surfaces/gateway/routes/settlement-config.ts. Each of the spec's five
// 400 cases has its own code.
import type { Environment } from '../credentials/api-key.ts';
import type { SettlementConfigBody } from '../contracts/settlement-config.ts';
import { ServiceError } from '../errors/service-error.ts';
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
  /** Live x402: the facilitator's base URL (its `/verify`, `/settle`, `/supported`). */
  x402_facilitator_url: string | null;
  /** Live MPP: the payment processor's API base URL. */
  mpp_processor_url: string | null;
  /** Whether a facilitator API key / processor secret key is stored (the secrets themselves are never read back). */
  x402_facilitator_api_key_set: boolean;
  mpp_processor_secret_key_set: boolean;
  /** Set by storage: when the configuration was last written (RFC 3339). */
  updated_at?: string;
}


/** The secrets a PUT changes: `undefined` keeps the stored one, null clears it, a string replaces it. */
export interface SecretChanges {
  x402_facilitator_api_key: string | null | undefined;
  mpp_processor_secret_key: string | null | undefined;
}

/** The names of the write-only secret fields. */
export const railSecretFields = ['x402_facilitator_api_key', 'mpp_processor_secret_key'] as const;
export type RailSecretField = (typeof railSecretFields)[number];

const configurableRails: readonly RailName[] = ['x402_usdc_base', 'processor_mpp'];



/** Profile ids: the environment's prefix, then at least one of `A-Za-z0-9_-`. */
const profileIdPattern = /^profile_[A-Za-z0-9_-]+$/;
/** A destination is an opaque processor id (e.g. a connected account `acct_…`): printable ASCII, no spaces. */
const processorDestinationPattern = /^[\x21-\x7e]+$/;

type SettlementConfigErrorCode =
  | 'settlement_config.invalid_rail_combination'
  | 'settlement_config.processor_destination_required'
  | 'settlement_config.x402_address_invalid'
  | 'settlement_config.mpp_profile_invalid'
  | 'settlement_config.settlement_recipient_required'
  | 'settlement_config.rail_endpoint_invalid';

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
  const facilitatorUrl = railEndpointUrl(body.x402_facilitator_url, 'x402_facilitator_url');
  const processorUrl = railEndpointUrl(body.mpp_processor_url, 'mpp_processor_url');
  return {
    rails,
    x402_address: x402Address,
    mpp_profile_id: mppProfileId,
    mpp_session_enabled: sessionEnabled,
    settlement_network_recipient: recipient,
    processor_destination: processorDestination,
    x402_facilitator_url: facilitatorUrl,
    mpp_processor_url: processorUrl,
    // Storage decides these from what is stored and the body's secret changes (secretChangesOf).
    x402_facilitator_api_key_set: false,
    mpp_processor_secret_key_set: false,
  };
}

/** What the body asks of each secret: omitted keeps, null or blank clears, a string replaces. */
export function secretChangesOf(body: SettlementConfigBody): SecretChanges {
  const change = (value: string | null | undefined) => (value === undefined ? undefined : optionalText(value));
  return { x402_facilitator_api_key: change(body.x402_facilitator_api_key), mpp_processor_secret_key: change(body.mpp_processor_secret_key) };
}

/** Hosts an `http:` endpoint may name: only this machine, where nothing crosses a network in the clear. */
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A rail endpoint: an absolute https URL without credentials, query or fragment (http only to a loopback host);
 * stored without a trailing slash. */
function railEndpointUrl(value: string | null | undefined, field: string): string | null {
  const text = optionalText(value);
  if (text === null) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return invalid('settlement_config.rail_endpoint_invalid', field, `${field} is not an absolute URL.`);
  }
  const loopback = loopbackHosts.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    invalid('settlement_config.rail_endpoint_invalid', field, `${field} must be https (http only to a loopback host).`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    invalid('settlement_config.rail_endpoint_invalid', field, `${field} may not carry credentials, a query or a fragment; put secrets in their own fields.`);
  }
  return url.toString().replace(/\/+$/, '');
}

function isProfileForEnvironment(profileId: string, environment: Environment): boolean {
  if (!profileIdPattern.test(profileId)) return false;
  const isTestProfile = profileId.startsWith('profile_test_') && profileId.length > 'profile_test_'.length;
  return environment === 'sandbox' ? isTestProfile : !profileId.startsWith('profile_test_');
}
