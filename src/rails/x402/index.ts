// The x402 rail (`x402_usdc_base`, docs/rails.md#x402-x402_usdc_base): USDC on Base through an x402 v2 facilitator,
// scheme `exact`, or in live `auth-capture` (escrow held at the rail) as the tenant's configuration chooses. Its one
// declaration, which the registry (../index.ts) loads from the rail's line in ../built-in.ts.
import { paymentRequiredHeaderExample, paymentResponseHeaderExample } from '../../contracts/examples.ts';
import type { RailDefinition } from '../definition.ts';
import { readX402Credential } from './protocol.ts';
import { X402SandboxAdapter } from './sandbox.ts';
import { checkX402Settings, x402Fields } from './settings.ts';
import { x402ChallengeHeaderName, x402CredentialHeaderName, x402RailName, x402ResponseHeaderName } from './wire.ts';

export const railDefinition: RailDefinition = {
  name: x402RailName,
  aliases: [],
  // USDC: US dollars, one cent being 10,000 base units.
  currencies: ['usd'],
  consoleLabel: 'x402 (USDC on Base)',
  counterpart: 'facilitator',
  challengeHeaders: [{ name: x402ChallengeHeaderName, description: 'x402: the base64 JSON of the payment requirements.', example: paymentRequiredHeaderExample }],
  credentialHeaders: [{
    name: x402CredentialHeaderName,
    description: 'x402: the payer\'s signed payment payload (base64 JSON).',
    toolArgument: 'payment_signature',
    toolDescription: `x402: the answer to the PAYMENT-REQUIRED challenge, sent as the ${x402CredentialHeaderName} header.`,
  }],
  receiptHeaders: [{ name: x402ResponseHeaderName, description: 'x402: the base64 JSON of the settlement response.', example: paymentResponseHeaderExample }],
  readCredential: readX402Credential,
  // Live settlement is instructed. Scheme `exact`: the escrow is the tenant's own x402_address, so the operator's
  // wallet makes the payout or refund the instruction describes. Scheme `auth-capture`: the hold taken at funding
  // (`authorize`) is captured (payout) or voided (refund) through the facilitator, automatically (./live.ts).
  operations: { sandbox: ['charge'], live: ['charge', 'authorize', 'capture', 'void', 'payout', 'refund'] },
  fields: x402Fields,
  checkSettings: checkX402Settings,
  sandboxAdapter: (settlementRail) => new X402SandboxAdapter(settlementRail),
  // Loaded on first use: the live rails' protocol libraries hold some 40 MB of heap after start-up
  // (docs/performance.md), which a sandbox-only process never needs and would otherwise carry.
  liveAdapter: async (options) => new (await import('./live.ts')).X402LiveAdapter(options),
};
