// Creating an intent from a principal-signed envelope (docs/engine.md#creating-an-intent--post-harborintents): the
// signing version is gated first, then the body's shape, the release rule (inline, by reference, or bound to the policy
// head), the evidence schema, and the principal's Ed25519 signature over the exact bytes the client signed.
import { CreateIntentBody } from '../contracts/intents.ts';
import { findPolicyHead, findPolicyVersion, type PolicyVersion } from '../db/policy-repository.ts';
import { insertIntent, type Intent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Principal } from '../credentials/principal.ts';
import { isUniqueViolation, type Queryable } from '../infra/database.ts';
import { compileBodyValidator } from '../infra/validation.ts';
import { compilePredicate, findPreset } from '../predicate/index.ts';
import { assertFundableSigningVersion, intentCreationSigningBytes, type CompletionContractSign } from '../signing/signed-structs.ts';
import { jsonDigestBlake3, normalizedAllowedTools } from '../signing/digests.ts';
import { base64ToBytes, canonicalUuidText, uuidBytesFromText } from '../signing/encoding.ts';
import { verifyEd25519 } from '../signing/ed25519.ts';
import { parseRfc3339 } from '../signing/rfc3339.ts';
import { compileEvidenceSchema } from './evidence-schema.ts';

const assertCreateBody: (value: unknown) => asserts value is CreateIntentBody = compileBodyValidator<CreateIntentBody>(CreateIntentBody);

/** The rule an intent will be evaluated by, and what of it the principal signed. */
interface ResolvedRule {
  readonly predicate: Record<string, unknown>;
  readonly policy?: { readonly version: PolicyVersion };
}

/** `"<template_id>@<version_seq>"` → the tenant's version, or 400 `intent.predicate_missing`. */
async function versionByRef(tx: Queryable, tenantId: string, predicateRef: string): Promise<PolicyVersion> {
  const match = /^([a-z0-9_]{1,64})@([1-9][0-9]{0,8})$/.exec(predicateRef);
  const version = match ? await findPolicyVersion(tx, tenantId, match[1]!, { versionSeq: Number(match[2]) }) : undefined;
  if (!version) throw new ServiceError('intent.predicate_missing', { message: 'predicate_ref does not name a policy version of this tenant.', details: { predicate_ref: predicateRef } });
  return version;
}

async function resolveRule(tx: Queryable, tenantId: string, body: CreateIntentBody): Promise<ResolvedRule> {
  if (body.signing_version === 6) {
    if (body.policy_binding) throw new ServiceError('request.invalid', { message: 'Signing version 6 carries predicate_dsl, not policy_binding.' });
    if (body.predicate_dsl !== undefined) {
      compilePredicate(body.predicate_dsl);
      return { predicate: body.predicate_dsl as Record<string, unknown> };
    }
    if (body.predicate_ref) return { predicate: (await versionByRef(tx, tenantId, body.predicate_ref)).materializedPredicate };
    throw new ServiceError('intent.predicate_missing');
  }
  if (body.predicate_dsl !== undefined) throw new ServiceError('request.invalid', { message: 'Signing version 7 carries policy_binding, not predicate_dsl.' });
  if (!body.policy_binding) throw new ServiceError('intent.policy_binding_invalid', { message: 'Signing version 7 needs a policy_binding.' });
  const { template_id: templateId, version_seq: versionSeq } = body.policy_binding;
  const head = await findPolicyHead(tx, tenantId, templateId);
  const version = head?.versionSeq === versionSeq ? await findPolicyVersion(tx, tenantId, templateId, { versionSeq }) : undefined;
  if (!version) {
    throw new ServiceError('intent.policy_binding_invalid', { details: { template_id: templateId, version_seq: versionSeq, current_head_seq: head?.versionSeq ?? null } });
  }
  return { predicate: version.materializedPredicate, policy: { version } };
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

export async function createIntent(tx: Queryable, principal: Principal, rawBody: unknown): Promise<Intent> {
  // Versions before shape, since another version may have another shape: a v4 body is "deprecated", not "missing
  // payee_pubkey".
  assertFundableSigningVersion((rawBody as { signing_version?: unknown } | null)?.signing_version);
  assertCreateBody(rawBody);
  const body = rawBody;
  for (const hint of [body.tenant_id, body.org_id]) {
    if (hint !== undefined && hint !== principal.tenantId) throw new ServiceError('request.tenant_hint_mismatch');
  }
  uuidBytesFromText(body.intent_id, 'intent_id');
  const deadline = parseRfc3339(body.deadline, 'deadline');
  if (deadline.epochMs <= Date.now()) throw new ServiceError('intent.deadline_invalid');
  compileEvidenceSchema(body.evidence_schema);
  const rule = await resolveRule(tx, principal.tenantId, body);

  const principalPubkey = base64ToBytes(body.principal_pubkey, 'principal_pubkey', 32);
  const payeePubkey = base64ToBytes(body.payee_pubkey, 'payee_pubkey', 32);
  const signature = base64ToBytes(body.principal_signature, 'principal_signature', 64);
  const signed = (completionContract: CompletionContractSign | undefined) =>
    intentCreationSigningBytes({
      signing_version: body.signing_version,
      tenant_id: principal.tenantId,
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
      payee_pubkey: payeePubkey,
      ...(rule.policy
        ? { policy: { policy_template_id: rule.policy.version.templateId, policy_version_seq: rule.policy.version.versionSeq, policy_content_digest: rule.policy.version.contentDigest } }
        : {}),
      ...(completionContract ? { completion_contract: completionContract } : {}),
    });
  // With a pinned preset the client may or may not have appended the completion-contract tail (the client does
  // not pin it down; docs/engine.md#creating-an-intent--post-harborintents): accept either, the tail first.
  const tail = completionContractFor(body.completion_preset_id);
  const verified = (tail !== undefined && verifyEd25519(principalPubkey, signed(tail), signature)) || verifyEd25519(principalPubkey, signed(undefined), signature);
  if (!verified) throw new ServiceError('signing.signature_invalid', { details: { field: 'principal_signature' } });

  let intent: Intent;
  try {
    intent = await insertIntent(tx, {
      tenantId: principal.tenantId,
      intentId: canonicalUuidText(body.intent_id, 'intent_id'),
      signingVersion: body.signing_version,
      principalDid: body.principal_did,
      principalPubkey: Buffer.from(principalPubkey),
      principalSignature: Buffer.from(signature),
      payeeDid: body.payee_did,
      payeePubkey: Buffer.from(payeePubkey),
      budget: body.budget,
      currency: body.currency,
      amountCents: body.amount_cents,
      evidenceSchema: body.evidence_schema,
      deadlineText: body.deadline,
      deadline: new Date(deadline.epochMs),
      predicateDsl: rule.predicate,
      predicateRef: body.predicate_ref ?? '',
      policyTemplateId: rule.policy?.version.templateId ?? null,
      policyVersionSeq: rule.policy?.version.versionSeq ?? null,
      policyContentDigest: rule.policy?.version.contentDigest ?? null,
      settlementRail: body.settlement_rail,
      allowedTools: normalizedAllowedTools(body.allowed_tools),
      completionPresetId: body.completion_preset_id ?? null,
    });
  } catch (error) {
    if (isUniqueViolation(error, 'intents_pkey')) throw new ServiceError('intent.already_exists');
    throw error;
  }
  // The insert looked the key up in the registry; thrown here, the error rolls the insert back.
  if (principal.environment === 'live' && !intent.principalKeyRegistered) throw new ServiceError('intent.principal_key_unregistered');
  return intent;
}
