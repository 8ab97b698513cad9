// Sandbox guardrails (docs/capabilities.md): a sandbox tenant's key alone creates an unsigned intent
// (signing_version 0), funds it through the simulator and hands back its capability token, in one transaction;
// evidence for it is then evaluated and settled at once. Nothing here is reachable by a live tenant, and the
// evidence route never touches a signed intent.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../credentials/principal.ts';
import { queueEvidenceInsert } from '../db/evidence-repository.ts';
import { insertIntent, lockIntent, queueEvidenceRecordedTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { sandboxIntentLifetimeMs, sandboxMetadataBytesMax } from '../limits.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { archetypePresets, findPreset, materializeTemplate } from '../predicate/index.ts';
import { railAdapterFor } from '../rails/index.ts';
import { canonicalJsonBytes, normalizedAllowedTools } from '../signing/digests.ts';
import { bytesToHex } from '../signing/encoding.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { compileEvidenceSchema } from './evidence-schema.ts';
import { issueCapabilityToken, recordFunding } from './fund.ts';
import { settleIntent } from './settle.ts';
import { evaluateEvidence } from './decide.ts';
import type { EngineEffects } from './effects.ts';
import { fromStates } from './lifecycle.ts';

/** Guardrail intents settle on the x402 simulator: the rail every sandbox tenant has without configuration. */
export const sandboxSettlementRail = 'x402_usdc_base';
export const sandboxPayeeDid = 'did:svc:sandbox:payee';
export const sandboxPrincipalDid = (tenantId: string): string => `did:svc:sandbox:${tenantId}`;
const settlementMode = 'simulated';

export interface BootstrapBody {
  operation: string;
  requested_spend_cents: number;
  currency?: string;
  metadata?: Record<string, unknown>;
  completion_preset?: string;
  template_id?: string;
  parameters?: Record<string, unknown>;
  evidence_schema?: Record<string, unknown>;
}

export interface SandboxEvidenceBody {
  payload?: Record<string, unknown>;
  vendor_payload?: unknown;
  artifacts?: string[];
  operation?: string;
  requested_spend_cents?: number;
  metadata?: Record<string, unknown>;
}

/** 403 for a live tenant: the guardrail routes create and settle money-less simulated intents only. */
export function assertSandboxTenant(principal: Principal): void {
  if (principal.environment !== 'sandbox') throw new ServiceError('sandbox.live_tenant');
}

function assertMetadataFits(metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const bytes = canonicalJsonBytes(metadata, 'metadata').length;
  if (bytes > sandboxMetadataBytesMax) {
    throw new ServiceError('sandbox.metadata_too_large', { details: { bytes, limit: sandboxMetadataBytesMax } });
  }
}

/** The rule a bootstrap applies when it names neither a preset nor a template, with the template's default
 * parameters: the public client's first-run command and its MCP tool send only the operation and the amount. */
export const defaultCompletionTemplateId = 'completion_v1';

/** Where the release rule came from, echoed in the answer as `completion_source`. */
type CompletionSource = 'preset' | 'template' | 'default';

interface Completion {
  readonly source: CompletionSource;
  readonly presetId: string | null;
  readonly templateId: string;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly predicate: Record<string, unknown>;
  readonly evidenceSchema: Record<string, unknown>;
}

/** A preset's rule and evidence schema; the preset stands alone. */
function presetCompletion(body: BootstrapBody & { completion_preset: string }): Completion {
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
    predicate: materialized.predicate as unknown as Record<string, unknown>,
    evidenceSchema: preset.evidenceSchema as Record<string, unknown>,
  };
}

/** The release rule and evidence schema: a preset's; a template's with the caller's parameters and schema; or,
 * with neither, the default template's with its default parameters and the caller's schema. */
function resolveCompletion(body: BootstrapBody): Completion {
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
    predicate: materialized.predicate as unknown as Record<string, unknown>,
    evidenceSchema,
  };
}

/** What a settled funding attempt does, without the 402 handshake (the simulator stands for the rail). */
function fundBySimulator(tx: Queryable, intent: LockedIntent, rail: string): { funded: Intent; reference: string } {
  const reference = `sim_${randomUUID()}`;
  return { funded: recordFunding(tx, intent, rail, reference), reference };
}

