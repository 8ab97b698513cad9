// The create decision, pure (docs/engine.md#creating-an-intent--post-harborintents): a principal-signed envelope,
// already read into its shape, judged in the order its refusals are documented (tenant hints, the intent id, the
// deadline, the evidence schema, the rule, the principal's signature) into the intents row to insert.
// src/engine/create.ts loads what the rule names (a policy version, the policy head) before, and writes the row after.
import type { CreateIntentBody } from '../../contracts/intents.ts';
import type { Principal } from '../../credentials/principal.ts';
import type { Intent, NewIntent } from '../../db/intent-repository.ts';
import type { PolicyVersion } from '../../db/policy-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { compilePredicate, findPreset, releaseTermsOf } from '../../predicate/index.ts';
import { canonicalJson } from '../../signing/canonical-json.ts';
import { jsonDigestBlake3, normalizedAllowedTools } from '../../signing/digests.ts';
import { verifyEd25519 } from '../../signing/ed25519.ts';
import { base64ToBytes, canonicalUuidText, uuidBytesFromText } from '../../signing/encoding.ts';
import { parseRfc3339 } from '../../signing/rfc3339.ts';
import { intentCreationSigningBytes, type CompletionContractSign } from '../../signing/signed-structs.ts';
import { compileEvidenceSchema } from '../evidence-schema.ts';

/** The policy version a rule names: a template and one of its versions. */
export interface PolicyVersionKey {
  readonly templateId: string;
  readonly versionSeq: number;
}

/** The look-up a body's rule needs before it can be judged: none (an inline rule, or a body decideCreate refuses
 * without one), the version a v6 `predicate_ref` names, or the head a v7 `policy_binding` must be. */
export type RuleLookup =
  | { readonly kind: 'none' }
  | ({ readonly kind: 'version' } & PolicyVersionKey)
  | ({ readonly kind: 'head' } & PolicyVersionKey);

/** What the look-up found, not yet judged: decideCreate refuses a missing version or a binding that is not the head. */
export interface RuleFacts {
  /** v6 `predicate_ref`: the version it names, when the tenant has it. */
  readonly referenced?: PolicyVersion | undefined;
  /** v7 `policy_binding`: the template's head (null: the tenant has no such template), and the bound version when
   * it is the head. */
  readonly bound?: { readonly headSeq: number | null; readonly version: PolicyVersion | undefined } | undefined;
}

/** `"<template_id>@<version_seq>"`, split; undefined when the text is not of that form (it then names no version). */
export function parsePredicateRef(predicateRef: string): PolicyVersionKey | undefined {
  const match = /^([a-z0-9_]{1,64})@([1-9][0-9]{0,8})$/.exec(predicateRef);
  return match ? { templateId: match[1]!, versionSeq: Number(match[2]) } : undefined;
}

/** The look-up `body`'s rule needs. It follows decideCreate's branches, so that a policy is read only where its
 * answer is judged, and a body with an inline rule costs no read. */
export function ruleLookupOf(body: CreateIntentBody): RuleLookup {
  if (body.signing_version === 6) {
    // A reference is read whether or not an inline rule comes with it: with one, the two must name the same rule.
    const target = body.predicate_ref ? parsePredicateRef(body.predicate_ref) : undefined;
    return target ? { kind: 'version', ...target } : { kind: 'none' };
  }
  return body.policy_binding ? { kind: 'head', templateId: body.policy_binding.template_id, versionSeq: body.policy_binding.version_seq } : { kind: 'none' };
}

/** The rule an intent will be evaluated by, and what of it the principal signed. */
interface ResolvedRule {
  readonly predicate: Record<string, unknown>;
  readonly policy?: { readonly version: PolicyVersion };
  /** The policy version the rule was taken from (v7 binding or v6 reference): its parameters say how a passing rule
   * settles. None for an inline rule, which always releases the whole amount. */
  readonly source?: PolicyVersion;
}

