// The intent as the API shows it, the create envelope, and the intent id and list query of the harbor intent routes
// (docs/engine.md). The server presents intents through `Intent`; the SDK reads the same types.
import Type, { type Static } from 'typebox';
import {
  allowedToolLengthMax, allowedToolsMax, completionPresetIdLengthMax, didLengthMax, envelopeBase64LengthMax, evidenceArtifactsMax,
  policyVersionSeqMax, predicateRefLengthMax, railInstructionReferenceLengthMax, rfc3339TextLengthMax, tenantIdLengthMax,
} from '../limits.ts';
import { ErrorEnvelope, IdempotencyHeaders, JsonValue, ListPage, Nullable, OpenObject, Timestamp, Uuid, pageQueryProperties } from './common.ts';
import { ExternalAttestation } from './protocol.ts';
import { ReviewHoldFacts } from './review-hold.ts';
import {
  confirmBodyExample, createIntentBodyExample, evidenceAnswerExample, evidenceBodyExample, fundChallengeExample, fundFundedExample, intentExample,
  invalidStateExample, settlementAnswerExample,
} from './examples.ts';

/** An intent's life: open → funded → evidence_recorded (→ held) → released | refunded | resolved_split (docs/engine.md). */
export const intentStates = ['open', 'funded', 'evidence_recorded', 'held', 'released', 'refunded', 'resolved_split'] as const;
export const IntentState = Type.Enum(intentStates);
export type IntentState = Static<typeof IntentState>;

/** A managed policy template id (`a-z`, digits, `_`). */
export const TemplateId = Type.String({ pattern: '^[a-z0-9_]{1,64}$' });
/** A settlement rail id (`x402_usdc_base`, `processor_mpp`); which ones run is the rails' to say. */
export const SettlementRailId = Type.String({ pattern: '^[a-z0-9_]{1,64}$' });

export const IntentIdParams = Type.Object({ intent_id: Uuid });
export type IntentIdParams = Static<typeof IntentIdParams>;

