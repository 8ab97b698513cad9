// The field-order table of every `ed25519-sha256-json-v1` artifact kind
// (docs/signing.md#signed-artifacts-ed25519-sha256-json-v1): the order the canonical bytes are written in, each field's
// type and presence rule, and which material fields the kind carries.

export const artifactSignatureAlgorithm = 'ed25519-sha256-json-v1';

/** How a field may be absent, and what its canonical bytes hold then. */
export type Presence =
  /** Always present (an empty string is still a value). */
  | 'required'
  /** May be absent; `""`, `0`, `null` or `[]` count as absent; absent means left out of the bytes. */
  | 'omit_empty'
  /** May be absent (left out); any present value, `false` included, is kept. */
  | 'optional';

export type StringFormat =
  | 'scope_token' // ^[a-z0-9][a-z0-9._:/-]{0,127}$
  | 'tenant_id' // ^[a-z0-9][a-z0-9._-]*$, at most 256
  | 'hex64' // lowercase SHA-256 / Ed25519 public key hex
  | 'uuid' // canonical lowercase UUID
  | 'hex64_or_uuid'
  | 'rfc3339_seconds' // YYYY-MM-DDTHH:MM:SSZ
  | 'currency_mandate' // ^[a-z0-9_]{3,16}$
  | 'currency_iso'; // ^[a-z]{3}$

export type FieldSpec =
  | { readonly name: string; readonly type: 'const'; readonly value: string | number }
  | {
      readonly name: string;
      readonly type: 'string';
      readonly presence?: Presence;
      readonly format?: StringFormat;
      readonly values?: readonly string[];
      readonly nonEmpty?: boolean;
      /** `""` is accepted besides the format: settlement receipts of intents without a mandate were first issued
       * with `""` there, and still verify (new ones name no mandate with `none` and 64 zeros). */
      readonly emptyAllowed?: boolean;
    }
  | { readonly name: string; readonly type: 'integer'; readonly presence?: Presence; readonly min?: number }
  | { readonly name: string; readonly type: 'boolean'; readonly presence?: Presence }
  /** Sorted, duplicate-free scope tokens; `emptyAsNull` writes `null` for an empty set (Go nil slice). */
  | { readonly name: string; readonly type: 'string_set'; readonly emptyAsNull?: boolean }
  | { readonly name: string; readonly type: 'object'; readonly presence?: Presence; readonly fields: readonly FieldSpec[] }
  /** Strings in the order given (each checked against `format`). */
  | { readonly name: string; readonly type: 'string_list'; readonly presence?: Presence; readonly format?: StringFormat }
  /** A list of objects; `emptyAsNull` writes `null` for an empty list. */
  | { readonly name: string; readonly type: 'object_list'; readonly emptyAsNull?: boolean; readonly fields: readonly FieldSpec[] }
  /** Any JSON value, written as received (insertion order), e.g. the audit manifest's `export_filter`. */
  | { readonly name: string; readonly type: 'json'; readonly presence?: Presence }
  /** A string or `null`, always written. */
  | { readonly name: string; readonly type: 'string_or_null'; readonly format?: StringFormat };

export interface ArtifactKind {
  readonly kind: string;
  readonly schemaVersions: readonly number[];
  /** Hashed fields in their fixed order (the algorithm field included only where the kind hashes it). */
  readonly fields: readonly FieldSpec[];
  /** The field naming the algorithm. It is hashed when `fields` lists it (a recognition proof's
   * `signature_algorithm`, a transparency tree head's `signing_algorithm`), and rides beside the hashed fields
   * otherwise (every other kind's `signing_algorithm`). */
  readonly algorithmField: 'signature_algorithm' | 'signing_algorithm';
  readonly digestField: 'message_digest_sha256_hex' | 'signed_payload_sha256_hex';
  /** Go `encoding/json` HTML escaping of `&`, `<`, `>` and U+2028/U+2029. */
  readonly htmlEscape: boolean;
  /** Unsigned fields a wire may carry besides the material (verified separately). */
  readonly unsignedFields?: readonly string[];
}

