// Sandbox test credentials (docs/rails.md "Sandbox test credentials"): like card-network test numbers, the payer
// address (x402) or token (MPP) picks the simulator's outcome. For sandbox tenants, tests and the example only. Each
// rail's pure wire facts (./rails.ts) build its credential.
import { RailChallengeMissingError, type SandboxOutcome } from '../rails/wire-facts.ts';
import { SvcArgumentError } from './errors.ts';
import type { FundCredentialCallback } from './funding.ts';
import { railClientWires } from './rails.ts';

export type { SandboxOutcome } from '../rails/wire-facts.ts';
export { parseWwwAuthenticate, sandboxMppAuthorization, sandboxMppTokens } from '../rails/mpp/wire.ts';
export { decodeX402PaymentRequired, sandboxX402PaymentSignature, sandboxX402Payers } from '../rails/x402/wire.ts';

/**
 * A `fund` credential callback for sandbox tenants that answers the challenge of the intent's rail with the test
 * credential for `outcome` (default `success`): `payment-signature` for x402, `x-svc-payment-authorization` for MPP.
 */
export function sandboxCredential(outcome: SandboxOutcome = 'success'): FundCredentialCallback {
  return (challenge): Record<string, string> => {
    const wire = railClientWires.find((candidate) => candidate.rails.includes(challenge.rail));
    if (!wire) throw new SvcArgumentError(`No sandbox credential for rail ${challenge.rail}.`);
    try {
      return wire.sandboxCredential((name) => challenge.headers.get(name) ?? undefined, outcome);
    } catch (error) {
      if (error instanceof RailChallengeMissingError) throw new SvcArgumentError(error.message);
      throw error;
    }
  };
}