export async function bootstrapGuardrail(
  tx: Queryable,
  principal: Principal,
  keyring: GatewayKeyring,
  body: BootstrapBody,
  nowMs = Date.now(),
): Promise<Record<string, unknown>> {
  const { tenantId } = principal;
  const currency = (body.currency ?? 'usd').toLowerCase();
  // The same rail rules as real funding (the x402 rail carries usd only); the simulator stands in for the handshake.
  const adapter = railAdapterFor(sandboxSettlementRail, { environment: 'sandbox', config: undefined, currency });
  const completion = resolveCompletion(body);
  assertMetadataFits(body.metadata);
  const allowedTools = normalizedAllowedTools([body.operation], 'operation');
  // Whole seconds, as everything the client may sign or compare is.
  const deadlineMs = Math.floor(nowMs / 1000) * 1000 + sandboxIntentLifetimeMs;
  const intent = await insertIntent(tx, {
    tenantId,
    intentId: randomUUID(),
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
  });
  const { funded, reference } = fundBySimulator(tx, intent, adapter.rail);
  const capabilityToken = await issueCapabilityToken(keyring, funded);
  return {
    tenant: tenantId,
    tenant_id: tenantId,
    intent_id: funded.intentId,
    capability_token: capabilityToken,
    operation: allowedTools[0]!,
    sandbox_lifecycle_status: funded.state,
    requested_spend_cents: funded.amountCents,
    amount_cents: funded.amountCents,
    currency,
    settlement_rail: funded.settlementRail,
    settlement_mode: settlementMode,
    simulator_event: { type: 'funding.simulated', reference, amount_cents: funded.amountCents, currency },
    allowed_tools: funded.allowedTools,
    completion_source: completion.source,
    completion_preset: completion.presetId,
    template_id: completion.templateId,
    parameters: completion.parameters,
    evidence_schema: funded.evidenceSchema,
    predicate_dsl: funded.predicateDsl,
    deadline: funded.deadlineText,
    ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
  };
}

/** A sandbox guardrail intent of this tenant, locked; any other intent (signed, another tenant's, unknown) is 404. */
async function lockGuardrailIntent(tx: Queryable, tenantId: string, intentId: string): Promise<LockedIntent> {
  const intent = await lockIntent(tx, tenantId, intentId.toLowerCase());
  if (!intent || intent.signingVersion !== 0) throw new ServiceError('intent.not_found');
  const allowed = fromStates('sandboxEvidence');
  if (!allowed.includes(intent.state)) throw new ServiceError('intent.invalid_state', { details: { state: intent.state, allowed_states: allowed } });
  return intent;
}

export async function submitGuardrailEvidence(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  body: SandboxEvidenceBody,
  effects: EngineEffects,
  nowMs = Date.now(),
): Promise<Record<string, unknown>> {
  const intent = await lockGuardrailIntent(tx, tenantId, intentId);
  if (intent.deadline.getTime() <= nowMs) throw new ServiceError('intent.deadline_passed');
  // Normalized as the allowed tools are (trimmed, lowercased), and as capability verification compares them.
  const operation = body.operation === undefined ? intent.allowedTools[0]! : normalizedAllowedTools([body.operation], 'operation')[0]!;
  if (!intent.allowedTools.includes(operation)) {
    throw new ServiceError('sandbox.operation_mismatch', { details: { allowed_tools: intent.allowedTools } });
  }
  assertMetadataFits(body.metadata);
  // Only `payload` is evaluated: vendor_payload is accepted for the client's vendor packs, which this service
  // does not map, and is neither stored nor read.
  const payload = body.payload ?? {};
  const artifacts = body.artifacts ?? [];
  const { evaluation, payloadDigest, artifactsDigest: artifactsDigestBytes } = evaluateEvidence(intent, payload, artifacts);
  queueEvidenceInsert(tx, tenantId, {
    intentId: intent.intentId,
    payload,
    artifacts,
    payeeDid: intent.payeeDid,
    // Unsigned: the table allows a NULL signature for exactly these intents.
    payeeSignature: null,
    submittedAt: formatRfc3339SecondsUtc(nowMs),
    payloadDigest,
    artifactsDigest: artifactsDigestBytes,
    predicatePassed: evaluation.passed,
    evaluation,
  });
  const recorded = queueEvidenceRecordedTransition(tx, intent, evaluation.passed);
  const toolCall = {
    operation,
    metadata: body.metadata,
    payloadDigestHex: bytesToHex(payloadDigest),
    artifactsDigestHex: bytesToHex(artifactsDigestBytes),
    predicatePassed: evaluation.passed,
  };
  const settlement = await settleIntent(tx, recorded, effects, { command: 'sandboxEvidence', nowMs, toolCall });
  return {
    tenant: tenantId,
    tenant_id: tenantId,
    intent_id: intentId,
    operation,
    requested_spend_cents: body.requested_spend_cents ?? intent.amountCents,
    sandbox_lifecycle_status: settlement.intent.state,
    predicate_passed: evaluation.passed,
    predicate_evaluation: evaluation,
    payload_digest: bytesToHex(payloadDigest),
    artifacts_digest: bytesToHex(artifactsDigestBytes),
    settlement_rail: intent.settlementRail,
    settlement_mode: settlementMode,
    simulator_event: { type: `${settlement.action}.simulated`, transaction_id: settlement.transactionId, reason: settlement.reason },
    settlement: {
      action: settlement.action,
      reason: settlement.reason,
      transaction_id: settlement.transactionId,
    },
    ...settlement.answerFields,
  };
}
