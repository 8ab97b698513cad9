// Capability verification and spend reservations (docs/capabilities.md).
//
// POST /verify answers 200 for every well-formed request: `allow` true with a decision that reserves the requested
// cents against the intent, or false with one deny code. The intent row is locked while the reservations are summed
// and the new one inserted, so concurrent verifies never reserve more than the intent's amount. A deny never says
// more about an intent than the presented token already proves: before the token establishes tenant and intent,
// nothing is read from the database.
import { randomUUID } from 'node:crypto';
import type { IntentBudget as IntentBudgetAnswer } from '../contracts/intents.ts';
import { capabilityDenyCodes, type CapabilityDenyCode, type CapabilityVerdict, type SpendDecision as SpendDecisionAnswer } from '../contracts/spend-decisions.ts';
import { jwtAudiences, JwtRejectedError, verifyGatewayJwt } from '../credentials/gateway-jwt.ts';
import { findIntent, lockIntent, type Intent } from '../db/intent-repository.ts';
import { safeIntegerOf } from '../db/safe-integer.ts';
import {
  completeReservedDecision,
  findSpendDecision,
  insertSpendDecision,
  sumSpend,
  type NewSpendDecision,
  type SpendDecision,
  type SpendOutcome,
  type SpendTotals,
} from '../db/spend-decision-repository.ts';
import { capabilityLiveStates, isTerminalState } from '../engine/lifecycle.ts';
import { ServiceError } from '../errors/service-error.ts';
import { verifyReasonCodesMax } from '../limits.ts';
import type { Queryable } from '../infra/database.ts';
import { normalizedToolName } from '../signing/digests.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { issueSpendDecisionReceipt } from '../receipts/agent-receipt-service.ts';

// The deny codes of /verify, in the order they are checked, are part of its answer's contract: they travel inside a
// 200 answer (`code` and `reason_codes`), so they are not HTTP errors and are not in the error catalogue.
export { capabilityDenyCodes, type CapabilityDenyCode };

/** Why /verify denies, one sentence per code; the spend-control reads (src/services/spend-controls-service.ts) say the
 * same. */
export const denyMessages: Readonly<Record<CapabilityDenyCode, string>> = {
  'capability.invalid_signature': 'The capability token does not verify as a capability of this gateway.',
  'capability.expired': 'The capability token has expired, or its intent is past its deadline.',
  'capability.wrong_tenant': 'The capability token was issued to another tenant than the credential\'s.',
  'capability.intent_mismatch': 'The capability token was issued for another intent than intent_id.',
  'capability.revoked': 'The capability is revoked: its intent is settled or no longer funded.',
  'capability.operation_not_allowed': 'The operation is not one of the intent\'s allowed_tools.',
  'capability.currency_mismatch': 'The currency is not the intent\'s currency.',
  'capability.budget_exceeded': 'The requested spend exceeds what the intent has left after its reservations.',
};
const allowMessage = 'Allowed: the requested spend is reserved until the decision is completed.';

export interface VerifyRequest {
  /** As the caller sent it: the answer echoes it verbatim (the client compares). */
  readonly intentId: string;
  readonly token: string;
  readonly operation: string;
  readonly requestedSpendCents: number;
  readonly currency?: string | undefined;
  /** What the client says of the guarded call, kept with the decision for the action receipt of its completion. */
  readonly toolCall?: VerifyToolCall | undefined;
}

/** The optional fields of /verify that describe the guarded call (docs/capabilities.md). */
export interface VerifyToolCall {
  readonly toolCallId?: string | undefined;
  readonly toolName?: string | undefined;
  readonly agentSubject?: string | undefined;
  readonly modelFamily?: string | undefined;
  readonly configHashHex?: string | undefined;
  readonly promptHashHex?: string | undefined;
  readonly vendorId?: string | undefined;
}

const scopeTokenPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const hex64Pattern = /^[0-9a-f]{64}$/;

/** What the decision keeps of the call: its id and tool, and the agent and vendor under the receipt's field names,
 * each only when it has the receipt's form (a tool name or model family as a lowercase token, digests as SHA-256 hex). */
