// Shared fixtures of the rail unit tests: a funding context and a valid configuration.
import type { FundingContext, RailSettings, SettlementConfig } from '../../src/rails/index.ts';

export const intentId = '3f1c9a52-7b4e-4d2a-9c61-0a8e5b7d2f10';
export const nowMs = Date.parse('2026-11-22T12:00:00Z');

export function fundingContext(overrides: Partial<FundingContext> = {}): FundingContext {
  return {
    tenantId: 'acme',
    environment: 'sandbox',
    intentId,
    amountCents: 1250,
    currency: 'usd',
    resourceUrl: `https://svc.example.test/surfaces/harbor/intents/${intentId}/fund`,
    config: undefined,
    nowMs,
    ...overrides,
  };
}

export const liveConfig: SettlementConfig = {
  rails: ['x402_usdc_base', 'processor_mpp'],
  settings: {
    x402_usdc_base: { x402_address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', x402_facilitator_url: null },
    processor_mpp: { mpp_profile_id: 'profile_live123', mpp_session_enabled: false, settlement_network_recipient: null, processor_destination: 'acct_1Live', mpp_processor_url: null },
  },
  secretsSet: [],
};

/** `config` with some of one rail's values replaced. */
export function withSettings(config: SettlementConfig, rail: string, values: RailSettings, rails: readonly string[] = config.rails): SettlementConfig {
  return { ...config, rails, settings: { ...config.settings, [rail]: { ...config.settings[rail], ...values } } };
}
