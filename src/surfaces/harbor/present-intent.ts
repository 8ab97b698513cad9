// The intent as the API shows it. Both `tenant` and `tenant_id` are sent: clients of this protocol read either
// (docs/engine.md#funding--post-harborintentsidfund).
import type { Intent } from '../../db/intent-repository.ts';
import { orderedMaterializedPredicate } from '../policy-presenters.ts';

export function presentIntent(intent: Intent) {
  return {
    object: 'intent',
    tenant: intent.tenantId,
    tenant_id: intent.tenantId,
    intent_id: intent.intentId,
    state: intent.state,
    funded: intent.state !== 'open',
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
    allowed_tools: intent.allowedTools,
    completion_preset_id: intent.completionPresetId,
    predicate_passed: intent.predicatePassed,
    created_at: intent.createdAt.toISOString(),
    funded_at: intent.fundedAt?.toISOString() ?? null,
    evidence_recorded_at: intent.evidenceRecordedAt?.toISOString() ?? null,
    settled_at: intent.settledAt?.toISOString() ?? null,
  };
}
