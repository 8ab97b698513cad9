// What an engine command answers: the status, body and headers sent to the caller, and stored for replays.
import type { Queryable } from '../infra/database.ts';

export type ResponseHeaders = Record<string, string | string[]>;

export interface EngineAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: ResponseHeaders;
}

/** What the first phase of a command hands on when it must call outside (a rail) with no transaction open and no
 * lock held: the call, which answers the second phase. The second phase answers the command, or `undefined` when
 * the state moved between the phases and the command must start over (docs/engine.md "Funding in two phases"). */
export interface CallOutside {
  readonly outside: () => Promise<(tx: Queryable) => Promise<EngineAnswer | CommittedFailure | undefined>>;
}

/** A second phase that fails after its writes must commit (a rail that could not be reached: the claim released,
 * then 503): runCommand commits the phase, then throws `error`. */
export class CommittedFailure {
  constructor(readonly error: Error) {}
}
