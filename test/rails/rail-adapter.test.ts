// railAdapterFor: which rail names we run, which currencies they carry, and that live fakes nothing.
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors/service-error.ts';
import { railAdapterFor, registeredRails, resolveRailName } from '../../src/rails/index.ts';
import { X402LiveAdapter } from '../../src/rails/x402/live.ts';
import { fundingContext, liveConfig, withSettings } from './fixtures.ts';

async function refusal(run: () => Promise<unknown>): Promise<ServiceError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
}

describe('railAdapterFor', () => {
  it('gives sandbox tenants a simulator for each of our rails, configured or not', async () => {
    for (const { name: rail } of registeredRails()) {
      expect((await railAdapterFor(rail, { environment: 'sandbox', config: undefined, currency: 'usd' })).rail).toBe(rail);
      expect((await railAdapterFor(rail, { environment: 'sandbox', config: liveConfig, currency: 'usd' })).rail).toBe(rail);
    }
  });

  it("runs the client's stripe_mpp as processor_mpp and echoes its name in funding", async () => {
    expect(resolveRailName('stripe_mpp')).toBe('processor_mpp');
    const adapter = await railAdapterFor('stripe_mpp', { environment: 'sandbox', config: undefined, currency: 'usd' });
    expect(adapter.rail).toBe('processor_mpp');
    expect(adapter.issueChallenge(fundingContext()).funding['settlement_rail']).toBe('stripe_mpp');
  });

  it.each(['stripe_connect', 'stripe_ach_debit', 'adyen_manual_capture', 'toString', '__proto__', ''])(
    'refuses the rail %j with 422 funding.rail_unsupported',
    async (rail) => {
      const error = await refusal(() => railAdapterFor(rail, { environment: 'sandbox', config: undefined, currency: 'usd' }));
      expect(error.code).toBe('funding.rail_unsupported');
      expect(error.statusCode).toBe(422);
    },
  );

  it.each([['x402_usdc_base'], ['processor_mpp']])('refuses currencies other than usd on %s with 422 funding.currency_not_allowed', async (rail) => {
    for (const currency of ['eur', 'USD', 'usdc']) {
      const error = await refusal(() => railAdapterFor(rail, { environment: 'sandbox', config: undefined, currency }));
      expect(error.code).toBe('funding.currency_not_allowed');
      expect(error.statusCode).toBe(422);
      expect(error.details).toMatchObject({ currency, allowed_currencies: ['usd'] });
    }
  });

  it('refuses live funding without configuration, naming what is missing', async () => {
    const x402 = await refusal(() => railAdapterFor('x402_usdc_base', { environment: 'live', config: undefined, currency: 'usd' }));
    expect(x402).toMatchObject({ code: 'funding.rail_not_configured', statusCode: 422, details: { missing_fields: ['rails', 'x402_address'] } });
    const partial = withSettings(liveConfig, 'processor_mpp', { mpp_profile_id: 'profile_live1', processor_destination: null }, ['processor_mpp']);
    const mpp = await refusal(() => railAdapterFor('processor_mpp', { environment: 'live', config: partial, currency: 'usd' }));
    expect(mpp).toMatchObject({ code: 'funding.rail_not_configured', details: { missing_fields: ['processor_destination', 'mpp_processor_url'] } });
  });

  it('gives the live x402 adapter for a configuration with a facilitator endpoint, given the live access', async () => {
    const config = withSettings(liveConfig, 'x402_usdc_base', { x402_facilitator_url: 'https://facilitator.example.com' });
    const access = { secrets: {}, callTimeoutMs: 1_000 };
    expect((await railAdapterFor('x402_usdc_base', { environment: 'live', config, currency: 'usd' }, access))).toBeInstanceOf(X402LiveAdapter);
    // Without the live access (the deployment's secrets), nothing is faked either.
    expect((await refusal(() => railAdapterFor('x402_usdc_base', { environment: 'live', config, currency: 'usd' }))).code).toBe('funding.rail_not_configured');
  });

  it('refuses live funding with configuration but no facilitator or processor endpoint: nothing is faked', async () => {
    const x402 = await refusal(() => railAdapterFor('x402_usdc_base', { environment: 'live', config: liveConfig, currency: 'usd' }));
    expect(x402.code).toBe('funding.rail_not_configured');
    expect(x402.message).toMatch(/facilitator/);
    const mpp = await refusal(() => railAdapterFor('processor_mpp', { environment: 'live', config: liveConfig, currency: 'usd' }));
    expect(mpp.code).toBe('funding.rail_not_configured');
    expect(mpp.message).toMatch(/processor/);
  });

  it("refuses a sandbox rail that the tenant's configuration leaves out", async () => {
    const onlyX402 = { ...liveConfig, rails: ['x402_usdc_base'] };
    const error = await refusal(() => railAdapterFor('processor_mpp', { environment: 'sandbox', config: onlyX402, currency: 'usd' }));
    expect(error).toMatchObject({ code: 'funding.rail_not_configured', details: { missing_fields: ['rails'] } });
  });

  it('checks the rail before the currency, and the currency before the configuration', async () => {
    expect((await refusal(() => railAdapterFor('stripe_connect', { environment: 'live', config: undefined, currency: 'eur' }))).code).toBe('funding.rail_unsupported');
    expect((await refusal(() => railAdapterFor('x402_usdc_base', { environment: 'live', config: undefined, currency: 'eur' }))).code).toBe('funding.currency_not_allowed');
  });
});
