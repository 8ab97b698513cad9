// Contracts of the spend controls as people and agents read them (docs/capabilities.md#spend-preflight and
// #spend-controls): POST /v1/spend/preflight, the dry run of /verify that reserves nothing, and the admin reads of
// the rules /verify enforces, of its decisions and of the reservations they hold.
import Type, { type Static } from 'typebox';
import { pageSizeDefault, pageSizeMax, requestedSpendCentsMax, verifyReasonCodesMax, verifyTextFieldLengthMax } from '../limits.ts';
import { ListPage, Nullable, Timestamp, Uuid } from './common.ts';
import { IntentState } from './intents.ts';
import { CapabilityDenyCode } from './spend-decisions.ts';

const Text = Type.Optional(Type.String({ maxLength: verifyTextFieldLengthMax }));

/** The body of POST /verify without the token (and the idempotency key and hashes /verify alone takes). */
export const SpendPreflightBody = Type.Object(
  {
    intent_id: Uuid,
    /** The tool about to run; `*` (the default) asks about the budget alone, whatever the tool. */
    operation: Type.String({ minLength: 1, maxLength: verifyTextFieldLengthMax, default: '*' }),
    requested_spend_cents: Type.Integer({ minimum: 0, maximum: requestedSpendCentsMax, default: 0 }),
    currency: Text,
    vendor_id: Text,
    tool_name: Text,
    task_id: Text,
    workflow_id: Text,
    tool_call_id: Text,
    agent_subject: Text,
    approval_token: Text,
  },
  { additionalProperties: false },
);
export type SpendPreflightBody = Static<typeof SpendPreflightBody>;

/** What a budget is counted over: one intent, whose capability /verify checks. */
export const SpendScope = Type.Object(
  { scope_type: Type.Literal('intent'), scope_key: Uuid },
  { additionalProperties: false },
);

const SpendOutcome = Type.Union([Type.Literal('allow'), Type.Literal('deny')]);

export const SpendPreflight = Type.Object(
  {
    object: Type.Literal('spend_preflight'),
    tenant_id: Type.String(),
    intent_id: Uuid,
    /** Trimmed and lowercased, as /verify compares it; `*` for the budget alone. */
    operation: Type.String(),
    requested_spend_cents: Type.Integer({ minimum: 0 }),
    /** What /verify would answer now: `allow` (it would reserve the cents) or `deny`. */
    outcome: SpendOutcome,
    /** The same as `outcome`: the client reads either. */
    classification: SpendOutcome,
    /** The first deny code, which /verify would answer; null on allow. */
    code: Nullable(CapabilityDenyCode),
    /** Every check the spend fails, in /verify's order (/verify answers only the first). */
    reason_codes: Type.Array(CapabilityDenyCode, { maxItems: verifyReasonCodesMax }),
    explanation: Type.String(),
    /** amount − reserved − consumed now, before this spend. */
    remaining_cents: Type.Integer({ minimum: 0 }),
    amount_cents: Type.Integer({ minimum: 0 }),
    reserved_cents: Type.Integer({ minimum: 0 }),
    consumed_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String(),
    state: IntentState,
    deadline: Timestamp,
    allowed_tools: Type.Array(Type.String()),
    spend_scope: SpendScope,
    /** The version of the spend-control rules that decided (GET /v1/admin/spend-controls/policy). */
    policy_version: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type SpendPreflight = Static<typeof SpendPreflight>;

// ---- admin reads ----

export const SpendControlCheck = Type.Object(
  { code: CapabilityDenyCode, description: Type.String() },
  { additionalProperties: false },
);

export const SpendControlPolicy = Type.Object(
  {
    object: Type.Literal('spend_control_policy'),
    tenant_id: Type.String(),
    /** Where the limits come from: each intent's capability (its amount, allowed tools, currency and deadline). */
    source: Type.Literal('intent_capability'),
    configured: Type.Boolean(),
    /** Every /verify is decided by these checks; nothing is only observed. */
    mode: Type.Literal('enforce'),
    policy_version: Type.Integer({ minimum: 1 }),
    /** The rules are the service's, not a tenant setting: they change with a new policy_version, never in place. */
    updated_at: Type.Null(),
    /** The checks of /verify after the token's, in order. */
    checks: Type.Array(SpendControlCheck),
    /** A reservation holds its cents until the decision is completed (consumed or released); it does not lapse. */
    reservation_hold: Type.Literal('until_completed'),
  },
  { additionalProperties: false },
);
export type SpendControlPolicy = Static<typeof SpendControlPolicy>;

const DecisionStatus = Type.Union([Type.Literal('reserved'), Type.Literal('consumed'), Type.Literal('released')]);

export const SpendControlDecision = Type.Object(
  {
    object: Type.Literal('spend_decision'),
    /** The decision id, also as `decision_id`. */
    id: Uuid,
    decision_id: Uuid,
    audit_id: Uuid,
    intent_id: Uuid,
    operation: Type.String(),
    amount_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String(),
    /** Stored decisions are the allowed ones: a deny reserves nothing and is logged under its audit id. */
    outcome: Type.Literal('allow'),
    status: DecisionStatus,
    reason_codes: Type.Array(CapabilityDenyCode, { maxItems: 0 }),
    created_at: Timestamp,
    completed_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type SpendControlDecision = Static<typeof SpendControlDecision>;

export const SpendControlDecisionList = ListPage(SpendControlDecision, 'Spend decisions of the tenant, newest first.');
export type SpendControlDecisionList = Static<typeof SpendControlDecisionList>;

const listProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })),
  /** The id of the last item of the previous page. */
  cursor: Type.Optional(Uuid),
  intent_id: Type.Optional(Uuid),
};

export const SpendControlDecisionQuery = Type.Object(
  { ...listProperties, status: Type.Optional(DecisionStatus) },
  { additionalProperties: false },
);
export type SpendControlDecisionQuery = Static<typeof SpendControlDecisionQuery>;

/** A reservation's status: `active` while its decision is reserved, then the decision's outcome. */
export const reservationStatuses = ['active', 'consumed', 'released'] as const;
const ReservationStatus = Type.Enum(reservationStatuses);

export const SpendControlReservation = Type.Object(
  {
    object: Type.Literal('spend_reservation'),
    id: Uuid,
    decision_id: Uuid,
    intent_id: Uuid,
    operation: Type.String(),
    amount_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String(),
    status: ReservationStatus,
    created_at: Timestamp,
    completed_at: Nullable(Timestamp),
    /** Reservations do not lapse: null. */
    expires_at: Type.Null(),
  },
  { additionalProperties: false },
);
export type SpendControlReservation = Static<typeof SpendControlReservation>;

export const SpendControlReservationList = ListPage(SpendControlReservation, 'Reservations of the tenant, newest first.');
export type SpendControlReservationList = Static<typeof SpendControlReservationList>;

export const SpendControlReservationQuery = Type.Object(
  { ...listProperties, status: Type.Optional(Type.Enum([...reservationStatuses, 'all'], { default: 'active' })) },
  { additionalProperties: false },
);
export type SpendControlReservationQuery = Static<typeof SpendControlReservationQuery>;