const authorizationFields: readonly FieldSpec[] = [
  { name: 'kind', type: 'string', values: ['principal', 'tenant'] },
  { name: 'tenant_id', type: 'string', format: 'tenant_id' },
  { name: 'principal_subject', type: 'string' },
  { name: 'principal_type', type: 'string' },
];
const mandateAgentFields: readonly FieldSpec[] = [
  { name: 'subject', type: 'string', nonEmpty: true },
  { name: 'issuer', type: 'string' },
  { name: 'key_id', type: 'string' },
  { name: 'display_name', type: 'string' },
];
const spendCeilingFields: readonly FieldSpec[] = [
  { name: 'amount_minor', type: 'integer', min: 1 },
  { name: 'currency', type: 'string', format: 'currency_mandate' },
];
const settlementPolicyFields: readonly FieldSpec[] = [
  { name: 'default_rail', type: 'string', format: 'scope_token' },
  { name: 'allowed_rails', type: 'string_set' },
];
const constraintFields: readonly FieldSpec[] = [
  { name: 'kind', type: 'string', values: ['predicate', 'policy'] },
  { name: 'id', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'digest_sha256_hex', type: 'string' },
  { name: 'uri', type: 'string' },
];
const transportBindingFields: readonly FieldSpec[] = [
  { name: 'source_protocol', type: 'string', format: 'scope_token' },
  { name: 'partner_platform', type: 'string', presence: 'omit_empty' },
  { name: 'external_authorization_id', type: 'string', presence: 'omit_empty' },
  { name: 'request_id', type: 'string', presence: 'omit_empty' },
];
const mandateCoreTail: readonly FieldSpec[] = [
  { name: 'spend_ceiling', type: 'object', fields: spendCeilingFields },
  { name: 'settlement', type: 'object', fields: settlementPolicyFields },
  { name: 'constraint', type: 'object', fields: constraintFields },
  { name: 'expires_at', type: 'string', format: 'rfc3339_seconds' },
  { name: 'nonce', type: 'string', nonEmpty: true },
  { name: 'human_presence_mode', type: 'string', values: ['human_present', 'human_not_present'] },
];

const recognitionProof: ArtifactKind = {
  kind: 'svc.agent_recognition_proof_v1',
  schemaVersions: [1],
  algorithmField: 'signature_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: false,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.agent_recognition_proof_v1' },
    { name: 'key_id', type: 'string', format: 'scope_token' },
    { name: 'signature_algorithm', type: 'const', value: artifactSignatureAlgorithm },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'expires_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'nonce', type: 'string', nonEmpty: true },
    { name: 'purpose', type: 'string', format: 'scope_token' },
    {
      name: 'verifier_context',
      type: 'object',
      fields: [
        { name: 'tenant_id', type: 'string', nonEmpty: true },
        { name: 'verifier_id', type: 'string', format: 'scope_token' },
      ],
    },
    {
      name: 'request_envelope',
      type: 'object',
      fields: [
        { name: 'method', type: 'string', nonEmpty: true },
        { name: 'path', type: 'string', nonEmpty: true },
        { name: 'body_digest_sha256_hex', type: 'string', format: 'hex64' },
      ],
    },
  ],
};

const agentMandate: ArtifactKind = {
  kind: 'svc.agent_mandate_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: true,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.agent_mandate_v1' },
    { name: 'authorization', type: 'object', fields: authorizationFields },
    { name: 'agent', type: 'object', fields: mandateAgentFields },
    { name: 'allowed_actions', type: 'string_set' },
    { name: 'allowed_tools', type: 'string_set' },
    ...mandateCoreTail,
  ],
};

const protocolAuthorizationReceipt: ArtifactKind = {
  kind: 'svc.protocol_authorization_receipt_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: true,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.protocol_authorization_receipt_v1' },
    { name: 'receipt_version', type: 'const', value: '1' },
    { name: 'receipt_id', type: 'string', format: 'scope_token' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'status', type: 'string', values: ['authorized'] },
    { name: 'intent_id', type: 'string', format: 'uuid' },
    { name: 'tenant_id', type: 'string', format: 'tenant_id' },
    { name: 'verifier_id', type: 'string', format: 'scope_token' },
    { name: 'transport_binding', type: 'object', fields: transportBindingFields },
    { name: 'mandate_digest_sha256_hex', type: 'string', format: 'hex64' },
    { name: 'imported_mandate_signing_public_key_ed25519_hex', type: 'string', format: 'hex64' },
    { name: 'authorization', type: 'object', fields: authorizationFields },
    { name: 'agent', type: 'object', fields: mandateAgentFields },
    { name: 'allowed_actions', type: 'string_set', emptyAsNull: true },
    { name: 'allowed_tools', type: 'string_set', emptyAsNull: true },
    ...mandateCoreTail,
  ],
};

