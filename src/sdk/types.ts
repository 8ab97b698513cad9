// The wire objects the SDK returns, as the service sends them (snake_case, docs/engine.md, docs/ledger.md,
// docs/wire-compatibility.md). Fields the server may add later are allowed by the index signatures of the open objects.

export type JsonObject = { [key: string]: unknown };

/** `GET /v1/auth/principal`. */
export interface Principal {
  readonly tenant_id: string;
  readonly tenant_uuid?: string;
  readonly environment: 'sandbox' | 'live' | (string & {});
  readonly service_account_role?: string;
  readonly roles?: readonly string[];
  readonly key_kind?: string;
  readonly mcp_scopes?: readonly unknown[];
  readonly subject?: string;
}

export type IntentState = 'open' | 'funded' | 'evidence_recorded' | 'released' | 'refunded' | (string & {});
export type SettlementRail = 'x402_usdc_base' | 'processor_mpp' | (string & {});

/** An intent as `GET /harbor/intents/{id}` and the create answer show it. */
export interface Intent {
  readonly object: 'intent';
  readonly tenant: string;
  readonly tenant_id: string;
  readonly intent_id: string;
  readonly state: IntentState;
  readonly funded: boolean;
  readonly signing_version: number;
  readonly principal_did: string;
  readonly principal_key_registered: boolean;
  readonly payee_did: string;
  readonly amount_cents: number;
  readonly currency: string;
  readonly budget: unknown;
  readonly evidence_schema: JsonObject;
  readonly deadline: string;
  readonly predicate_dsl: JsonObject | null;
  readonly predicate_ref: string | null;
  readonly policy_binding: { readonly template_id: string; readonly version_seq: number; readonly content_digest: string | null } | null;
  readonly settlement_rail: SettlementRail;
  readonly allowed_tools: readonly string[];
  readonly completion_preset_id: string | null;
  readonly predicate_passed: boolean | null;
  readonly created_at: string;
  readonly funded_at: string | null;
  readonly evidence_recorded_at: string | null;
  readonly settled_at: string | null;
}

