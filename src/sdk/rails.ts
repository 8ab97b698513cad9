// The rails the SDK knows on the wire: each built-in rail's pure wire facts (src/rails/built-in.ts, the same lines the
// server's registry loads), for answering its sandbox challenges (./sandbox.ts) and writing its credential headers as
// the server reads them (./funding.ts).
import { builtInRails } from '../rails/built-in.ts';
import type { RailClientWire } from '../rails/wire-facts.ts';

export const railClientWires: readonly RailClientWire[] = builtInRails.map((rail) => rail.wire);

/** A credential header's value as sent: trimmed, with the auth scheme its rail writes in front of it (MPP's
 * `Payment `) added when the caller left it out. */
export function credentialHeaderValue(name: string, value: string): string {
  const trimmed = value.trim();
  const scheme = railClientWires.map((wire) => wire.credentialSchemes[name]).find((candidate) => candidate !== undefined);
  return scheme === undefined || trimmed.toLowerCase().startsWith(`${scheme.toLowerCase()} `) ? trimmed : `${scheme} ${trimmed}`;
}