const protocolSettlementReceipt: ArtifactKind = {
  kind: 'svc.protocol_settlement_receipt_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: true,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.protocol_settlement_receipt_v1' },
    { name: 'receipt_version', type: 'const', value: '1' },
    { name: 'receipt_id', type: 'string', format: 'uuid' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'intent_id', type: 'string', format: 'uuid' },
    { name: 'tenant_id', type: 'string', format: 'tenant_id' },
    { name: 'verifier_id', type: 'string', format: 'scope_token' },
    { name: 'transport_binding', type: 'object', fields: transportBindingFields },
    { name: 'authorization_receipt_id', type: 'string', format: 'scope_token', emptyAllowed: true },
    { name: 'mandate_digest_sha256_hex', type: 'string', format: 'hex64', emptyAllowed: true },
    { name: 'harbor_state', type: 'string', values: ['released', 'refunded', 'resolved_split', 'escalated_external'] },
    { name: 'predicate_passed', type: 'boolean', presence: 'optional' },
    { name: 'settlement_rail', type: 'string', nonEmpty: true },
    { name: 'settlement_mode', type: 'string', nonEmpty: true },
    { name: 'principal_did', type: 'string' },
    { name: 'payee_did', type: 'string' },
    { name: 'currency', type: 'string', nonEmpty: true },
    { name: 'amount_cents', type: 'integer', min: 1 },
    { name: 'terminal_observed_at', type: 'string', format: 'rfc3339_seconds' },
  ],
};

