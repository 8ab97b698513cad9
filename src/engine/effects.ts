// The engine's extension points: what other modules do, in the same transaction, when an intent reaches a
// terminal state (released, refunded or resolved_split). Receipts and standing aggregates hang here, so that there is never a
// terminal intent without them, nor them without the ledger posting. The effects are composed once, in app.ts,
// and handed to every caller that can settle an intent (the confirm route, the sandbox evidence route, the
// maintenance sweeper); the engine knows their shape, not the modules behind them.
import type { ExternalAttestation } from '../contracts/protocol.ts';
import type { Intent } from '../db/intent-repository.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import type { ReleaseFacts, ReleaseGateConfig } from './decide/release-gate.ts';

export interface TerminalTransition {
  /** The intent as it now stands (a terminal state, its released and refunded parts set). */
  readonly intent: Intent;
  readonly action: 'release' | 'refund' | 'split';
  readonly reason: 'predicate_passed' | 'predicate_failed' | 'deadline_passed' | 'review_resolved';
  /** The ledger transaction that moved the escrow, committed with this transaction. */
  readonly transactionId: string;
  readonly nowMs: number;
  /** Present when a tool call's evidence caused this transition in the same request (the sandbox evidence route):
   * what an action-scoped receipt needs of that call. */
  readonly toolCall?: ToolCall;
}

export interface ToolCall {
  readonly operation: string;
  /** The caller's metadata as sent (the client puts tool_name, tool_call_id, decision_id there); never stored here. */
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  readonly payloadDigestHex: string;
  readonly artifactsDigestHex: string;
  readonly predicatePassed: boolean;
  /** What the client attested with the call (its metadata's `external_attestations`), checked and normalized. */
  readonly externalAttestations: readonly ExternalAttestation[];
}

/** Fields an effect adds to the answer of the command that caused it (the sandbox evidence answer, say). */
export type AnswerFields = Readonly<Record<string, unknown>>;

export type TerminalEffect = (tx: Queryable, transition: TerminalTransition, keyring: GatewayKeyring) => Promise<AnswerFields | void>;

/** What the release gate needs of a release about to happen (docs/release-gate.md): the tenant's gate and the facts
 * its signals look at, read in the settling transaction. Composed in app.ts from the standing module, which knows the
 * score. */
export type ReleaseGateProbe = (tx: Queryable, intent: Intent) => Promise<{ readonly config: ReleaseGateConfig; readonly facts: ReleaseFacts }>;

export interface EngineEffects {
  /** The gateway signing keys, for effects that sign. */
  readonly keyring: GatewayKeyring;
  /** Run in order, in the settling transaction; a throw rolls the settlement back. */
  readonly onTerminal: readonly TerminalEffect[];
  /** Asked before a release that a hold can stop (confirm, sandbox evidence); without one, no release is gated. */
  readonly releaseGate?: ReleaseGateProbe | undefined;
}

export function engineEffects(keyring: GatewayKeyring, onTerminal: readonly TerminalEffect[] = [], releaseGate?: ReleaseGateProbe): EngineEffects {
  return { keyring, onTerminal, ...(releaseGate ? { releaseGate } : {}) };
}

export async function runTerminalEffects(tx: Queryable, transition: TerminalTransition, effects: EngineEffects): Promise<AnswerFields> {
  let fields: AnswerFields = {};
  for (const effect of effects.onTerminal) {
    const added = await effect(tx, transition, effects.keyring);
    if (added) fields = { ...fields, ...added };
  }
  return fields;
}
