// Agent receipts `svc.agent_receipt_v1` (docs/protocol.md#agent-receipts): `action` scope for one tool call (a
// completed spend decision, or the sandbox evidence route's call), `intent_terminal` scope when the intent is
// released or refunded. Built only from what the service itself knows and a few checked metadata fields: nothing
// the caller sends is copied wholesale, so prompts, arguments, results and payloads never reach a receipt.
import type { AgentReceiptListAnswer, ExternalAttestation, ReceiptInclusionProof, SignedArtifact } from '../contracts/protocol.ts';
import { findReceipt, listAgentReceipts, type StoredReceipt } from './protocol-receipt-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Intent } from '../db/intent-repository.ts';
import type { SpendDecision } from '../db/spend-decision-repository.ts';
import type { TerminalTransition, ToolCall } from '../engine/effects.ts';
import { isTerminalState, type TerminalState } from '../engine/lifecycle.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { pageSizeDefault, toolCallIdLengthMax } from '../limits.ts';
import { canonicalJson } from '../signing/canonical-json.ts';
import { sha256Hex } from '../signing/digests.ts';
import { isCanonicalUuidText } from '../signing/encoding.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { recordReceiptNow, signReceipt, storedReceiptInclusionProof, summarizeAgentReceipt, type SignedReceipt } from './receipt-signing.ts';

/** A digest the caller did not report (the agent's config or prompt hash, a tool's arguments): 64 zeros, which no
 * SHA-256 of real input is expected to be. */
export const digestNotReportedHex = '0'.repeat(64);
/** The model family when the caller reports none. */
export const modelFamilyNotReported = 'unreported';

const scopeTokenPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const hex64Pattern = /^[0-9a-f]{64}$/;

type Metadata = Readonly<Record<string, unknown>> | undefined;

const textOf = (metadata: Metadata, name: string): string | undefined => {
  const value = metadata?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};
const tokenOf = (metadata: Metadata, name: string): string | undefined => {
  const value = textOf(metadata, name);
  return value !== undefined && scopeTokenPattern.test(value) ? value : undefined;
};
const hexOf = (metadata: Metadata, name: string): string | undefined => {
  const value = textOf(metadata, name);
  return value !== undefined && hex64Pattern.test(value) ? value : undefined;
};
const uuidOf = (metadata: Metadata, name: string): string | undefined => {
  const value = textOf(metadata, name)?.toLowerCase();
  return value !== undefined && isCanonicalUuidText(value) ? value : undefined;
};

/** The receipt id of an action: lowercase hex SHA-256 of `intent_id ‖ 0x00 ‖ tool_call_id`. */
export function actionReceiptId(intentId: string, toolCallId: string): string {
  return sha256Hex(`${intentId}\0${toolCallId}`);
}

/** The tool call id a caller named, when usable; else the fallback. */
export function toolCallIdOf(metadata: Metadata, fallback: string): string {
  const named = textOf(metadata, 'tool_call_id');
  return named !== undefined && named.length <= toolCallIdLengthMax ? named : fallback;
}

/** The rule the intent was released or refunded by: the bound policy version, or the inline predicate's digest. */
function policyOf(intent: Intent): Record<string, unknown> {
  if (intent.policyTemplateId !== null && intent.policyContentDigest !== null) {
    return { template_id: intent.policyTemplateId, version_seq: intent.policyVersionSeq ?? 0, content_digest_sha256_hex: intent.policyContentDigest.toString('hex') };
  }
  return {
    template_id: intent.completionPresetId ?? 'predicate_dsl',
    content_digest_sha256_hex: sha256Hex(canonicalJson(intent.predicateDsl)),
  };
}

function authorizationOf(
  intent: Intent,
  metadata: Metadata,
  decision: { readonly decisionId: string; readonly auditId?: string; readonly requestedSpendCents: number; readonly mandateDigestHex?: string },
): Record<string, unknown> {
  return {
    principal_did: intent.principalDid,
    actor_subject: textOf(metadata, 'actor_subject') ?? intent.principalDid,
    agent: {
      operator_did: textOf(metadata, 'operator_did') ?? intent.principalDid,
      model_family: tokenOf(metadata, 'model_family') ?? modelFamilyNotReported,
      model_instance_id: textOf(metadata, 'model_instance_id') ?? '',
      config_hash_sha256_hex: hexOf(metadata, 'config_hash_sha256_hex') ?? digestNotReportedHex,
      prompt_hash_sha256_hex: hexOf(metadata, 'prompt_hash_sha256_hex') ?? digestNotReportedHex,
    },
    decision_id: decision.decisionId,
    ...(decision.auditId ? { audit_id: decision.auditId } : {}),
    policy: policyOf(intent),
    authorized_at: formatRfc3339SecondsUtc((intent.fundedAt ?? intent.createdAt).getTime()),
    requested_spend_cents: decision.requestedSpendCents,
    currency: intent.currency,
    ...(decision.mandateDigestHex ? { mandate_digest_sha256_hex: decision.mandateDigestHex } : {}),
  };
}

