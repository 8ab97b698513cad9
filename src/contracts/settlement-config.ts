// A tenant's settlement configuration as `PUT /v1/admin/settlement/config` takes it and both its routes answer it
// (docs/rails.md#settlement-configuration). The body schema checks types and sizes only: every case the spec names
// as a 400 is left to the rule check in src/rails/settlement-config.ts, so that each answers with its own code.
import Type, { type Static } from 'typebox';
import {
  mppProfileIdLengthMax, processorDestinationLengthMax, railEndpointUrlLengthMax, railSecretLengthMax, settlementRailsMax,
} from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';

/** The longest text an EVM address field admits before its own check answers (0x and 40 hex digits fit). */
const addressTextLengthMax = 64;
/** A rail name as sent; unknown names are refused by the rule check with `settlement_config.invalid_rail_combination`. */
const railNameTextLengthMax = 64;

const nullableText = (maxLength: number, description: string) => Type.Optional(Nullable(Type.String({ maxLength, description })));

export const SettlementConfigBody = Type.Object(
  {
    rails: Type.Array(Type.String({ maxLength: railNameTextLengthMax }), { maxItems: settlementRailsMax, description: 'x402_usdc_base and/or processor_mpp.' }),
    x402_address: nullableText(addressTextLengthMax, 'The x402 payTo address (0x and 40 hex digits).'),
    mpp_profile_id: nullableText(mppProfileIdLengthMax, 'profile_test_… in sandbox, profile_… in live.'),
    mpp_session_enabled: Type.Optional(Type.Boolean()),
    settlement_network_recipient: nullableText(addressTextLengthMax, 'Needed when mpp_session_enabled.'),
    processor_destination: nullableText(processorDestinationLengthMax, 'The processor account that receives payouts (processor_mpp).'),
    x402_facilitator_url: nullableText(railEndpointUrlLengthMax, 'Live x402: the facilitator base URL (https; http only to loopback).'),
    mpp_processor_url: nullableText(railEndpointUrlLengthMax, 'Live MPP: the processor API base URL (https; http only to loopback).'),
    x402_facilitator_api_key: nullableText(railSecretLengthMax, 'Write-only secret: omitted keeps the stored one, null clears it.'),
    mpp_processor_secret_key: nullableText(railSecretLengthMax, 'Write-only secret: omitted keeps the stored one, null clears it.'),
  },
  { additionalProperties: false },
);
export type SettlementConfigBody = Static<typeof SettlementConfigBody>;

/** The stored configuration; the secrets only as whether one is stored. */
export const SettlementConfigAnswer = Type.Object({
  object: Type.Literal('settlement_config'),
  environment: Type.Enum(['sandbox', 'live'] as const),
  rails: Type.Array(Type.String()),
  x402_address: Nullable(Type.String()),
  mpp_profile_id: Nullable(Type.String()),
  mpp_session_enabled: Type.Boolean(),
  settlement_network_recipient: Nullable(Type.String()),
  processor_destination: Nullable(Type.String()),
  x402_facilitator_url: Nullable(Type.String()),
  x402_facilitator_api_key_set: Type.Boolean(),
  mpp_processor_url: Nullable(Type.String()),
  mpp_processor_secret_key_set: Type.Boolean(),
  updated_at: Nullable(Timestamp),
});
export type SettlementConfigAnswer = Static<typeof SettlementConfigAnswer>;