/** A payout (release) or refund instructed to a live rail (docs/rails.md#live-rails). */
export const RailInstruction = Type.Object({
  instruction_id: Uuid,
  kind: Type.Union([Type.Literal('payout'), Type.Literal('refund')]),
  rail: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  amount_cents: Type.Integer({ minimum: 1 }),
  currency: Type.String(),
  reference: Nullable(Type.String({ description: "The rail's reference of the transfer, once it has one." })),
  detail: Nullable(Type.String({ description: 'What remains to be done (x402: the transfer the operator makes).' })),
  attempts: Type.Integer({ minimum: 0 }),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type RailInstruction = Static<typeof RailInstruction>;

export const RailInstructionParams = Type.Object({ intent_id: Uuid, instruction_id: Uuid });
export type RailInstructionParams = Static<typeof RailInstructionParams>;

/** The operator's record of an instruction it carried out itself (x402: the transfer from the tenant's wallet). */
export const RailInstructionDoneBody = Type.Object(
  { reference: Type.String({ minLength: 1, maxLength: railInstructionReferenceLengthMax, description: "The transfer's reference on its rail (x402: the transaction hash)." }) },
  { additionalProperties: false },
);
export type RailInstructionDoneBody = Static<typeof RailInstructionDoneBody>;

/** How a passing rule settles (docs/engine.md#the-split-rule): `full` releases the whole amount; `metered` releases
 * the cost the payee signed and refunds the rest. Taken from the policy version the principal signed. */
export const releaseModes = ['full', 'metered'] as const;
export const ReleaseMode = Type.Enum(releaseModes, { description: 'How a passing rule settles: the whole amount (full) or the payee-signed cost (metered).' });
export type ReleaseMode = Static<typeof ReleaseMode>;

export const Intent = Type.Object(
  {
    object: Type.Literal('intent'),
    tenant: Type.String({ description: 'The same as tenant_id: clients of this protocol read either.' }),
    tenant_id: Type.String(),
    intent_id: Uuid,
    state: IntentState,
    funded: Type.Boolean({ description: 'Whether the intent has left `open`.' }),
    signing_version: Type.Union([Type.Literal(0), Type.Literal(6), Type.Literal(7)], { description: '0 for intents the service created unsigned (sandbox guardrails).' }),
    principal_did: Type.String(),
    principal_key_registered: Type.Boolean(),
    payee_did: Type.String(),
    amount_cents: Type.Integer({ minimum: 1 }),
    currency: Type.String(),
    budget: JsonValue,
    evidence_schema: OpenObject('The JSON Schema the evidence payload must match.'),
    deadline: Type.String({ description: 'The deadline as the principal signed it (RFC 3339).' }),
    predicate_dsl: OpenObject('The release rule, in the predicate language (docs/predicates.md).'),
    predicate_ref: Type.String({ description: 'The `<template_id>@<version_seq>` the rule was taken from, or empty.' }),
    policy_binding: Nullable(
      Type.Object({ template_id: TemplateId, version_seq: Nullable(Type.Integer({ minimum: 1 })), content_digest: Nullable(Type.String()) }),
    ),
    settlement_rail: SettlementRailId,
    allowed_tools: Type.Array(Type.String()),
    completion_preset_id: Nullable(Type.String()),
    predicate_passed: Nullable(Type.Boolean({ description: 'The release rule\'s verdict once evidence is recorded.' })),
    created_at: Timestamp,
    funded_at: Nullable(Timestamp),
    evidence_recorded_at: Nullable(Timestamp),
    settled_at: Nullable(Timestamp),
    release_mode: ReleaseMode,
    released_cents: Nullable(Type.Integer({ minimum: 0, description: 'Once settled: the part paid to the payee (released_cents + refunded_cents = amount_cents).' })),
    refunded_cents: Nullable(Type.Integer({ minimum: 0, description: 'Once settled: the part returned to the principal.' })),
    // On the read of one intent (GET /harbor/intents/{id}) only: what a live rail did (docs/rails.md#live-rails).
    funding_details: Type.Optional(Nullable(OpenObject('What the live rail reported about the funding payment (x402: transaction, payer, network); null when there is none.'))),
    rail_instructions: Type.Optional(Type.Array(RailInstruction, { description: 'The payout or refund instructed to the live rail when the intent settled.' })),
    // An escrow held at the rail (x402 auth-capture, docs/rails.md#x402-auth-capture-escrow-held-at-the-rail): the
    // client's authorize/capture fields. Only on the read of one intent whose funding was such a hold.
    authorization_id: Type.Optional(Type.String({ description: 'The hold: the escrow\'s payment id (paymentInfoHash).' })),
    capture_id: Type.Optional(Nullable(Type.String({ description: 'The capture\'s transaction, once captured.' }))),
    void_id: Type.Optional(Nullable(Type.String({ description: 'The void\'s transaction, once the hold (or its rest) went back to the payer.' }))),
    refund_id: Type.Optional(Nullable(Type.String({ description: 'A refund of captured funds (never made by this service\'s settlement: it voids instead).' }))),
    authorization_expires_at: Type.Optional(Timestamp),
    capture_expires_at: Type.Optional(Timestamp),
    refund_expires_at: Type.Optional(Timestamp),
    onchain_transaction_hashes: Type.Optional(Type.Object({
      authorizations: Type.Array(Type.String()),
      captures: Type.Array(Type.String()),
      voids: Type.Array(Type.String()),
      refunds: Type.Array(Type.String()),
    }, { description: 'The hold\'s transactions, by operation.' })),
  },
  { description: 'An intent: escrowed spend with its release rule.', examples: [intentExample] },
);
export type Intent = Static<typeof Intent>;

export const IntentList = ListPage(Intent, 'A page of intents, newest first.');
export type IntentList = Static<typeof IntentList>;

/** The query of an intent list: a page size, a cursor, and the filters a route names. Anything else is refused. */
export const intentListQuery = <P extends Record<string, ReturnType<typeof Type.Optional>>>(filters: P) =>
  Type.Object({ ...pageQueryProperties, ...filters }, { additionalProperties: false });

export const IntentListQuery = intentListQuery({ state: Type.Optional(IntentState) });
export type IntentListQuery = Static<typeof IntentListQuery>;

const text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const base64 = Type.String({ pattern: '^[A-Za-z0-9+/]+={0,2}$', maxLength: envelopeBase64LengthMax });

/**
 * The principal-signed create envelope (docs/engine.md#creating-an-intent--post-harborintents). The engine checks it
 * after its signing-version gate (a v4 body is `intent.signing_version_deprecated`, not a schema refusal), so the
 * route attaches rather than raises its own validation of it.
 */
export const CreateIntentBody = Type.Object(
  {
    intent_id: Type.String({ maxLength: 36 }),
    principal_did: text(didLengthMax),
    principal_pubkey: base64,
    principal_signature: base64,
    payee_did: text(didLengthMax),
    payee_pubkey: base64,
    budget: OpenObject(),
    currency: Type.String({ pattern: '^[a-z]{3}$' }),
    amount_cents: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    evidence_schema: OpenObject(),
    deadline: text(rfc3339TextLengthMax),
    predicate_dsl: Type.Optional(JsonValue),
    settlement_rail: SettlementRailId,
    signing_version: Type.Union([Type.Literal(6), Type.Literal(7)]),
    policy_binding: Type.Optional(Nullable(Type.Object({ template_id: TemplateId, version_seq: Type.Integer({ minimum: 1, maximum: policyVersionSeqMax }) }, { additionalProperties: false }))),
    allowed_tools: Type.Array(text(allowedToolLengthMax), { minItems: 1, maxItems: allowedToolsMax }),
    predicate_ref: Type.Optional(Type.String({ maxLength: predicateRefLengthMax })),
    completion_preset_id: Type.Optional(text(completionPresetIdLengthMax)),
    tenant_id: Type.Optional(text(tenantIdLengthMax)),
    org_id: Type.Optional(text(tenantIdLengthMax)),
  },
  { additionalProperties: false, examples: [createIntentBodyExample] },
);
export type CreateIntentBody = Static<typeof CreateIntentBody>;

/** The operator read's list (`GET /harbor/operator/v1/intents`): the public client's shape, `items` for `data`. */
export const OperatorIntentList = Type.Object(
  { object: Type.Literal('list'), items: Type.Array(Intent), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) },
  { description: 'A page of intents, newest first, as the public client reads it.' },
);
export type OperatorIntentList = Static<typeof OperatorIntentList>;

export const OperatorIntentListQuery = intentListQuery({
  // The client's name for the intent's state.
  status: Type.Optional(IntentState),
  // The operator is the party that does the work and is paid on release: the intent's payee.
  operator_did: Type.Optional(Type.String({ minLength: 1, maxLength: didLengthMax })),
});
export type OperatorIntentListQuery = Static<typeof OperatorIntentListQuery>;

// ---- the lifecycle's answers (docs/engine.md) ----

/** What an intent's capability can still spend (docs/capabilities.md "Remaining budget"). */
export const IntentBudget = Type.Object({
  object: Type.Literal('intent_budget'),
  tenant_id: Type.String(),
  intent_id: Uuid,
  state: IntentState,
  currency: Type.String(),
  amount_cents: Type.Integer(),
  reserved_cents: Type.Integer(),
  consumed_cents: Type.Integer(),
  remaining_cents: Type.Integer({ description: 'amount − reserved − consumed while funded or evidence is recorded; 0 once settled.' }),
  released_cents: Nullable(Type.Integer({ minimum: 0, description: 'Once settled: the part paid to the payee.' })),
  refunded_cents: Nullable(Type.Integer({ minimum: 0, description: 'Once settled: the part returned to the principal.' })),
});
export type IntentBudget = Static<typeof IntentBudget>;

/** The rail's funding record: `settlement_rail` and `status` always, then what the rail reports (x402: addresses,
 * network; MPP: payment references). Open, as each rail adds its own members (docs/rails.md). */
export const Funding = Type.Object(
  { settlement_rail: SettlementRailId, status: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'The rail\'s funding record (docs/rails.md).' },
);

/** Every fund answer, 200, 202 and 402 alike (docs/engine.md#funding--post-harborintentsidfund). A 402 that refuses a
 * credential carries an RFC 9457 problem's members too (`application/problem+json`). */
export const FundAnswer = Type.Object({
  tenant: Type.String(),
  tenant_id: Type.String(),
  intent_id: Uuid,
  state: IntentState,
  settlement_rail: SettlementRailId,
  currency: Type.String(),
  amount_cents: Type.Integer(),
  funded: Type.Boolean(),
  funding: Funding,
  capability_token: Type.Optional(Type.String({ description: 'On 200: the capability the agent spends with (docs/capabilities.md).' })),
  type: Type.Optional(Type.String({ description: 'On a 402 refusing a credential: the problem type.' })),
  title: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
  status: Type.Optional(Type.Literal(402)),
});
export type FundAnswer = Static<typeof FundAnswer>;

/** A header of the rail's wire a fund answer carries, as a rail declares it (src/rails/definition.ts). */
export interface FundAnswerHeader {
  /** As the answer carries it (lowercase). */
  readonly name: string;
  readonly description: string;
  readonly example?: string;
}

const headerSchemas = (headers: readonly FundAnswerHeader[]) =>
  Object.fromEntries(headers.map(({ name, description, example }) => [name, Type.String({ description, ...(example === undefined ? {} : { examples: [example] }) })]));

/** The fund route's answers by status: the same members, each with what it means and the headers it carries: a 402
 * each rail's challenge headers, a 200 each rail's receipt headers (whichever the intent's rail speaks). */
export function fundAnswerContracts(headers: { readonly challenge: readonly FundAnswerHeader[]; readonly receipt: readonly FundAnswerHeader[] }) {
  return {
    funded: Type.Object(FundAnswer.properties, {
      description: 'Funded: the answer carries the capability token.',
      headers: headerSchemas(headers.receipt),
      examples: [fundFundedExample],
    }),
    pending: Type.Object(FundAnswer.properties, { description: 'Pending at the rail: re-send the same request to poll.' }),
    challenge: Type.Object(FundAnswer.properties, {
      description: 'A challenge to answer (or a refused credential, as application/problem+json).',
      headers: headerSchemas(headers.challenge),
      examples: [fundChallengeExample],
    }),
  };
}

/** The 409 envelope of the lifecycle routes, with an example: a request the intent's state does not allow. */
export const IntentStateConflict = Type.Object(ErrorEnvelope(409).properties, {
  description: 'The error envelope: a request the intent\'s state does not allow (`intent.invalid_state`), or another of the catalogue\'s 409 codes (docs/errors.md).',
  examples: [invalidStateExample],
});

/** The evidence route's headers: the idempotency key, and what the client attests for the agent receipts (parsed
 * and judged by the route, so that a bad value gets its own code, `evidence.attestations_invalid`). */
export const EvidenceHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  'x-svc-agent-receipt-attestations': Type.Optional(Type.String({ description: 'A JSON array of {source, kind, digest_sha256_hex, reference_id?}: what the client verified, listed in the agent receipts\' external_attestations.' })),
  'x-svc-agent-run-id': Type.Optional(Type.String({ description: 'The agent run (a UUID) the evidence came from, stored with it.' })),
});

