// What a client needs to know of a rail's wire (docs/rails.md "Adding a rail"): the names it answers to, and how to
// answer a sandbox challenge with a test credential. Pure (node:crypto at most): the SDK imports each rail's
// `wire.ts` through this shape, and the SDK may not reach the registry, which pulls in server code.

/** What a sandbox test credential asks the simulator for (docs/rails.md "Sandbox test credentials"). */
export type SandboxOutcome = 'success' | 'decline' | 'pending';

export interface RailClientWire {
  /** The rail's name first, then the client aliases that mean it (as an intent's `settlement_rail` names it). */
  readonly rails: readonly string[];
  /** The credential headers whose value starts with an auth scheme, by lowercase header name: a value sent without
   * the scheme gets it (MPP: `Payment`). */
  readonly credentialSchemes: Readonly<Record<string, string>>;
  /**
   * The headers of a sandbox test credential answering a 402 of this rail with `outcome`. `header` reads the 402's
   * response headers by lowercase name. Throws RailChallengeMissingError when the 402 lacks the challenge header.
   */
  sandboxCredential(header: (name: string) => string | undefined, outcome: SandboxOutcome): Record<string, string>;
}

/** A 402 without the rail's challenge header: there is nothing to answer. */
export class RailChallengeMissingError extends Error {
  /** `protocol` names the rail's protocol as people know it (x402, MPP). */
  constructor(readonly protocol: string, readonly headerName: string) {
    super(`The ${protocol} challenge has no ${headerName} header.`);
    this.name = 'RailChallengeMissingError';
  }
}