/** The payee, and the vendor the caller named (a lowercase token, as the receipt's table wants it). */
const merchantOf = (intent: Intent, metadata: Metadata): Record<string, unknown> => {
  const vendorId = tokenOf(metadata, 'vendor_id');
  return { payee_did: intent.payeeDid, ...(vendorId === undefined ? {} : { vendor_id: vendorId }) };
};

const paymentOf = (intent: Intent): Record<string, unknown> => ({
  intent_id: intent.intentId,
  settlement_rail: intent.settlementRail,
  ...(intent.fundingReference ? { funding_reference: intent.fundingReference } : {}),
});

/** The receipt's `settlement_outcome` of each terminal state (a state the lifecycle table adds as terminal does not
 * compile until it has one); the receipt leaves it out before a terminal state. */
// A split settled: the payee was paid its part (the rest returned is the settlement receipt's to show).
const settlementOutcomes = { released: 'SETTLED', refunded: 'REVERSED', resolved_split: 'SETTLED' } as const satisfies Record<TerminalState, 'SETTLED' | 'REVERSED' | 'FAILED'>;

const settlementOutcomeOf = (intent: Intent): string | undefined => (isTerminalState(intent.state) ? settlementOutcomes[intent.state] : undefined);

const isTerminal = (intent: Intent): boolean => isTerminalState(intent.state);

/** The intent-terminal receipt's body: its id is the intent id, its decision the settling ledger transaction. */
function terminalBody(
  transition: TerminalTransition,
  settlementReceiptId: string,
  mandateDigestHex: string | undefined,
  attestations: readonly ExternalAttestation[],
): Record<string, unknown> {
  const intent = transition.intent;
  return {
    scope: 'intent_terminal',
    receipt_id: intent.intentId,
    issued_at: formatRfc3339SecondsUtc(transition.nowMs),
    tenant_id: intent.tenantId,
    authorization: authorizationOf(intent, transition.toolCall?.metadata, {
      decisionId: transition.transactionId,
      requestedSpendCents: intent.amountCents,
      mandateDigestHex,
    }),
    merchant: { payee_did: intent.payeeDid },
    ...(transition.toolCall ? { evidence: evidenceOf(intent, transition.toolCall) } : {}),
    payment: paymentOf(intent),
    outcome: {
      harbor_state: intent.state,
      ...(intent.predicatePassed === null ? {} : { predicate_passed: intent.predicatePassed }),
      settlement_outcome: settlementOutcomeOf(intent),
    },
    references: { intent_id: intent.intentId, settlement_receipt_id: settlementReceiptId },
    // Written `null` when empty (the field table says so), as the client writes it.
    external_attestations: attestations,
  };
}

function evidenceOf(intent: Intent, toolCall: ToolCall): Record<string, unknown> {
  return {
    completion_preset_id: intent.completionPresetId !== null && scopeTokenPattern.test(intent.completionPresetId) ? intent.completionPresetId : 'predicate_dsl',
    payload_digest_sha256_hex: toolCall.payloadDigestHex,
    artifacts_digest_sha256_hex: toolCall.artifactsDigestHex,
    predicate_passed: toolCall.predicatePassed,
    payee_did: intent.payeeDid,
  };
}

