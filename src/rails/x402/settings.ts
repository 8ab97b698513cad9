// The x402 rail's settlement configuration (docs/rails.md#settlement-configuration): where the USDC is paid to
// (`x402_address`, the escrow account), and in live the facilitator that verifies and settles, with its API key.
import { evmAddressTextLengthMax } from '../../limits.ts';
import type { RailConfigurationField, RailSettingsContext, SettlementConfigFault } from '../definition.ts';
import { isValidEvmAddress } from '../evm.ts';
import { textSetting } from '../settings.ts';
import type { RailSettings } from '../types.ts';

export const x402AddressField = 'x402_address';
export const x402FacilitatorUrlField = 'x402_facilitator_url';
export const x402FacilitatorApiKeyField = 'x402_facilitator_api_key';

export const x402Fields: readonly RailConfigurationField[] = [
  {
    name: x402AddressField,
    kind: 'text',
    lengthMax: evmAddressTextLengthMax,
    description: 'The x402 payTo address (0x and 40 hex digits).',
    requiredInLive: true,
    console: { label: 'x402 receiving address', hint: '0x and 40 hex digits.' },
  },
  { name: x402FacilitatorUrlField, kind: 'endpoint', description: 'Live x402: the facilitator base URL (https; http only to loopback).' },
  { name: x402FacilitatorApiKeyField, kind: 'secret', description: 'Write-only secret: omitted keeps the stored one, null clears it.' },
];

/** `x402_address`: required once the rail is listed, and a usable EVM address (EIP-55 checksum when mixed case):
 * money sent to a mistyped address is gone. */
export function checkX402Settings(settings: RailSettings, context: RailSettingsContext): SettlementConfigFault[] {
  const code = 'settlement_config.x402_address_invalid';
  const address = textSetting(settings, x402AddressField);
  if (address === null) {
    return context.listed ? [{ code, field: x402AddressField, message: 'The x402_usdc_base rail needs an x402_address (0x and 40 hex digits).' }] : [];
  }
  return isValidEvmAddress(address) ? [] : [{ code, field: x402AddressField }];
}
