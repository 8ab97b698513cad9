// The MPP rail's settlement configuration (docs/rails.md#settlement-configuration): the seller's profile at the
// processor, the connected account payouts go to, MPP sessions and their settlement-network recipient, and in live
// the processor's API base URL with the platform's secret key.
import { evmAddressTextLengthMax, mppProfileIdLengthMax, processorDestinationLengthMax } from '../../limits.ts';
import type { RailConfigurationField, RailSettingsContext, SettlementConfigFault } from '../definition.ts';
import { isValidEvmAddress } from '../evm.ts';
import { flagSetting, textSetting } from '../settings.ts';
import type { RailSettings } from '../types.ts';

export const mppProfileIdField = 'mpp_profile_id';
export const mppSessionEnabledField = 'mpp_session_enabled';
export const settlementNetworkRecipientField = 'settlement_network_recipient';
export const processorDestinationField = 'processor_destination';
export const mppProcessorUrlField = 'mpp_processor_url';
export const mppProcessorSecretKeyField = 'mpp_processor_secret_key';

export const mppFields: readonly RailConfigurationField[] = [
  {
    name: mppProfileIdField,
    kind: 'text',
    lengthMax: mppProfileIdLengthMax,
    description: 'profile_test_… in sandbox, profile_… in live.',
    requiredInLive: true,
    console: { label: 'MPP profile id', hint: 'profile_test_… in sandbox, profile_… in live.' },
  },
  {
    name: mppSessionEnabledField,
    kind: 'flag',
    description: 'MPP sessions; they need a settlement_network_recipient.',
    console: { label: 'MPP sessions enabled' },
  },
  {
    name: settlementNetworkRecipientField,
    kind: 'text',
    lengthMax: evmAddressTextLengthMax,
    description: 'Needed when mpp_session_enabled.',
    console: { label: 'Settlement network recipient', hint: 'Needed when MPP sessions are on: 0x and 40 hex digits.' },
  },
  {
    name: processorDestinationField,
    kind: 'text',
    lengthMax: processorDestinationLengthMax,
    description: 'The processor account that receives payouts (processor_mpp).',
    requiredInLive: true,
    console: { label: 'Processor destination', hint: 'The processor account that receives card payouts, e.g. acct_….' },
  },
  { name: mppProcessorUrlField, kind: 'endpoint', description: 'Live MPP: the processor API base URL (https; http only to loopback).' },
  { name: mppProcessorSecretKeyField, kind: 'secret', description: 'Write-only secret: omitted keeps the stored one, null clears it.' },
];

/** Profile ids: the environment's prefix, then at least one of `A-Za-z0-9_-`. */
const profileIdPattern = /^profile_[A-Za-z0-9_-]+$/;
/** A destination is an opaque processor id (e.g. a connected account `acct_…`): printable ASCII, no spaces. */
const processorDestinationPattern = /^[\x21-\x7e]+$/;

/** The destination and profile are required once the rail is listed; the profile must be the environment's (a test
 * profile in sandbox, never one in live); sessions need an EVM recipient. */
export function checkMppSettings(settings: RailSettings, context: RailSettingsContext): SettlementConfigFault[] {
  const faults: SettlementConfigFault[] = [];
  const destination = textSetting(settings, processorDestinationField);
  if (context.listed && destination === null) faults.push({ code: 'settlement_config.processor_destination_required', field: processorDestinationField });
  if (destination !== null && !processorDestinationPattern.test(destination)) {
    faults.push({ code: 'settlement_config.processor_destination_required', field: processorDestinationField,
      message: 'processor_destination must be a processor id of printable characters without spaces.' });
  }
  const profileId = textSetting(settings, mppProfileIdField);
  if (context.listed && profileId === null) {
    faults.push({ code: 'settlement_config.mpp_profile_invalid', field: mppProfileIdField, message: 'The processor_mpp rail needs an mpp_profile_id.' });
  }
  if (profileId !== null && !isProfileForEnvironment(profileId, context.environment)) {
    faults.push({ code: 'settlement_config.mpp_profile_invalid', field: mppProfileIdField,
      message: context.environment === 'sandbox'
        ? 'In sandbox, mpp_profile_id must start with profile_test_.'
        : 'In live, mpp_profile_id must start with profile_ and must not be a test profile (profile_test_).' });
  }
  const recipient = textSetting(settings, settlementNetworkRecipientField);
  if (flagSetting(settings, mppSessionEnabledField) && recipient === null) {
    faults.push({ code: 'settlement_config.settlement_recipient_required', field: settlementNetworkRecipientField });
  }
  if (recipient !== null && !isValidEvmAddress(recipient)) {
    faults.push({ code: 'settlement_config.settlement_recipient_required', field: settlementNetworkRecipientField,
      message: 'settlement_network_recipient must be 0x and 40 hex digits (EIP-55 checksum if mixed case).' });
  }
  return faults;
}

function isProfileForEnvironment(profileId: string, environment: 'sandbox' | 'live'): boolean {
  if (!profileIdPattern.test(profileId)) return false;
  const isTestProfile = profileId.startsWith('profile_test_') && profileId.length > 'profile_test_'.length;
  return environment === 'sandbox' ? isTestProfile : !profileId.startsWith('profile_test_');
}
