// Contracts of the protocol v2 routes (docs/protocol.md): mandates, protocol receipts, agent receipts, task contracts
// and the verify routes. Signed artifacts (receipts, mandates, tree heads) are described as open objects and never
// reshaped: the serializer writes them key by key in the order they were signed, so their bytes stay the bytes that
// were signed.
import Type, { type Static } from 'typebox';
import { pageSizeDefault, pageSizeMax, toolCallIdLengthMax, transportBindingFieldLengthMax } from '../limits.ts';
import { Nullable, OpenObject, Timestamp, Uuid } from './common.ts';
import { SignedTreeHead } from './ledger.ts';


/** A signed `ed25519-sha256-json-v1` artifact as it was signed: every field kept, in its order (docs/signing.md). */
export const SignedArtifact = OpenObject('A signed ed25519-sha256-json-v1 artifact, exactly as signed (docs/signing.md).');
export type SignedArtifact = Static<typeof SignedArtifact>;
/** What a caller sends to be verified: any JSON object; the verdict says what is wrong with it. */
const AnyObject = OpenObject('Any JSON object.');
const Limit = Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault });

/** `valid: false` of every verify route: the artifact's code (not an HTTP error), its message and details. */
export const ArtifactRefusal = Type.Object(
  { valid: Type.Literal(false), code: Type.String(), message: Type.String(), details: Type.Optional(AnyObject) },
  { additionalProperties: false },
);
export type ArtifactRefusal = Static<typeof ArtifactRefusal>;

// ---- Mandates ----

/** `{signed_mandate}`, or the signed mandate itself as the body (the public client posts it so). */
export const MandateVerifyBody = OpenObject('`{"signed_mandate": {…}}`, or the signed svc.agent_mandate_v1 itself as the body.');
export type MandateVerifyBody = Static<typeof MandateVerifyBody>;

export const MandateVerdict = Type.Union([
  Type.Object(
    {
      valid: Type.Literal(true),
      kind: Type.Literal('svc.agent_mandate_v1'),
      tenant_id: Type.String(),
      mandate_digest_sha256_hex: Type.String(),
      mandate: SignedArtifact,
    },
    { additionalProperties: false },
  ),
  ArtifactRefusal,
]);
export type MandateVerdict = Static<typeof MandateVerdict>;

const BindingText = Type.Optional(Type.String({ maxLength: transportBindingFieldLengthMax }));
export const TransportBinding = Type.Object(
  {
    source_protocol: Type.Optional(Type.Union([Type.Literal('ap2'), Type.Literal('acp'), Type.Literal('ucp')])),
    partner_platform: BindingText,
    external_authorization_id: BindingText,
    request_id: BindingText,
  },
  { additionalProperties: false },
);
export type TransportBinding = Static<typeof TransportBinding>;

export const MandateImportBody = Type.Object(
  {
    signed_mandate: AnyObject,
    intent_id: Uuid,
    transport_binding: Type.Optional(TransportBinding),
    /** Bound to the body without this field, keys in the order sent (docs/protocol.md#mandates). */
    recognition_proof: AnyObject,
  },
  { additionalProperties: false },
);
export type MandateImportBody = Static<typeof MandateImportBody>;

