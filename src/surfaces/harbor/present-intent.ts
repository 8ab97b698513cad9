// The intent as the API shows it. Both `tenant` and `tenant_id` are sent: clients of this protocol read either
// (docs/engine.md#funding--post-harborintentsidfund).
import type { Intent as IntentView } from '../../contracts/intents.ts';
import type { ReviewHoldFacts } from '../../contracts/review.ts';
import type { Hold } from '../../engine/settle.ts';
import type { RailInstruction as RailInstructionRow } from '../../db/rail-instruction-repository.ts';

// The intent itself is presented by the engine, which records it in its events (src/engine/intent-view.ts).
export { presentIntent, presentRailInstruction } from '../../engine/intent-view.ts';
import { presentRailInstruction } from '../../engine/intent-view.ts';

/** What a live rail did for an intent, on the read of one intent: the funding payment as the rail reported it, and
 * the payout or refund instructed to it (docs/rails.md#live-rails). */
export function presentRailActivity(
  funding: { readonly railDetails: Record<string, unknown> | null; readonly live: boolean } | undefined,
  instructions: readonly RailInstructionRow[],
): Pick<IntentView, 'funding_details' | 'rail_instructions' | EscrowField> {
  // A sandbox intent (or one not funded yet) has no live rail activity: the read is the same as everywhere else.
  if (!funding?.live && instructions.length === 0) return {};
  const details = funding?.railDetails ?? null;
  return {
    funding_details: details,
    rail_instructions: instructions.map(presentRailInstruction),
    ...presentHold(details, instructions),
  };
}

type EscrowField =
  | 'authorization_id' | 'capture_id' | 'void_id' | 'refund_id' | 'authorization_expires_at' | 'capture_expires_at' | 'refund_expires_at'
  | 'onchain_transaction_hashes';

/** An escrow held at the rail (x402 auth-capture): the hold's id and deadlines from the funding, and what the
 * succeeded instructions did to it (a payout is its capture, a refund its void). */
function presentHold(details: Record<string, unknown> | null, instructions: readonly RailInstructionRow[]): Pick<IntentView, EscrowField> {
  const hold = details?.['hold'] as { payment_info_hash?: unknown; payment_info?: { authorizationExpiry?: unknown; refundExpiry?: unknown } } | undefined;
  if (!hold || typeof hold.payment_info_hash !== 'string') return {};
  const done = (kind: RailInstructionRow['kind']) =>
    instructions.filter((instruction) => instruction.kind === kind && instruction.status === 'succeeded' && instruction.reference !== null).map((instruction) => instruction.reference!);
  const captures = done('payout');
  const voids = done('refund');
  const iso = (seconds: unknown) => new Date(Number(seconds) * 1000).toISOString();
  const transaction = typeof details?.['transaction'] === 'string' ? [details['transaction']] : [];
  return {
    authorization_id: hold.payment_info_hash,
    capture_id: captures[0] ?? null,
    void_id: voids[0] ?? null,
    refund_id: null,
    authorization_expires_at: iso(hold.payment_info?.authorizationExpiry),
    capture_expires_at: iso(hold.payment_info?.authorizationExpiry),
    refund_expires_at: iso(hold.payment_info?.refundExpiry),
    onchain_transaction_hashes: { authorizations: transaction, captures, voids, refunds: [] },
  };
}

/** What the release gate did to a release it held, as the answer of the command that met it carries it. */
export function reviewHoldFacts(hold: Pick<Hold, 'gateMode' | 'signals'>): ReviewHoldFacts {
  return { held: true, gate_mode: hold.gateMode, signals: hold.signals.map(({ code, severity, summary }) => ({ code, severity, summary })) };
}
