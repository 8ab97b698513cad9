// validateSettlementConfig: each of the spec's five 400 cases with its own code, and normalization.
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { isValidEvmAddress, toChecksumAddress } from '../../src/rails/evm.ts';
import type { SettlementConfigBody } from '../../src/contracts/settlement-config.ts';
import { validateSettlementConfig } from '../../src/rails/settlement-config.ts';

const address = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const sandboxBody: SettlementConfigBody = {
  rails: ['x402_usdc_base', 'processor_mpp'],
  x402_address: address,
  mpp_profile_id: 'profile_test_abc123',
  processor_destination: 'acct_1Sandbox',
};

function codeOf(body: SettlementConfigBody, environment: 'sandbox' | 'live' = 'sandbox'): string {
  try {
    validateSettlementConfig(body, environment);
  } catch (error) {
    if (error instanceof ServiceError) {
      expect(error.statusCode).toBe(400);
      return error.code;
    }
    throw error;
  }
  return 'valid';
}

describe('validateSettlementConfig', () => {
  it('normalizes a valid sandbox configuration per rail: absent fields null, session off, no secret', () => {
    expect(validateSettlementConfig(sandboxBody, 'sandbox')).toEqual({
      rails: ['x402_usdc_base', 'processor_mpp'],
      settings: {
        x402_usdc_base: { x402_address: address, x402_facilitator_url: null, x402_scheme: null, x402_capture_authorizer: null },
        processor_mpp: {
          mpp_profile_id: 'profile_test_abc123',
          mpp_session_enabled: false,
          settlement_network_recipient: null,
          processor_destination: 'acct_1Sandbox',
          mpp_processor_url: null,
        },
      },
    });
  });

  it('x402_scheme is exact or auth-capture; auth-capture names the facilitator\'s operator', () => {
    expect(codeOf({ ...sandboxBody, x402_scheme: 'auth-capture', x402_capture_authorizer: address })).toBe('valid');
    expect(codeOf({ ...sandboxBody, x402_scheme: 'exact' })).toBe('valid');
    expect(codeOf({ ...sandboxBody, x402_scheme: 'escrow' })).toBe('settlement_config.x402_escrow_invalid');
    expect(codeOf({ ...sandboxBody, x402_scheme: 'auth-capture' })).toBe('settlement_config.x402_escrow_invalid');
    expect(codeOf({ ...sandboxBody, x402_scheme: 'auth-capture', x402_capture_authorizer: '0x12' })).toBe('settlement_config.x402_escrow_invalid');
  });

  it('accepts a valid live configuration with sessions', () => {
    const body = { ...sandboxBody, mpp_profile_id: 'profile_live9', mpp_session_enabled: true, settlement_network_recipient: address.toLowerCase() };
    expect(codeOf(body, 'live')).toBe('valid');
  });

  it.each<[string, string[]]>([
    ['empty', []],
    ['unknown', ['x402_usdc_base', 'stripe_connect']],
    ['duplicate', ['x402_usdc_base', 'x402_usdc_base']],
    ['client alias', ['stripe_mpp']],
  ])('refuses %s rails as invalid_rail_combination', (_name, rails) => {
    expect(codeOf({ ...sandboxBody, rails })).toBe('settlement_config.invalid_rail_combination');
  });

  it('refuses processor_mpp without a destination', () => {
    for (const processor_destination of [undefined, null, '', '   ']) {
      expect(codeOf({ ...sandboxBody, processor_destination })).toBe('settlement_config.processor_destination_required');
    }
    expect(codeOf({ ...sandboxBody, processor_destination: 'acct 1' })).toBe('settlement_config.processor_destination_required');
  });

  it('refuses an x402 address that is not 0x and 40 hex digits, or a wrong EIP-55 checksum', () => {
    for (const x402_address of ['0x1234', address.slice(2), `${address}00`, '0xZZ9693Bc6afc0C5328bA36FaF03C514EF312287C', address.replace('Bc', 'bC'), null]) {
      expect(codeOf({ ...sandboxBody, x402_address })).toBe('settlement_config.x402_address_invalid');
    }
    expect(codeOf({ ...sandboxBody, x402_address: address.toLowerCase() })).toBe('valid');
    expect(codeOf({ rails: ['processor_mpp'], mpp_profile_id: 'profile_test_a', processor_destination: 'acct_1' })).toBe('valid');
    expect(codeOf({ rails: ['processor_mpp'], mpp_profile_id: 'profile_test_a', processor_destination: 'acct_1', x402_address: '0x12' })).toBe(
      'settlement_config.x402_address_invalid',
    );
  });

  it('requires the environment’s MPP profile prefix', () => {
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'profile_live1' }, 'sandbox')).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'profile_test_' }, 'sandbox')).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'profile_test_abc' }, 'live')).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'prof_abc' }, 'live')).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'profile_' }, 'live')).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: null })).toBe('settlement_config.mpp_profile_invalid');
    expect(codeOf({ ...sandboxBody, mpp_profile_id: 'profile_abc' }, 'live')).toBe('valid');
  });

  it('requires a valid settlement-network recipient when sessions are on', () => {
    expect(codeOf({ ...sandboxBody, mpp_session_enabled: true })).toBe('settlement_config.settlement_recipient_required');
    expect(codeOf({ ...sandboxBody, mpp_session_enabled: true, settlement_network_recipient: 'tempo:abc' })).toBe(
      'settlement_config.settlement_recipient_required',
    );
    expect(codeOf({ ...sandboxBody, mpp_session_enabled: true, settlement_network_recipient: address })).toBe('valid');
  });

  it('checks the cases in the spec order', () => {
    expect(codeOf({ rails: ['processor_mpp', 'nope'], mpp_session_enabled: true })).toBe('settlement_config.invalid_rail_combination');
    expect(codeOf({ rails: ['processor_mpp', 'x402_usdc_base'], mpp_session_enabled: true })).toBe('settlement_config.processor_destination_required');
    // Each rule broken at once, then one fixed at a time: the next in the spec's order answers, whichever rail it is.
    const broken: SettlementConfigBody = {
      rails: ['x402_usdc_base', 'processor_mpp'], x402_address: '0x12', mpp_profile_id: 'profile_live1', mpp_session_enabled: true,
      x402_facilitator_url: 'ftp://facilitator.example.com', mpp_processor_url: 'http://processor.example.com',
    };
    const fixes: [SettlementConfigBody, string][] = [
      [broken, 'settlement_config.processor_destination_required'],
      [{ ...broken, processor_destination: 'acct_1' }, 'settlement_config.x402_address_invalid'],
      [{ ...broken, processor_destination: 'acct_1', x402_address: address }, 'settlement_config.mpp_profile_invalid'],
      [{ ...broken, processor_destination: 'acct_1', x402_address: address, mpp_profile_id: 'profile_test_1' }, 'settlement_config.settlement_recipient_required'],
      [{ ...broken, processor_destination: 'acct_1', x402_address: address, mpp_profile_id: 'profile_test_1', mpp_session_enabled: false }, 'settlement_config.rail_endpoint_invalid'],
    ];
    for (const [body, code] of fixes) expect(codeOf(body)).toBe(code);
    // Two endpoints at fault: the first rail's is named.
    try {
      validateSettlementConfig({ ...fixes.at(-1)![0] }, 'sandbox');
      expect.unreachable();
    } catch (error) {
      expect((error as ServiceError).details).toEqual({ field: 'x402_facilitator_url' });
    }
  });
});

describe('EVM addresses', () => {
  it('computes EIP-55 checksums (USDC on Base and Base Sepolia)', () => {
    for (const checksummed of ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', '0x036CbD53842c5426634e7929541eC2318f3dCF7e']) {
      expect(toChecksumAddress(checksummed.toLowerCase())).toBe(checksummed);
      expect(isValidEvmAddress(checksummed)).toBe(true);
      expect(isValidEvmAddress(checksummed.toUpperCase().replace('0X', '0x'))).toBe(true);
    }
    expect(isValidEvmAddress('0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913')).toBe(false);
  });
});
