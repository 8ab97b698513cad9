// The rails the SDK knows on the wire, one line each: each rail's pure wire facts (src/rails/<rail>/wire.ts), for
// answering its sandbox challenges (./sandbox.ts) and writing its credential headers as the server reads them
// (./funding.ts). The server's registry is src/rails/index.ts; test/rails/registry.test.ts holds this list to it.
import type { RailClientWire } from '../rails/wire-facts.ts';
import { mppClientWire } from '../rails/mpp/wire.ts';
import { x402ClientWire } from '../rails/x402/wire.ts';

export const railClientWires: readonly RailClientWire[] = [
  x402ClientWire,
  mppClientWire,
];

/** A credential header's value as sent: trimmed, with the auth scheme its rail writes in front of it (MPP's
 * `Payment `) added when the caller left it out. */
export function credentialHeaderValue(name: string, value: string): string {
  const trimmed = value.trim();
  const scheme = railClientWires.map((wire) => wire.credentialSchemes[name]).find((candidate) => candidate !== undefined);
  return scheme === undefined || trimmed.toLowerCase().startsWith(`${scheme.toLowerCase()} `) ? trimmed : `${scheme} ${trimmed}`;
}
