// The bincode layouts clients sign on the engine path: IntentCreationSign v4-v7 with the optional
// CompletionContractSignV1 tail and EvidenceSignV1 version 2 (docs/signing.md#signed-structures).
import { bincodeType as t, encodeBincode, type StructFields } from './bincode.ts';
import { allowedToolsDigest, artifactsDigest, jsonDigestBlake3 } from './digests.ts';
import { SigningError } from './errors.ts';
import { normalizeRfc3339 } from './rfc3339.ts';

/** Every IntentCreationSign version we can encode; 6 and 7 are the fundable ones
 * (docs/wire-compatibility.md#signed-bytes). */
export const intentSigningVersionsKnown = [4, 5, 6, 7] as const;
export const intentSigningVersionsFundable = [6, 7] as const;
export const intentSigningVersionsDeprecated = [4, 5] as const;
export type IntentSigningVersion = (typeof intentSigningVersionsKnown)[number];
export type FundableSigningVersion = (typeof intentSigningVersionsFundable)[number];

export const completionContractSignVersion = 2;
export const evidenceSignVersion = 2;

const digest = t.fixedBytes(32);
const intentCommonFields: StructFields = [
  ['version', t.u8],
  ['tenant_id', t.string],
  ['intent_id', t.uuid],
  ['principal_did', t.string],
  ['payee_did', t.string],
  ['amount_cents', t.i64],
  ['currency', t.string],
  ['deadline', t.string],
  ['budget_digest', digest],
  ['evidence_schema_digest', digest],
  ['predicate_dsl_digest', digest],
  ['predicate_ref', t.string],
  ['allowed_tools_digest', digest],
  ['settlement_rail', t.string],
];
const policyBindingFields: StructFields = [
  ['policy_template_id', t.string],
  ['policy_version_seq', t.u32],
  ['policy_content_digest', digest],
];
const payeeKeyFields: StructFields = [['payee_pubkey', t.fixedBytes(32)]];

/** Field order of each version, as the Rust structs IntentCreationSignV4..V7 declare it. */
export const intentCreationSignLayouts = {
  4: t.struct(intentCommonFields),
  5: t.struct([...intentCommonFields, ...policyBindingFields]),
  6: t.struct([...intentCommonFields, ...payeeKeyFields]),
  7: t.struct([...intentCommonFields, ...policyBindingFields, ...payeeKeyFields]),
} as const;

export const completionContractSignLayout = t.struct([
  ['version', t.u8],
  ['completion_preset_id', t.string],
  ['vendor_contract_provider', t.string],
  ['vendor_api_version', t.string],
  ['vendor_schema_digest', digest],
  ['canonical_schema_digest', digest],
]);

export const evidenceSignLayout = t.struct([
  ['version', t.u8],
  ['tenant_id', t.string],
  ['intent_id', t.uuid],
  ['payee_did', t.string],
  ['payload_digest', digest],
  ['artifacts_digest', digest],
  ['submitted_at', t.string],
]);

export interface IntentCreationSignCommon {
  readonly tenant_id: string;
  readonly intent_id: string;
  readonly principal_did: string;
  readonly payee_did: string;
  readonly amount_cents: number | bigint;
  readonly currency: string;
  /** As sent; encoded in the form a Rust server re-writes it to (rfc3339.ts). */
  readonly deadline: string;
  readonly budget_digest: Uint8Array;
  readonly evidence_schema_digest: Uint8Array;
  readonly predicate_dsl_digest: Uint8Array;
  readonly predicate_ref: string;
  readonly allowed_tools_digest: Uint8Array;
  readonly settlement_rail: string;
}

export interface PolicyBindingSign {
  readonly policy_template_id: string;
  readonly policy_version_seq: number;
  readonly policy_content_digest: Uint8Array;
}

export type IntentCreationSign =
  | ({ readonly version: 4 } & IntentCreationSignCommon)
  | ({ readonly version: 5 } & IntentCreationSignCommon & PolicyBindingSign)
  | ({ readonly version: 6 } & IntentCreationSignCommon & { readonly payee_pubkey: Uint8Array })
  | ({ readonly version: 7 } & IntentCreationSignCommon & PolicyBindingSign & { readonly payee_pubkey: Uint8Array });

export interface CompletionContractSign {
  readonly completion_preset_id: string;
  /** `""` for archetype presets. */
  readonly vendor_contract_provider: string;
  readonly vendor_api_version: string;
  /** 32 zero bytes when the preset has no vendor schema. */
  readonly vendor_schema_digest: Uint8Array;
  readonly canonical_schema_digest: Uint8Array;
}

export interface EvidenceSign {
  readonly tenant_id: string;
  readonly intent_id: string;
  readonly payee_did: string;
  readonly payload_digest: Uint8Array;
  readonly artifacts_digest: Uint8Array;
  readonly submitted_at: string;
}

