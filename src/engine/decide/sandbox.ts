// The sandbox guardrail decisions, pure (docs/capabilities.md): the unsigned intent a bootstrap creates and funds at
// once (its rule, evidence schema and deadline) and its answer; the evidence a sandbox tool call records, evaluated
// as signed evidence is, before it settles. src/engine/sandbox.ts writes them, funding and settling through the
// lifecycle table's transitions as every other command does.
import type { SandboxBootstrapBody, SandboxEvidenceBody } from '../../contracts/sandbox.ts';
import type { EvidenceRecord } from '../../db/evidence-repository.ts';
import { parseExternalAttestations } from './attestations.ts';
import type { Intent, NewIntent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { allowedToolLengthMax, sandboxIntentLifetimeMs, sandboxMetadataBytesMax } from '../../limits.ts';
import { archetypePresets, findPreset, materializeTemplate, releaseTermsOf, type PredicateEvaluation } from '../../predicate/index.ts';
import { canonicalJsonBytes, normalizedToolName } from '../../signing/digests.ts';
import { bytesToHex } from '../../signing/encoding.ts';
import { formatRfc3339SecondsUtc } from '../../signing/rfc3339.ts';
import type { AnswerFields, ToolCall } from '../effects.ts';
import { compileEvidenceSchema, evidenceMismatchOf } from '../evidence-schema.ts';
import { transitionOf, type Transition } from '../lifecycle.ts';
import { evaluateEvidence } from './evidence.ts';
import type { SettlementAction, SettlementReason } from './settlement.ts';
import type { FraudSignalFinding, ReleaseGateMode } from './release-gate.ts';

/** Guardrail intents settle on the x402 simulator: the rail every sandbox tenant has without configuration. */
export const sandboxSettlementRail = 'x402_usdc_base';
export const sandboxPayeeDid = 'did:svc:sandbox:payee';
export const sandboxPrincipalDid = (tenantId: string): string => `did:svc:sandbox:${tenantId}`;
const settlementMode = 'simulated';

/** The rule a bootstrap applies when it names neither a preset nor a template, with the template's default
 * parameters: the public client's first-run command and its MCP tool send only the operation and the amount. */
export const defaultCompletionTemplateId = 'completion_v1';

/** The operation as the intent's one allowed tool: trimmed and lowercased as allowed tools are, then held to the
 * contract's limit, since lowercasing can lengthen it ("İ" becomes two characters); refused as the schema refuses. */
function normalizedOperation(operation: string): string {
  const name = normalizedToolName(operation);
  // Counted in code points, as the contract's maxLength counts them.
  if ([...name].length > allowedToolLengthMax) {
    const message = `must NOT have more than ${allowedToolLengthMax} characters once trimmed and lowercased`;
    throw new ServiceError('request.invalid', { details: { fields: [{ location: 'body', path: '/operation', message }] } });
  }
  return name;
}

function assertMetadataFits(metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const bytes = canonicalJsonBytes(metadata, 'metadata').length;
  if (bytes > sandboxMetadataBytesMax) {
    throw new ServiceError('sandbox.metadata_too_large', { details: { bytes, limit: sandboxMetadataBytesMax } });
  }
}

/** Where the release rule came from, echoed in the answer as `completion_source`. */
type CompletionSource = 'preset' | 'template' | 'default';

export interface Completion {
  readonly source: CompletionSource;
  readonly presetId: string | null;
  readonly templateId: string;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly predicate: Record<string, unknown>;
  readonly evidenceSchema: Record<string, unknown>;
}

/** A preset's rule and evidence schema; the preset stands alone. */
function presetCompletion(body: SandboxBootstrapBody & { completion_preset: string }): Completion {
  const conflicting = (['template_id', 'parameters', 'evidence_schema'] as const).filter((field) => body[field] !== undefined);
  if (conflicting.length > 0) throw new ServiceError('sandbox.completion_conflict', { details: { conflicting_fields: ['completion_preset', ...conflicting] } });
  const preset = findPreset(body.completion_preset);
  if (!preset) {
    throw new ServiceError('sandbox.preset_unknown', { details: { supported: archetypePresets.map((candidate) => candidate.presetId) } });
  }
  const materialized = materializeTemplate(preset.templateId);
  return {
    source: 'preset',
    presetId: preset.presetId,
    templateId: materialized.templateId,
    parameters: materialized.parameters,
    predicate: materialized.predicate,
    evidenceSchema: preset.evidenceSchema as Record<string, unknown>,
  };
}

/** The release rule and evidence schema: a preset's; a template's with the caller's parameters and schema; or,
 * with neither, the default template's with its default parameters and the caller's schema. */
function resolveCompletion(body: SandboxBootstrapBody): Completion {
  if (body.completion_preset !== undefined) return presetCompletion({ ...body, completion_preset: body.completion_preset });
  // Parameters belong to a template: without one they would silently configure a rule the caller did not name.
  if (body.template_id === undefined && body.parameters !== undefined) {
    throw new ServiceError('sandbox.completion_conflict', { details: { missing_fields: ['template_id'], given_fields: ['parameters'] } });
  }
  const source: CompletionSource = body.template_id === undefined ? 'default' : 'template';
  const materialized = materializeTemplate(body.template_id ?? defaultCompletionTemplateId, body.parameters);
  const evidenceSchema = body.evidence_schema ?? { type: 'object' };
  compileEvidenceSchema(evidenceSchema);
  return {
    source,
    presetId: null,
    templateId: materialized.templateId,
    parameters: materialized.parameters,
    predicate: materialized.predicate,
    evidenceSchema,
  };
}

/** The currency a bootstrap funds in: the caller's, lowercased, or usd. */
export function bootstrapCurrency(body: Pick<SandboxBootstrapBody, 'currency'>): string {
  return (body.currency ?? 'usd').toLowerCase();
}

export interface BootstrapDecision {
  /** The intents row to insert: unsigned (signing version 0), on the simulator's rail. */
  readonly intent: NewIntent;
  /** The lifecycle table's transition (created and funded at once): its posting is the `fund` posting. */
  readonly transition: Transition;
  /** The simulator's reference for the funding it stands in for. */
  readonly fundingReference: string;
  readonly completion: Completion;
  readonly currency: string;
  readonly metadata: Record<string, unknown> | undefined;
}

/** What a sandbox bootstrap creates and funds for `tenantId` at `nowMs`, with the ids it was given; or the refusal.
 * The rail's own rules (the currency it carries) are checked by its adapter before. */
export function decideBootstrap(
  tenantId: string,
  body: SandboxBootstrapBody,
  nowMs: number,
  ids: { readonly intentId: string; readonly fundingReference: string },
): BootstrapDecision {
  const currency = bootstrapCurrency(body);
  const completion = resolveCompletion(body);
  assertMetadataFits(body.metadata);
  const allowedTools = [normalizedOperation(body.operation)];
  // Whole seconds, as everything the client may sign or compare is.
  const deadlineMs = Math.floor(nowMs / 1000) * 1000 + sandboxIntentLifetimeMs;
  const intent: NewIntent = {
    tenantId,
    intentId: ids.intentId,
    signingVersion: 0,
    principalDid: sandboxPrincipalDid(tenantId),
    principalPubkey: null,
    principalSignature: null,
    payeeDid: sandboxPayeeDid,
    payeePubkey: null,
    // The budget document of an unsigned intent: its amount, and the caller's metadata kept beside it.
    budget: { max: body.requested_spend_cents, ...(body.metadata === undefined ? {} : { metadata: body.metadata }) },
    currency,
    amountCents: body.requested_spend_cents,
    evidenceSchema: completion.evidenceSchema,
    deadlineText: formatRfc3339SecondsUtc(deadlineMs),
    deadline: new Date(deadlineMs),
    predicateDsl: completion.predicate,
    predicateRef: '',
    policyTemplateId: null,
    policyVersionSeq: null,
    policyContentDigest: null,
    settlementRail: sandboxSettlementRail,
    allowedTools,
    completionPresetId: completion.presetId,
    // The guardrails take the template's release_mode with its parameters, as a policy version does.
    ...releaseTermsOf(completion.templateId, completion.parameters),
  };
  const transition = transitionOf('sandboxBootstrap', null, 'funded');
  return { intent, transition, fundingReference: ids.fundingReference, completion, currency, metadata: body.metadata };
}

/** The bootstrap's answer: the intent as funded, its capability token, and where its rule came from. */
export function bootstrapAnswer(decision: BootstrapDecision, funded: Intent, capabilityToken: string): Record<string, unknown> {
  const { completion, currency } = decision;
  return {
    tenant: funded.tenantId,
    tenant_id: funded.tenantId,
    intent_id: funded.intentId,
    capability_token: capabilityToken,
    operation: decision.intent.allowedTools[0]!,
    sandbox_lifecycle_status: funded.state,
    requested_spend_cents: funded.amountCents,
    amount_cents: funded.amountCents,
    currency,
    settlement_rail: funded.settlementRail,
    settlement_mode: settlementMode,
    simulator_event: { type: 'funding.simulated', reference: decision.fundingReference, amount_cents: funded.amountCents, currency },
    allowed_tools: funded.allowedTools,
    completion_source: completion.source,
    completion_preset: completion.presetId,
    template_id: completion.templateId,
    parameters: completion.parameters,
    evidence_schema: funded.evidenceSchema,
    predicate_dsl: funded.predicateDsl,
    deadline: funded.deadlineText,
    ...(decision.metadata === undefined ? {} : { metadata: decision.metadata }),
  };
}

export interface SandboxEvidenceDecision {
  readonly evaluation: PredicateEvaluation;
  /** Under metered release, the cost a passing evidence carries (what the settlement releases); else null. */
  readonly meteredCostCents: number | null;
  /** The evidence_submissions row to write: unsigned, as the table allows for exactly these intents. */
  readonly record: EvidenceRecord;
  /** The tool call the evidence reports, for the action receipt the settlement issues. */
  readonly toolCall: ToolCall;
}

/** The payload matches the evidence schema of the preset it was prepared for: 400 `sandbox.preset_unknown` for a
 * preset that does not exist, 422 `sandbox.preset_evidence_mismatch` naming the fields at fault otherwise. The
 * intent's own schema and rule still decide the evidence; this refuses, before anything is recorded, a payload its
 * sender meant for another rule. */
function assertPayloadFitsPreset(presetId: string, payload: Record<string, unknown>): void {
  const preset = findPreset(presetId);
  if (!preset) throw new ServiceError('sandbox.preset_unknown', { details: { supported: archetypePresets.map((candidate) => candidate.presetId) } });
  const fields = evidenceMismatchOf(preset.evidenceSchema, payload);
  if (fields) throw new ServiceError('sandbox.preset_evidence_mismatch', { details: { completion_preset_id: presetId, fields } });
}

/** Evidence of a tool call for a funded sandbox `intent` at `nowMs`: the operation must be one of the intent's
 * tools, then the payload is checked and the rule evaluated as signed evidence is. A failed rule is not an error. */
export function decideSandboxEvidence(intent: Intent, body: SandboxEvidenceBody, nowMs: number): SandboxEvidenceDecision {
  if (intent.deadline.getTime() <= nowMs) throw new ServiceError('intent.deadline_passed');
  // Normalized as the allowed tools are (trimmed, lowercased), and as capability verification compares them.
  const operation = body.operation === undefined ? intent.allowedTools[0]! : normalizedOperation(body.operation);
  if (!intent.allowedTools.includes(operation)) {
    throw new ServiceError('sandbox.operation_mismatch', { details: { allowed_tools: intent.allowedTools } });
  }
  assertMetadataFits(body.metadata);
  // The client's middleware puts the attestations it verified in the metadata, for the receipts.
  const externalAttestations = body.metadata?.external_attestations === undefined ? [] : parseExternalAttestations(body.metadata.external_attestations);
  // Only `payload` is evaluated: vendor_payload is accepted for the client's vendor packs, which this service
  // does not map, and is neither stored nor read.
  const payload = body.payload ?? {};
  if (body.completion_preset_id !== undefined) assertPayloadFitsPreset(body.completion_preset_id, payload);
  const artifacts = body.artifacts ?? [];
  const { evaluation, payloadDigest, artifactsDigest, meteredCostCents } = evaluateEvidence(intent, payload, artifacts);
  return {
    evaluation,
    meteredCostCents,
    record: {
      intentId: intent.intentId,
      payload,
      artifacts,
      payeeDid: intent.payeeDid,
      payeeSignature: null,
      submittedAt: formatRfc3339SecondsUtc(nowMs),
      payloadDigest,
      artifactsDigest,
      predicatePassed: evaluation.passed,
      evaluation,
      externalAttestations,
    },
    toolCall: {
      operation,
      metadata: body.metadata,
      payloadDigestHex: bytesToHex(payloadDigest),
      artifactsDigestHex: bytesToHex(artifactsDigest),
      predicatePassed: evaluation.passed,
      externalAttestations,
    },
  };
}

/** What the settlement of sandbox evidence did, as the answer reports it. */
export interface SandboxSettlementFacts {
  readonly intent: Pick<Intent, 'state'>;
  readonly action: SettlementAction;
  readonly releasedCents: number;
  readonly refundedCents: number;
  readonly reason: SettlementReason;
  readonly transactionId: string;
  readonly answerFields: AnswerFields;
}

/** Or what the release gate did instead: the release held for review (docs/release-gate.md). */
export interface SandboxHoldFacts {
  readonly intent: Pick<Intent, 'state'>;
  readonly hold: true;
  readonly gateMode: ReleaseGateMode;
  readonly signals: readonly FraudSignalFinding[];
}

/** The sandbox evidence answer: the evaluation, and the settlement it caused, as the simulator's event; or the hold
 * the release gate placed instead, with no settlement (nor receipt) until an operator resolves it. */
export function sandboxEvidenceAnswer(
  request: { readonly tenantId: string; readonly intentId: string; readonly body: SandboxEvidenceBody },
  intent: Intent,
  decision: SandboxEvidenceDecision,
  settlement: SandboxSettlementFacts | SandboxHoldFacts,
): Record<string, unknown> {
  const { evaluation, toolCall } = decision;
  return {
    tenant: request.tenantId,
    tenant_id: request.tenantId,
    intent_id: request.intentId,
    operation: toolCall.operation,
    requested_spend_cents: request.body.requested_spend_cents ?? intent.amountCents,
    sandbox_lifecycle_status: settlement.intent.state,
    predicate_passed: evaluation.passed,
    predicate_evaluation: evaluation,
    payload_digest: toolCall.payloadDigestHex,
    artifacts_digest: toolCall.artifactsDigestHex,
    settlement_rail: intent.settlementRail,
    settlement_mode: settlementMode,
    ...('hold' in settlement
      ? { review_hold: { held: true, gate_mode: settlement.gateMode, signals: settlement.signals.map(({ code, severity, summary }) => ({ code, severity, summary })) } }
      : {
          simulator_event: { type: `${settlement.action}.simulated`, transaction_id: settlement.transactionId, reason: settlement.reason },
          settlement: {
            action: settlement.action,
            reason: settlement.reason,
            transaction_id: settlement.transactionId,
            released_cents: settlement.releasedCents,
            refunded_cents: settlement.refundedCents,
          },
          released_cents: settlement.releasedCents,
          refunded_cents: settlement.refundedCents,
          ...settlement.answerFields,
        }),
  };
}
