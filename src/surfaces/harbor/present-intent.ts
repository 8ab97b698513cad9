// The intent as the API shows it. Both `tenant` and `tenant_id` are sent: clients of this protocol read either
// (docs/engine.md#funding--post-harborintentsidfund).
import type { Intent as IntentView } from '../../contracts/intents.ts';
import type { RailInstruction as RailInstructionRow } from '../../db/rail-instruction-repository.ts';

// The intent itself is presented by the engine, which records it in its events (src/engine/intent-view.ts).
export { presentIntent, presentRailInstruction } from '../../engine/intent-view.ts';
import { presentRailInstruction } from '../../engine/intent-view.ts';

/** What a live rail did for an intent, on the read of one intent: the funding payment as the rail reported it, and
 * the payout or refund instructed to it (docs/rails.md#live-rails). */
export function presentRailActivity(
  funding: { readonly railDetails: Record<string, unknown> | null; readonly live: boolean } | undefined,
  instructions: readonly RailInstructionRow[],
): Pick<IntentView, 'funding_details' | 'rail_instructions'> {
  // A sandbox intent (or one not funded yet) has no live rail activity: the read is the same as everywhere else.
  if (!funding?.live && instructions.length === 0) return {};
  return {
    funding_details: funding?.railDetails ?? null,
    rail_instructions: instructions.map(presentRailInstruction),
  };
}