export const EvidenceBody = Type.Object(
  {
    // Any JSON here; a payload that is not an object is an evidence-shape problem (422), not a malformed body.
    payload: JsonValue,
    artifacts: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), { maxItems: evidenceArtifactsMax, default: [] })),
    payee_did: Type.String({ minLength: 1, maxLength: didLengthMax }),
    payee_pubkey: Type.String({ maxLength: envelopeBase64LengthMax }),
    payee_signature: Type.String({ maxLength: envelopeBase64LengthMax }),
    submitted_at: Type.String({ minLength: 1, maxLength: rfc3339TextLengthMax }),
  },
  { additionalProperties: false, examples: [evidenceBodyExample] },
);
export type EvidenceBody = Static<typeof EvidenceBody>;

/** The ops of the predicate language (docs/predicates.md), as a trace step names them. The evaluator's own list is
 * `clauseOps` (src/predicate/ast.ts), which this layer cannot import; test/contracts/contract-types.test.ts holds the two
 * equal. */
export const clauseOpNames = ['true', 'and', 'or', 'not', 'eq', 'completion', 'lte', 'budget_cap', 'schema_field', 'array_nonempty'] as const;

/** One step of an evaluation trace (src/predicate/ast.ts `TraceStep`). Members are listed in the order the evaluator
 * writes them. The serializer writes an object's required members first, then the others, each group in the order
 * listed: so `data`, whose `path` the evaluator writes before `passed`, lists every member as optional, and says in
 * words that `passed` is always there; marked required, it would move ahead of `path` on the wire. */
