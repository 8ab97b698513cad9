// Contract of POST /v1/policy/rollback: move a template's head back to an earlier version, with the expected head,
// the target digest and confirm=true (each optional in the schema, so that leaving one out is a 428, not a 400).
import Type, { type Static } from 'typebox';
import { Nullable } from './common.ts';
import { TemplateId } from './intents.ts';

const Digest = Type.String({ pattern: '^(sha256:)?[0-9a-f]{64}$' });

export const PolicyRollbackBody = Type.Object(
  {
    template_id: TemplateId,
    expected_head_digest: Type.Optional(Digest),
    target_digest: Type.Optional(Digest),
    confirm: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PolicyRollbackBody = Static<typeof PolicyRollbackBody>;

/** The answer to a head move, rollout or rollback alike. */
export const PolicyHeadMove = Type.Object(
  {
    template_id: Type.String(),
    current_head_seq: Type.Integer({ minimum: 1 }),
    current_head_digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    previous_head_seq: Nullable(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type PolicyHeadMove = Static<typeof PolicyHeadMove>;
