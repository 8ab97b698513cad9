// The rails this service runs: one line each (docs/rails.md "Adding a rail"), in the order every list of rails shows
// them. A line names the rail's folder under src/rails/ and its wire facts. Pure, like the wires: the SDK reads the
// wires from here (src/sdk/rails.ts), and the server's registry (./index.ts) loads each folder's declaration
// (`<folder>/index.ts`, export `railDefinition`) from the same line, so nothing else has to name a new rail.
import type { RailClientWire } from './wire-facts.ts';
import { mppClientWire } from './mpp/wire.ts';
import { x402ClientWire } from './x402/wire.ts';

export interface BuiltInRail {
  /** The rail's folder under src/rails/, whose `index.ts` exports its `railDefinition`. */
  readonly folder: string;
  readonly wire: RailClientWire;
}

export const builtInRails: readonly BuiltInRail[] = [
  { folder: 'x402', wire: x402ClientWire },
  { folder: 'mpp', wire: mppClientWire },
];