function resolveRule(body: CreateIntentBody, facts: RuleFacts): ResolvedRule {
  if (body.signing_version === 6) {
    if (body.policy_binding) throw new ServiceError('request.invalid', { message: 'Signing version 6 carries predicate_dsl, not policy_binding.' });
    const inline = body.predicate_dsl;
    if (inline !== undefined) compilePredicate(inline);
    // The spec uses predicate_dsl "when predicate_ref is not provided": a reference, when given, is the rule. An
    // inline rule beside it is accepted only as the same rule (canonical JSON equal), never in its place.
    if (body.predicate_ref) {
      if (!facts.referenced) {
        throw new ServiceError('intent.predicate_missing', { message: 'predicate_ref does not name a policy version of this tenant.', details: { predicate_ref: body.predicate_ref } });
      }
      const referenced = facts.referenced.materializedPredicate;
      if (inline !== undefined && canonicalJson(inline) !== canonicalJson(referenced)) {
        throw new ServiceError('intent.predicate_conflict', { details: { predicate_ref: body.predicate_ref } });
      }
      return { predicate: referenced, source: facts.referenced };
    }
    if (inline !== undefined) return { predicate: inline as Record<string, unknown> };
    throw new ServiceError('intent.predicate_missing');
  }
  if (body.predicate_dsl !== undefined) throw new ServiceError('request.invalid', { message: 'Signing version 7 carries policy_binding, not predicate_dsl.' });
  if (!body.policy_binding) throw new ServiceError('intent.policy_binding_invalid', { message: 'Signing version 7 needs a policy_binding.' });
  const version = facts.bound?.version;
  if (!version) {
    const { template_id: templateId, version_seq: versionSeq } = body.policy_binding;
    throw new ServiceError('intent.policy_binding_invalid', { details: { template_id: templateId, version_seq: versionSeq, current_head_seq: facts.bound?.headSeq ?? null } });
  }
  return { predicate: version.materializedPredicate, policy: { version }, source: version };
}

/** The completion-contract tail of a pinned archetype preset (docs/signing.md#signed-structures). */
function completionContractFor(presetId: string | undefined): CompletionContractSign | undefined {
  if (presetId === undefined) return undefined;
  const preset = findPreset(presetId);
  if (!preset) throw new ServiceError('request.invalid', { message: `completion_preset_id "${presetId}" is not a known preset.` });
  return {
    completion_preset_id: presetId,
    vendor_contract_provider: '',
    vendor_api_version: '',
    vendor_schema_digest: new Uint8Array(32),
    canonical_schema_digest: jsonDigestBlake3(preset.evidenceSchema, 'evidence_schema'),
  };
}

/** The envelope's keys and signature, decoded (400 for one that is not base64 of its length). */
interface EnvelopeKeys {
  readonly principalPubkey: Uint8Array;
  readonly payeePubkey: Uint8Array;
  readonly signature: Uint8Array;
}

/** 400 `signing.signature_invalid` unless the principal signed exactly these bytes for this tenant. */
function assertPrincipalSigned(tenantId: string, body: CreateIntentBody, rule: ResolvedRule, keys: EnvelopeKeys): void {
  const signed = (completionContract: CompletionContractSign | undefined) =>
    intentCreationSigningBytes({
      signing_version: body.signing_version,
      tenant_id: tenantId,
      intent_id: body.intent_id,
      principal_did: body.principal_did,
      payee_did: body.payee_did,
      amount_cents: body.amount_cents,
      currency: body.currency,
      deadline: body.deadline,
      budget: body.budget,
      evidence_schema: body.evidence_schema,
      predicate: rule.predicate,
      predicate_ref: body.predicate_ref ?? '',
      allowed_tools: body.allowed_tools,
      settlement_rail: body.settlement_rail,
      payee_pubkey: keys.payeePubkey,
      ...(rule.policy
        ? { policy: { policy_template_id: rule.policy.version.templateId, policy_version_seq: rule.policy.version.versionSeq, policy_content_digest: rule.policy.version.contentDigest } }
        : {}),
      ...(completionContract ? { completion_contract: completionContract } : {}),
    });
  // With a pinned preset the client may or may not have appended the completion-contract tail (the client does
  // not pin it down; docs/engine.md#creating-an-intent--post-harborintents): accept either, the tail first.
  const tail = completionContractFor(body.completion_preset_id);
  const verified = (tail !== undefined && verifyEd25519(keys.principalPubkey, signed(tail), keys.signature))
    || verifyEd25519(keys.principalPubkey, signed(undefined), keys.signature);
  if (!verified) throw new ServiceError('signing.signature_invalid', { details: { field: 'principal_signature' } });
}

