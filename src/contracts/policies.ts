// The policy registry under /harbor/policy/v1 (docs/predicates.md#managed-templates): the managed templates, a
// preview and a dry-run test of a rule, immutable versions, and their rollout. Rollback's contract is
// policy-rollback.ts; both answer a `PolicyHeadMove`.
import Type, { type Static } from 'typebox';
import { pageSizeDefault, pageSizeMax, policyVersionSeqMax } from '../limits.ts';
import { AnyObject, JsonValue, Nullable, OpenObject } from './common.ts';
import { policyDraftBodyExample, policyVersionExample } from './examples.ts';
import { PredicateEvaluation, TemplateId } from './intents.ts';

const Digest = Type.String({ pattern: '^(sha256:)?[0-9a-f]{64}$' });
/** Parameters are checked by the template itself, which names the offending one. */
const TemplateParameters = OpenObject('The template\'s parameters by name; the template checks them.');

export const TemplateCatalog = Type.Object({
  object: Type.Literal('list'),
  templates: Type.Array(
    Type.Object({
      template_id: TemplateId,
      use: Type.String(),
      parameters: Type.Array(Type.Object({ name: Type.String(), type: Type.String(), default: JsonValue })),
    }),
  ),
});
export type TemplateCatalog = Static<typeof TemplateCatalog>;

export const TemplateChoiceBody = Type.Object(
  { template_id: TemplateId, parameters: Type.Optional(TemplateParameters) },
  { additionalProperties: false, examples: [policyDraftBodyExample] },
);
export type TemplateChoiceBody = Static<typeof TemplateChoiceBody>;

export const PolicyPreview = Type.Object({
  template_id: TemplateId,
  parameters: AnyObject('The parameters, defaults filled in.'),
  materialized_dsl: AnyObject('The rule the template makes, in the predicate language.'),
  human_summary: Type.String(),
});
export type PolicyPreview = Static<typeof PolicyPreview>;

export const PolicyTestBody = Type.Object(
  {
    template_id: Type.Optional(TemplateId),
    parameters: Type.Optional(TemplateParameters),
    predicate_dsl: Type.Optional(JsonValue),
    evidence: JsonValue,
    evidence_schema: Type.Optional(OpenObject()),
    amount_cents: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { additionalProperties: false },
);
export type PolicyTestBody = Static<typeof PolicyTestBody>;


export const PolicyTestResult = Type.Object({ predicate_evaluation: PredicateEvaluation, materialized_dsl: JsonValue });
export type PolicyTestResult = Static<typeof PolicyTestResult>;

export const PolicyVersion = Type.Object(
  {
    object: Type.Literal('policy_version'),
    template_id: TemplateId,
    version_seq: Type.Integer({ minimum: 1 }),
    parameters: TemplateParameters,
    materialized_predicate: OpenObject('The rule, in the predicate language.'),
    human_summary: Type.String(),
    content_digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    created_at: Type.String({ format: 'date-time' }),
    is_head: Type.Boolean(),
  },
  { examples: [policyVersionExample] },
);
export type PolicyVersion = Static<typeof PolicyVersion>;

export const PolicyRolloutBody = Type.Object(
  { template_id: TemplateId, version_seq: Type.Integer({ minimum: 1, maximum: policyVersionSeqMax }), expected_head_digest: Type.Optional(Digest) },
  { additionalProperties: false },
);
export type PolicyRolloutBody = Static<typeof PolicyRolloutBody>;

export const PolicyVersionsQuery = Type.Object(
  {
    template_id: TemplateId,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })),
    cursor: Type.Optional(Type.Integer({ minimum: 1, maximum: policyVersionSeqMax })),
  },
  { additionalProperties: false },
);
export type PolicyVersionsQuery = Static<typeof PolicyVersionsQuery>;

export const PolicyVersions = Type.Object({
  template_id: TemplateId,
  current_head_seq: Nullable(Type.Integer({ minimum: 1 })),
  current_head_digest: Nullable(Type.String()),
  versions: Type.Array(PolicyVersion),
  has_more: Type.Boolean(),
  next_cursor: Nullable(Type.Integer({ description: 'Pass as `cursor` for the next (older) page; null on the last.' })),
});
export type PolicyVersions = Static<typeof PolicyVersions>;
