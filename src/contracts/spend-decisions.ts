// Contracts of capability spending (docs/capabilities.md): POST /verify (also POST /harbor/verify), which allows or
// denies a tool call and reserves its spend, and POST /v1/spend/decisions/{decision_id}/complete, where the tool
// reports the reservation consumed or released with its action receipt.
import Type, { type Static } from 'typebox';
import {
  capabilityTokenLengthMax,
  idempotencyKeyLengthMax,
  idempotencyKeyLengthMin,
  requestedSpendCentsMax,
  toolCallIdLengthMax,
  verifyHashHexLengthMax,
  verifyIntentIdLengthMax,
  verifyReasonCodesMax,
  verifyTextFieldLengthMax,
} from '../limits.ts';
import { Nullable, Timestamp, Uuid } from './common.ts';
import { SignedArtifact } from './protocol.ts';

/** The deny codes of /verify, in the order they are checked. They travel inside a 200 answer (`code` and
 * `reason_codes`), so they are not HTTP errors and are not in the error catalogue; docs/capabilities.md lists them. */
export const capabilityDenyCodes = [
  'capability.invalid_signature',
  'capability.expired',
  'capability.wrong_tenant',
  'capability.intent_mismatch',
  'capability.revoked',
  'capability.operation_not_allowed',
  'capability.currency_mismatch',
  'capability.budget_exceeded',
] as const;
export const CapabilityDenyCode = Type.Enum(capabilityDenyCodes);
export type CapabilityDenyCode = Static<typeof CapabilityDenyCode>;

const Text = Type.Optional(Type.String({ maxLength: verifyTextFieldLengthMax }));
const HashHex = Type.Optional(Type.String({ pattern: `^[0-9a-fA-F]{0,${verifyHashHexLengthMax}}$` }));

export const CapabilityVerifyBody = Type.Object(
  {
    /** Any string: one that names no intent of the token is a deny (intent_mismatch), not a malformed request. */
    intent_id: Type.String({ minLength: 1, maxLength: verifyIntentIdLengthMax }),
    token: Type.String({ minLength: 1, maxLength: capabilityTokenLengthMax }),
    operation: Type.String({ minLength: 1, maxLength: verifyTextFieldLengthMax }),
    requested_spend_cents: Type.Integer({ minimum: 0, maximum: requestedSpendCentsMax, default: 0 }),
    currency: Text,
    /** The same key as the idempotency-key header, for clients that send it in the body; two different ones are 400. */
    idempotency_key: Type.Optional(Type.String({ minLength: idempotencyKeyLengthMin, maxLength: idempotencyKeyLengthMax })),
    vendor_id: Text,
    task_id: Text,
    workflow_id: Text,
    tool_call_id: Text,
    tool_name: Text,
    agent_subject: Text,
    approval_token: Text,
    model_family: Text,
    config_hash_hex: HashHex,
    prompt_hash_hex: HashHex,
  },
  { additionalProperties: false },
);
export type CapabilityVerifyBody = Static<typeof CapabilityVerifyBody>;

/** Allowed and denied alike answer 200; an allow carries the decision that reserves the spend. */
export const CapabilityVerdict = Type.Object(
  {
    allow: Type.Boolean(),
    tenant: Type.String(),
    tenant_id: Type.String(),
    /** As sent: the client compares it. */
    intent_id: Type.String(),
    audit_id: Uuid,
    decision_id: Type.Optional(Uuid),
    code: Nullable(CapabilityDenyCode),
    message: Type.String(),
    reason_codes: Type.Array(CapabilityDenyCode, { maxItems: verifyReasonCodesMax }),
    /** amount − reserved − consumed after this decision; 0 when the token establishes no intent of this tenant. */
    remaining_cents: Type.Integer({ minimum: 0 }),
    operation: Type.String(),
    requested_spend_cents: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type CapabilityVerdict = Static<typeof CapabilityVerdict>;

export const SpendDecisionParams = Type.Object({ decision_id: Uuid });
export type SpendDecisionParams = Static<typeof SpendDecisionParams>;

export const SpendDecisionCompleteBody = Type.Object(
  {
    outcome: Type.Union([Type.Literal('consumed'), Type.Literal('released')]),
    /** For the call's action receipt: the tool's own call id (default: the decision id) and name (default: the operation). */
    tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: toolCallIdLengthMax })),
    tool_name: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' })),
  },
  { additionalProperties: false },
);
export type SpendDecisionCompleteBody = Static<typeof SpendDecisionCompleteBody>;

export const SpendDecision = Type.Object(
  {
    decision_id: Uuid,
    intent_id: Uuid,
    status: Type.Union([Type.Literal('reserved'), Type.Literal('consumed'), Type.Literal('released')]),
    requested_spend_cents: Type.Integer({ minimum: 0 }),
    completed_at: Nullable(Timestamp),
    /** The call's action receipt (`svc.agent_receipt_v1`), exactly as signed. */
    agent_receipt: SignedArtifact,
  },
  { additionalProperties: false },
);
export type SpendDecision = Static<typeof SpendDecision>;