export interface IntentList {
  readonly object: 'list';
  readonly data: readonly Intent[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

/** `funding` of a fund answer (docs/rails.md); `status` says where the rail is. */
export interface FundingDetails {
  readonly settlement_rail: string;
  readonly status?: string;
  readonly challenge_id?: string;
  readonly payment_reference?: string;
  readonly error_reason?: string;
  readonly [field: string]: unknown;
}

/** Every answer of `POST /harbor/intents/{id}/fund` (200, 202, 402), plus the problem fields of a refused credential. */
export interface FundAnswer {
  readonly tenant: string;
  readonly tenant_id?: string;
  readonly intent_id: string;
  readonly state: IntentState;
  readonly settlement_rail: SettlementRail;
  readonly currency: string;
  readonly amount_cents: number;
  readonly funded: boolean;
  readonly funding?: FundingDetails | null;
  readonly capability_token?: string;
  /** RFC 9457 fields, present when a credential was refused (`application/problem+json`). */
  readonly type?: string;
  readonly title?: string;
  readonly detail?: string;
}

export interface TraceStep {
  readonly kind: string;
  readonly detail: string;
  readonly data: JsonObject;
}

export interface PredicateEvaluation {
  readonly passed: boolean;
  readonly trace: readonly TraceStep[];
}

/** `POST /harbor/intents/{id}/evidence`. */
export interface EvidenceAnswer {
  readonly tenant: string;
  readonly tenant_id?: string;
  readonly intent_id: string;
  readonly state: IntentState;
  readonly intent_state?: IntentState;
  readonly predicate_passed: boolean;
  readonly predicate_evaluation: PredicateEvaluation;
  readonly payload_digest?: string;
  readonly artifacts_digest?: string;
}

/** `POST /harbor/intents/{id}/settlement/confirm`: the intent with what was done. */
export interface SettlementAnswer extends Intent {
  readonly settlement: {
    readonly action: 'release' | 'refund';
    readonly reason: 'predicate_passed' | 'predicate_failed' | 'deadline_passed' | (string & {});
    /** The ledger transaction that moved the escrow: its rows in `GET /harbor/ledger/v1/events` carry it. */
    readonly transaction_id: string;
  };
}

/** `POST /verify` (docs/capabilities.md#post-verify): 200 for allow and deny alike. */
export interface VerifyResult {
  readonly allow: boolean;
  readonly tenant: string;
  readonly tenant_id?: string;
  readonly intent_id: string;
  readonly audit_id: string;
  readonly decision_id?: string;
  readonly code?: string | null;
  readonly message?: string | null;
  readonly reason_codes?: readonly string[];
  readonly remaining_cents?: number;
  readonly operation?: string;
  readonly requested_spend_cents?: number;
  readonly approval_request_id?: string;
  readonly policy_version?: number;
  readonly spend_scope?: { readonly scope_type: string; readonly scope_key: string };
  readonly retry_after?: number;
}

/** `POST /v1/spend/decisions/{id}/complete`. */
export interface SpendDecision {
  readonly decision_id: string;
  readonly intent_id: string;
  readonly status: 'reserved' | 'consumed' | 'released' | (string & {});
  readonly requested_spend_cents: number;
  readonly completed_at: string | null;
}

export interface PolicyTemplate {
  readonly template_id: string;
  readonly use: string;
  readonly parameters: readonly { readonly name: string; readonly type: string; readonly default: unknown }[];
}

export interface PolicyVersion {
  readonly object: 'policy_version';
  readonly template_id: string;
  readonly version_seq: number;
  readonly parameters: JsonObject;
  readonly materialized_predicate: JsonObject;
  readonly human_summary: string;
  /** Lowercase hex SHA-256 (docs/glossary.md "content digest"). */
  readonly content_digest: string;
  readonly created_at: string;
  readonly is_head: boolean;
}

export interface PolicyVersionList {
  readonly template_id: string;
  readonly current_head_seq: number | null;
  readonly current_head_digest: string | null;
  readonly versions: readonly PolicyVersion[];
  readonly has_more: boolean;
  readonly next_cursor: number | null;
}

export interface PolicyPreview {
  readonly template_id: string;
  readonly parameters: JsonObject;
  readonly materialized_dsl: JsonObject;
  readonly human_summary: string;
}

export interface PolicyTestResult {
  readonly predicate_evaluation: PredicateEvaluation;
  readonly materialized_dsl: JsonObject;
}

export interface PolicyRollout {
  readonly template_id: string;
  readonly current_head_seq: number;
  readonly current_head_digest: string;
  readonly previous_head_seq: number | null;
}

export interface LedgerCheckpoint {
  readonly tenant_id: string;
  readonly ledger_seq: number;
  readonly row_hash_hex: string;
  readonly issued_at: string;
  readonly signing_public_key_ed25519_hex: string;
  readonly message_digest_sha256_hex: string;
  readonly ed25519_signature_hex: string;
  readonly kid: string;
}

export interface LedgerTip {
  readonly tenant: string;
  readonly tenant_id: string;
  readonly ledger_seq: number;
  readonly row_hash_hex: string;
  readonly checkpoint: LedgerCheckpoint;
}

export interface LedgerAuthority {
  readonly tenant: string;
  readonly tenant_id: string;
  readonly algorithm: 'ed25519';
  readonly public_key_hex: string;
  readonly kid: string;
  readonly verification_keys: readonly { readonly kid: string; readonly public_key_hex: string }[];
}

export interface LedgerEvent {
  readonly ledger_seq: number;
  readonly transaction_id: string;
  readonly intent_id: string;
  readonly entry_index: number;
  readonly account: string;
  readonly side: 'debit' | 'credit';
  readonly amount_cents: number;
  readonly currency: string;
  readonly event_kind: string;
  readonly recorded_at: string;
  readonly body_hex: string;
  readonly prev_row_hash_hex: string;
  readonly row_hash_hex: string;
}

export interface LedgerEventsPage {
  readonly tenant: string;
  readonly tenant_id: string;
  readonly events: readonly LedgerEvent[];
  readonly next_after_seq: number | null;
}

export interface RegisteredKey {
  readonly object: 'registered_key';
  readonly id: string;
  readonly kind: 'principal' | 'agent' | 'operator' | (string & {});
  readonly subject: string;
  readonly public_key_ed25519_hex: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

export interface RegisteredKeyList {
  readonly object: 'list';
  readonly data: readonly RegisteredKey[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}