/** Refuses an unknown version before anything else is looked at, since another version may have another shape. */
export function assertKnownSigningVersion(version: unknown): asserts version is IntentSigningVersion {
  if (!intentSigningVersionsKnown.includes(version as IntentSigningVersion)) {
    throw new SigningError('signing.version_unsupported', { field: 'signing_version', value: version });
  }
}

/** 6 and 7 pass; 4 and 5 are `signing.version_deprecated`; anything else `signing.version_unsupported`. */
export function assertFundableSigningVersion(version: unknown): asserts version is FundableSigningVersion {
  assertKnownSigningVersion(version);
  if (!intentSigningVersionsFundable.includes(version as FundableSigningVersion)) {
    throw new SigningError('signing.version_deprecated', { field: 'signing_version', value: version });
  }
}

/** The bytes of IntentCreationSign for its `version`, with `deadline` in Rust's re-written form. */
export function encodeIntentCreationSign(sign: IntentCreationSign): Uint8Array {
  assertKnownSigningVersion(sign.version);
  const deadline = normalizeRfc3339(sign.deadline, 'deadline');
  return encodeBincode(intentCreationSignLayouts[sign.version], { ...sign, deadline });
}

export function encodeCompletionContractSign(contract: CompletionContractSign): Uint8Array {
  return encodeBincode(completionContractSignLayout, { version: completionContractSignVersion, ...contract });
}

/** The bytes of EvidenceSignV1 (version 2), with `submitted_at` in Rust's re-written form. */
export function encodeEvidenceSign(evidence: EvidenceSign): Uint8Array {
  const submittedAt = normalizeRfc3339(evidence.submitted_at, 'submitted_at');
  return encodeBincode(evidenceSignLayout, { version: evidenceSignVersion, ...evidence, submitted_at: submittedAt });
}

/** The parts of a create body the signed bytes are made from; digests are computed here. */
export interface IntentCreationSigningInput {
  readonly signing_version: number;
  readonly tenant_id: string;
  readonly intent_id: string;
  readonly principal_did: string;
  readonly payee_did: string;
  readonly amount_cents: number | bigint;
  readonly currency: string;
  readonly deadline: string;
  readonly budget: unknown;
  readonly evidence_schema: unknown;
  /** `predicate_dsl` (v4/v6) or the bound policy head's materialized predicate (v5/v7). */
  readonly predicate: unknown;
  /** `""` when the body has none. */
  readonly predicate_ref: string;
  readonly allowed_tools: unknown;
  readonly settlement_rail: string;
  /** v5 and v7: the bound policy version, its content digest looked up by the caller. */
  readonly policy?: PolicyBindingSign;
  /** v6 and v7. */
  readonly payee_pubkey?: Uint8Array;
  /** Appended when the client pinned a completion preset (docs/signing.md#signed-structures). */
  readonly completion_contract?: CompletionContractSign;
}

/** The exact bytes the principal signed: IntentCreationSign (+ CompletionContractSignV1 tail when given). */
export function intentCreationSigningBytes(input: IntentCreationSigningInput): Uint8Array {
  assertKnownSigningVersion(input.signing_version);
  const common: IntentCreationSignCommon = {
    tenant_id: input.tenant_id,
    intent_id: input.intent_id,
    principal_did: input.principal_did,
    payee_did: input.payee_did,
    amount_cents: input.amount_cents,
    currency: input.currency,
    deadline: input.deadline,
    budget_digest: jsonDigestBlake3(input.budget, 'budget'),
    evidence_schema_digest: jsonDigestBlake3(input.evidence_schema, 'evidence_schema'),
    predicate_dsl_digest: jsonDigestBlake3(input.predicate, 'predicate_dsl'),
    predicate_ref: input.predicate_ref,
    allowed_tools_digest: allowedToolsDigest(input.allowed_tools),
    settlement_rail: input.settlement_rail,
  };
  // Missing v5/v7 or v6/v7 parts surface as `signing.value_invalid` from the struct encoder, naming the field.
  const sign = { version: input.signing_version, ...common, ...input.policy, payee_pubkey: input.payee_pubkey };
  const body = encodeIntentCreationSign(withoutUndefined(sign) as unknown as IntentCreationSign);
  if (!input.completion_contract) return body;
  return new Uint8Array(Buffer.concat([body, encodeCompletionContractSign(input.completion_contract)]));
}

export interface EvidenceSigningInput {
  readonly tenant_id: string;
  readonly intent_id: string;
  readonly payee_did: string;
  readonly payload: unknown;
  /** 64-hex BLAKE3 artifact hashes in the order sent. */
  readonly artifacts: unknown;
  readonly submitted_at: string;
}

/** The exact bytes the payee signed for an evidence submission. */
export function evidenceSigningBytes(input: EvidenceSigningInput): Uint8Array {
  return encodeEvidenceSign({
    tenant_id: input.tenant_id,
    intent_id: input.intent_id,
    payee_did: input.payee_did,
    payload_digest: jsonDigestBlake3(input.payload, 'payload'),
    artifacts_digest: artifactsDigest(input.artifacts),
    submitted_at: input.submitted_at,
  });
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