const agentReceiptAuthorizationFields: readonly FieldSpec[] = [
  { name: 'principal_did', type: 'string', nonEmpty: true },
  { name: 'actor_subject', type: 'string', nonEmpty: true },
  {
    name: 'agent',
    type: 'object',
    fields: [
      { name: 'operator_did', type: 'string', nonEmpty: true },
      { name: 'model_family', type: 'string', format: 'scope_token' },
      { name: 'model_instance_id', type: 'string', presence: 'omit_empty' },
      { name: 'config_hash_sha256_hex', type: 'string', format: 'hex64' },
      { name: 'prompt_hash_sha256_hex', type: 'string', format: 'hex64' },
      { name: 'deployment_epoch', type: 'integer', presence: 'omit_empty', min: 0 },
    ],
  },
  { name: 'decision_id', type: 'string', format: 'uuid' },
  { name: 'audit_id', type: 'string', presence: 'omit_empty', format: 'uuid' },
  {
    name: 'policy',
    type: 'object',
    fields: [
      { name: 'template_id', type: 'string', nonEmpty: true },
      { name: 'version_seq', type: 'integer', presence: 'omit_empty', min: 0 },
      { name: 'content_digest_sha256_hex', type: 'string', format: 'hex64' },
      { name: 'spend_policy_version', type: 'integer', presence: 'omit_empty', min: 0 },
    ],
  },
  { name: 'authorized_at', type: 'string', format: 'rfc3339_seconds' },
  { name: 'requested_spend_cents', type: 'integer', min: 0 },
  { name: 'currency', type: 'string', format: 'currency_iso' },
  { name: 'reason_codes', type: 'string_list', presence: 'omit_empty', format: 'scope_token' },
  { name: 'mandate_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
  { name: 'mandate_reference_id', type: 'string', presence: 'omit_empty' },
  { name: 'zk_policy_proof_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
];

const agentReceipt: ArtifactKind = {
  kind: 'svc.agent_receipt_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: false,
  unsignedFields: ['operator_attestation'],
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.agent_receipt_v1' },
    { name: 'receipt_version', type: 'const', value: '1' },
    { name: 'scope', type: 'string', values: ['action', 'intent_terminal'] },
    { name: 'receipt_id', type: 'string', format: 'hex64_or_uuid' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'tenant_id', type: 'string', nonEmpty: true },
    { name: 'authorization', type: 'object', fields: agentReceiptAuthorizationFields },
    {
      name: 'execution',
      type: 'object',
      presence: 'optional',
      fields: [
        { name: 'run_id', type: 'string', format: 'uuid' },
        { name: 'tool_call_id', type: 'string', nonEmpty: true },
        { name: 'tool_name', type: 'string', format: 'scope_token' },
        { name: 'operation', type: 'string', format: 'scope_token' },
        { name: 'arguments_digest_sha256_hex', type: 'string', format: 'hex64' },
        { name: 'result_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
        { name: 'outcome', type: 'string', values: ['executed', 'denied', 'skipped', 'failed'] },
        { name: 'started_at', type: 'string', format: 'rfc3339_seconds' },
        { name: 'completed_at', type: 'string', format: 'rfc3339_seconds' },
        { name: 'duration_ms', type: 'integer', presence: 'omit_empty', min: 0 },
        { name: 'tee_attestation_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
      ],
    },
    {
      name: 'merchant',
      type: 'object',
      presence: 'optional',
      fields: [
        { name: 'payee_did', type: 'string', nonEmpty: true },
        { name: 'vendor_id', type: 'string', presence: 'omit_empty', format: 'scope_token' },
        { name: 'vendor_ref_id', type: 'string', presence: 'omit_empty' },
      ],
    },
    {
      name: 'evidence',
      type: 'object',
      presence: 'optional',
      fields: [
        { name: 'completion_preset_id', type: 'string', format: 'scope_token' },
        { name: 'payload_digest_sha256_hex', type: 'string', format: 'hex64' },
        { name: 'artifacts_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
        { name: 'predicate_passed', type: 'boolean' },
        { name: 'payee_did', type: 'string', nonEmpty: true },
        { name: 'payee_signature_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
      ],
    },
    {
      name: 'payment',
      type: 'object',
      presence: 'optional',
      fields: [
        { name: 'intent_id', type: 'string', format: 'uuid' },
        { name: 'settlement_rail', type: 'string', format: 'scope_token' },
        { name: 'funding_method', type: 'string', presence: 'omit_empty', format: 'scope_token' },
        { name: 'funding_reference', type: 'string', presence: 'omit_empty' },
        { name: 'funding_receipt_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
      ],
    },
    {
      name: 'outcome',
      type: 'object',
      fields: [
        { name: 'harbor_state', type: 'string', format: 'scope_token' },
        { name: 'spend_reservation_outcome', type: 'string', presence: 'omit_empty', values: ['consumed', 'released', 'pending', 'none'] },
        { name: 'predicate_passed', type: 'boolean', presence: 'optional' },
        { name: 'settlement_outcome', type: 'string', presence: 'omit_empty', values: ['SETTLED', 'PENDING_FINALITY', 'REVERSED', 'FAILED'] },
      ],
    },
    {
      name: 'references',
      type: 'object',
      fields: [
        { name: 'intent_id', type: 'string', format: 'uuid' },
        { name: 'ledger_seq', type: 'integer', presence: 'omit_empty', min: 0 },
        { name: 'settlement_receipt_id', type: 'string_or_null', format: 'hex64_or_uuid' },
      ],
    },
    {
      name: 'external_attestations',
      type: 'object_list',
      emptyAsNull: true,
      fields: [
        { name: 'source', type: 'string', format: 'scope_token' },
        { name: 'kind', type: 'string', nonEmpty: true },
        { name: 'digest_sha256_hex', type: 'string', format: 'hex64' },
        { name: 'reference_id', type: 'string', presence: 'omit_empty' },
      ],
    },
    {
      name: 'continuity',
      type: 'object',
      presence: 'optional',
      fields: [
        { name: 'prev_message_digest_sha256_hex', type: 'string', presence: 'omit_empty', format: 'hex64' },
        { name: 'sequence_number', type: 'integer', min: 1 },
        { name: 'run_id', type: 'string', format: 'uuid' },
      ],
    },
  ],
};

const auditExportManifest: ArtifactKind = {
  kind: 'svc.audit_export_manifest_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'signed_payload_sha256_hex',
  // The client re-serializes the manifest core with JSON.stringify, so no HTML escaping
  // (docs/signing.md#signed-artifacts-ed25519-sha256-json-v1).
  htmlEscape: false,
  // `artifact_version` ("1") rides beside the signed core, not in it: the public client verifies the manifest over
  // a fixed list of core fields, and a signed field outside that list would break its digest.
  unsignedFields: ['artifact_version'],
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.audit_export_manifest_v1' },
    { name: 'tenant_realm_id', type: 'string', format: 'tenant_id' },
    { name: 'job_id', type: 'string', nonEmpty: true },
    { name: 'generated_at_rfc3339', type: 'string', format: 'rfc3339_seconds' },
    { name: 'gateway_build_version', type: 'string', presence: 'omit_empty' },
    { name: 'score_model_version', type: 'string', presence: 'omit_empty' },
    { name: 'disclosure_tier', type: 'string', values: ['standard', 'extended'] },
    { name: 'redaction_profile', type: 'string', presence: 'omit_empty' },
    { name: 'checkpoint_last_ledger_seq', type: 'integer', presence: 'omit_empty', min: 0 },
    { name: 'export_filter', type: 'json', presence: 'optional' },
    { name: 'artifacts', type: 'json' },
  ],
};

/** A signed tree head of a tenant's transparency log as this service signed them first
 * (docs/protocol.md#transparency-log): the gateway's key commits to the root of the first `tree_size` leaves. Heads of
 * this kind stay in the logs that have them and keep verifying; new heads are of the next kind. */
const transparencyTreeHead: ArtifactKind = {
  kind: 'svc.transparency_tree_head_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: false,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.transparency_tree_head_v1' },
    { name: 'tenant_id', type: 'string', format: 'tenant_id' },
    { name: 'tree_size', type: 'integer', min: 1 },
    { name: 'root_hash', type: 'string', format: 'hex64' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'key_id', type: 'string', nonEmpty: true },
  ],
};

/** A signed tree head in the public client's format, the kind the tree-head pass signs now: `kind` first, and the
 * algorithm hashed as the last field. */
const agentReceiptTransparencyTreeHead: ArtifactKind = {
  kind: 'svc.agent_receipt_transparency_sth_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: false,
  fields: [
    { name: 'kind', type: 'const', value: 'svc.agent_receipt_transparency_sth_v1' },
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'tenant_id', type: 'string', format: 'tenant_id' },
    { name: 'tree_size', type: 'integer', min: 1 },
    { name: 'root_hash_sha256_hex', type: 'string', format: 'hex64' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'signing_algorithm', type: 'const', value: artifactSignatureAlgorithm },
  ],
};

/** The signed record of an operator's resolution of a held intent (docs/release-gate.md#the-resolution-receipt): which
 * hold, why it was held, who resolved it how, and what each party got. Its id is `review-resolution:<intent id>`. */
const reviewResolutionReceipt: ArtifactKind = {
  kind: 'svc.review_resolution_receipt_v1',
  schemaVersions: [1],
  algorithmField: 'signing_algorithm',
  digestField: 'message_digest_sha256_hex',
  htmlEscape: false,
  fields: [
    { name: 'schema_version', type: 'const', value: 1 },
    { name: 'kind', type: 'const', value: 'svc.review_resolution_receipt_v1' },
    { name: 'receipt_version', type: 'const', value: '1' },
    { name: 'receipt_id', type: 'string', format: 'scope_token' },
    { name: 'issued_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'intent_id', type: 'string', format: 'uuid' },
    { name: 'tenant_id', type: 'string', format: 'tenant_id' },
    { name: 'verifier_id', type: 'string', format: 'scope_token' },
    { name: 'payee_did', type: 'string', nonEmpty: true },
    { name: 'principal_did', type: 'string', nonEmpty: true },
    { name: 'currency', type: 'string', format: 'currency_iso' },
    { name: 'amount_cents', type: 'integer', min: 1 },
    { name: 'held_at', type: 'string', format: 'rfc3339_seconds' },
    { name: 'signal_codes', type: 'string_list', format: 'scope_token' },
    { name: 'resolution', type: 'string', values: ['release', 'refund', 'split'] },
    { name: 'resolved_by', type: 'string', nonEmpty: true },
    { name: 'note', type: 'string', presence: 'omit_empty' },
    { name: 'released_cents', type: 'integer', min: 0 },
    { name: 'refunded_cents', type: 'integer', min: 0 },
    { name: 'harbor_state', type: 'string', values: ['released', 'refunded', 'resolved_split'] },
    { name: 'settlement_receipt_id', type: 'string', format: 'uuid' },
    { name: 'ledger_transaction_id', type: 'string', format: 'uuid' },
    { name: 'resolved_at', type: 'string', format: 'rfc3339_seconds' },
  ],
};

/** The allow-list of kinds: anything else is `artifact.kind_unknown`. */
export const artifactKinds: ReadonlyMap<string, ArtifactKind> = new Map(
  [
    recognitionProof,
    agentMandate,
    protocolAuthorizationReceipt,
    protocolSettlementReceipt,
    reviewResolutionReceipt,
    agentReceipt,
    auditExportManifest,
    transparencyTreeHead,
    agentReceiptTransparencyTreeHead,
  ].map(
    (kind) => [kind.kind, kind],
  ),
);

export type ArtifactKindName =
  | 'svc.agent_recognition_proof_v1'
  | 'svc.agent_mandate_v1'
  | 'svc.protocol_authorization_receipt_v1'
  | 'svc.protocol_settlement_receipt_v1'
  | 'svc.review_resolution_receipt_v1'
  | 'svc.agent_receipt_v1'
  | 'svc.audit_export_manifest_v1'
  | 'svc.transparency_tree_head_v1'
  | 'svc.agent_receipt_transparency_sth_v1';
