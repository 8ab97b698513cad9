// The intent as the API shows it. Both `tenant` and `tenant_id` are sent: clients of this protocol read either
// (docs/engine.md#funding--post-harborintentsidfund).
import type { Intent as IntentView, RailInstruction as RailInstructionView } from '../../contracts/intents.ts';
import type { ReviewHoldFacts } from '../../contracts/review.ts';
import type { Intent } from '../../db/intent-repository.ts';
import type { Hold } from '../../engine/settle.ts';
import { fundingSettledIn } from '../../engine/lifecycle.ts';
import type { RailInstruction as RailInstructionRow } from '../../db/rail-instruction-repository.ts';
import { orderedMaterializedPredicate } from '../policy-presenters.ts';

export function presentIntent(intent: Intent): IntentView {
  return {
    object: 'intent',
    tenant: intent.tenantId,
    tenant_id: intent.tenantId,
    intent_id: intent.intentId,
    state: intent.state,
    funded: fundingSettledIn(intent.state),
    signing_version: intent.signingVersion,
    principal_did: intent.principalDid,
    principal_key_registered: intent.principalKeyRegistered,
    payee_did: intent.payeeDid,
    amount_cents: intent.amountCents,
    currency: intent.currency,
    budget: intent.budget,
    evidence_schema: intent.evidenceSchema,
    deadline: intent.deadlineText,
    // An intent bound to a policy version (v7 binding or predicate_ref) carries the rule the service materialized:
    // shown in the language's order, as the policy version shows it.
    predicate_dsl: intent.policyTemplateId === null && intent.predicateRef === '' ? intent.predicateDsl : orderedMaterializedPredicate(intent.predicateDsl),
    predicate_ref: intent.predicateRef,
    policy_binding:
      intent.policyTemplateId === null
        ? null
        : { template_id: intent.policyTemplateId, version_seq: intent.policyVersionSeq, content_digest: intent.policyContentDigest?.toString('hex') ?? null },
    settlement_rail: intent.settlementRail,
    allowed_tools: [...intent.allowedTools],
    completion_preset_id: intent.completionPresetId,
    predicate_passed: intent.predicatePassed,
    created_at: intent.createdAt.toISOString(),
    funded_at: intent.fundedAt?.toISOString() ?? null,
    evidence_recorded_at: intent.evidenceRecordedAt?.toISOString() ?? null,
    settled_at: intent.settledAt?.toISOString() ?? null,
  };
}

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

/** A payout or refund instructed to a live rail, as the intent read and the operator's completion route show it. */
export function presentRailInstruction(instruction: RailInstructionRow): RailInstructionView {
  return {
    instruction_id: instruction.instructionId,
    kind: instruction.kind,
    rail: instruction.rail,
    status: instruction.status,
    amount_cents: instruction.amountCents,
    currency: instruction.currency,
    reference: instruction.reference,
    detail: instruction.detail,
    attempts: instruction.attempts,
    last_error: instruction.lastError,
    created_at: instruction.createdAt.toISOString(),
    updated_at: instruction.updatedAt.toISOString(),
  };
}

/** What the release gate did to a release it held, as the answer of the command that met it carries it. */
export function reviewHoldFacts(hold: Pick<Hold, 'gateMode' | 'signals'>): ReviewHoldFacts {
  return { held: true, gate_mode: hold.gateMode, signals: hold.signals.map(({ code, severity, summary }) => ({ code, severity, summary })) };
}
