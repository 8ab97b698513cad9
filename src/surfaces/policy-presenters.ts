// How policy versions and head moves appear on the wire, shared by the engine's policy routes and the gateway's
// rollback route.
import type { PolicyVersion } from '../db/policy-repository.ts';
import type { HeadMove } from '../services/policy-service.ts';

export function presentVersion(version: PolicyVersion, headSeq: number | undefined) {
  return {
    object: 'policy_version',
    template_id: version.templateId,
    version_seq: version.versionSeq,
    parameters: version.parameters,
    materialized_predicate: version.materializedPredicate,
    human_summary: version.humanSummary,
    content_digest: version.contentDigest.toString('hex'),
    created_at: version.createdAt.toISOString(),
    is_head: version.versionSeq === headSeq,
  };
}

/** The answer to a head move, rollout or rollback alike. */
export function presentHeadMove(templateId: string, moved: HeadMove) {
  return {
    template_id: templateId,
    current_head_seq: moved.head.versionSeq,
    current_head_digest: moved.head.contentDigest.toString('hex'),
    previous_head_seq: moved.previous?.versionSeq ?? null,
  };
}