export const PredicateTraceStep = Type.Object({
  kind: Type.Enum(clauseOpNames, { description: 'The op of the clause this step evaluated.' }),
  detail: Type.String({ description: 'One short sentence saying what was checked and how it came out.' }),
  data: Type.Object({
    path: Type.Optional(Type.String({ description: 'The evidence location as a JSON Pointer (RFC 6901), for clauses that read evidence.' })),
    passed: Type.Optional(Type.Boolean({ description: 'Whether the clause passed: present in every step.' })),
    expected: Type.Optional(Type.Unknown({ description: 'What the clause required.' })),
    observed: Type.Optional(Type.Unknown({ description: 'What the evidence held: the value, or `{type, length?}` when it was too large to copy.' })),
    observed_truncated: Type.Optional(Type.Literal(true, { description: 'Present when `observed` is a summary rather than the value.' })),
  }),
});
export type PredicateTraceStep = Static<typeof PredicateTraceStep>;

/** A rule's verdict on evidence with its trace (docs/predicates.md): one step per evaluated clause, a parent before its
 * children, so that `trace[0]` carries the overall result. */
export const PredicateEvaluation = Type.Object(
  { passed: Type.Boolean(), trace: Type.Array(PredicateTraceStep) },
  { description: 'The verdict (`passed`) and the trace of each evaluated clause (docs/predicates.md).' },
);
export type PredicateEvaluation = Static<typeof PredicateEvaluation>;

