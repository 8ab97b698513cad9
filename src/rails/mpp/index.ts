// The MPP rail (`processor_mpp`, client alias `stripe_mpp`; docs/rails.md#mpp-processor_mpp): card payments through
// a payment processor, in the HTTP `Payment` authentication scheme. Its one declaration, which the registry
// (../index.ts) loads from the rail's line in ../built-in.ts.
import { paymentReceiptHeaderExample, wwwAuthenticateHeaderExample } from '../../contracts/examples.ts';
import type { RailDefinition } from '../definition.ts';
import { readMppCredential } from './protocol.ts';
import { MppSandboxAdapter } from './sandbox.ts';
import { checkMppSettings, mppFields } from './settings.ts';
import { mppChallengeHeaderName, mppCredentialHeaderName, mppRailAliases, mppRailName, mppReceiptHeaderName } from './wire.ts';

export const railDefinition: RailDefinition = {
  name: mppRailName,
  aliases: mppRailAliases,
  // Card charges in US dollars, amounts in cents.
  currencies: ['usd'],
  consoleLabel: 'Card processor (MPP)',
  counterpart: 'payment processor',
  challengeHeaders: [{ name: mppChallengeHeaderName, description: 'MPP: the `Payment` challenge.', example: wwwAuthenticateHeaderExample }],
  credentialHeaders: [{
    name: mppCredentialHeaderName,
    description: 'The rail credential, for clients that keep Authorization for the API key.',
    toolArgument: 'payment_authorization',
    toolDescription: `MPP: the answer to the WWW-Authenticate challenge, sent as the ${mppCredentialHeaderName} header.`,
  }],
  receiptHeaders: [{ name: mppReceiptHeaderName, description: 'MPP: the payment receipt.', example: paymentReceiptHeaderExample }],
  readCredential: readMppCredential,
  // Live settlement: the processor transfers the payout to processor_destination, or refunds the card (./live.ts).
  operations: { sandbox: ['charge'], live: ['charge', 'payout', 'refund'] },
  fields: mppFields,
  checkSettings: checkMppSettings,
  sandboxAdapter: (settlementRail) => new MppSandboxAdapter(settlementRail),
  // Loaded on first use: mppx with the processor's SDK and viem hold some 40 MB of heap after start-up
  // (docs/performance.md), which a sandbox-only process never needs and would otherwise carry.
  liveAdapter: async (options) => new (await import('./live.ts')).MppLiveAdapter(options),
};