/** The body of an action receipt: one tool call, its spend decision and what became of the intent. */
export function actionAgentReceiptBody(params: {
  readonly intent: Intent;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly operation: string;
  readonly metadata: Metadata;
  readonly decisionId: string;
  readonly auditId?: string;
  readonly requestedSpendCents: number;
  readonly startedAtMs: number;
  readonly completedAtMs: number;
  readonly executionOutcome: 'executed' | 'skipped';
  readonly reservationOutcome: 'consumed' | 'released' | 'none';
  readonly resultDigestHex?: string;
  readonly toolCall?: ToolCall;
  readonly externalAttestations?: readonly ExternalAttestation[];
  readonly nowMs: number;
}): Record<string, unknown> {
  const intent = params.intent;
  return {
    scope: 'action',
    receipt_id: actionReceiptId(intent.intentId, params.toolCallId),
    issued_at: formatRfc3339SecondsUtc(params.nowMs),
    tenant_id: intent.tenantId,
    authorization: authorizationOf(intent, params.metadata, {
      decisionId: params.decisionId,
      ...(params.auditId ? { auditId: params.auditId } : {}),
      requestedSpendCents: params.requestedSpendCents,
    }),
    execution: {
      run_id: uuidOf(params.metadata, 'run_id') ?? params.decisionId,
      tool_call_id: params.toolCallId,
      tool_name: scopeTokenPattern.test(params.toolName) ? params.toolName : params.operation,
      operation: params.operation,
      arguments_digest_sha256_hex: hexOf(params.metadata, 'arguments_digest_sha256_hex') ?? digestNotReportedHex,
      ...(params.resultDigestHex ? { result_digest_sha256_hex: params.resultDigestHex } : {}),
      outcome: params.executionOutcome,
      started_at: formatRfc3339SecondsUtc(params.startedAtMs),
      completed_at: formatRfc3339SecondsUtc(params.completedAtMs),
      duration_ms: Math.max(0, params.completedAtMs - params.startedAtMs),
    },
    merchant: merchantOf(intent, params.metadata),
    ...(params.toolCall ? { evidence: evidenceOf(intent, params.toolCall) } : {}),
    payment: paymentOf(intent),
    outcome: {
      harbor_state: intent.state,
      spend_reservation_outcome: params.reservationOutcome,
      ...(intent.predicatePassed === null ? {} : { predicate_passed: intent.predicatePassed }),
    },
    references: { intent_id: intent.intentId, settlement_receipt_id: isTerminal(intent) ? intent.intentId : null },
    external_attestations: params.externalAttestations ?? [],
  };
}

/** The intent-terminal agent receipt of a transition, signed: it names the imported mandate's digest, if any, and
 * lists `attestations` (the mandate's entry among them, which the client's verifier requires beside the digest). */
export function signTerminalAgentReceipt(
  transition: TerminalTransition,
  keyring: GatewayKeyring,
  settlement: SignedReceipt,
  terminal: { readonly mandateDigestHex: string | undefined; readonly attestations: readonly ExternalAttestation[] },
): SignedReceipt {
  return signReceipt('svc.agent_receipt_v1', terminalBody(transition, settlement.receiptId, terminal.mandateDigestHex, terminal.attestations), keyring);
}

/** The tool call id of the sandbox evidence call that settled an intent: the caller's, else the intent id. */
export const sandboxToolCallIdOf = (transition: TerminalTransition): string => toolCallIdOf(transition.toolCall?.metadata, transition.intent.intentId);

/** The action receipt of the sandbox evidence call that settled the intent, signed. */
export function signSandboxActionReceipt(transition: TerminalTransition & { readonly toolCall: ToolCall }, keyring: GatewayKeyring): SignedReceipt {
  const { intent, toolCall, nowMs } = transition;
  return signReceipt('svc.agent_receipt_v1', actionAgentReceiptBody({
    intent,
    toolCallId: sandboxToolCallIdOf(transition),
    toolName: textOf(toolCall.metadata, 'tool_name') ?? toolCall.operation,
    operation: toolCall.operation,
    metadata: toolCall.metadata,
    decisionId: uuidOf(toolCall.metadata, 'decision_id') ?? transition.transactionId,
    requestedSpendCents: intent.amountCents,
    startedAtMs: (intent.fundedAt ?? intent.createdAt).getTime(),
    completedAtMs: nowMs,
    executionOutcome: 'executed',
    reservationOutcome: 'none',
    resultDigestHex: toolCall.payloadDigestHex,
    toolCall,
    externalAttestations: toolCall.externalAttestations,
    nowMs,
  }), keyring);
}

