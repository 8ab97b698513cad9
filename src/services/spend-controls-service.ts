// The spend controls as people and agents read them (docs/capabilities.md#spend-preflight, #spend-controls): the
// preflight, which judges a spend exactly as /verify would and reserves nothing, and the admin reads of the rules,
// the decisions and the reservations.
import type {
  SpendControlDecision,
  SpendControlDecisionList,
  SpendControlPolicy,
  SpendControlReservation,
  SpendControlReservationList,
  SpendPreflight,
} from '../contracts/spend-controls.ts';
import type { CapabilityDenyCode } from '../contracts/spend-decisions.ts';
import { findIntent } from '../db/intent-repository.ts';
import { safeIntegerOf } from '../db/safe-integer.ts';
import { listSpendDecisions, sumSpend, type ListedSpendDecision, type SpendDecisionStatus } from '../db/spend-decision-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { normalizedToolName } from '../signing/digests.ts';
import { capabilityDenyCodes, denyMessages, judgeSpend } from './capability-service.ts';

/** The version of the rules /verify decides by (`judgeSpend` and the token checks before it). A change of the rules
 * is a new version, so that an answer naming a version always means the same checks. */
export const spendControlPolicyVersion = 1;

/** What a preflight's `operation` is when it asks about the budget alone. */
const anyOperation = '*';

export interface PreflightRequest {
  readonly intentId: string;
  readonly operation: string;
  readonly requestedSpendCents: number;
  readonly currency?: string | undefined;
}

/**
 * `POST /v1/spend/preflight`: what /verify would answer for this spend now, with every check it fails, read as a
 * snapshot without the intent's lock and reserving nothing. The caller's credential scopes it to its tenant: another
 * tenant's intent, like an unknown one, is 404 `intent.not_found`.
 */
export async function preflightSpend(tx: Queryable, tenantId: string, request: PreflightRequest, nowMs = Date.now()): Promise<SpendPreflight> {
  const intent = await findIntent(tx, tenantId, request.intentId.toLowerCase());
  if (!intent) throw new ServiceError('intent.not_found');
  const totals = await sumSpend(tx, tenantId, intent.intentId);
  const operation = request.operation.trim() === anyOperation ? anyOperation : normalizedToolName(request.operation);
  const judgement = judgeSpend(
    intent,
    totals,
    { operation: operation === anyOperation ? null : operation, currency: request.currency, requestedSpendCents: request.requestedSpendCents },
    nowMs,
  );
  const remainingCents = safeIntegerOf(judgement.remainingCents, 'remaining_cents');
  const outcome = judgement.denyCodes.length === 0 ? 'allow' : 'deny';
  return {
    object: 'spend_preflight',
    tenant_id: tenantId,
    intent_id: intent.intentId,
    operation,
    requested_spend_cents: request.requestedSpendCents,
    outcome,
    classification: outcome,
    code: judgement.denyCodes[0] ?? null,
    reason_codes: [...judgement.denyCodes],
    explanation: explain(judgement.denyCodes, { remainingCents, currency: intent.currency, operation, requested: request.requestedSpendCents }),
    remaining_cents: remainingCents,
    amount_cents: intent.amountCents,
    reserved_cents: safeIntegerOf(totals.reservedCents, 'reserved_cents'),
    consumed_cents: safeIntegerOf(totals.consumedCents, 'consumed_cents'),
    currency: intent.currency,
    state: intent.state,
    deadline: intent.deadline.toISOString(),
    allowed_tools: [...intent.allowedTools],
    spend_scope: { scope_type: 'intent', scope_key: intent.intentId },
    policy_version: spendControlPolicyVersion,
  };
}

function explain(denyCodes: readonly CapabilityDenyCode[], facts: { remainingCents: number; currency: string; operation: string; requested: number }): string {
  if (denyCodes.length > 0) return `Denied: ${denyCodes.map((code) => denyMessages[code]).join(' ')}`;
  const tool = facts.operation === anyOperation ? 'a tool of the intent' : `"${facts.operation}"`;
  return `Allowed: ${facts.remainingCents} ${facts.currency} cents remain; a verify of ${facts.requested} cents for ${tool} would reserve them until the decision is completed.`;
}

/** `GET /v1/admin/spend-controls/policy`: the rules every /verify is decided by, the token's checks first. */
export function spendControlPolicy(tenantId: string): SpendControlPolicy {
  return {
    object: 'spend_control_policy',
    tenant_id: tenantId,
    source: 'intent_capability',
    configured: true,
    mode: 'enforce',
    policy_version: spendControlPolicyVersion,
    updated_at: null,
    checks: capabilityDenyCodes.map((code) => ({ code, description: denyMessages[code] })),
    reservation_hold: 'until_completed',
  };
}

/** Statuses of the decisions a reservation status lists. */
const decisionStatusesOf: Record<'active' | 'consumed' | 'released' | 'all', readonly SpendDecisionStatus[] | undefined> = {
  active: ['reserved'],
  consumed: ['consumed'],
  released: ['released'],
  all: undefined,
};

export interface SpendListRequest {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly intentId?: string | undefined;
}

/** `GET /v1/admin/spend-controls/decisions`: the tenant's /verify decisions, newest first. */
export async function listDecisions(tx: Queryable, tenantId: string, request: SpendListRequest & { status?: SpendDecisionStatus | undefined }): Promise<SpendControlDecisionList> {
  const { decisions, ...page } = await readPage(tx, tenantId, request, request.status === undefined ? undefined : [request.status]);
  return { ...page, data: decisions.map(presentDecision) };
}

/** `GET /v1/admin/spend-controls/reservations`: the cents decisions hold (`active`), or held until completed. */
export async function listReservations(
  tx: Queryable,
  tenantId: string,
  request: SpendListRequest & { status: keyof typeof decisionStatusesOf },
): Promise<SpendControlReservationList> {
  const { decisions, ...page } = await readPage(tx, tenantId, request, decisionStatusesOf[request.status]);
  return { ...page, data: decisions.map(presentReservation) };
}

async function readPage(tx: Queryable, tenantId: string, request: SpendListRequest, statuses: readonly SpendDecisionStatus[] | undefined) {
  const { decisions, hasMore } = await listSpendDecisions(
    tx,
    tenantId,
    { intentId: request.intentId?.toLowerCase(), statuses },
    { limit: request.limit, startingAfter: request.cursor?.toLowerCase() },
  );
  return { object: 'list' as const, decisions, has_more: hasMore, next_cursor: hasMore ? decisions.at(-1)!.decisionId : null };
}

function presentDecision(decision: ListedSpendDecision): SpendControlDecision {
  return {
    object: 'spend_decision',
    id: decision.decisionId,
    decision_id: decision.decisionId,
    audit_id: decision.auditId,
    intent_id: decision.intentId,
    operation: decision.operation,
    amount_cents: decision.requestedCents,
    currency: decision.currency,
    outcome: 'allow',
    status: decision.status,
    reason_codes: [],
    created_at: decision.createdAt.toISOString(),
    completed_at: decision.completedAt?.toISOString() ?? null,
  };
}

function presentReservation(decision: ListedSpendDecision): SpendControlReservation {
  return {
    object: 'spend_reservation',
    id: decision.decisionId,
    decision_id: decision.decisionId,
    intent_id: decision.intentId,
    operation: decision.operation,
    amount_cents: decision.requestedCents,
    currency: decision.currency,
    status: decision.status === 'reserved' ? 'active' : decision.status,
    created_at: decision.createdAt.toISOString(),
    completed_at: decision.completedAt?.toISOString() ?? null,
    expires_at: null,
  };
}