export const EvidenceAnswer = Type.Object(
  {
    tenant: Type.String(),
    tenant_id: Type.String(),
    intent_id: Uuid,
    state: IntentState,
    intent_state: IntentState,
    predicate_passed: Type.Boolean(),
    predicate_evaluation: PredicateEvaluation,
    payload_digest: Type.String(),
    artifacts_digest: Type.String(),
  },
  { examples: [evidenceAnswerExample] },
);
export type EvidenceAnswer = Static<typeof EvidenceAnswer>;

/** What a settlement did: all to the payee, all back to the principal, or part to each (docs/engine.md#the-split-rule). */
export const settlementActions = ['release', 'refund', 'split'] as const;
export const SettlementAction = Type.Enum(settlementActions);

/** Confirm's optional body: a guard that refuses (409) when the rule implies another action. */
export const ConfirmBody = Type.Object({ expected_action: Type.Optional(SettlementAction) }, { additionalProperties: false, examples: [confirmBodyExample] });
export type ConfirmBody = Static<typeof ConfirmBody>;

export const SettlementAnswer = Type.Object(
  {
    ...Intent.properties,
    /** Absent when the release gate held the release instead (then `review_hold` says why). */
    settlement: Type.Optional(Type.Object({
      action: SettlementAction,
      reason: Type.String(),
      transaction_id: Type.String(),
      released_cents: Type.Integer({ minimum: 0, description: 'The part paid to the payee.' }),
      refunded_cents: Type.Integer({ minimum: 0, description: 'The part returned to the principal.' }),
    })),
    review_hold: Type.Optional(ReviewHoldFacts),
  },
  { examples: [settlementAnswerExample] },
);
export type SettlementAnswer = Static<typeof SettlementAnswer>;

const SubmissionId = Type.String({ pattern: '^evs_[0-9a-f]{64}$' });

export const EvidenceSubmission = Type.Object({
  object: Type.Literal('evidence_submission'),
  tenant_id: Type.String(),
  submission_id: SubmissionId,
  intent_id: Uuid,
  submitted_at: Type.String(),
  recorded_at: Timestamp,
  payee_did: Type.String(),
  payee_signed: Type.Boolean({ description: 'Whether the payee signed it (sandbox evidence is unsigned).' }),
  evidence: Type.Object({ payload: JsonValue, artifacts: Type.Array(Type.String()) }),
  payload_digest: Type.String(),
  artifacts_digest: Type.String(),
  outcome: Type.Enum(['pass', 'fail'] as const),
  predicate_passed: Type.Boolean(),
  // As stored when the evidence arrived: the evaluation the evidence answer carried. Left undescribed here: the store
  // (jsonb) orders members its own way, and a listed shape would have the serializer reorder what it answers today.
  predicate_evaluation: Type.Unknown({ description: 'The verdict (`passed`) and the trace of each evaluated clause, as the evidence answer carried it.' }),
  external_attestations: Type.Array(ExternalAttestation, { description: 'What the client attested with the evidence (x-svc-agent-receipt-attestations); the intent-terminal agent receipt lists them.' }),
  /** The agent run the client named with the evidence (x-svc-agent-run-id). */
  agent_run_id: Nullable(Uuid),
});
export type EvidenceSubmission = Static<typeof EvidenceSubmission>;

export const EvidenceSubmissionList = ListPage(EvidenceSubmission, 'The evidence submitted for an intent, newest first.');
export type EvidenceSubmissionList = Static<typeof EvidenceSubmissionList>;

export const EvidenceSubmissionQuery = Type.Object(
  { limit: pageQueryProperties.limit, cursor: Type.Optional(SubmissionId) },
  { additionalProperties: false },
);
export type EvidenceSubmissionQuery = Static<typeof EvidenceSubmissionQuery>;
