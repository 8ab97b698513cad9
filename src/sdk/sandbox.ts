// Sandbox test credentials (docs/rails.md "Sandbox test credentials"): like card-network test numbers, the payer
// address (x402) or token (MPP) picks the simulator's outcome. For sandbox tenants, tests and the example only.
import { sandboxMppAuthorization, sandboxX402PaymentSignature } from '../rails/sandbox-credentials.ts';
import { SvcArgumentError } from './errors.ts';
import type { FundCredentialCallback } from './funding.ts';

export { decodeX402PaymentRequired, parseWwwAuthenticate, sandboxMppAuthorization, sandboxX402PaymentSignature } from '../rails/sandbox-credentials.ts';

/** x402 payers: `success` funds at once, `decline` is refused (402), `pending` answers 202 until the next poll. */
export const sandboxX402Payers = {
  success: '0x0000000000000000000000000000000000000001',
  decline: '0x0000000000000000000000000000000000000002',
  pending: '0x0000000000000000000000000000000000000003',
} as const;

/** MPP tokens: the same three outcomes; any other token is refused as unverifiable. */
export const sandboxMppTokens = {
  success: 'tok_sandbox_success',
  decline: 'tok_sandbox_decline',
  pending: 'tok_sandbox_pending',
} as const;

export type SandboxOutcome = keyof typeof sandboxX402Payers;

/**
 * A `fund` credential callback for sandbox tenants that answers either rail's challenge with the test credential
 * for `outcome` (default `success`): `payment-signature` for x402, `x-svc-payment-authorization` for MPP.
 */
export function sandboxCredential(outcome: SandboxOutcome = 'success'): FundCredentialCallback {
  return (challenge): Record<string, string> => {
    if (challenge.rail === 'x402_usdc_base') {
      if (!challenge.paymentRequired) throw new SvcArgumentError('The x402 challenge has no PAYMENT-REQUIRED header.');
      return { 'payment-signature': sandboxX402PaymentSignature(challenge.paymentRequired, { from: sandboxX402Payers[outcome] }) };
    }
    if (challenge.rail === 'processor_mpp' || challenge.rail === 'stripe_mpp') {
      if (!challenge.wwwAuthenticate) throw new SvcArgumentError('The MPP challenge has no WWW-Authenticate header.');
      return { 'x-svc-payment-authorization': sandboxMppAuthorization(challenge.wwwAuthenticate, sandboxMppTokens[outcome]) };
    }
    throw new SvcArgumentError(`No sandbox credential for rail ${challenge.rail}.`);
  };
}