function recordedToolCall(call: VerifyToolCall | undefined): Pick<NewSpendDecision, 'toolCallId' | 'toolName' | 'receiptContext'> {
  if (call === undefined) return {};
  const token = (text: string | undefined) => {
    const value = text?.trim().toLowerCase();
    return value !== undefined && scopeTokenPattern.test(value) ? value : undefined;
  };
  const digest = (text: string | undefined) => {
    const value = text?.trim().toLowerCase();
    return value !== undefined && hex64Pattern.test(value) ? value : undefined;
  };
  const context = Object.fromEntries(
    Object.entries({
      actor_subject: call.agentSubject?.trim() || undefined,
      model_family: token(call.modelFamily),
      config_hash_sha256_hex: digest(call.configHashHex),
      prompt_hash_sha256_hex: digest(call.promptHashHex),
      vendor_id: token(call.vendorId),
    }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return {
    toolCallId: call.toolCallId?.trim() || undefined,
    toolName: token(call.toolName),
    ...(Object.keys(context).length > 0 ? { receiptContext: context } : {}),
  };
}

/** What a spend is judged against, besides the intent: its operation (normalized; null when a preflight asks about
 * the budget alone, which /verify never does), its currency as sent, its cents. */
export interface SpendQuestion {
  readonly operation: string | null;
  readonly currency?: string | undefined;
  readonly requestedSpendCents: number;
}

export interface SpendJudgement {
  /** Every check the spend fails, in the order /verify checks them: /verify answers the first, a preflight all. */
  readonly denyCodes: readonly CapabilityDenyCode[];
  /** What the capability can still spend before this spend (remainingSpendCents). */
  readonly remainingCents: bigint;
}

/** What an intent's capability can still spend: amount − reserved − consumed while the intent is open; 0 once it
 * settled, when the settlement closed its reservations (consumed within the released part, released back otherwise)
 * and its capability is revoked. /verify, the preflight and the budget read all answer this. */
export function remainingSpendCents(intent: Intent, totals: SpendTotals): bigint {
  return isTerminalState(intent.state) ? 0n : BigInt(intent.amountCents) - totals.reservedCents - totals.consumedCents;
}

/**
 * The checks /verify makes once the token has established the intent, as a pure judgement: the same function
 * decides a verify (under the intent's lock, then reserving) and explains a preflight (read as a snapshot, reserving
 * nothing), so the two can never disagree about the same intent, totals and request.
 */
export function judgeSpend(intent: Intent, totals: SpendTotals, question: SpendQuestion, nowMs: number): SpendJudgement {
  const remainingCents = remainingSpendCents(intent, totals);
  const denyCodes: CapabilityDenyCode[] = [];
  // The lifecycle table declares in which states a capability is live; any other state revokes it.
  if (!capabilityLiveStates.includes(intent.state)) denyCodes.push('capability.revoked');
  if (intent.deadline.getTime() <= nowMs) denyCodes.push('capability.expired');
  if (question.operation !== null && !intent.allowedTools.includes(question.operation)) denyCodes.push('capability.operation_not_allowed');
  if (question.currency !== undefined && question.currency.trim().toLowerCase() !== intent.currency) denyCodes.push('capability.currency_mismatch');
  if (BigInt(question.requestedSpendCents) > remainingCents) denyCodes.push('capability.budget_exceeded');
  return { denyCodes, remainingCents };
}

export async function verifyCapability(tx: Queryable, keyring: GatewayKeyring, tenantId: string, request: VerifyRequest, nowMs = Date.now()): Promise<CapabilityVerdict> {
  // Normalized as allowed tools are, so that the two compare.
  const operation = normalizedToolName(request.operation);
  // One audit id per call, allowed or not; an allowed call's decision row carries it too.
  const auditId = randomUUID();
  const answer = (code: CapabilityDenyCode | null, remainingCents: bigint, decisionId?: string): CapabilityVerdict => {
    // Reservations are only inserted within the amount, under the intent's lock: a negative rest is a broken invariant.
    if (remainingCents < 0n) throw new Error(`intent ${request.intentId} has ${remainingCents} cents left: reservations exceed its amount`);
    const reasonCodes = code === null ? [] : [code];
    if (reasonCodes.length > verifyReasonCodesMax) throw new Error('a verify answer carries more reason codes than the limit');
    return {
      allow: code === null,
      tenant: tenantId,
      tenant_id: tenantId,
      intent_id: request.intentId,
      audit_id: auditId,
      ...(decisionId === undefined ? {} : { decision_id: decisionId }),
      code,
      message: code === null ? allowMessage : denyMessages[code],
      reason_codes: reasonCodes,
      // At most the intent's amount, itself a safe integer: the checked conversion asserts it.
      remaining_cents: safeIntegerOf(remainingCents, 'remaining_cents'),
      operation,
      requested_spend_cents: request.requestedSpendCents,
    };
  };

  let claims: Awaited<ReturnType<typeof verifyGatewayJwt>>;
  try {
    claims = await verifyGatewayJwt(keyring, request.token, jwtAudiences.capability);
  } catch (error) {
    if (!(error instanceof JwtRejectedError)) throw error;
    return answer(error.reason === 'expired' ? 'capability.expired' : 'capability.invalid_signature', 0n);
  }
  // A gateway-signed token of this audience without an intent is not a capability this service issued.
  const tokenIntentId = claims['intent_id'];
  if (typeof tokenIntentId !== 'string' || tokenIntentId !== claims.sub) return answer('capability.invalid_signature', 0n);
  if (claims.tid !== tenantId) return answer('capability.wrong_tenant', 0n);
  if (tokenIntentId !== request.intentId.toLowerCase()) return answer('capability.intent_mismatch', 0n);

  const intent = await lockIntent(tx, tenantId, tokenIntentId);
  // Only reachable with a token of this tenant whose intent is gone; say no more than for any other intent.
  if (!intent) return answer('capability.intent_mismatch', 0n);
  const totals = await sumSpend(tx, tenantId, intent.intentId);
  const judgement = judgeSpend(intent, totals, { operation, currency: request.currency, requestedSpendCents: request.requestedSpendCents }, nowMs);
  const firstDeny = judgement.denyCodes[0];
  if (firstDeny !== undefined) return answer(firstDeny, judgement.remainingCents);

  const decision = await insertSpendDecision(tx, tenantId, {
    decisionId: randomUUID(),
    intentId: intent.intentId,
    auditId,
    operation,
    requestedCents: request.requestedSpendCents,
    ...recordedToolCall(request.toolCall),
  });
  return answer(null, judgement.remainingCents - BigInt(request.requestedSpendCents), decision.decisionId);
}

/** A decision as `POST /v1/spend/decisions/{decision_id}/complete` answers it, but for its action receipt. */
const presentDecision = (decision: SpendDecision): Omit<SpendDecisionAnswer, 'agent_receipt'> => ({
  decision_id: decision.decisionId,
  intent_id: decision.intentId,
  status: decision.status,
  requested_spend_cents: decision.requestedCents,
  completed_at: decision.completedAt?.toISOString() ?? null,
});

/** What the guarded tool may say about the call when it reports back, for the action receipt. */
export interface ToolCallReport {
  readonly toolCallId?: string | undefined;
  readonly toolName?: string | undefined;
}

/** Moves a reserved decision to its outcome and issues the call's action receipt in the same transaction
 * (docs/protocol.md#agent-receipts). The same outcome again answers the stored decision unchanged, with the receipt
 * already issued; the other outcome is 409; another tenant's or an unknown decision is 404. Completing after the
 * intent settled is allowed: it is bookkeeping of what the tool did, and the settled intent's capability is revoked
 * anyway. */
export async function completeSpendDecision(
  tx: Queryable,
  keyring: GatewayKeyring,
  tenantId: string,
  decisionId: string,
  outcome: SpendOutcome,
  report: ToolCallReport = {},
): Promise<SpendDecisionAnswer> {
  const id = decisionId.toLowerCase();
  let decision = await completeReservedDecision(tx, tenantId, id, outcome);
  if (!decision) {
    const existing = await findSpendDecision(tx, tenantId, id);
    if (!existing) throw new ServiceError('spend_decision.not_found');
    if (existing.status !== outcome) throw new ServiceError('spend_decision.already_completed', { details: { status: existing.status } });
    decision = existing;
  }
  const intent = await findIntent(tx, tenantId, decision.intentId);
  // A decision's intent is its foreign key: never missing.
  if (!intent) throw new Error(`spend decision ${decision.decisionId} has no intent`);
  const receipt = await issueSpendDecisionReceipt(tx, keyring, intent, decision, report);
  return { ...presentDecision(decision), agent_receipt: receipt };
}

/** What an intent's capability can still spend, as the next /verify would see it, without reserving anything: the
 * budget read's answer but for the members the route adds (`object`, the tenant). Read without a lock: a snapshot,
 * while /verify decides under the lock. */
export async function readIntentBudget(tx: Queryable, tenantId: string, intentId: string): Promise<Omit<IntentBudgetAnswer, 'object' | 'tenant_id'>> {
  const intent = await findIntent(tx, tenantId, intentId);
  if (!intent) throw new ServiceError('intent.not_found');
  const totals = await sumSpend(tx, tenantId, intent.intentId);
  return {
    intent_id: intent.intentId,
    state: intent.state,
    currency: intent.currency,
    amount_cents: intent.amountCents,
    reserved_cents: safeIntegerOf(totals.reservedCents, 'reserved_cents'),
    consumed_cents: safeIntegerOf(totals.consumedCents, 'consumed_cents'),
    // A settled intent can spend nothing more: its reservations were closed by the settlement (reserved 0).
    remaining_cents: safeIntegerOf(remainingSpendCents(intent, totals), 'remaining_cents'),
    released_cents: intent.releasedCents,
    refunded_cents: intent.refundedCents,
  };
}