/**
 * The intents row a create request inserts, judged at `nowMs` for the credential's tenant, with what its rule
 * names as loaded (`rule`); or the refusal. The body has passed the signing-version gate and its schema.
 */
export function decideCreate(creator: Pick<Principal, 'tenantId'>, body: CreateIntentBody, rule: RuleFacts, nowMs: number): NewIntent {
  for (const hint of [body.tenant_id, body.org_id]) {
    if (hint !== undefined && hint !== creator.tenantId) throw new ServiceError('request.tenant_hint_mismatch');
  }
  uuidBytesFromText(body.intent_id, 'intent_id');
  const deadline = parseRfc3339(body.deadline, 'deadline');
  if (deadline.epochMs <= nowMs) throw new ServiceError('intent.deadline_invalid');
  compileEvidenceSchema(body.evidence_schema);
  const resolved = resolveRule(body, rule);
  const keys: EnvelopeKeys = {
    principalPubkey: base64ToBytes(body.principal_pubkey, 'principal_pubkey', 32),
    payeePubkey: base64ToBytes(body.payee_pubkey, 'payee_pubkey', 32),
    signature: base64ToBytes(body.principal_signature, 'principal_signature', 64),
  };
  assertPrincipalSigned(creator.tenantId, body, resolved, keys);
  return {
    tenantId: creator.tenantId,
    intentId: canonicalUuidText(body.intent_id, 'intent_id'),
    signingVersion: body.signing_version,
    principalDid: body.principal_did,
    principalPubkey: Buffer.from(keys.principalPubkey),
    principalSignature: Buffer.from(keys.signature),
    payeeDid: body.payee_did,
    payeePubkey: Buffer.from(keys.payeePubkey),
    budget: body.budget,
    currency: body.currency,
    amountCents: body.amount_cents,
    evidenceSchema: body.evidence_schema,
    deadlineText: body.deadline,
    deadline: new Date(deadline.epochMs),
    predicateDsl: resolved.predicate,
    predicateRef: body.predicate_ref ?? '',
    policyTemplateId: resolved.policy?.version.templateId ?? null,
    policyVersionSeq: resolved.policy?.version.versionSeq ?? null,
    policyContentDigest: resolved.policy?.version.contentDigest ?? null,
    settlementRail: body.settlement_rail,
    allowedTools: normalizedAllowedTools(body.allowed_tools),
    completionPresetId: body.completion_preset_id ?? null,
    // What the principal signed says how a passing rule settles: the parameters of the policy version it bound or
    // referenced (covered by the version's content digest), never a field beside the envelope.
    ...(resolved.source ? releaseTermsOf(resolved.source.templateId, resolved.source.parameters) : releaseTermsOf('', {})),
  };
}

/** 422 `intent.principal_key_unregistered` for a live intent whose principal key is not registered for its DID
 * (the insert's statement looked it up); in sandbox such an intent is kept, and says so. */
export function assertPrincipalKeyAccepted(environment: Principal['environment'], intent: Pick<Intent, 'principalKeyRegistered'>): void {
  if (environment === 'live' && !intent.principalKeyRegistered) throw new ServiceError('intent.principal_key_unregistered');
}