/** The action receipt of a completed spend decision (POST /v1/spend/decisions/{id}/complete), in its transaction. */
export async function issueSpendDecisionReceipt(
  tx: Queryable,
  keyring: GatewayKeyring,
  intent: Intent,
  decision: SpendDecision,
  report: { readonly toolCallId?: string | undefined; readonly toolName?: string | undefined },
  nowMs = Date.now(),
): Promise<Record<string, unknown>> {
  // The call as the completion names it, else as the client named it to /verify, else the decision itself.
  const toolCallId = report.toolCallId ?? decision.toolCallId ?? decision.decisionId;
  const completedAtMs = decision.completedAt?.getTime() ?? nowMs;
  const body = actionAgentReceiptBody({
    intent,
    toolCallId,
    toolName: report.toolName ?? decision.toolName ?? decision.operation,
    operation: decision.operation,
    metadata: decision.receiptContext,
    decisionId: decision.decisionId,
    auditId: decision.auditId,
    requestedSpendCents: decision.requestedCents,
    startedAtMs: decision.createdAt.getTime(),
    completedAtMs,
    executionOutcome: decision.status === 'consumed' ? 'executed' : 'skipped',
    reservationOutcome: decision.status === 'consumed' ? 'consumed' : 'released',
    nowMs,
  });
  // One receipt per tool call: a second report of the same call (the sandbox evidence and the decision's completion
  // may name the same tool_call_id) answers the receipt already issued.
  const existing = await findReceipt(tx, intent.tenantId, 'agent', body.receipt_id as string);
  if (existing) return existing.wire;
  const receipt = signReceipt('svc.agent_receipt_v1', body, keyring);
  const stored = await recordReceiptNow(tx, intent.tenantId, receipt, { family: 'agent', scope: 'action', intentId: intent.intentId, toolCallId });
  // Only a concurrent report of the same tool call gets here; its leaf is appended, so this transaction must not commit.
  if (!stored) throw new Error(`the action receipt ${receipt.receiptId} was issued concurrently`);
  return receipt.wire;
}

async function findAgentReceipt(tx: Queryable, tenantId: string, receiptId: string): Promise<StoredReceipt> {
  const stored = await findReceipt(tx, tenantId, 'agent', receiptId.toLowerCase());
  if (!stored) throw new ServiceError('receipt.not_found');
  return stored;
}

/** GET /protocol/v2/agent-receipts/{id}: the tenant's agent receipt, signed, as issued; 404 for another tenant's id. */
export async function readAgentReceipt(tx: Queryable, tenantId: string, receiptId: string): Promise<SignedArtifact> {
  return (await findAgentReceipt(tx, tenantId, receiptId)).wire;
}

/** GET /protocol/v2/agent-receipts/{id}/inclusion-proof: where the receipt stands in the tenant's log. */
export async function readAgentReceiptInclusionProof(tx: Queryable, tenantId: string, receiptId: string): Promise<ReceiptInclusionProof> {
  return storedReceiptInclusionProof(tx, tenantId, await findAgentReceipt(tx, tenantId, receiptId));
}

/**
 * GET /protocol/v2/agent-receipts. Without `limit` and `cursor`, an `intent_id` asks for one signed receipt, as the
 * public client asks: with `tool_call_id` that call's action receipt, else the intent-terminal receipt (404 until the
 * intent is released or refunded). Otherwise a page of summaries, newest first, optionally of one intent or one
 * tool call.
 */
export async function listAgentReceiptPage(
  tx: Queryable,
  tenantId: string,
  query: { limit?: number | undefined; intentId?: string | undefined; toolCallId?: string | undefined; cursor?: string | undefined },
): Promise<AgentReceiptListAnswer> {
  const intentId = query.intentId?.toLowerCase();
  if (intentId !== undefined && query.limit === undefined && query.cursor === undefined) {
    return readAgentReceipt(tx, tenantId, query.toolCallId === undefined ? intentId : actionReceiptId(intentId, query.toolCallId));
  }
  const limit = query.limit ?? pageSizeDefault;
  const startingAfter = query.cursor?.toLowerCase();
  const found = await listAgentReceipts(tx, tenantId, { limit, intentId, toolCallId: query.toolCallId, startingAfter });
  if (found.receipts.length === 0 && startingAfter !== undefined && !(await findReceipt(tx, tenantId, 'agent', startingAfter))) {
    throw new ServiceError('receipt.not_found', { details: { cursor: startingAfter } });
  }
  return {
    object: 'list' as const,
    items: found.receipts.map((stored) => summarizeAgentReceipt(tenantId, stored)),
    limit,
    has_more: found.hasMore,
    next_cursor: found.hasMore ? found.receipts.at(-1)!.receiptId : null,
  };
}
