// Contracts of the sandbox guardrail routes (docs/capabilities.md): bootstrap a funded, unsigned intent with its
// capability token in one call, then submit evidence that is evaluated and settled at once.
import Type, { type Static } from 'typebox';
import { allowedToolLengthMax, completionPresetIdLengthMax, evidenceArtifactsMax, sandboxRequestedSpendCentsMax, templateIdLengthMax } from '../limits.ts';
import { Nullable, OpenObject, Uuid } from './common.ts';
import { sandboxBootstrapBodyExample, sandboxBootstrappedExample } from './examples.ts';
import { PredicateEvaluation } from './intents.ts';
import { SignedArtifact } from './protocol.ts';
import { ReviewHoldFacts } from './review-hold.ts';

/** At least one non-space character: the operation becomes the intent's one allowed tool, trimmed and lowercased. */
const Operation = Type.String({ minLength: 1, maxLength: allowedToolLengthMax, pattern: '\\S' });
const AnyObject = OpenObject('A JSON object of the caller\'s.');

export const SandboxBootstrapBody = Type.Object(
  {
    operation: Operation,
    requested_spend_cents: Type.Integer({ minimum: 1, maximum: sandboxRequestedSpendCentsMax }),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
    metadata: Type.Optional(AnyObject),
    completion_preset: Type.Optional(Type.String({ minLength: 1, maxLength: completionPresetIdLengthMax })),
    template_id: Type.Optional(Type.String({ minLength: 1, maxLength: templateIdLengthMax })),
    parameters: Type.Optional(AnyObject),
    evidence_schema: Type.Optional(AnyObject),
  },
  { additionalProperties: false, examples: [sandboxBootstrapBodyExample] },
);
export type SandboxBootstrapBody = Static<typeof SandboxBootstrapBody>;

/** Every field is optional and clients may send no body at all. The MCP sandbox evidence tool takes this schema as
 * its input schema. */
export const SandboxEvidenceBody = Type.Object(
  {
    payload: Type.Optional(AnyObject),
    /** Accepted for the client's vendor packs; neither stored nor read. */
    vendor_payload: Type.Optional(Type.Unknown()),
    artifacts: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), { maxItems: evidenceArtifactsMax })),
    operation: Type.Optional(Operation),
    requested_spend_cents: Type.Optional(Type.Integer({ minimum: 0, maximum: sandboxRequestedSpendCentsMax })),
    metadata: Type.Optional(AnyObject),
    completion_preset_id: Type.Optional(Type.String({
      minLength: 1,
      maxLength: completionPresetIdLengthMax,
      description: 'The archetype preset the payload was prepared for (the public client checks its payload against one before submitting): the payload must then match that preset\'s evidence schema as well.',
    })),
  },
  { additionalProperties: false },
);
export type SandboxEvidenceBody = Static<typeof SandboxEvidenceBody>;

export const SandboxIntentParams = Type.Object({ intent_id: Uuid });
export type SandboxIntentParams = Static<typeof SandboxIntentParams>;

const SettlementAction = Type.Union([Type.Literal('release'), Type.Literal('refund'), Type.Literal('split')]);
const SettlementReason = Type.Union([Type.Literal('predicate_passed'), Type.Literal('predicate_failed'), Type.Literal('deadline_passed'), Type.Literal('review_resolved')]);

export const SandboxBootstrapped = Type.Object(
  {
    tenant: Type.String(),
    tenant_id: Type.String(),
    intent_id: Uuid,
    capability_token: Type.String(),
    operation: Type.String(),
    sandbox_lifecycle_status: Type.String(),
    requested_spend_cents: Type.Integer(),
    amount_cents: Type.Integer(),
    currency: Type.String(),
    settlement_rail: Type.String(),
    settlement_mode: Type.Literal('simulated'),
    simulator_event: Type.Object(
      { type: Type.Literal('funding.simulated'), reference: Type.String(), amount_cents: Type.Integer(), currency: Type.String() },
      { additionalProperties: false },
    ),
    allowed_tools: Type.Array(Type.String()),
    completion_source: Type.Union([Type.Literal('preset'), Type.Literal('template'), Type.Literal('default')]),
    completion_preset: Nullable(Type.String()),
    template_id: Type.String(),
    parameters: AnyObject,
    evidence_schema: AnyObject,
    predicate_dsl: AnyObject,
    deadline: Type.String(),
    metadata: Type.Optional(AnyObject),
  },
  { additionalProperties: false, examples: [sandboxBootstrappedExample] },
);
export type SandboxBootstrapped = Static<typeof SandboxBootstrapped>;

export const SandboxEvidenceAnswer = Type.Object(
  {
    tenant: Type.String(),
    tenant_id: Type.String(),
    intent_id: Uuid,
    operation: Type.String(),
    requested_spend_cents: Type.Integer(),
    sandbox_lifecycle_status: Type.String(),
    predicate_passed: Type.Boolean(),
    predicate_evaluation: PredicateEvaluation,
    payload_digest: Type.String(),
    artifacts_digest: Type.String(),
    settlement_rail: Type.String(),
    settlement_mode: Type.Literal('simulated'),
    // Both absent when the release gate held the release (then `review_hold` says why, docs/release-gate.md).
    simulator_event: Type.Optional(Type.Object(
      { type: Type.String(), transaction_id: Type.String(), reason: SettlementReason },
      { additionalProperties: false },
    )),
    /** Absent when the release gate held the release instead (then `review_hold` says why). */
    settlement: Type.Optional(Type.Object(
      {
        action: SettlementAction,
        reason: SettlementReason,
        transaction_id: Type.String(),
        released_cents: Type.Integer({ minimum: 0, description: 'The part paid to the payee.' }),
        refunded_cents: Type.Integer({ minimum: 0, description: 'The part returned to the principal.' }),
      },
      { additionalProperties: false },
    )),
    released_cents: Type.Optional(Type.Integer({ minimum: 0 })),
    refunded_cents: Type.Optional(Type.Integer({ minimum: 0 })),
    review_hold: Type.Optional(ReviewHoldFacts),
    /** The tool call's action receipt and the intent's terminal agent receipt, exactly as signed. */
    agent_receipt: Type.Optional(SignedArtifact),
    agent_receipt_intent_terminal: Type.Optional(SignedArtifact),
  },
  { additionalProperties: false },
);
export type SandboxEvidenceAnswer = Static<typeof SandboxEvidenceAnswer>;