export const MandateImported = Type.Object(
  {
    valid: Type.Literal(true),
    intent_id: Uuid,
    mandate_digest_sha256_hex: Type.String(),
    /** The canonical body of the mandate, as verified. */
    mandate: SignedArtifact,
    authorization_receipt: SignedArtifact,
    mandate_leaf_index: Type.Integer({ minimum: 0 }),
    leaf_index: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type MandateImported = Static<typeof MandateImported>;

// ---- Receipts ----

const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/**
 * Where a receipt stands in the tenant's transparency log, in the public client's inclusion-proof format
 * (docs/protocol.md#inclusion-proofs): its leaf, the audit path from it to the root of the latest signed tree head,
 * and that head. The kind says what the leaf hashes: the receipt's message digest (every leaf appended now), or,
 * under `svc.transparency_inclusion_proof_v1`, its canonical bytes (leaves appended before the change).
 */
export const ReceiptInclusionProof = Type.Object(
  {
    kind: Type.Union([Type.Literal('svc.agent_receipt_transparency_inclusion_proof_v1'), Type.Literal('svc.transparency_inclusion_proof_v1')]),
    schema_version: Type.Literal(1),
    tenant_id: Type.String(),
    receipt_id: Type.String(),
    message_digest_sha256_hex: Hex64,
    leaf_index: Type.Integer({ minimum: 0 }),
    tree_size: Type.Integer({ minimum: 1 }),
    leaf_hash_sha256_hex: Hex64,
    audit_path_sha256_hex: Type.Array(Hex64),
    root_hash_sha256_hex: Hex64,
    tree_head: SignedTreeHead,
  },
  { additionalProperties: false },
);
export type ReceiptInclusionProof = Static<typeof ReceiptInclusionProof>;

/** One entry of an agent receipt's `external_attestations`: the digest of something the client verified itself (an
 * imported mandate, a partner's receipt), in the receipt's field order. */
export const ExternalAttestation = Type.Object(
  {
    source: Type.String(),
    kind: Type.String(),
    digest_sha256_hex: Hex64,
    reference_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ExternalAttestation = Static<typeof ExternalAttestation>;

/** An agent receipt in a list: what a lister reads at a glance, and the signed receipt itself under `receipt`. */
export const AgentReceiptSummary = Type.Object(
  {
    kind: Type.String(),
    receipt_id: Type.String(),
    tenant_id: Type.String(),
    scope: Type.Union([Type.Literal('action'), Type.Literal('intent_terminal')]),
    intent_id: Uuid,
    tool_call_id: Nullable(Type.String()),
    message_digest_sha256_hex: Hex64,
    created_at: Timestamp,
    leaf_index: Nullable(Type.Integer({ minimum: 0 })),
    receipt: SignedArtifact,
  },
  { additionalProperties: false },
);
export type AgentReceiptSummary = Static<typeof AgentReceiptSummary>;

export const ProtocolReceiptParams = Type.Object({ receipt_id: Type.String({ pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' }) });
export type ProtocolReceiptParams = Static<typeof ProtocolReceiptParams>;

/** A verify body: `{receipt: {...}}`, the receipt itself, or `{receipt_id}` naming one of the tenant's receipts. */
export const ReceiptVerifyBody = AnyObject;
export type ReceiptVerifyBody = Static<typeof ReceiptVerifyBody>;

export const ReceiptVerdict = Type.Union([
  Type.Object(
    {
      valid: Type.Literal(true),
      kind: Type.String(),
      receipt_id: Type.String(),
      tenant_id: Type.String(),
      message_digest_sha256_hex: Type.String(),
      /** The receipt as received, or as stored when the body named it by id. */
      receipt: SignedArtifact,
    },
    { additionalProperties: false },
  ),
  ArtifactRefusal,
]);
export type ReceiptVerdict = Static<typeof ReceiptVerdict>;

// ---- Agent receipts ----

/** An agent receipt id: the 64-hex action receipt id, or a UUID. */
const AgentReceiptId = Type.String({ pattern: '^([0-9a-fA-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$' });

export const AgentReceiptParams = Type.Object({ receipt_id: AgentReceiptId });
export type AgentReceiptParams = Static<typeof AgentReceiptParams>;

/** Without `limit` and `cursor`, `intent_id` asks for one receipt (the intent-terminal one, or with `tool_call_id`
 * that call's action receipt); with either, for a page (`limit` then defaults to 50). */
export const AgentReceiptListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, description: `Page size, ${pageSizeDefault} when absent.` })),
    intent_id: Type.Optional(Uuid),
    tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: toolCallIdLengthMax })),
    cursor: Type.Optional(AgentReceiptId),
  },
  { additionalProperties: false },
);
export type AgentReceiptListQuery = Static<typeof AgentReceiptListQuery>;

export const AgentReceiptPage = Type.Object(
  {
    object: Type.Literal('list'),
    items: Type.Array(AgentReceiptSummary),
    limit: Type.Integer(),
    has_more: Type.Boolean(),
    next_cursor: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type AgentReceiptPage = Static<typeof AgentReceiptPage>;

/** A page, or the one signed receipt an intent (and tool call) names. */
export const AgentReceiptListAnswer = Type.Union([AgentReceiptPage, SignedArtifact]);
export type AgentReceiptListAnswer = Static<typeof AgentReceiptListAnswer>;

/** `trust_mode=gateway` is the only mode: receipts are signed by this deployment's gateway keys. */
export const AgentReceiptVerifyQuery = Type.Object({ trust_mode: Type.Optional(Type.Literal('gateway')) }, { additionalProperties: false });
export type AgentReceiptVerifyQuery = Static<typeof AgentReceiptVerifyQuery>;

// ---- Task contracts ----

export const TaskContractListQuery = Type.Object({ limit: Limit, cursor: Type.Optional(Uuid) }, { additionalProperties: false });
export type TaskContractListQuery = Static<typeof TaskContractListQuery>;
export const TaskContractParams = Type.Object({ contract_id: Uuid });
export type TaskContractParams = Static<typeof TaskContractParams>;

const PredicateRule = {
  predicate_dsl: AnyObject,
  predicate_digest_sha256_hex: Type.String(),
};

/** How the intent's money is released: its bound policy version, a completion preset, or an inline predicate. */
export const TaskContractRule = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('policy'),
      template_id: Type.String(),
      version_seq: Nullable(Type.Integer()),
      content_digest_sha256_hex: Nullable(Type.String()),
      ...PredicateRule,
    },
    { additionalProperties: false },
  ),
  Type.Object({ kind: Type.Literal('preset'), completion_preset_id: Type.String(), ...PredicateRule }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('predicate'), ...PredicateRule }, { additionalProperties: false }),
]);
export type TaskContractRule = Static<typeof TaskContractRule>;

export const TaskContract = Type.Object(
  {
    kind: Type.Literal('svc.a2a_task_contract_v1'),
    contract_id: Uuid,
    intent_id: Uuid,
    tenant_id: Type.String(),
    state: Type.String(),
    rule: TaskContractRule,
    evidence_schema: Nullable(AnyObject),
    amount_cents: Type.Integer(),
    currency: Type.String(),
    deadline: Type.String(),
    allowed_tools: Type.Array(Type.String()),
    payee_did: Type.String(),
    principal_did: Type.String(),
    settlement_rail: Type.String(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type TaskContract = Static<typeof TaskContract>;

export const TaskContractPage = Type.Object(
  {
    object: Type.Literal('list'),
    items: Type.Array(TaskContract),
    limit: Type.Integer(),
    has_more: Type.Boolean(),
    next_cursor: Nullable(Uuid),
  },
  { additionalProperties: false },
);
export type TaskContractPage = Static<typeof TaskContractPage>;
