// Contracts of the agent tool policy document routes (docs/policy-documents.md): POST /v1/policy/validate, which
// checks a document against the catalogue and the tenant's policy registry, and POST
// /v1/org-policies/{policy_id}/effective, which merges a tenant overlay onto its org base from that registry.
import Type, { type Static } from 'typebox';
import { AnyObject, Nullable } from './common.ts';

/** A policy document as sent: judged by the service, which answers every problem as an issue, so the body schema
 * admits any object. */
export const PolicyDocumentBody = Type.Object({}, { additionalProperties: true, description: 'A policy document (docs/policy-documents.md).' });

const Flag = Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')]));

export const PolicyValidateQuery = Type.Object(
  {
    /** When the intent allows a list of tools and default_deny holds, every side-effecting tool must be in it. */
    strict: Flag,
    /** Treat a version 2 document that extends an org base as an overlay: merge it first, then validate the result. */
    resolve_inheritance: Flag,
  },
  { additionalProperties: false },
);
export type PolicyValidateQuery = Static<typeof PolicyValidateQuery>;

export const PolicyIssue = Type.Object({ path: Type.String(), code: Type.String(), message: Type.String() }, { additionalProperties: false });
export type PolicyIssue = Static<typeof PolicyIssue>;

export const PolicyCheck = Type.Object({ name: Type.String(), passed: Type.Boolean() }, { additionalProperties: false });

export const PolicyMergeReport = Type.Object(
  {
    org_policy_id: Nullable(Type.String()),
    org_id: Nullable(Type.String()),
    base_policy_name: Type.String(),
    overlay_policy_name: Nullable(Type.String()),
    overrides_applied: Type.Array(Type.String()),
    denied_widenings: Type.Array(PolicyIssue),
  },
  { additionalProperties: false },
);
export type PolicyMergeReport = Static<typeof PolicyMergeReport>;

export const PolicyValidation = Type.Object(
  {
    object: Type.Literal('policy_validation'),
    /** No error at all: `local_valid` and `remote_valid`. */
    valid: Type.Boolean(),
    /** The checks a client can make alone: the document's shape and its rules against the catalogue. */
    local_valid: Type.Boolean(),
    /** The checks that need this tenant: its policy registry, the release rules, the org base. */
    remote_valid: Type.Boolean(),
    policy_name: Nullable(Type.String()),
    tenant_id: Type.String(),
    errors: Type.Array(PolicyIssue),
    warnings: Type.Array(PolicyIssue),
    checks: Type.Array(PolicyCheck),
    /** The digest of the document, or of the effective document an overlay resolves to, when it is valid. */
    effective_policy_digest: Type.Optional(Type.String()),
    merge_report: Type.Optional(PolicyMergeReport),
  },
  { additionalProperties: false },
);
export type PolicyValidation = Static<typeof PolicyValidation>;

/** An org policy id is a managed template id of the tenant's registry; any other text is simply not found. */
export const OrgPolicyParams = Type.Object({ policy_id: Type.String({ minLength: 1, maxLength: 64 }) });
export type OrgPolicyParams = Static<typeof OrgPolicyParams>;

export const EffectivePolicyQuery = Type.Object(
  { digest: Type.Optional(Type.String({ maxLength: 80, description: 'The effective digest the caller holds: the same answers `unchanged`.' })) },
  { additionalProperties: false },
);
export type EffectivePolicyQuery = Static<typeof EffectivePolicyQuery>;

export const EffectivePolicy = Type.Object(
  {
    object: Type.Literal('effective_policy'),
    tenant_id: Type.String(),
    org_policy_id: Type.String(),
    /** True when the caller's `digest` is the effective one: `effective_policy` is then left out. */
    unchanged: Type.Boolean(),
    effective_policy: Type.Optional(AnyObject('The merged, flat (version 1) policy document.')),
    effective_policy_digest: Type.String(),
    effective_policy_version: Type.String(),
    merge_report: PolicyMergeReport,
    org_base_version_seq: Type.Integer({ minimum: 1 }),
    org_base_content_digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type EffectivePolicy = Static<typeof EffectivePolicy>;
