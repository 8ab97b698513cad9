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
export const x402SchemeField = 'x402_scheme';
export const x402CaptureAuthorizerField = 'x402_capture_authorizer';
export const x402ReceiverAuthorizerKeyField = 'x402_receiver_authorizer_key';

/** The x402 schemes a live tenant funds with: `exact` pays the `x402_address` at funding (the default);
 * `auth-capture` holds the payment in the scheme's escrow contract and captures it to the `x402_address` (or voids
 * it back to the payer) when the intent settles (docs/rails.md#x402-auth-capture-escrow-held-at-the-rail). */
export const x402Schemes = ['exact', 'auth-capture'] as const;

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
  {
    name: x402SchemeField,
    kind: 'text',
    lengthMax: 32,
    description: 'Live x402: `exact` (default; paid to x402_address at funding) or `auth-capture` (held in escrow at the rail, captured to x402_address on release, voided back on refund).',
    console: { label: 'x402 scheme', hint: 'exact or auth-capture.' },
  },
  {
    name: x402CaptureAuthorizerField,
    kind: 'text',
    lengthMax: evmAddressTextLengthMax,
    description: "auth-capture: the facilitator's operator address (its /supported `captureAuthorizer`), which relays authorize, capture and void.",
  },
  {
    name: x402ReceiverAuthorizerKeyField,
    kind: 'secret',
    description: "auth-capture: the receiver authorizer's private key (0x and 64 hex digits) that signs this service's consent to each capture and void. Write-only, sealed at rest.",
  },
];

/** `x402_address`: required once the rail is listed, and a usable EVM address (EIP-55 checksum when mixed case):
 * money sent to a mistyped address is gone. */
export function checkX402Settings(settings: RailSettings, context: RailSettingsContext): SettlementConfigFault[] {
  return [...checkAddress(settings, context), ...checkEscrow(settings)];
}

function checkAddress(settings: RailSettings, context: RailSettingsContext): SettlementConfigFault[] {
  const code = 'settlement_config.x402_address_invalid';
  const address = textSetting(settings, x402AddressField);
  if (address === null) {
    return context.listed ? [{ code, field: x402AddressField, message: 'The x402_usdc_base rail needs an x402_address (0x and 40 hex digits).' }] : [];
  }
  return isValidEvmAddress(address) ? [] : [{ code, field: x402AddressField }];
}

/** `x402_scheme` one of x402Schemes; `auth-capture` names the facilitator's operator. The consent key is a secret,
 * checked when a live fund uses it (funding.rail_not_configured without one). */
function checkEscrow(settings: RailSettings): SettlementConfigFault[] {
  const code = 'settlement_config.x402_escrow_invalid';
  const scheme = textSetting(settings, x402SchemeField);
  if (scheme !== null && !(x402Schemes as readonly string[]).includes(scheme)) return [{ code, field: x402SchemeField }];
  const authorizer = textSetting(settings, x402CaptureAuthorizerField);
  if (authorizer !== null && !isValidEvmAddress(authorizer)) return [{ code, field: x402CaptureAuthorizerField }];
  if (scheme === 'auth-capture' && authorizer === null) {
    return [{ code, field: x402CaptureAuthorizerField, message: "x402_scheme auth-capture needs x402_capture_authorizer, the facilitator's operator address." }];
  }
  return [];
}

/** The scheme a tenant's x402 settings select (`exact` when not set). */
export function x402SchemeOf(settings: RailSettings): (typeof x402Schemes)[number] {
  return textSetting(settings, x402SchemeField) === 'auth-capture' ? 'auth-capture' : 'exact';
}
